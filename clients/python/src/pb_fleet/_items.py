"""The wire items of the client's calls, checked before any request, and the shape checks of the answers."""
from __future__ import annotations

from datetime import datetime
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from . import _util as u
from ._types import HeartbeatLease, Release
from .errors import FleetProtocolError

_ENQUEUE_OPTIONS = {
    "payload": "payload", "run_at": "runAt", "delay_seconds": "delaySeconds", "priority": "priority",
    "max_attempts": "maxAttempts", "unique_key": "uniqueKey", "queue": "queue", "group": "group",
    "timeout_seconds": "timeoutSeconds", "start_within_seconds": "startWithinSeconds",
}


# ---- item checks (before any request) ------------------------------------------------


def _enqueue_item(where: str, job: Mapping[str, Any]) -> Dict[str, Any]:
    if not isinstance(job, Mapping):
        raise TypeError(f"{where} must be a mapping {{probe_key, payload?, ...}} (got {u.describe(job)})")
    for key in job:
        if key != "probe_key" and key not in _ENQUEUE_OPTIONS:
            raise TypeError(f"{where}: unknown option {key!r} (known: probe_key, {', '.join(_ENQUEUE_OPTIONS)})")
    probe_key = job.get("probe_key")
    if not isinstance(probe_key, str) or probe_key == "":
        raise TypeError(f"{where}: probe_key must be a non-empty string (got {u.describe(probe_key)})")
    item: Dict[str, Any] = {"probeKey": probe_key}

    def bad(name: str, expected: str) -> ValueError:
        return ValueError(f"{where}: {name} must be {expected} (got {u.describe(job.get(name))})")

    payload = job.get("payload")
    if payload is not None:
        problem = u.json_size_problem(payload, u.MAX_PAYLOAD_BYTES)
        if problem is not None:
            raise bad("payload", problem)
        item["payload"] = payload
    run_at, delay = job.get("run_at"), job.get("delay_seconds")
    if run_at is not None and delay is not None:
        raise ValueError(f"{where}: give run_at or delay_seconds, not both")
    if isinstance(run_at, datetime):
        if run_at.tzinfo is None or run_at.utcoffset() is None:
            raise bad("run_at", "a datetime with a time zone (a naive datetime is ambiguous)")
        item["runAt"] = run_at.isoformat()
    elif run_at is not None:
        if not u.is_zoned_date_time(run_at):
            raise bad("run_at", "a zoned datetime, or ISO-8601 text with a zone (2030-01-01T12:00:00Z, +02:00)")
        item["runAt"] = run_at
    if delay is not None:
        if not u.is_number(delay) or delay < 0:
            raise bad("delay_seconds", "a finite number of seconds >= 0")
        item["delaySeconds"] = delay
    checks: List[Tuple[str, int, int]] = [("priority", -1000, 1000), ("max_attempts", 0, 1000),
                                          ("timeout_seconds", 1, u.MAX_TIMEOUT_SECONDS),
                                          ("start_within_seconds", 1, u.MAX_START_WITHIN_SECONDS)]
    for name, low, high in checks:
        value = job.get(name)
        if value is not None:
            if not u.is_int_in(value, low, high):
                raise bad(name, f"an integer from {low} to {high}")
            item[_ENQUEUE_OPTIONS[name]] = value
    unique_key = job.get("unique_key")
    if unique_key is not None:
        if not isinstance(unique_key, str):
            raise bad("unique_key", "a string")
        item["uniqueKey"] = unique_key
    queue = job.get("queue")
    if queue is not None:
        if not u.is_queue_name(queue):
            raise bad("queue", u.QUEUE_NAME_RULE)
        item["queue"] = queue
    group = job.get("group")
    if group is not None and group != "":
        if not isinstance(group, str) or len(group) > 200 or any(ord(c) < 32 or 127 <= ord(c) < 160 for c in group):
            raise bad("group", "1 to 200 characters with no control characters")
        item["group"] = group
    return item


def _check_progress(where: str, progress: Any) -> None:
    if progress is not None:
        problem = u.json_size_problem(progress, u.MAX_PROGRESS_BYTES)
        if problem is not None:
            raise ValueError(f"{where}: progress must be {problem}")


def _heartbeat_item(where: str, lease: HeartbeatLease) -> Dict[str, Any]:
    if not isinstance(lease, HeartbeatLease):
        raise TypeError(f"{where} must be a HeartbeatLease (got {u.describe(lease)})")
    u.check_job_id(where, lease.job_id)
    _check_progress(where, lease.progress)
    item: Dict[str, Any] = {"jobId": lease.job_id}
    if lease.lease_token is not None:
        item["leaseToken"] = lease.lease_token
    if lease.progress is not None:
        item["progress"] = lease.progress
    return item


def release_item(where: str, release: Release) -> Dict[str, Any]:
    """The wire item of a release, checked (None fields left out)."""
    if not isinstance(release, Release):
        raise TypeError(f"{where} must be a Release (got {u.describe(release)})")
    u.check_job_id(where, release.job_id)
    if release.status not in u.RELEASE_TARGETS:
        raise ValueError(f"{where}: status must be one of {', '.join(u.RELEASE_TARGETS)} (got {u.describe(release.status)})")
    item: Dict[str, Any] = {"jobId": release.job_id, "status": release.status}
    if release.lease_token is not None:
        if not isinstance(release.lease_token, str) or release.lease_token == "":
            raise TypeError(f"{where}: lease_token must be a non-empty string when given")
        item["leaseToken"] = release.lease_token
    if release.result is not None:
        problem = u.json_size_problem(release.result, u.MAX_RESULT_BYTES)
        if problem is not None:
            raise ValueError(f"{where}: result must be {problem}")
        item["result"] = release.result
    if release.error is not None:
        if not isinstance(release.error, str):
            raise TypeError(f"{where}: error must be a string (got {u.describe(release.error)})")
        if len(release.error.encode("utf-8")) > u.MAX_ERROR_BYTES:
            raise ValueError(f"{where}: error must be at most {u.MAX_ERROR_BYTES} bytes of UTF-8")
        item["error"] = release.error
    if release.rate_limited_for is not None:
        if release.status != "retry":
            raise ValueError(f"{where}: rate_limited_for goes only with status 'retry' (got {release.status!r})")
        if not u.is_int_in(release.rate_limited_for, 1, u.MAX_RATE_LIMITED_FOR_SECONDS):
            raise ValueError(f"{where}: rate_limited_for must be an integer from 1 to {u.MAX_RATE_LIMITED_FOR_SECONDS}")
        item["rateLimitedFor"] = release.rate_limited_for
    return item


def _batch_results(op: str, answer: Dict[str, Any], chunk: Sequence[Dict[str, Any]], flag: str) -> List[Dict[str, Any]]:
    rows = answer.get("results")
    if not isinstance(rows, list) or len(rows) != len(chunk) or not all(
            isinstance(r, dict) and r.get("jobId") == item["jobId"] and isinstance(r.get(flag), bool)
            for r, item in zip(rows, chunk)):
        raise FleetProtocolError(op, f"answer has no `results` list of {len(chunk)} {{jobId, {flag}}} in request order",
                                 answer)
    return rows


def _is_job_view(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str) and isinstance(value.get("status"), str)
