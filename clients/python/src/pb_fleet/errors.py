"""Typed errors of the client, and the errors a handler raises to steer its job.

Protocol refusals (``claimed: false``, ``renewed: false``, ``released: false``
with a reason) are answers, not errors. Everything else that goes wrong on the
way (an HTTP error status, no connection, a timeout, an answer of the wrong
shape) is raised as one of the ``Fleet*Error`` classes, never swallowed.
"""
from __future__ import annotations

from typing import Any

__all__ = [
    "FleetError",
    "FleetHttpError",
    "FleetAuthError",
    "FleetForbiddenError",
    "FleetTimeoutError",
    "FleetNetworkError",
    "FleetProtocolError",
    "PermanentJobError",
    "RateLimitedError",
    "JobTimeoutError",
    "LeaseLostError",
    "WorkerStoppingError",
    "is_transient",
]


class FleetError(Exception):
    """Base class; ``op`` names the client call that failed (``"claim_next"``, ``"complete"``...)."""

    def __init__(self, op: str, message: str) -> None:
        super().__init__(message)
        self.op = op


class FleetHttpError(FleetError):
    """The server answered with an HTTP error status; ``message`` is the server's own text."""

    def __init__(self, op: str, status: int, message: str, body: Any = None) -> None:
        super().__init__(op, f"{op}: HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.body = body


class FleetAuthError(FleetHttpError):
    """The token was not taken (401), and signing in again did not cure it; or the sign-in was refused (400)."""


class FleetForbiddenError(FleetAuthError):
    """A worker identity's token was taken, but it may not do this (HTTP 403). Never retried."""

    def __init__(self, op: str, message: str, body: Any = None) -> None:
        super().__init__(op, 403, message, body)


class FleetTimeoutError(FleetError):
    """No answer within the request timeout. The request may or may not have taken effect."""

    def __init__(self, op: str, timeout: float) -> None:
        super().__init__(op, f"{op}: no answer within {timeout:g} s")
        self.timeout = timeout


class FleetNetworkError(FleetError):
    """The request got no HTTP answer (connection refused or reset, DNS...)."""


class FleetProtocolError(FleetError):
    """A 2xx answer that is not JSON or does not have the protocol's shape."""

    def __init__(self, op: str, message: str, body: Any = None) -> None:
        super().__init__(op, f"{op}: {message}")
        self.body = body


def is_transient(err: BaseException) -> bool:
    """Worth retrying after a pause: no answer (timeout, network) or a server-side failure (5xx, 429)."""
    if isinstance(err, (FleetTimeoutError, FleetNetworkError)):
        return True
    if isinstance(err, FleetHttpError) and not isinstance(err, FleetAuthError):
        return err.status >= 500 or err.status == 429
    return False


# ---- raised by handlers ------------------------------------------------------------


class PermanentJobError(Exception):
    """Running the job again cannot help: the Worker releases it ``failed`` (no retry)."""


class RateLimitedError(Exception):
    """The target said "not now": the job is released ``retry`` with ``rateLimitedFor``.

    The attempt is given back and the job's group (its queue without one) is
    parked for that long. ``retry_after_seconds`` is rounded up to whole
    seconds and kept within 1..86400 when the Worker releases.
    """

    def __init__(self, retry_after_seconds: float, message: str | None = None) -> None:
        if isinstance(retry_after_seconds, bool) or not isinstance(retry_after_seconds, (int, float)) \
                or retry_after_seconds != retry_after_seconds:
            raise TypeError(f"RateLimitedError: retry_after_seconds must be a number of seconds (got {retry_after_seconds!r})")
        super().__init__(message if message is not None else f"rate limited: retry after {retry_after_seconds:g} s")
        self.retry_after_seconds = float(retry_after_seconds)


# ---- the reasons a handler's signal carries ----------------------------------------


class LeaseLostError(Exception):
    """The job's lease is gone (renew refused: lapsed, claimed by another, or cancelled; or it ran out locally)."""

    def __init__(self, job_id: str, reason: str) -> None:
        super().__init__(f"lease on job {job_id} lost ({reason})")
        self.job_id = job_id
        self.reason = reason


class JobTimeoutError(Exception):
    """The job's attempt is about to pass its deadline; its message is the server's wording."""

    def __init__(self, job_id: str, timeout_seconds: int) -> None:
        super().__init__(f"timed out after {timeout_seconds} s")
        self.job_id = job_id
        self.timeout_seconds = timeout_seconds


class WorkerStoppingError(Exception):
    """The Worker is stopping in ``release`` or ``abandon`` mode."""

    def __init__(self, mode: str) -> None:
        super().__init__(f"worker stopping ({mode})")
        self.mode = mode
