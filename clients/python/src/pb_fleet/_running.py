"""Running jobs: a slot thread's run of one handler, its outcome and report, and the clock's timeouts."""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Optional

from . import _util as u
from ._job import Job
from ._lease import _LeaseKeeper
from ._reporting import _Entry, _Reporter
from ._worker_base import _Active
from .client import Release
from .errors import JobTimeoutError, PermanentJobError, RateLimitedError

# Hand-back on stop("release"): shorten the lease to the server's floor, wait it out, release pending.
HAND_BACK_LEASE_SECONDS = 1
HAND_BACK_MARGIN_SECONDS = 0.3


class _Runner(_LeaseKeeper, _Reporter):
    """The Worker's slot threads and its clock (a base of Worker)."""

    # ---- running a job -----------------------------------------------------------------

    def _slot_loop(self) -> None:
        while True:
            active = self._slots.get()
            if active is None:
                return
            try:
                self._run(active)
            except BaseException as err:  # noqa: BLE001 - nothing may kill the slot (SystemExit included)
                self._emit("error", {"op": "run", "jobId": active.job.id, "error": err})
            finally:
                with self._cond:
                    self._entries.discard(active)
                    if self._active.get(active.job.id) is active:
                        del self._active[active.job.id]
                    self._cond.notify_all()

    def _run(self, active: _Active) -> None:
        job = active.job
        with self._cond:
            # A new claim of a job whose earlier run is winding down waits for that run to end (its
            # lease renewed meanwhile); its own signal set meanwhile (lost, timed out, stopping) ends the wait.
            while active.previous is not None and active.previous in self._entries and not job.signal.is_set():
                self._cond.wait()
            active.previous = None
        outcome: Optional[Release] = None
        if not job.signal.is_set():
            outcome = self._outcome(job)
        with self._cond:
            active.settled = True
            if outcome is not None:
                # The lease the job holds now: a re-hand while the handler ran switched it to a new token.
                outcome = replace(outcome, lease_token=job.lease_token)
            # A heartbeat on the wire may yet say the lease is gone.
            while active.renewing:
                self._cond.wait()
            timed_out, lost, stop_mode = active.timed_out, active.lost, active.stop_mode
        if timed_out is not None:
            # The timeout's release is the job's report, whatever the handler did since.
            timed_out.done.wait()
            self._reported(job, timed_out)
            return
        if lost or stop_mode == "abandon":
            return
        if stop_mode == "release":
            self._hand_back(job)
            return
        if outcome is not None:
            self._reported(job, self._queue_release(outcome, active.lease_deadline, wait=True))

    def _outcome(self, job: Job) -> Release:
        """Runs the handler; its return value or exception as the release that reports it."""
        handler = self._handler if self._handler is not None else self._handlers.get(job.queue)
        token = job.lease_token  # (a placeholder: _run puts the job's lease token at report time in)
        try:
            if handler is None:
                raise RuntimeError(f"Worker: no handler for queue {job.queue!r} (handlers for {', '.join(self._handlers)})")
            value = handler(job)
        except RateLimitedError as err:
            return Release(job.id, "retry", token, error=_message(err), rate_limited_for=u.rate_limited_for(err.retry_after_seconds))
        except BaseException as err:  # noqa: BLE001 - any handler error is the job's outcome (SystemExit,
            # KeyboardInterrupt, asyncio.CancelledError too: none may kill the slot thread).
            # A job with no attempt cap (max_attempts 0) fails at once: retried, it could run forever.
            permanent = isinstance(err, PermanentJobError) or job.max_attempts == 0
            return Release(job.id, "failed" if permanent else "retry", token, error=_message(err))
        problem = None if value is None else u.json_size_problem(value, u.MAX_RESULT_BYTES)
        if problem is not None:
            return Release(job.id, "failed", token, error=f"the handler's result must be {problem}")
        return Release(job.id, "done", token, result=value)

    def _reported(self, job: Job, entry: _Entry) -> None:
        answer = entry.answer
        if answer is None:
            return  # given up (reported): the lease lapses and the job runs again
        status = entry.release.status
        if not answer.released and answer.reason != "refused_terminal_same_holder":
            # (A repeat of a committed retry reads refused_not_holder too: nothing more to write either way.)
            self._emit("lease_lost", {"jobId": job.id, "reason": answer.reason})
            return
        self._emit("released", {"jobId": job.id, "status": status, "committed": answer.reason or "released"})
        if status == "retry" and answer.job is not None and answer.job.get("status") == "pending":
            self._emit("retried", {"jobId": job.id, "error": entry.release.error, "attempt": job.attempt})
        elif status in ("failed", "retry"):
            self._emit("failed", {"jobId": job.id, "error": entry.release.error})

    def _hand_back(self, job: Job) -> None:
        """stop("release"): the protocol refuses a release to pending on a live lease, so shorten it first."""
        try:
            shortened = self._client.renew(job.id, self._worker_id, lease_seconds=HAND_BACK_LEASE_SECONDS,
                                           lease_token=job.lease_token)
            if not shortened.renewed:
                self._emit("lease_lost", {"jobId": job.id, "reason": shortened.reason or "renew_refused"})
                return
            time.sleep(HAND_BACK_LEASE_SECONDS + HAND_BACK_MARGIN_SECONDS)
            for _ in range(6):
                answer = self._client.release(job.id, self._worker_id, "pending", lease_token=job.lease_token)
                if answer.released:
                    self._emit("released", {"jobId": job.id, "status": "pending", "committed": "released"})
                    return
                if answer.reason != "refused_lease_live":
                    break
                time.sleep(HAND_BACK_MARGIN_SECONDS)  # the server's clock may be a little behind ours
            self._emit("lease_lost", {"jobId": job.id, "reason": "hand_back_refused"})
        except Exception as err:  # noqa: BLE001 - the lease lapses on its own; the sweep re-queues it
            self._emit("error", {"op": "hand_back", "jobId": job.id, "error": err})

    def _record_progress(self, job: Job, value: Any) -> None:
        with self._cond:
            active = self._active.get(job.id)
            if active is None or active.job is not job or active.dropped:
                return  # no renew will carry it (or a later claim of the job holds the lease now)
            active.progress_value = value
            active.progress_seq += 1
            self._cond.notify_all()

    # ---- timeouts and local lease ends (the clock) -------------------------------------

    def _clock_loop(self) -> None:
        with self._cond:
            while not self._closing:
                now = time.monotonic()
                next_at = float("inf")
                for active in list(self._entries):
                    if active.dropped or active.stop_mode is not None:
                        continue
                    if active.fire_at is not None:
                        if now >= active.fire_at:
                            self._time_out(active)
                            continue
                        next_at = min(next_at, active.fire_at)
                    if active.lease_deadline <= now:
                        self._lose(active, "lease_expired")
                    else:
                        next_at = min(next_at, active.lease_deadline)
                self._cond.wait(None if next_at == float("inf") else max(0.0, next_at - now))

    def _time_out(self, active: _Active) -> None:
        """(Holding the condition.) Signal the handler and release ``retry`` now, while the lease is live."""
        error = JobTimeoutError(active.job.id, active.timeout_seconds)
        release = Release(active.job.id, "retry", active.job.lease_token, error=str(error))
        active.timed_out = self._queue_release(release, active.lease_deadline, wait=False, locked=True)
        active.job.signal.set(error)


def _message(err: BaseException) -> str:
    text = str(err)
    if not isinstance(err, Exception):  # SystemExit(3) reads "3": name it
        text = f"{type(err).__name__}: {text}" if text else ""
    return u.fit_error(text or type(err).__name__)
