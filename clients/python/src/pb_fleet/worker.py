"""Worker: claims jobs, runs a handler on each in a thread of its own slot, keeps the leases alive, reports.

Threads, all daemons, all started by start():

- the claim loop: claim-next for the free slots only, idle backoff with jitter;
- ``concurrency`` slot threads: each runs one job's handler, then waits for its report's answer
  (so a slot is taken from claim to report, and nothing piles up behind a slow server);
- the keeper: ONE heartbeat per renew interval (a third of the lease) renewing every held lease
  with its lease token and its latest progress; a progress value goes within about 1 s;
- the clock: fires job timeouts and notices leases whose local end has come unrenewed (no I/O,
  so a slow heartbeat never delays a timeout);
- the completer: gathers finished jobs' releases into ``complete`` calls of at most 100 items
  (and 4 MiB), resends a call whose answer was lost or that failed transiently, for up to
  ``report_retry`` (then gives it up: the lease lapses and the job runs again).

Every buffer is bounded by ``concurrency``: a job holds one slot from its claim until its report
has been answered, and queues at most one release.
"""
from __future__ import annotations

import collections
import json
import logging
import os
import signal as signal_module
import socket
import threading
import time
import uuid
from dataclasses import dataclass, replace
from queue import Queue
from types import FrameType
from typing import Any, Callable, Deque, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Union

from . import _util as u
from .client import ClaimedJob, FleetClient, HeartbeatLease, HeartbeatResult, Release, ReleaseResult
from .errors import (
    JobTimeoutError,
    LeaseLostError,
    PermanentJobError,
    RateLimitedError,
    WorkerStoppingError,
    is_transient,
)

__all__ = ["Worker", "Job", "JobSignal", "Handler", "install_sigterm_handler", "STOP_MODES", "PROGRESS_FLUSH_SECONDS"]

log = logging.getLogger("pb_fleet")

STOP_MODES = ("finish", "release", "abandon")
# A progress value is sent within this, and a Worker sends at most one progress heartbeat per this.
PROGRESS_FLUSH_SECONDS = 1.0
# A heartbeat that got no answer is sent again after min(renew interval / 2, this).
RENEW_RETRY_MAX_SECONDS = 1.0
# A report step that fails transiently is retried with this backoff (seconds).
REPORT_BACKOFF = (0.2, 2.0)
# Hand-back on stop("release"): shorten the lease to the server's floor, wait it out, release pending.
HAND_BACK_LEASE_SECONDS = 1
HAND_BACK_MARGIN_SECONDS = 0.3


class JobSignal:
    """A job's cancellation signal: set once (cancel, lost lease, timeout, stop); ``reason`` says why.

    A handler checks ``is_set()``, or waits on it: ``signal.wait(5)`` returns True as soon as it is set.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._reason: Optional[BaseException] = None

    def set(self, reason: BaseException) -> bool:
        """Sets the signal (the first reason wins); True when this call set it."""
        with self._lock:
            if self._reason is not None:
                return False
            self._reason = reason
        self._event.set()
        return True

    def is_set(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> Optional[BaseException]:
        return self._reason

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Waits until the signal is set or ``timeout`` passes; True when set."""
        return self._event.wait(timeout)

    def raise_if_set(self) -> None:
        if self._reason is not None:
            raise self._reason


class Job:
    """What a handler gets: the claimed job, its signal, and progress()."""

    def __init__(self, worker: "Worker", held: ClaimedJob, worker_id: str) -> None:
        view = held.job
        self._worker = worker
        self.view: Dict[str, Any] = view
        self.id: str = view["id"]
        self.probe_key: str = str(view.get("probe_key", ""))
        queue = view.get("queue")
        self.queue: str = queue if isinstance(queue, str) and queue != "" else "default"
        self.payload: Any = view.get("payload")
        attempts = view.get("attempts")
        self.attempt: int = attempts if isinstance(attempts, int) and attempts > 0 else 1
        max_attempts = view.get("max_attempts")
        self.max_attempts: int = max_attempts if isinstance(max_attempts, int) else 0
        self.last_progress: Any = view.get("progress")
        self.worker_id = worker_id
        self.lease_token: str = held.lease_token
        self.signal = JobSignal()

    def progress(self, value: Any) -> None:
        """Records the job's progress (JSON of at most 4096 bytes, copied now); sent with the next
        heartbeat, within about 1 s. ValueError for a value that is not such JSON."""
        problem = u.json_size_problem(value, u.MAX_PROGRESS_BYTES)
        if problem is not None:
            raise ValueError(f"job.progress(value): the value must be {problem}")
        self._worker._record_progress(self, json.loads(u.json_text(value)))

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, probe_key={self.probe_key!r}, queue={self.queue!r}, attempt={self.attempt})"


