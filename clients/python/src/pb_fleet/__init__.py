"""pb-fleet's Python client: FleetClient (the /api/fleet/* routes) and Worker (claims, runs, reports)."""
from .client import (
    CancelResult,
    ClaimedJob,
    ClaimResult,
    CompleteAndClaimResult,
    EnqueuedJob,
    FleetClient,
    HeartbeatLease,
    HeartbeatResult,
    Release,
    ReleaseResult,
    RenewResult,
    RetryResult,
    WorkerIdentity,
)
from .errors import (
    FleetAuthError,
    FleetError,
    FleetForbiddenError,
    FleetHttpError,
    FleetNetworkError,
    FleetProtocolError,
    FleetTimeoutError,
    JobTimeoutError,
    LeaseLostError,
    PermanentJobError,
    RateLimitedError,
    WorkerStoppingError,
)
from .worker import Handler, Job, JobSignal, Worker, install_sigterm_handler

__version__ = "0.1.0"

__all__ = [
    "FleetClient", "Worker", "Job", "JobSignal", "Handler", "install_sigterm_handler",
    "WorkerIdentity", "EnqueuedJob", "ClaimedJob", "ClaimResult", "RenewResult", "ReleaseResult",
    "CompleteAndClaimResult",
    "HeartbeatLease", "HeartbeatResult", "Release", "CancelResult", "RetryResult",
    "FleetError", "FleetHttpError", "FleetAuthError", "FleetForbiddenError", "FleetTimeoutError",
    "FleetNetworkError", "FleetProtocolError",
    "PermanentJobError", "RateLimitedError", "JobTimeoutError", "LeaseLostError", "WorkerStoppingError",
]
