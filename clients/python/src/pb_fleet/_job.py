"""The handler's side of a claimed job: Job, its cancellation JobSignal, and the Handler type."""
from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional

from . import _util as u
from .client import ClaimedJob

if TYPE_CHECKING:
    from .worker import Worker


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
