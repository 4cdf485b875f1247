"""Reporting (the completer thread): finished jobs' releases batched into complete calls, resent while transient."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from . import _util as u
from ._worker_base import _WorkerBase
from .client import Release, ReleaseResult
from .errors import is_transient

# A report step that fails transiently is retried with this backoff (seconds).
REPORT_BACKOFF = (0.2, 2.0)


@dataclass
class _Entry:
    """A release waiting in (or sent by) the completer; ``answer`` None: given up."""
    release: Release
    wire_bytes: int
    done: threading.Event
    answer: Optional[ReleaseResult] = None


class _Reporter(_WorkerBase):
    """The Worker's completer thread (a base of Worker)."""

    # ---- reporting (the completer) -----------------------------------------------------

    def _queue_release(self, release: Release, deadline: float, *, wait: bool, locked: bool = False) -> _Entry:
        entry = _Entry(release, len(u.json_text(_wire(release)).encode("utf-8")), threading.Event())
        if locked:
            self._completions.append(entry)
            self._cond.notify_all()
        else:
            with self._cond:
                self._completions.append(entry)
                self._cond.notify_all()
        if wait:
            entry.done.wait()
        return entry

    def _completer_loop(self) -> None:
        while True:
            with self._cond:
                while not self._completions and not self._closing:
                    self._cond.wait()
                if not self._completions:
                    return
                count = u.cut_batch([e.wire_bytes for e in self._completions])
                batch = [self._completions.popleft() for _ in range(count)]
            try:
                self._send(batch)
            except Exception as err:  # noqa: BLE001 - the completer must outlive any one call
                self._emit("error", {"op": "complete", "error": err})
            finally:
                for entry in batch:
                    entry.done.set()  # (answer None if something unforeseen happened: never a hang)

    def _send(self, batch: List[_Entry]) -> None:
        """One complete call, resent while it fails transiently (a lost answer's committed items then
        read refused_terminal_same_holder: their own release). Refused for what it carries: each
        item alone, as a plain release, so one bad item cannot fail the others."""
        give_up_at = time.monotonic() + self._report_retry
        attempt = 0
        while True:
            try:
                results = self._client.complete(self._worker_id, [e.release for e in batch])
            except Exception as err:  # noqa: BLE001 - sorted below
                self._emit("error", {"op": "complete", "error": err})
                if is_transient(err):
                    if time.monotonic() < give_up_at:
                        time.sleep(u.backoff_delay(attempt, *REPORT_BACKOFF))
                        attempt += 1
                        continue
                    for entry in batch:
                        self._emit("error", {"op": "complete", "jobId": entry.release.job_id,
                                             "error": RuntimeError("gave up the release: the server kept failing; "
                                                                   "its lease will lapse and the job runs again")})
                    return
                for entry in batch:
                    self._release_alone(entry)
                return
            for entry, result in zip(batch, results):
                entry.answer = result
            return

    def _release_alone(self, entry: _Entry) -> None:
        give_up_at = time.monotonic() + self._report_retry
        attempt = 0
        r = entry.release
        while True:
            try:
                entry.answer = self._client.release(r.job_id, self._worker_id, r.status, lease_token=r.lease_token,
                                                    result=r.result, error=r.error, rate_limited_for=r.rate_limited_for)
                return
            except Exception as err:  # noqa: BLE001 - reported; retried while transient
                self._emit("error", {"op": "release", "jobId": r.job_id, "error": err})
                if not is_transient(err) or time.monotonic() >= give_up_at:
                    return
                time.sleep(u.backoff_delay(attempt, *REPORT_BACKOFF))
                attempt += 1


def _wire(release: Release) -> Dict[str, Any]:
    from .client import release_item
    return release_item("release", release)
