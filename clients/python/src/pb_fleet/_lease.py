"""Lease upkeep (the keeper thread): heartbeats that renew every held lease and carry its progress."""
from __future__ import annotations

import time
from typing import Any, List, Optional, Sequence

from . import _util as u
from ._worker_base import _Active, _WorkerBase
from .client import HeartbeatLease, HeartbeatResult
from .errors import LeaseLostError

# A progress value is sent within this, and a Worker sends at most one progress heartbeat per this.
PROGRESS_FLUSH_SECONDS = 1.0
# A heartbeat that got no answer is sent again after min(renew interval / 2, this).
RENEW_RETRY_MAX_SECONDS = 1.0


class _LeaseKeeper(_WorkerBase):
    """The Worker's keeper thread (a base of Worker)."""

    # ---- lease upkeep (the keeper) -----------------------------------------------------

    def _keeper_loop(self) -> None:
        next_tick: Optional[float] = None
        progress_sent_at = -1e9
        urgent_at: Optional[float] = None
        while True:
            with self._cond:
                if self._closing:
                    return
                now = time.monotonic()
                held = [a for a in self._entries if not a.dropped]
                if not held:
                    next_tick, urgent_at = None, None
                    self._cond.wait()
                    continue
                if next_tick is None:
                    next_tick = now + self._renew_interval
                idle = [a for a in held if not a.renewing]
                due_at = next_tick
                if urgent_at is not None and any(a.renew_soon for a in idle):
                    due_at = min(due_at, urgent_at)
                if any(a.has_progress for a in idle):
                    due_at = min(due_at, max(now, progress_sent_at + PROGRESS_FLUSH_SECONDS))
                if now < due_at:
                    self._cond.wait(due_at - now)
                    continue
                if now >= next_tick:
                    batch, next_tick, urgent_at = idle, now + self._renew_interval, None
                elif urgent_at is not None and now >= urgent_at and any(a.renew_soon for a in idle):
                    batch, urgent_at = [a for a in idle if a.renew_soon or a.has_progress], None
                else:
                    batch, progress_sent_at = [a for a in idle if a.has_progress], now
                sent = [(a, a.generation, a.progress_seq) for a in batch]
                for a in batch:
                    a.renewing, a.renew_soon = True, False
            lost_answer = False
            for chunk in u.chunks(sent, u.MAX_BATCH_ITEMS):
                if not self._heartbeat(chunk):
                    lost_answer = True
            if lost_answer:
                urgent_at = time.monotonic() + min(self._renew_interval / 2, RENEW_RETRY_MAX_SECONDS)

    def _heartbeat(self, sent: Sequence[Any]) -> bool:
        """One heartbeat call; False when its answer was lost (the leases keep their old local ends)."""
        sent_at = time.monotonic()
        leases = [HeartbeatLease(a.job.id, a.job.lease_token, a.progress_value if seq > a.progress_sent_seq else None)
                  for a, _gen, seq in sent]
        earliest = min(a.lease_deadline for a, _gen, _seq in sent)
        # No attempt waits longer than the interval or the earliest lease: a later answer would be too late.
        wait = max(0.05, min(self._renew_interval, earliest - sent_at))
        results: Optional[List[HeartbeatResult]] = None
        error: Optional[Exception] = None
        try:
            results = self._client.heartbeat(self._worker_id, leases, lease_seconds=self._lease_seconds, timeout=wait)
        except Exception as err:  # noqa: BLE001 - a lost answer loses no lease: sent again soon
            error = err
        with self._cond:
            for i, (a, gen, seq) in enumerate(sent):
                a.renewing = False
                if a.generation != gen:
                    continue  # a new claim replaced the lease this renew was for
                if results is None:
                    a.renew_soon = True
                    continue
                result = results[i]
                if result.renewed:
                    a.lease_deadline = u.lease_end(sent_at, self._lease_seconds, a.attempt_at)
                    a.progress_sent_seq = max(a.progress_sent_seq, seq)
                else:
                    self._lose(a, "timed_out" if result.reason == "timed_out" else "renew_refused")
            self._cond.notify_all()
        if error is not None:
            self._emit("error", {"op": "heartbeat", "error": error})
        return results is not None

    def _lose(self, active: _Active, reason: str) -> None:
        """(Holding the condition.) The lease is gone: set the signal; nothing of this run is written."""
        if active.lost:
            return
        active.lost = True
        active.job.signal.set(LeaseLostError(active.job.id, reason))
        self._cond.notify_all()  # (a run waiting for an earlier one stops waiting)
        self._emit("lease_lost", {"jobId": active.job.id, "reason": reason})
