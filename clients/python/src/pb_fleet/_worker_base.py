"""The state the Worker's threads share: each held run's bookkeeping, the Worker's attributes, its events."""
from __future__ import annotations

import logging
import threading
from queue import Queue
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, Optional, Set

from . import _util as u
from ._job import Handler, Job
from .client import FleetClient

if TYPE_CHECKING:
    from ._reporting import _Entry

log = logging.getLogger("pb_fleet")


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


class _WorkerBase:
    """The base of Worker and of its parts (_lease, _reporting, _running): the attributes Worker.__init__
    sets that the parts use, declared here for them, and _emit."""

    _client: FleetClient
    _worker_id: str
    _handlers: Dict[str, Handler]
    _handler: Optional[Handler]
    _lease_seconds: float
    _renew_interval: float
    _report_retry: float
    _on_event: Optional[Callable[[str, Dict[str, Any]], None]]
    _cond: threading.Condition
    _entries: Set[_Active]
    _active: Dict[str, _Active]
    _slots: "Queue[Optional[_Active]]"
    _completions: Deque[_Entry]
    _closing: bool

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
