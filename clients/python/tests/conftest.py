"""A real PocketBase for the session (scripts/pocketbase/serve-for-tests.mjs, PB_VERSION picks it), and helpers."""
from __future__ import annotations

import http.client
import http.server
import json
import os
import secrets
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest

from pb_fleet import FleetClient

REPO = Path(os.environ.get("PB_FLEET_REPO", Path(__file__).resolve().parents[3]))
SERVE = REPO / "scripts" / "pocketbase" / "serve-for-tests.mjs"


class Server:
    def __init__(self, info: Dict[str, Any]) -> None:
        self.url: str = info["url"]
        self.version: str = info["version"]
        self.admin_email: str = info["adminEmail"]
        self.admin_password: str = info["adminPassword"]
        self.token: str = info["token"]

    def admin_request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Authorization": self.token, "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as response:
            return json.loads(response.read() or b"null")

    def row(self, job_id: str) -> Dict[str, Any]:
        row: Dict[str, Any] = self.admin_request("GET", f"/api/collections/probe_jobs/records/{job_id}")
        return row

    def make_identity(self, queues: List[str], can_enqueue: bool = False) -> Tuple[str, str, str]:
        """A fleet_workers record: (username, password, record id)."""
        name = f"w_{secrets.token_hex(5)}"
        password = secrets.token_urlsafe(18)
        record = self.admin_request("POST", "/api/collections/fleet_workers/records", {
            "username": name, "password": password, "passwordConfirm": password, "queues": queues,
            "can_enqueue": can_enqueue})
        return name, password, record["id"]


@pytest.fixture(scope="session")
def pb() -> Iterator[Server]:
    if not SERVE.exists():
        pytest.fail(f"{SERVE} is missing: run the tests from a pb-fleet checkout (or set PB_FLEET_REPO)")
    # stdin stays open for the session: serve-for-tests stops PocketBase when it closes.
    proc = subprocess.Popen(["node", str(SERVE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=REPO)
    assert proc.stdout is not None and proc.stdin is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=30)
        pytest.fail(f"serve-for-tests exited ({proc.returncode}) without a server: see its stderr above")
    server = Server(json.loads(line))
    try:
        yield server
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def queue_name() -> str:
    """A queue of the test's own, so tests never see each other's jobs."""
    return f"q-{secrets.token_hex(4)}"


@pytest.fixture
def admin(pb: Server) -> FleetClient:
    return FleetClient(pb.url, email=pb.admin_email, password=pb.admin_password, timeout=10)


def wait_until(predicate: Callable[[], Any], timeout: float = 20.0, interval: float = 0.05, what: str = "") -> Any:
    """Polls until ``predicate()`` is truthy; its value, or an AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate}")
        time.sleep(interval)


class DroppingProxy:
    """A tiny HTTP proxy to the server that runs some requests but drops their answers (closes the
    connection without a reply), as a network that loses answers would."""

    def __init__(self, upstream: str, drop: Dict[str, int]) -> None:
        self.upstream = upstream.replace("http://", "")
        self.drop = dict(drop)  # path -> how many answers to drop
        self.dropped: Dict[str, int] = {}
        self.lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                conn = http.client.HTTPConnection(proxy.upstream, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn.request(self.command, self.path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                conn.close()
                path = self.path.split("?")[0]
                with proxy.lock:
                    if proxy.drop.get(path, 0) > 0:
                        proxy.drop[path] -= 1
                        proxy.dropped[path] = proxy.dropped.get(path, 0) + 1
                        self.close_connection = True
                        return  # the server ran it; its answer is lost
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = _forward
            do_POST = _forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def wait() -> Callable[..., Any]:
    """wait_until as a fixture (test modules cannot import conftest under --import-mode=importlib)."""
    return wait_until


@pytest.fixture
def dropping_proxy(pb: Server) -> Iterator[Callable[[Dict[str, int]], DroppingProxy]]:
    made: List[DroppingProxy] = []

    def make(drop: Dict[str, int]) -> DroppingProxy:
        proxy = DroppingProxy(pb.url, drop)
        made.append(proxy)
        return proxy

    yield make
    for proxy in made:
        proxy.close()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under ci.sh: the package under test must be the installed wheel, not src/."""
    expected = os.environ.get("PB_FLEET_EXPECT_INSTALLED")
    if expected:
        import pb_fleet
        actual = os.path.dirname(os.path.abspath(pb_fleet.__file__))
        if actual != os.path.abspath(expected):
            raise pytest.UsageError(f"pb_fleet was imported from {actual}, not the installed wheel at {expected}")
