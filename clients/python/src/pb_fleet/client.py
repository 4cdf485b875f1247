"""FleetClient: the /api/fleet/* routes of pb-fleet over plain HTTP (urllib), for PocketBase 0.22 and 0.23+.

No SDK: the client makes few kinds of call, all with the same paths and bodies on both PocketBase
lines except the admin sign-in, which it finds out on the first one (0.23+'s ``_superusers``, else
0.22's ``admins``). The token is sent raw in ``Authorization``; after a 401 the client signs in again
once and retries the call. Thread-safe: the Worker's threads share one client.
"""
from __future__ import annotations

import urllib.parse
from datetime import datetime
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _util as u
# FleetClient's parts are in _types, _transport and _items; every name importable from this module
# before they moved out still is (``X as X``: re-exported, also for mypy).
from ._items import _ENQUEUE_OPTIONS as _ENQUEUE_OPTIONS, _batch_results as _batch_results
from ._items import _check_progress as _check_progress, _enqueue_item as _enqueue_item
from ._items import _heartbeat_item as _heartbeat_item, _is_job_view as _is_job_view, release_item as release_item
from ._transport import _AUTH_PATHS as _AUTH_PATHS, _WORKER_AUTH_PATH as _WORKER_AUTH_PATH
from ._transport import WorkerCredentials as WorkerCredentials, _message_of as _message_of, _Transport
from ._types import (
    CancelResult as CancelResult,
    ClaimedJob as ClaimedJob,
    ClaimResult as ClaimResult,
    CompleteAndClaimResult as CompleteAndClaimResult,
    EnqueuedJob as EnqueuedJob,
    HeartbeatLease as HeartbeatLease,
    HeartbeatResult as HeartbeatResult,
    JobView as JobView,
    Release as Release,
    ReleaseResult as ReleaseResult,
    RenewResult as RenewResult,
    RetryResult as RetryResult,
    WorkerIdentity as WorkerIdentity,
)
from .errors import FleetProtocolError
# Importable from here before the split (they are pb_fleet's own exports too): re-exported.
from .errors import FleetAuthError as FleetAuthError, FleetForbiddenError as FleetForbiddenError
from .errors import FleetHttpError as FleetHttpError, FleetNetworkError as FleetNetworkError
from .errors import FleetTimeoutError as FleetTimeoutError, is_transient as is_transient

__all__ = [
    "FleetClient", "WorkerIdentity", "EnqueuedJob", "ClaimedJob", "ClaimResult", "RenewResult",
    "ReleaseResult", "HeartbeatLease", "HeartbeatResult", "Release", "CancelResult", "RetryResult",
]

_RELEASE_REFUSALS = ("refused_terminal_same_holder", "refused_not_holder", "refused_lease_live", "refused_stale_token")


