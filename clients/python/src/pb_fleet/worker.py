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
import os
import signal as signal_module
import socket
import threading
import time
import uuid
from queue import Queue
from types import FrameType
from typing import Any, Callable, Deque, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Union

from . import _util as u
# The Worker's parts are in _job, _worker_base, _lease, _reporting and _running; every name importable
# from this module before they moved out still is (``X as X``: re-exported, also for mypy).
from ._job import Handler as Handler, Job as Job, JobSignal as JobSignal
from ._lease import PROGRESS_FLUSH_SECONDS as PROGRESS_FLUSH_SECONDS, RENEW_RETRY_MAX_SECONDS as RENEW_RETRY_MAX_SECONDS
from ._reporting import REPORT_BACKOFF as REPORT_BACKOFF, _Entry as _Entry, _wire as _wire
from ._running import HAND_BACK_LEASE_SECONDS as HAND_BACK_LEASE_SECONDS
from ._running import HAND_BACK_MARGIN_SECONDS as HAND_BACK_MARGIN_SECONDS
from ._running import _message as _message, _Runner
from ._worker_base import _Active as _Active, log as log
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

STOP_MODES = ("finish", "release", "abandon")


class Worker(_Runner):
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
