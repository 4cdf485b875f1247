"""FleetClient: the /api/fleet/* routes of pb-fleet over plain HTTP (urllib), for PocketBase 0.22 and 0.23+.

No SDK: the client makes few kinds of call, all with the same paths and bodies on both PocketBase
lines except the admin sign-in, which it finds out on the first one (0.23+'s ``_superusers``, else
0.22's ``admins``). The token is sent raw in ``Authorization``; after a 401 the client signs in again
once and retries the call. Thread-safe: the Worker's threads share one client.
"""
from __future__ import annotations

import http.client
import json
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _util as u
from .errors import (
    FleetAuthError,
    FleetForbiddenError,
    FleetHttpError,
    FleetNetworkError,
    FleetProtocolError,
    FleetTimeoutError,
    is_transient,
)

__all__ = [
    "FleetClient", "WorkerIdentity", "EnqueuedJob", "ClaimedJob", "ClaimResult", "RenewResult",
    "ReleaseResult", "HeartbeatLease", "HeartbeatResult", "Release", "CancelResult", "RetryResult",
]

JobView = Dict[str, Any]

_WORKER_AUTH_PATH = "/api/collections/fleet_workers/auth-with-password"
_AUTH_PATHS = {
    "superusers": "/api/collections/_superusers/auth-with-password",  # PocketBase 0.23+
    "admins": "/api/admins/auth-with-password",  # PocketBase 0.22
}
_RELEASE_REFUSALS = ("refused_terminal_same_holder", "refused_not_holder", "refused_lease_live", "refused_stale_token")
_ENQUEUE_OPTIONS = {
    "payload": "payload", "run_at": "runAt", "delay_seconds": "delaySeconds", "priority": "priority",
    "max_attempts": "maxAttempts", "unique_key": "uniqueKey", "queue": "queue", "group": "group",
    "timeout_seconds": "timeoutSeconds", "start_within_seconds": "startWithinSeconds",
}


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


WorkerCredentials = Union[Tuple[str, str], str]