class FleetClient(_Transport):
    """A client of one pb-fleet server.

    Give exactly one way to sign in: ``worker=(identity, password)`` or ``worker="<worker token>"``
    (a ``fleet_workers`` record), or ``email=``/``password=`` of an admin (0.22) or superuser (0.23+),
    or ``token=`` (an admin's ready token; a 401 is then raised). ``timeout``: seconds per request.
    """

    # ---- the queue -----------------------------------------------------------------------

    def enqueue(self, probe_key: str, *, payload: Any = None, run_at: Union[str, datetime, None] = None,
                delay_seconds: Optional[float] = None, priority: Optional[int] = None,
                max_attempts: Optional[int] = None, unique_key: Optional[str] = None, queue: Optional[str] = None,
                group: Optional[str] = None, timeout_seconds: Optional[int] = None,
                start_within_seconds: Optional[int] = None) -> EnqueuedJob:
        """Enqueues one job (POST /api/fleet/enqueue). None for an option: not given."""
        item: Dict[str, Any] = {
            "probe_key": probe_key, "payload": payload, "run_at": run_at, "delay_seconds": delay_seconds,
            "priority": priority, "max_attempts": max_attempts, "unique_key": unique_key, "queue": queue,
            "group": group, "timeout_seconds": timeout_seconds, "start_within_seconds": start_within_seconds,
        }
        return self.enqueue_many([item])[0]

    def enqueue_many(self, jobs: Sequence[Mapping[str, Any]]) -> List[EnqueuedJob]:
        """Enqueues jobs given as mappings with enqueue()'s keyword names (``probe_key`` required).

        Every item is checked before any request; 1000 per call, each call all or nothing.
        """
        if isinstance(jobs, (str, bytes)) or not isinstance(jobs, Sequence) or len(jobs) == 0:
            raise TypeError(f"enqueue_many: jobs must be a non-empty list of mappings (got {u.describe(jobs)})")
        items = [_enqueue_item(f"enqueue_many: jobs[{i}]", job) for i, job in enumerate(jobs)]
        out: List[EnqueuedJob] = []
        for chunk in u.chunks(items, u.MAX_ENQUEUE_ITEMS):
            answer = self._post("enqueue", "/api/fleet/enqueue", {"jobs": list(chunk)})
            rows = answer.get("jobs")
            if not isinstance(rows, list) or len(rows) != len(chunk) or not all(
                    isinstance(r, dict) and isinstance(r.get("id"), str) and isinstance(r.get("created"), bool)
                    for r in rows):
                raise FleetProtocolError("enqueue", f"answer has no `jobs` list of {len(chunk)} {{id, created}}", answer)
            out.extend(EnqueuedJob(id=r["id"], probe_key=str(r.get("probeKey", "")), created=r["created"]) for r in rows)
        return out

    def claim_next(self, worker_id: str, *, limit: int = 1, lease_seconds: Optional[float] = None,
                   queue: Union[str, Sequence[str], None] = None, probe_key_prefix: Optional[str] = None,
                   timeout: Optional[float] = None) -> List[ClaimedJob]:
        """Claims up to ``limit`` (1-100) due jobs in claim order."""
        u.check_worker_id("claim_next", worker_id)
        body = _claim_fields("claim_next", limit, lease_seconds, queue, probe_key_prefix)
        body["workerId"] = worker_id
        answer = self._post("claim_next", "/api/fleet/claim-next", body, timeout)
        claimed = _claimed_jobs(answer)
        if claimed is None:
            raise FleetProtocolError("claim_next", "answer has no `jobs` list of {job, leaseToken}", answer)
        return claimed

    def heartbeat(self, worker_id: str, leases: Sequence[HeartbeatLease], *, lease_seconds: Optional[float] = None,
                  timeout: Optional[float] = None) -> List[HeartbeatResult]:
        """Renews many leases of one holder (100 per call, each call one transaction)."""
        u.check_worker_id("heartbeat", worker_id)
        u.check_lease_seconds("heartbeat", lease_seconds)
        if not isinstance(leases, Sequence) or len(leases) == 0:
            raise TypeError("heartbeat: leases must be a non-empty list of HeartbeatLease")
        items = [_heartbeat_item(f"heartbeat: leases[{i}]", lease) for i, lease in enumerate(leases)]
        out: List[HeartbeatResult] = []
        for chunk in u.chunks(items, u.MAX_BATCH_ITEMS):
            answer = self._post("heartbeat", "/api/fleet/heartbeat",
                                {"workerId": worker_id, "leaseSeconds": lease_seconds, "leases": list(chunk)}, timeout)
            rows = _batch_results("heartbeat", answer, chunk, "renewed")
            out.extend(HeartbeatResult(job_id=r["jobId"], renewed=r["renewed"], job=r.get("job"),
                                       reason=r.get("reason") if isinstance(r.get("reason"), str) else None)
                       for r in rows)
        return out

    def complete(self, worker_id: str, releases: Sequence[Release], *,
                 timeout: Optional[float] = None) -> List[ReleaseResult]:
        """Releases many jobs of one holder (100 per call, each call one transaction)."""
        u.check_worker_id("complete", worker_id)
        if not isinstance(releases, Sequence) or len(releases) == 0:
            raise TypeError("complete: releases must be a non-empty list of Release")
        items = [release_item(f"complete: releases[{i}]", r) for i, r in enumerate(releases)]
        out: List[ReleaseResult] = []
        for chunk in u.chunks(items, u.MAX_BATCH_ITEMS):
            answer = self._post("complete", "/api/fleet/complete", {"workerId": worker_id, "releases": list(chunk)}, timeout)
            rows = _batch_results("complete", answer, chunk, "released")
            out.extend(_release_result("complete", r, answer) for r in rows)
        return out

    def complete_and_claim(self, worker_id: str, releases: Sequence[Release], *, limit: int,
                           lease_seconds: Optional[float] = None, queue: Union[str, Sequence[str], None] = None,
                           probe_key_prefix: Optional[str] = None,
                           timeout: Optional[float] = None) -> CompleteAndClaimResult:
        """Releases up to 100 jobs of one holder and, in the same transaction, claims up to ``limit``
        (1-100) due jobs as claim_next would: one request where a worker's loop makes two. Never
        retried here: a second try after a lost answer would claim again (the releases are safe to
        send again with complete). ``jobs`` is None when the server ignored the claim."""
        u.check_worker_id("complete_and_claim", worker_id)
        if not isinstance(releases, Sequence) or not 1 <= len(releases) <= u.MAX_BATCH_ITEMS:
            raise TypeError(f"complete_and_claim: releases must be a list of 1 to {u.MAX_BATCH_ITEMS} Release "
                            "(complete() sends more in several calls)")
        items = [release_item(f"complete_and_claim: releases[{i}]", r) for i, r in enumerate(releases)]
        claim = _claim_fields("complete_and_claim", limit, lease_seconds, queue, probe_key_prefix)
        answer = self._post("complete_and_claim", "/api/fleet/complete",
                            {"workerId": worker_id, "releases": items, "claimNext": claim}, timeout)
        rows = _batch_results("complete_and_claim", answer, items, "released")
        results = [_release_result("complete_and_claim", r, answer) for r in rows]
        if "jobs" not in answer:
            return CompleteAndClaimResult(results=results, jobs=None)
        jobs = _claimed_jobs(answer)
        if jobs is None:
            raise FleetProtocolError("complete_and_claim", "answer's `jobs` is no list of {job, leaseToken}", answer)
        return CompleteAndClaimResult(results=results, jobs=jobs)

    def claim(self, job_id: str, worker_id: str, *, lease_seconds: Optional[float] = None) -> ClaimResult:
        """Claims one job by id; a transient failure is retried once (a commit then reads alreadyHeld)."""
        u.check_job_id("claim", job_id)
        u.check_worker_id("claim", worker_id)
        u.check_lease_seconds("claim", lease_seconds)
        answer = self._retry_once("claim", "/api/fleet/claim",
                                  {"jobId": job_id, "workerId": worker_id, "leaseSeconds": lease_seconds})
        if not isinstance(answer.get("claimed"), bool):
            raise FleetProtocolError("claim", "answer has no boolean `claimed`", answer)
        if not answer["claimed"]:
            return ClaimResult(claimed=False, reason=answer.get("reason") if isinstance(answer.get("reason"), str) else None)
        if not _is_job_view(answer.get("job")):
            raise FleetProtocolError("claim", "claimed: true without a `job`", answer)
        token = answer.get("leaseToken")
        return ClaimResult(claimed=True, job=answer["job"], lease_token=token if isinstance(token, str) and token else None,
                           already_held=answer.get("alreadyHeld") is True)

    def renew(self, job_id: str, worker_id: str, *, lease_seconds: Optional[float] = None,
              lease_token: Optional[str] = None, progress: Any = None, timeout: Optional[float] = None) -> RenewResult:
        """Extends the holder's live lease (retried once on a transient failure: a repeat is harmless)."""
        u.check_job_id("renew", job_id)
        u.check_worker_id("renew", worker_id)
        u.check_lease_seconds("renew", lease_seconds)
        _check_progress("renew", progress)
        answer = self._retry_once("renew", "/api/fleet/renew", {
            "jobId": job_id, "workerId": worker_id, "leaseSeconds": lease_seconds, "leaseToken": lease_token,
            "progress": progress}, timeout)
        if not isinstance(answer.get("renewed"), bool) or (answer["renewed"] and not _is_job_view(answer.get("job"))):
            raise FleetProtocolError("renew", "answer has no boolean `renewed` (and `job` when true)", answer)
        reason = answer.get("reason")
        return RenewResult(renewed=answer["renewed"], job=answer.get("job"),
                           reason=reason if isinstance(reason, str) else None)

    def release(self, job_id: str, worker_id: str, status: str, *, lease_token: Optional[str] = None,
                result: Any = None, error: Optional[str] = None, rate_limited_for: Optional[int] = None,
                timeout: Optional[float] = None) -> ReleaseResult:
        """Releases a held job to done, failed, pending or retry (retried once on a transient failure:
        a repeat of a committed done/failed release reads ``refused_terminal_same_holder``)."""
        u.check_worker_id("release", worker_id)
        item = release_item("release", Release(job_id=job_id, status=status, lease_token=lease_token, result=result,
                                               error=error, rate_limited_for=rate_limited_for))
        answer = self._retry_once("release", "/api/fleet/release", {"workerId": worker_id, **item}, timeout)
        if not isinstance(answer.get("released"), bool):
            raise FleetProtocolError("release", "answer has no boolean `released`", answer)
        return ReleaseResult(job_id=job_id, released=answer["released"], job=answer.get("job"), reason=answer.get("reason"))

    def cancel(self, job_id: str) -> CancelResult:
        """Cancels a pending, claimed or running job (admin only): its holder's next renew is refused."""
        u.check_job_id("cancel", job_id)
        answer = self._post("cancel", "/api/fleet/cancel", {"jobId": job_id})
        if not isinstance(answer.get("cancelled"), bool):
            raise FleetProtocolError("cancel", "answer has no boolean `cancelled`", answer)
        return CancelResult(cancelled=answer["cancelled"], job=answer.get("job"))

    def retry(self, job_id: str) -> RetryResult:
        """Puts a failed or cancelled job back to pending, due now, attempts 0 (admin only)."""
        u.check_job_id("retry", job_id)
        answer = self._post("retry", "/api/fleet/retry", {"jobId": job_id})
        if not isinstance(answer.get("retried"), bool):
            raise FleetProtocolError("retry", "answer has no boolean `retried`", answer)
        return RetryResult(retried=answer["retried"], job=answer.get("job"), reason=answer.get("reason"))

    def stats(self, *, queue: Optional[str] = None, probe_key_prefix: Optional[str] = None) -> Dict[str, Any]:
        """GET /api/fleet/stats as JSON (admin only): counts by status, scheduled, retrying, deadLettered..."""
        query: Dict[str, str] = {}
        if queue is not None:
            if not u.is_queue_name(queue):
                raise ValueError(f"stats: queue must be {u.QUEUE_NAME_RULE} (got {u.describe(queue)})")
            query["queue"] = queue
        if probe_key_prefix is not None:
            query["probeKeyPrefix"] = probe_key_prefix
        answer = self._call("stats", "GET", "/api/fleet/stats", None, query=query)
        if not isinstance(answer, dict) or not isinstance(answer.get("counts"), dict):
            raise FleetProtocolError("stats", "answer has no `counts`", answer)
        return answer

    def get_job(self, job_id: str) -> Dict[str, Any]:
        """The job's record through PocketBase's record API (admin only)."""
        u.check_job_id("get_job", job_id)
        answer = self._call("get_job", "GET", f"/api/collections/probe_jobs/records/{urllib.parse.quote(job_id, safe='')}", None)
        if not isinstance(answer, dict) or not isinstance(answer.get("id"), str):
            raise FleetProtocolError("get_job", "answer is not a record", answer)
        return answer


