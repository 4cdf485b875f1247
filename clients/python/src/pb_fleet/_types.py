"""The client's value types: what its calls send (Release, HeartbeatLease) and what they return."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

JobView = Dict[str, Any]


@dataclass(frozen=True)
class WorkerIdentity:
    id: str
    name: str
    queues: List[str]
    can_enqueue: bool


@dataclass(frozen=True)
class EnqueuedJob:
    id: str
    probe_key: str
    created: bool


@dataclass(frozen=True)
class ClaimedJob:
    """One job won by claim-next: its view (payload, attempts, max_attempts, deadline...) and lease token."""
    job: JobView
    lease_token: str


@dataclass(frozen=True)
class ClaimResult:
    claimed: bool
    job: Optional[JobView] = None
    lease_token: Optional[str] = None
    already_held: bool = False
    reason: Optional[str] = None


@dataclass(frozen=True)
class RenewResult:
    renewed: bool
    job: Optional[JobView] = None
    reason: Optional[str] = None


@dataclass(frozen=True)
class ReleaseResult:
    job_id: str
    released: bool
    job: Optional[JobView] = None
    reason: Optional[str] = None


@dataclass(frozen=True)
class CompleteAndClaimResult:
    """complete_and_claim's answer: each release's result in request order, and the jobs the same
    transaction claimed; ``jobs`` None: the server ignored the claim (pb-fleet from before it)."""
    results: List[ReleaseResult]
    jobs: Optional[List[ClaimedJob]]


@dataclass(frozen=True)
class HeartbeatLease:
    """One lease of a heartbeat; ``progress`` None: none sent."""
    job_id: str
    lease_token: Optional[str] = None
    progress: Any = None


@dataclass(frozen=True)
class HeartbeatResult:
    job_id: str
    renewed: bool
    job: Optional[JobView] = None
    reason: Optional[str] = None


@dataclass(frozen=True)
class Release:
    """One release of a complete call (also what release() sends)."""
    job_id: str
    status: str
    lease_token: Optional[str] = None
    result: Any = None
    error: Optional[str] = None
    rate_limited_for: Optional[int] = None


@dataclass(frozen=True)
class CancelResult:
    cancelled: bool
    job: Optional[JobView] = None


@dataclass(frozen=True)
class RetryResult:
    retried: bool
    job: Optional[JobView] = None
    reason: Optional[str] = None