Handler = Callable[[Job], Any]


@dataclass
class _Entry:
    """A release waiting in (or sent by) the completer; ``answer`` None: given up."""
    release: Release
    wire_bytes: int
    done: threading.Event
    answer: Optional[ReleaseResult] = None


class _Active:
    """A held job's bookkeeping (guarded by the Worker's condition)."""

    def __init__(self, job: Job, sent_at: float, lease_seconds: float) -> None:
        self.job = job
        deadline = u.attempt_deadline(job.view, sent_at)
        self.attempt_at: Optional[float] = deadline[0] if deadline else None
        self.timeout_seconds: int = deadline[1] if deadline else 0
        self.fire_at: Optional[float] = u.timeout_fires_at(sent_at, deadline[1]) if deadline else None
        self.lease_deadline = u.lease_end(sent_at, lease_seconds, self.attempt_at)
        self.generation = 0
        self.progress_value: Any = None
        self.progress_seq = 0
        self.progress_sent_seq = 0
        self.renewing = False
        self.renew_soon = False
        self.settled = False
        self.lost = False
        self.timed_out: Optional[_Entry] = None
        self.stop_mode: Optional[str] = None
        # A new claim of a job whose earlier run here is still winding down: that run, which must end first.
        self.previous: Optional[_Active] = None

    @property
    def dropped(self) -> bool:
        """No more lease upkeep: the handler returned, the lease is gone, the job timed out or was abandoned."""
        return self.settled or self.lost or self.timed_out is not None or self.stop_mode == "abandon"

    @property
    def has_progress(self) -> bool:
        return self.progress_seq > self.progress_sent_seq


