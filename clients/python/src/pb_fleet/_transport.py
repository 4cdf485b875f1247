"""The client's transport: signing in (worker identity or admin, either PocketBase line) and its HTTP calls."""
from __future__ import annotations

import http.client
import json
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from . import _util as u
from ._types import WorkerIdentity
from .errors import (
    FleetAuthError,
    FleetForbiddenError,
    FleetHttpError,
    FleetNetworkError,
    FleetProtocolError,
    FleetTimeoutError,
    is_transient,
)

_WORKER_AUTH_PATH = "/api/collections/fleet_workers/auth-with-password"
_AUTH_PATHS = {
    "superusers": "/api/collections/_superusers/auth-with-password",  # PocketBase 0.23+
    "admins": "/api/admins/auth-with-password",  # PocketBase 0.22
}

WorkerCredentials = Union[Tuple[str, str], str]


class _Transport:
    """FleetClient's sign-in and HTTP (its base class; the endpoint calls are FleetClient's own)."""

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
                raw = response.read(u.MAX_ANSWER_BYTES + 1)
                if len(raw) > u.MAX_ANSWER_BYTES:
                    raise FleetProtocolError(op, f"answer larger than {u.MAX_ANSWER_BYTES} bytes, the most the client reads")
                text = raw.decode("utf-8", errors="replace")
        except urllib.error.HTTPError as err:
            status = err.code
            try:
                text = err.read(u.MAX_ANSWER_BYTES).decode("utf-8", errors="replace")
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