class FleetClient:
    """A client of one pb-fleet server.

    Give exactly one way to sign in: ``worker=(identity, password)`` or ``worker="<worker token>"``
    (a ``fleet_workers`` record), or ``email=``/``password=`` of an admin (0.22) or superuser (0.23+),
    or ``token=`` (an admin's ready token; a 401 is then raised). ``timeout``: seconds per request.
    """

    def __init__(self, url: str, *, worker: Optional[WorkerCredentials] = None, email: Optional[str] = None,
                 password: Optional[str] = None, token: Optional[str] = None, timeout: float = 10.0) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"FleetClient: url must be an http:// or https:// URL (got {u.describe(url)})")
        if not u.is_number(timeout) or timeout <= 0:
            raise ValueError(f"FleetClient: timeout must be a number of seconds > 0 (got {u.describe(timeout)})")
        self.url = url.rstrip("/")
        self.timeout = float(timeout)
        self._worker_login: Optional[Tuple[str, str]] = None
        self._email: Optional[str] = None
        self._password: Optional[str] = None
        self._token = ""
        self._is_worker = worker is not None
        if worker is not None:
            if email is not None or password is not None or token is not None:
                raise TypeError("FleetClient: give worker=... or admin email/password/token, not both")
            if isinstance(worker, str) and worker != "":
                self._token = worker
            elif isinstance(worker, tuple) and len(worker) == 2 and all(isinstance(p, str) and p for p in worker):
                self._worker_login = (worker[0], worker[1])
            else:
                raise TypeError("FleetClient: worker must be (identity, password), two non-empty strings, "
                                f"or a worker token string (got {u.describe(worker)})")
        elif email is not None or password is not None:
            if token is not None:
                raise TypeError("FleetClient: give email/password or token, not both")
            if not (isinstance(email, str) and email and isinstance(password, str) and password):
                raise TypeError("FleetClient: email and password must both be non-empty strings")
            self._email, self._password = email, password
        elif isinstance(token, str) and token != "":
            self._token = token
        else:
            raise TypeError("FleetClient: give worker=(identity, password) or a worker token, "
                            "or admin email= and password=, or token=")
        self._auth_api: Optional[str] = None
        self._identity: Optional[WorkerIdentity] = None
        self._signin_lock = threading.Lock()
        # Environment proxies are ignored (as Node's fetch does): a worker talks to the URL it is given.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    # ---- identity and sign-in ---------------------------------------------------------

    @property
    def is_worker_identity(self) -> bool:
        return self._is_worker

    @property
    def token(self) -> str:
        return self._token

    def identity(self) -> Optional[WorkerIdentity]:
        """The worker identity this client calls as (signs in when needed); None for an admin client."""
        if not self._is_worker:
            return None
        if self._identity is None:
            if self._worker_login is not None:
                self.authenticate()
            else:
                body = self._call("identity", "POST", "/api/collections/fleet_workers/auth-refresh", None)
                self._adopt_worker_auth("identity", body)
        if self._identity is None:
            raise FleetProtocolError("identity", "no worker identity after signing in")
        return self._identity

    def authenticate(self) -> None:
        """Signs in with the credentials (threads share one sign-in)."""
        refused = self._token
        with self._signin_lock:
            # Another thread signed in while this one waited: its token is the fresh one.
            if self._token != refused and self._token != "":
                return
            if self._worker_login is not None:
                self._sign_in_worker(*self._worker_login)
            elif self._email is not None and self._password is not None:
                self._sign_in_admin(self._email, self._password)
            else:
                raise FleetAuthError("authenticate", 401, "this client has a token but no credentials to sign in with")

    def _sign_in_worker(self, identity: str, password: str) -> None:
        try:
            body = self._once("authenticate", "POST", _WORKER_AUTH_PATH, {"identity": identity, "password": password},
                              anonymous=True)
        except FleetHttpError as err:
            who = f"worker identity {identity!r}"
            if err.status in (400, 401):
                raise FleetAuthError("authenticate", err.status,
                                     f"{err.message} (the {who}'s name or password was refused)", err.body) from err
            if err.status == 403:
                raise FleetAuthError("authenticate", 403, f"{err.message} (the {who} may not sign in: is it disabled?)",
                                     err.body) from err
            if err.status == 404:
                raise FleetHttpError("authenticate", 404, f"{self.url} has no fleet_workers collection ({err.message})",
                                     err.body) from err
            raise
        self._adopt_worker_auth("authenticate", body)

    def _adopt_worker_auth(self, op: str, body: Any) -> None:
        if not isinstance(body, dict) or not isinstance(body.get("token"), str) or body["token"] == "":
            raise FleetProtocolError(op, "answer has no `token`", body)
        record = body.get("record")
        if not isinstance(record, dict) or not isinstance(record.get("id"), str) or record["id"] == "":
            raise FleetProtocolError(op, "answer has no `record` with an `id`", body)
        queues = record.get("queues")
        self._token = body["token"]
        self._identity = WorkerIdentity(
            id=record["id"],
            name=record["username"] if isinstance(record.get("username"), str) else "",
            queues=[q for q in queues if isinstance(q, str)] if isinstance(queues, list) else [],
            can_enqueue=record.get("can_enqueue") is True,
        )

    def _sign_in_admin(self, email: str, password: str) -> None:
        order = ["admins", "superusers"] if self._auth_api == "admins" else ["superusers", "admins"]
        for api in order:
            try:
                body = self._once("authenticate", "POST", _AUTH_PATHS[api], {"identity": email, "password": password},
                                  anonymous=True)
            except FleetHttpError as err:
                if err.status == 404:
                    continue  # the other PocketBase line's endpoint
                self._auth_api = api
                if err.status == 400:
                    raise FleetAuthError("authenticate", 400, f"{err.message} (the admin email or password was refused)",
                                         err.body) from err
                raise
            self._auth_api = api
            if not isinstance(body, dict) or not isinstance(body.get("token"), str) or body["token"] == "":
                raise FleetProtocolError("authenticate", "answer has no `token`", body)
            self._token = body["token"]
            return
        raise FleetHttpError("authenticate", 404, f"neither {_AUTH_PATHS['superusers']} (PocketBase 0.23+) nor "
                             f"{_AUTH_PATHS['admins']} (0.22) exists at {self.url}: is it a PocketBase server?")

    # ---- HTTP --------------------------------------------------------------------------

    def _can_sign_in(self) -> bool:
        return self._worker_login is not None or self._email is not None

    def _call(self, op: str, method: str, path: str, body: Any, *, query: Optional[Mapping[str, str]] = None,
              timeout: Optional[float] = None) -> Any:
        """One authorized call: signs in first if needed; after a 401 signs in again and retries once."""
        if self._token == "" and self._can_sign_in():
            self.authenticate()
        refused = self._token
        try:
            return self._once(op, method, path, body, query=query, timeout=timeout)
        except FleetAuthError as err:
            if isinstance(err, FleetForbiddenError) or not self._can_sign_in():
                raise
        # A call refused beside others shares their sign-in: a token changed since it went out is tried first.
        if self._token == refused:
            self.authenticate()
        try:
            return self._once(op, method, path, body, query=query, timeout=timeout)
        except FleetAuthError as err:
            if isinstance(err, FleetForbiddenError):
                raise
            raise FleetAuthError(op, err.status, f"{err.message} (again, right after signing in)", err.body) from err

    def _once(self, op: str, method: str, path: str, body: Any, *, query: Optional[Mapping[str, str]] = None,
              timeout: Optional[float] = None, anonymous: bool = False) -> Any:
        """One HTTP request; its answer as parsed JSON. Anything but a 2xx with JSON is raised typed."""
        wait = self.timeout if timeout is None else max(0.001, timeout)
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = None if body is None else u.json_text(body).encode("utf-8")
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if not anonymous and self._token:
            headers["Authorization"] = self._token  # both lines take the bare token
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with self._opener.open(request, timeout=wait) as response:
                status = int(response.status)
                text = response.read().decode("utf-8", errors="replace")
        except urllib.error.HTTPError as err:
            status = err.code
            try:
                text = err.read().decode("utf-8", errors="replace")
            except (OSError, http.client.HTTPException):
                text = ""
            finally:
                err.close()
        except (socket.timeout, TimeoutError) as err:
            raise FleetTimeoutError(op, wait) from err
        except urllib.error.URLError as err:
            if isinstance(err.reason, (socket.timeout, TimeoutError)):
                raise FleetTimeoutError(op, wait) from err
            raise FleetNetworkError(op, f"{op}: {err.reason}") from err
        except (OSError, http.client.HTTPException) as err:
            # Connection reset, the server closing without an answer (RemoteDisconnected), ...
            raise FleetNetworkError(op, f"{op}: {type(err).__name__}: {err}") from err
        parsed: Any
        ok = True
        try:
            parsed = json.loads(text) if text != "" else None
            ok = text != ""
        except ValueError:
            parsed, ok = None, False
        if 200 <= status < 300:
            if not ok:
                raise FleetProtocolError(op, f"answer is not JSON: {text[:200]!r}", text)
            return parsed
        answer = parsed if ok else (text or {})
        message = _message_of(answer)
        if status == 403 and self._is_worker:
            raise FleetForbiddenError(op, message, answer)
        if status == 401 or (status == 403 and not anonymous):
            raise FleetAuthError(op, status, message, answer)
        raise FleetHttpError(op, status, message, answer)

    def _post(self, op: str, path: str, body: Dict[str, Any], timeout: Optional[float] = None) -> Dict[str, Any]:
        answer = self._call(op, "POST", path, {k: v for k, v in body.items() if v is not None}, timeout=timeout)
        if not isinstance(answer, dict):
            raise FleetProtocolError(op, "answer is not a JSON object", answer)
        return answer

    def _retry_once(self, op: str, path: str, body: Dict[str, Any], timeout: Optional[float] = None) -> Dict[str, Any]:
        """For calls that are safe to repeat (claim: a repeat is answered alreadyHeld; renew; release)."""
        try:
            return self._post(op, path, body, timeout)
        except Exception as err:  # noqa: BLE001 - only transient failures are retried
            if not is_transient(err):
                raise
            return self._post(op, path, body, timeout)

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
        if not u.is_int_in(limit, 1, u.MAX_CLAIM_NEXT_LIMIT):
            raise ValueError(f"claim_next: limit must be an integer from 1 to {u.MAX_CLAIM_NEXT_LIMIT} (got {u.describe(limit)})")
        u.check_lease_seconds("claim_next", lease_seconds)
        queues = u.check_claim_queue("claim_next", queue)
        if probe_key_prefix is not None and not isinstance(probe_key_prefix, str):
            raise TypeError(f"claim_next: probe_key_prefix must be a string (got {u.describe(probe_key_prefix)})")
        body: Dict[str, Any] = {"workerId": worker_id, "limit": limit, "leaseSeconds": lease_seconds,
                                "probeKeyPrefix": probe_key_prefix}
        if queues is not None:
            body["queue"] = queues[0] if len(queues) == 1 else queues
        answer = self._post("claim_next", "/api/fleet/claim-next", body, timeout)
        rows = answer.get("jobs")
        if not isinstance(rows, list) or not all(
                isinstance(r, dict) and _is_job_view(r.get("job")) and isinstance(r.get("leaseToken"), str) for r in rows):
            raise FleetProtocolError("claim_next", "answer has no `jobs` list of {job, leaseToken}", answer)
        return [ClaimedJob(job=r["job"], lease_token=r["leaseToken"]) for r in rows]

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
            for r in rows:
                if not r["released"] and r.get("reason") not in _RELEASE_REFUSALS:
                    raise FleetProtocolError("complete", f"a refused item without a known reason: {r!r}", answer)
                out.append(ReleaseResult(job_id=r["jobId"], released=r["released"], job=r.get("job"),
                                         reason=r.get("reason")))
        return out

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


def _message_of(body: Any) -> str:
    """The protocol's ``{error}``, or PocketBase's ``{message, data}`` with its field errors, or a text's start."""
    if isinstance(body, str):
        return " ".join(body.split())[:200] or "(empty)"
    if not isinstance(body, dict):
        return "no message"
    if isinstance(body.get("error"), str):
        return str(body["error"])
    text = str(body["message"]) if isinstance(body.get("message"), str) else "no message"
    data = body.get("data")
    if isinstance(data, dict) and data:
        parts = [f"{k}: {v.get('message') if isinstance(v, dict) else v}" for k, v in data.items()]
        text += f" ({'; '.join(parts)})"
    return text