class Worker:
    """Runs jobs of one server with a handler (or one handler per queue), ``concurrency`` at a time.

    ``worker_id``: unique per live worker; with a worker identity's client it claims as
    ``<record id>/<worker_id>`` (default suffix: host-pid-random). ``lease_seconds``: asked for on
    claim and renew (1-3600, default 30), renewed every ``renew_every`` of it (default 1/3).
    ``poll_interval``/``max_poll_interval``: first and longest idle wait, seconds. ``report_retry``:
    how long a report that fails transiently is retried, seconds. ``on_event(name, fields)``: called on
    the Worker's threads for claimed, lease_lost, released, retried, failed, error (keep it quick;
    ``stop()`` called from it does not wait, see there).
    """

    def __init__(self, client: FleetClient, *, handler: Optional[Handler] = None,
                 handlers: Optional[Mapping[str, Handler]] = None, queue: Union[str, Sequence[str], None] = None,
                 worker_id: Optional[str] = None, concurrency: int = 1, lease_seconds: float = 30,
                 renew_every: float = 1 / 3, poll_interval: float = 0.5, max_poll_interval: float = 10.0,
                 probe_key_prefix: Optional[str] = None, report_retry: float = 60.0,
                 on_event: Optional[Callable[[str, Dict[str, Any]], None]] = None) -> None:
        if not isinstance(client, FleetClient):
            raise TypeError(f"Worker: client must be a FleetClient (got {u.describe(client)})")
        if handler is not None and handlers is not None:
            raise TypeError("Worker: give handler (one for every job) or handlers (one per queue), not both")
        self._handlers: Dict[str, Handler] = {}
        if handlers is not None:
            if queue is not None:
                raise TypeError("Worker: give queue or handlers, not both: with handlers the Worker claims from their queues")
            if not isinstance(handlers, Mapping) or not 1 <= len(handlers) <= u.MAX_CLAIM_QUEUES:
                raise ValueError(f"Worker: handlers must map 1 to {u.MAX_CLAIM_QUEUES} queue names to functions")
            for name, fn in handlers.items():
                if not u.is_queue_name(name):
                    raise ValueError(f"Worker: handlers: {u.describe(name)} is not {u.QUEUE_NAME_RULE}")
                if not callable(fn):
                    raise TypeError(f"Worker: handlers[{name!r}] must be a function (job) -> result")
            self._handlers = dict(handlers)
            self._queues: Optional[List[str]] = list(handlers)
            self._handler: Optional[Handler] = None
        else:
            if not callable(handler):
                raise TypeError(f"Worker: handler must be a function (job) -> result, or give handlers= "
                                f"(got {u.describe(handler)})")
            self._handler = handler
            self._queues = u.check_claim_queue("Worker", queue)
        if not u.is_int_in(concurrency, 1, 10_000):
            raise ValueError(f"Worker: concurrency must be an integer from 1 to 10000 (got {u.describe(concurrency)})")
        if not u.is_number(lease_seconds) or not u.MIN_LEASE_SECONDS <= lease_seconds <= u.MAX_LEASE_SECONDS:
            raise ValueError(f"Worker: lease_seconds must be a number from 1 to 3600 (got {u.describe(lease_seconds)})")
        if not u.is_number(renew_every) or not 0 < renew_every < 1:
            raise ValueError(f"Worker: renew_every must be a fraction of the lease between 0 and 1 (got {u.describe(renew_every)})")
        for name, value in (("poll_interval", poll_interval), ("max_poll_interval", max_poll_interval)):
            if not u.is_number(value) or value <= 0:
                raise ValueError(f"Worker: {name} must be a number of seconds > 0 (got {u.describe(value)})")
        if max_poll_interval < poll_interval:
            raise ValueError("Worker: max_poll_interval must be >= poll_interval")
        if not u.is_number(report_retry) or report_retry < 0:
            raise ValueError(f"Worker: report_retry must be a number of seconds >= 0 (got {u.describe(report_retry)})")
        if probe_key_prefix is not None and not isinstance(probe_key_prefix, str):
            raise TypeError("Worker: probe_key_prefix must be a string")
        if worker_id is None:
            worker_id = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._worker_id = u.check_worker_id("Worker", worker_id)
        self._client = client
        self._concurrency = concurrency
        self._lease_seconds = float(lease_seconds)
        self._renew_interval = self._lease_seconds * renew_every
        self._poll = (float(poll_interval), float(max_poll_interval))
        self._prefix = probe_key_prefix
        self._report_retry = float(report_retry)
        self._on_event = on_event

        self._cond = threading.Condition()  # (an RLock: a stop() from a signal handler may land inside start())
        # Every run held here, each in a slot: a job claimed again while its earlier run winds down has two.
        self._entries: Set[_Active] = set()
        self._active: Dict[str, _Active] = {}  # the latest run of each job id
        self._slots: "Queue[Optional[_Active]]" = Queue(maxsize=concurrency)
        self._completions: Deque[_Entry] = collections.deque()
        self._running = False
        self._closing = False  # the helper threads end
        self._stop_mode: Optional[str] = None
        self._wake = threading.Event()  # cuts an idle wait short on stop
        self._stopped = threading.Event()
        self._threads: List[threading.Thread] = []
        self._claim_thread: Optional[threading.Thread] = None
        self._stopper: Optional[threading.Thread] = None
        self._started = False
        self._error: Optional[BaseException] = None

    # ---- public ------------------------------------------------------------------------

    @property
    def worker_id(self) -> str:
        """The id it claims under (``<identity id>/<suffix>`` once started with a worker identity)."""
        return self._worker_id

    @property
    def in_flight(self) -> int:
        with self._cond:
            return len(self._entries)

    @property
    def running(self) -> bool:
        return self._running

    @property
    def error(self) -> Optional[BaseException]:
        """Why the Worker stopped on its own (e.g. a composed workerId over 256 bytes), or None."""
        return self._error

    def start(self) -> "Worker":
        """Starts the Worker's threads. After ``stop()`` (e.g. a SIGTERM that came before it) it
        starts nothing and returns: ``wait()`` returns once that stop is done."""
        with self._cond:  # held while the threads start: the stopper sees all of them or none
            if self._started:
                raise RuntimeError("Worker: start() once per Worker")
            self._started = True
            self._running = True  # (before the check: a stop() landing from here on clears it)
            if self._stop_mode is not None:
                self._running = False
                return self
            targets: List[Any] = [(self._keeper_loop, "keeper"), (self._clock_loop, "clock"),
                                  (self._completer_loop, "completer")]
            targets += [(self._slot_loop, f"slot-{i}") for i in range(self._concurrency)]
            for target, name in targets:
                thread = threading.Thread(target=target, name=f"pb-fleet-{name}", daemon=True)
                thread.start()
                self._threads.append(thread)
            self._claim_thread = threading.Thread(target=self._claim_loop, name="pb-fleet-claim", daemon=True)
            self._claim_thread.start()
        return self

    def stop(self, mode: str = "finish", *, wait: bool = True, timeout: Optional[float] = None) -> bool:
        """Stops claiming, deals with running jobs as ``mode`` says, and ends the Worker's threads.

        ``finish``: running jobs finish and report. ``release``: their signals are set and their jobs
        handed back to pending (the lease is shortened to 1 s, waited out, then released). ``abandon``:
        signals set, nothing written, leases lapse. ``wait=False`` returns at once (safe in a signal
        handler); returns whether the Worker has stopped. Called from one of the Worker's own threads
        (a handler, an ``on_event`` callback) it never waits, whatever ``wait`` says: the Worker cannot
        stop until that call has returned, so it returns False at once (``wait()`` elsewhere for the end).
        """
        if mode not in STOP_MODES:
            raise ValueError(f"Worker.stop: mode must be one of {', '.join(STOP_MODES)} (got {u.describe(mode)})")
        with self._cond:
            if self._stopper is None:
                self._stop_mode = mode
                self._running = False
                self._stopper = threading.Thread(target=self._stop_all, name="pb-fleet-stop", daemon=True)
                self._stopper.start()
            self._cond.notify_all()
        self._wake.set()
        if not wait or self._on_own_thread():
            return self._stopped.is_set()
        return self._stopped.wait(timeout)

    def _on_own_thread(self) -> bool:
        current = threading.current_thread()
        return current in self._threads or current is self._claim_thread or current is self._stopper

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Waits until the Worker has stopped; True when it has."""
        return self._stopped.wait(timeout)

    # ---- claiming ----------------------------------------------------------------------

    def _claim_loop(self) -> None:
        if self._client.is_worker_identity and not self._resolve_worker_id():
            return
        empty_polls = 0
        while True:
            with self._cond:
                while self._running and len(self._entries) >= self._concurrency:
                    self._cond.wait()
                if not self._running:
                    return
                free = self._concurrency - len(self._entries)
            sent_at = time.monotonic()
            try:
                held = self._client.claim_next(self._worker_id, limit=min(free, u.MAX_CLAIM_NEXT_LIMIT),
                                               lease_seconds=self._lease_seconds, queue=self._queues,
                                               probe_key_prefix=self._prefix)
            except Exception as err:  # noqa: BLE001 - reported, then a pause (the server may be away)
                self._emit("error", {"op": "claim_next", "error": err})
                self._wake.wait(self._idle_delay(empty_polls))
                empty_polls += 1
                continue
            added = sum(1 for h in held if self._admit(h, sent_at))
            if added == 0:
                self._wake.wait(self._idle_delay(empty_polls))
                empty_polls += 1
            else:
                empty_polls = 0

    def _idle_delay(self, empty_polls: int) -> float:
        return u.backoff_delay(empty_polls, self._poll[0], self._poll[1])

    def _resolve_worker_id(self) -> bool:
        """Before the first claim: the identity's record id, which the workerId must be or begin with."""
        attempt = 0
        while self._running:
            try:
                identity = self._client.identity()
            except Exception as err:  # noqa: BLE001 - reported and tried again, as a failed poll is
                self._emit("error", {"op": "identity", "error": err})
                self._wake.wait(self._idle_delay(attempt))
                attempt += 1
                continue
            if identity is not None:
                composed = u.own_worker_id(identity.id, self._worker_id)
                size = len(composed.encode("utf-8"))
                if size > u.MAX_WORKER_ID_BYTES:
                    # Every claim would be refused: stop, with the reason, rather than retry forever.
                    self._error = ValueError(
                        f"Worker: the workerId it claims under, <record id>/<worker_id> = {composed[:40]!r}..., "
                        f"is {size} bytes, over the server's {u.MAX_WORKER_ID_BYTES}: give a shorter worker_id")
                    self._emit("error", {"op": "worker_id", "error": self._error})
                    self.stop("finish", wait=False)
                    return False
                self._worker_id = composed
            return True
        return False

    def _admit(self, held: ClaimedJob, sent_at: float) -> bool:
        """A claimed job joins the slots; False when it starts nothing (a job already running here)."""
        job_id = held.job["id"]
        with self._cond:
            current = self._active.get(job_id)
            if current is not None and not current.dropped:
                # The server handed us a job we still run (its clock saw our lease lapse first): the
                # running handler carries on under the new lease.
                current.job.lease_token = held.lease_token
                current.generation += 1
                fresh = _Active(current.job, sent_at, self._lease_seconds)
                current.lease_deadline, current.attempt_at = fresh.lease_deadline, fresh.attempt_at
                current.fire_at, current.timeout_seconds = fresh.fire_at, fresh.timeout_seconds
                current.renewing = False
                self._cond.notify_all()
                return False
            active = _Active(Job(self, held, self._worker_id), sent_at, self._lease_seconds)
            if current is not None and current in self._entries:
                # An earlier run of it is winding down (lost, timed out, reporting): the new claim is
                # the job to do again. It takes a slot and is renewed, but runs only once that run has
                # ended (never beside it), as Node's worker does.
                active.previous = current
            self._entries.add(active)
            self._active[job_id] = active
            self._slots.put_nowait(active)  # never full: queued + running <= len(entries) <= concurrency
            self._cond.notify_all()
        self._emit("claimed", {"jobId": job_id, "attempt": active.job.attempt})
        return True

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

    # ---- stopping ----------------------------------------------------------------------

    def _stop_all(self) -> None:
        try:
            with self._cond:  # start() holds it while it starts the threads: all of them, or none
                claim_thread, threads = self._claim_thread, list(self._threads)
            if claim_thread is not None:
                claim_thread.join()
            mode = self._stop_mode
            with self._cond:
                if mode != "finish":
                    for active in self._entries:
                        if active.settled or active.timed_out is not None:
                            continue
                        active.stop_mode = mode
                        active.job.signal.set(WorkerStoppingError(str(mode)))
                    self._cond.notify_all()
                while self._entries:
                    self._cond.wait()
                self._closing = True
                self._cond.notify_all()
            for _ in range(self._concurrency):
                self._slots.put(None)
            for thread in threads:
                thread.join()
        finally:
            self._stopped.set()

    def _emit(self, event: str, fields: Dict[str, Any]) -> None:
        fields = {"workerId": self._worker_id, **fields}
        if event == "error":
            log.warning("pb-fleet worker %s: %s: %s", self._worker_id, fields.get("op"), fields.get("error"))
        else:
            log.debug("pb-fleet worker %s: %s %s", self._worker_id, event, fields)
        if self._on_event is not None:
            try:
                self._on_event(event, fields)
            except Exception:  # noqa: BLE001 - a listener's bug must not stop the Worker
                log.exception("pb-fleet: on_event raised")


def install_sigterm_handler(worker: Worker, mode: str = "finish",
                            signals: Iterable[int] = (signal_module.SIGTERM,)) -> None:
    """On SIGTERM (or ``signals``), stop the Worker gracefully; ``worker.wait()`` returns once it has.

    Installs from the main thread only (Python's rule for signal handlers).
    """
    if mode not in STOP_MODES:
        raise ValueError(f"install_sigterm_handler: mode must be one of {', '.join(STOP_MODES)}")

    def on_signal(signum: int, frame: Optional[FrameType]) -> None:
        worker.stop(mode, wait=False)

    for signum in signals:
        signal_module.signal(signum, on_signal)


def _message(err: BaseException) -> str:
    text = str(err)
    if not isinstance(err, Exception):  # SystemExit(3) reads "3": name it
        text = f"{type(err).__name__}: {text}" if text else ""
    return u.fit_error(text or type(err).__name__)


def _wire(release: Release) -> Dict[str, Any]:
    from .client import release_item
    return release_item("release", release)