def _claim_fields(op: str, limit: Any, lease_seconds: Optional[float], queue: Union[str, Sequence[str], None],
                  probe_key_prefix: Optional[str]) -> Dict[str, Any]:
    """A claim's fields (claim-next's body, and complete's ``claimNext``), checked; the worker id is the caller's."""
    if not u.is_int_in(limit, 1, u.MAX_CLAIM_NEXT_LIMIT):
        raise ValueError(f"{op}: limit must be an integer from 1 to {u.MAX_CLAIM_NEXT_LIMIT} (got {u.describe(limit)})")
    u.check_lease_seconds(op, lease_seconds)
    queues = u.check_claim_queue(op, queue)
    if probe_key_prefix is not None and not isinstance(probe_key_prefix, str):
        raise TypeError(f"{op}: probe_key_prefix must be a string (got {u.describe(probe_key_prefix)})")
    body: Dict[str, Any] = {"limit": limit}
    if lease_seconds is not None:
        body["leaseSeconds"] = lease_seconds
    if probe_key_prefix is not None:
        body["probeKeyPrefix"] = probe_key_prefix
    if queues is not None:
        body["queue"] = queues[0] if len(queues) == 1 else queues
    return body  # None is left out (the server refuses a null field inside claimNext)


def _claimed_jobs(answer: Dict[str, Any]) -> Optional[List[ClaimedJob]]:
    """The answer's ``jobs`` as ClaimedJob, or None when it is not a list of {job, leaseToken}."""
    rows = answer.get("jobs")
    if not isinstance(rows, list) or not all(
            isinstance(r, dict) and _is_job_view(r.get("job")) and isinstance(r.get("leaseToken"), str) for r in rows):
        return None
    return [ClaimedJob(job=r["job"], lease_token=r["leaseToken"]) for r in rows]


def _release_result(op: str, row: Dict[str, Any], answer: Dict[str, Any]) -> ReleaseResult:
    if not row["released"] and row.get("reason") not in _RELEASE_REFUSALS:
        raise FleetProtocolError(op, f"a refused item without a known reason: {row!r}", answer)
    return ReleaseResult(job_id=row["jobId"], released=row["released"], job=row.get("job"), reason=row.get("reason"))
