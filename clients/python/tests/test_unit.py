"""Pure pieces: option checks (before any request), batching, backoff, timeout arithmetic; and the
Worker's threads against an in-memory server (FakeServer)."""
from __future__ import annotations

import asyncio
import socket
import threading
import time
from datetime import datetime
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set

import pytest

from pb_fleet import FleetClient, FleetHttpError, FleetNetworkError, FleetProtocolError, FleetTimeoutError, Job, JobSignal, RateLimitedError, Worker
from pb_fleet import _util as u
from pb_fleet.client import (
    ClaimedJob, CompleteAndClaimResult, HeartbeatLease, HeartbeatResult, Release, ReleaseResult, WorkerIdentity, release_item,
)
from pb_fleet.errors import is_transient


@pytest.fixture
def dead_url() -> Iterator[str]:
    """A port nobody listens on: a request that got through would be a FleetNetworkError, not the check's error."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    yield f"http://127.0.0.1:{port}"


def test_a_request_to_a_dead_port_is_a_network_error(dead_url: str) -> None:
    with pytest.raises(FleetNetworkError):
        FleetClient(dead_url, token="t", timeout=2).stats()


def test_a_silent_server_is_a_timeout_error() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # accepts, never answers
    try:
        client = FleetClient(f"http://127.0.0.1:{listener.getsockname()[1]}", token="t", timeout=0.3)
        with pytest.raises(FleetTimeoutError) as err:
            client.stats()
        assert is_transient(err.value)
    finally:
        listener.close()


@pytest.mark.parametrize("kwargs, error", [
    ({}, TypeError),
    ({"worker": ("name", "")}, TypeError),
    ({"worker": ("a", "b"), "email": "x@y.z"}, TypeError),
    ({"email": "x@y.z"}, TypeError),
    ({"token": "t", "timeout": 0}, ValueError),
])
def test_client_options_are_checked(kwargs: Any, error: type) -> None:
    with pytest.raises(error):
        FleetClient("http://127.0.0.1:1", **kwargs)


def test_client_url_is_checked() -> None:
    with pytest.raises(ValueError, match="url"):
        FleetClient("127.0.0.1:8090", token="t")


@pytest.mark.parametrize("item, message", [
    ({"probe_key": ""}, "probe_key"),
    ({"probe_key": "k", "run_at": datetime(2030, 1, 1)}, "run_at"),
    ({"probe_key": "k", "run_at": "2030-01-01T00:00:00"}, "run_at"),
    ({"probe_key": "k", "run_at": "2030-01-01T00:00:00Z", "delay_seconds": 1}, "not both"),
    ({"probe_key": "k", "priority": 1001}, "priority"),
    ({"probe_key": "k", "max_attempts": -1}, "max_attempts"),
    ({"probe_key": "k", "queue": "bad queue"}, "queue"),
    ({"probe_key": "k", "timeout_seconds": 0}, "timeout_seconds"),
    ({"probe_key": "k", "payload": {"x": float("nan")}}, "payload"),
    ({"probe_key": "k", "payload": "x" * (1024 * 1024)}, "payload"),
    ({"probe_key": "k", "colour": "red"}, "unknown option"),
])
def test_enqueue_items_are_checked_before_any_request(dead_url: str, item: Any, message: str) -> None:
    client = FleetClient(dead_url, token="t")
    with pytest.raises((TypeError, ValueError), match=message):
        client.enqueue_many([{"probe_key": "fine"}, item])


def test_claim_next_arguments_are_checked(dead_url: str) -> None:
    client = FleetClient(dead_url, token="t")
    with pytest.raises(ValueError, match="limit"):
        client.claim_next("w", limit=101)
    with pytest.raises(ValueError, match="reserved"):
        client.claim_next("pb-fleet-sweeper")
    with pytest.raises(ValueError, match="queue"):
        client.claim_next("w", queue=[f"q{i}" for i in range(17)])
    with pytest.raises(ValueError, match="lease_seconds"):
        client.claim_next("w", lease_seconds=0.5)


def test_complete_and_claim_sends_one_call_and_reads_its_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    client = FleetClient("http://127.0.0.1:9", token="t")
    sent: List[Any] = []
    answers: List[Dict[str, Any]] = []

    def post(op: str, path: str, body: Dict[str, Any], timeout: Any) -> Dict[str, Any]:
        sent.append((op, path, body))
        return answers.pop(0)

    monkeypatch.setattr(client, "_post", post)
    job = {"id": "j2", "status": "claimed"}
    answers.append({"results": [{"jobId": "j1", "released": True}], "jobs": [{"job": job, "leaseToken": "t2"}]})
    out = client.complete_and_claim("w", [Release("j1", "done", lease_token="t1", result={"ok": 1})], limit=5, queue="q")
    assert sent == [("complete_and_claim", "/api/fleet/complete", {
        "workerId": "w", "releases": [{"jobId": "j1", "status": "done", "leaseToken": "t1", "result": {"ok": 1}}],
        "claimNext": {"limit": 5, "queue": "q"}})]
    assert out == CompleteAndClaimResult(results=[ReleaseResult("j1", True)], jobs=[ClaimedJob(job, "t2")])
    # A server from before claims on complete ignores the field: no `jobs`.
    answers.append({"results": [{"jobId": "j1", "released": False, "reason": "refused_stale_token"}]})
    out = client.complete_and_claim("w", [Release("j1", "done")], limit=1)
    assert out.jobs is None and out.results == [ReleaseResult("j1", False, reason="refused_stale_token")]
    answers.append({"results": [{"jobId": "j1", "released": True}], "jobs": [{"job": job}]})
    with pytest.raises(FleetProtocolError, match="jobs"):
        client.complete_and_claim("w", [Release("j1", "done")], limit=1)
    # Checked before any request.
    sent.clear()
    with pytest.raises(ValueError, match="limit"):
        client.complete_and_claim("w", [Release("j1", "done")], limit=0)
    with pytest.raises(TypeError, match="1 to 100"):
        client.complete_and_claim("w", [Release(f"j{i}", "done") for i in range(101)], limit=1)
    with pytest.raises(ValueError, match="queue"):
        client.complete_and_claim("w", [Release("j1", "done")], limit=1, queue=[f"q{i}" for i in range(17)])
    assert sent == []


def test_release_items_are_checked() -> None:
    assert release_item("r", Release("j", "retry", "tok", error="e", rate_limited_for=5)) == {
        "jobId": "j", "status": "retry", "leaseToken": "tok", "error": "e", "rateLimitedFor": 5}
    with pytest.raises(ValueError, match="status"):
        release_item("r", Release("j", "finished"))
    with pytest.raises(ValueError, match="rate_limited_for"):
        release_item("r", Release("j", "done", rate_limited_for=5))
    with pytest.raises(ValueError, match="error"):
        release_item("r", Release("j", "failed", error="x" * 70_000))


def _handler(job: Job) -> None:
    return None


@pytest.mark.parametrize("kwargs, error", [
    ({}, TypeError),
    ({"handler": _handler, "handlers": {"q": _handler}}, TypeError),
    ({"handlers": {"q": _handler}, "queue": "q"}, TypeError),
    ({"handlers": {"bad name": _handler}}, ValueError),
    ({"handlers": {}}, ValueError),
    ({"handler": _handler, "concurrency": 0}, ValueError),
    ({"handler": _handler, "concurrency": 1.5}, ValueError),
    ({"handler": _handler, "lease_seconds": 0}, ValueError),
    ({"handler": _handler, "lease_seconds": 4000}, ValueError),
    ({"handler": _handler, "renew_every": 1}, ValueError),
    ({"handler": _handler, "poll_interval": 0}, ValueError),
    ({"handler": _handler, "poll_interval": 5, "max_poll_interval": 1}, ValueError),
    ({"handler": _handler, "worker_id": "pb-fleet-sweeper"}, ValueError),
    ({"handler": _handler, "queue": "no spaces"}, ValueError),
])
def test_worker_options_are_checked(kwargs: Any, error: type) -> None:
    with pytest.raises(error):
        Worker(FleetClient("http://127.0.0.1:1", token="t"), **kwargs)


def test_worker_stop_mode_is_checked() -> None:
    worker = Worker(FleetClient("http://127.0.0.1:1", token="t"), handler=_handler)
    with pytest.raises(ValueError, match="mode"):
        worker.stop("later")


def test_cut_batch_by_items_and_bytes() -> None:
    assert u.cut_batch([10] * 250) == 100
    assert u.cut_batch([10] * 7) == 7
    assert u.cut_batch([]) == 0
    # 3 items of 1.5 MiB: two fit in 4 MiB with the envelope, the third goes in the next call.
    assert u.cut_batch([1_572_864] * 3) == 2
    # One item over the budget still goes alone (the server judges it), never stuck.
    assert u.cut_batch([5 * 1_048_576, 10]) == 1
    assert [len(c) for c in u.chunks(list(range(250)), 100)] == [100, 100, 50]


def test_backoff_is_bounded_and_jittered() -> None:
    assert u.backoff_delay(0, 0.5, 10, rand=lambda: 0.0) == 0.25
    assert u.backoff_delay(0, 0.5, 10, rand=lambda: 0.999999) == pytest.approx(0.5, abs=1e-5)
    assert u.backoff_delay(3, 0.5, 10, rand=lambda: 0.0) == 2.0
    assert u.backoff_delay(50, 0.5, 10, rand=lambda: 1.0) == 10.0
    assert u.backoff_delay(10_000, 0.5, 10, rand=lambda: 0.5) == 7.5  # no overflow after a long idle run
    delays = {u.backoff_delay(2, 1, 100) for _ in range(20)}
    assert len(delays) > 1 and all(1.0 <= d <= 4.0 for d in delays)


def test_timeout_arithmetic() -> None:
    assert u.timeout_margin(2) == pytest.approx(0.2)
    assert u.timeout_margin(60) == 2.0
    assert u.timeout_fires_at(100.0, 2) == pytest.approx(101.8)
    assert u.timeout_fires_at(100.0, 60) == 158.0
    view = {"deadline": "2030-01-01 00:00:00.000Z", "timeout_seconds": 30}
    assert u.attempt_deadline(view, 100.0) == (130.0, 30)
    assert u.attempt_deadline({"deadline": None, "timeout_seconds": 0}, 100.0) is None
    assert u.lease_end(100.0, 30, 110.0) == 110.0  # the server clamps the lease to the deadline
    assert u.lease_end(100.0, 3, None) == 103.0


def test_rate_limited_for_and_error_fitting() -> None:
    assert [u.rate_limited_for(s) for s in (0, 0.2, 1.5, 10**9)] == [1, 1, 2, 86_400]
    with pytest.raises(TypeError):
        RateLimitedError("soon")  # type: ignore[arg-type]
    long = "é" * 40_000  # 80,000 bytes of UTF-8
    fitted = u.fit_error(long)
    assert len(fitted.encode("utf-8")) <= u.MAX_ERROR_BYTES and fitted.endswith("[truncated]")
    assert u.fit_error("short") == "short"


def test_own_worker_id_and_transient_errors() -> None:
    assert u.own_worker_id("abc", "host-1") == "abc/host-1"
    assert u.own_worker_id("abc", "abc/host-1") == "abc/host-1"
    assert u.own_worker_id("abc", "abc") == "abc"
    assert u.own_worker_id("abc", "abcd") == "abc/abcd"
    assert is_transient(FleetHttpError("x", 503, "down"))
    assert is_transient(FleetHttpError("x", 429, "slow"))
    assert not is_transient(FleetHttpError("x", 400, "bad"))


def test_job_signal() -> None:
    sig = JobSignal()
    assert not sig.is_set() and not sig.wait(0.01) and sig.reason is None
    sig.raise_if_set()
    first = RuntimeError("first")
    assert sig.set(first) and not sig.set(RuntimeError("second"))
    assert sig.is_set() and sig.wait(0) and sig.reason is first
    with pytest.raises(RuntimeError, match="first"):
        sig.raise_if_set()


# ---- the Worker against an in-memory server (a FleetClient whose calls never leave the process) ----

class FakeServer(FleetClient):
    """claim_next hands out what ``offer`` queued; a lease token is live while it is the job's latest."""

    def __init__(self, identity_id: Optional[str] = None) -> None:
        super().__init__("http://127.0.0.1:1", token="t")
        self.lock = threading.Lock()
        self.offers: List[ClaimedJob] = []
        self.tokens: Dict[str, str] = {}
        self.refuse_renew: Set[str] = set()  # lease tokens a heartbeat refuses
        self.renewed: List[str] = []  # lease tokens renewed, in order
        self.releases: List[Release] = []
        self.answers: List[ReleaseResult] = []
        self.claim_calls = 0
        self.claim_errors = 0
        self.identity_id = identity_id

    @property
    def is_worker_identity(self) -> bool:
        return self.identity_id is not None

    def identity(self) -> Optional[WorkerIdentity]:
        return None if self.identity_id is None else WorkerIdentity(self.identity_id, "w", [], False)

    def offer(self, job_id: str, token: str, **view: Any) -> None:
        with self.lock:
            self.tokens[job_id] = token
            self.offers.append(ClaimedJob({"id": job_id, "queue": "default", "attempts": 1, "max_attempts": 3, **view},
                                          token))

    def claim_next(self, worker_id: str, *, limit: int = 1, **kwargs: Any) -> List[ClaimedJob]:
        with self.lock:
            self.claim_calls += 1
        try:
            u.check_worker_id("claim_next", worker_id)
        except ValueError:
            with self.lock:
                self.claim_errors += 1
            raise
        with self.lock:
            out, self.offers = self.offers[:limit], self.offers[limit:]
        return out

    def heartbeat(self, worker_id: str, leases: Sequence[HeartbeatLease], **kwargs: Any) -> List[HeartbeatResult]:
        out = []
        with self.lock:
            for lease in leases:
                ok = self.tokens.get(lease.job_id) == lease.lease_token and lease.lease_token not in self.refuse_renew
                if ok:
                    self.renewed.append(str(lease.lease_token))
                out.append(HeartbeatResult(lease.job_id, ok, reason=None if ok else "renew_refused"))
        return out

    def complete(self, worker_id: str, releases: Sequence[Release], **kwargs: Any) -> List[ReleaseResult]:
        out = []
        with self.lock:
            for r in releases:
                self.releases.append(r)
                if self.tokens.get(r.job_id) != r.lease_token:
                    out.append(ReleaseResult(r.job_id, False, reason="refused_stale_token"))
                else:
                    del self.tokens[r.job_id]
                    out.append(ReleaseResult(r.job_id, True, job={"status": "pending" if r.status == "retry" else r.status}))
            self.answers.extend(out)
        return out


def until(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.02)
    return check()


def fast_worker(server: FakeServer, handler: Callable[[Job], Any], **kwargs: Any) -> Worker:
    return Worker(server, handler=handler, lease_seconds=1, poll_interval=0.02, max_poll_interval=0.05, **kwargs)


@pytest.mark.parametrize("error", [SystemExit(3), KeyboardInterrupt(), asyncio.CancelledError()])
def test_a_handler_raising_a_base_exception_is_released_and_keeps_its_slot(error: BaseException) -> None:
    server = FakeServer()

    def handler(job: Job) -> Any:
        if job.id == "boom":
            raise error
        return {"ok": True}

    worker = fast_worker(server, handler).start()
    try:
        server.offer("boom", "t1")
        assert until(lambda: len(server.answers) == 1)
        server.offer("next", "t2")  # the one slot still runs jobs
        assert until(lambda: len(server.answers) == 2), "the slot thread died"
    finally:
        assert worker.stop(timeout=5), "stop() did not return"
    boom, after = server.releases
    assert boom.status == "retry" and type(error).__name__ in (boom.error or "")
    assert after.status == "done" and all(a.released for a in server.answers)


def test_a_job_re_handed_while_it_runs_reports_under_the_new_lease_token() -> None:
    server = FakeServer()
    go = threading.Event()
    seen: List[str] = []

    def handler(job: Job) -> Any:
        go.wait(5)
        seen.append(job.lease_token)
        return "result"

    worker = fast_worker(server, handler, concurrency=2).start()
    try:
        server.offer("j", "old")
        assert until(lambda: worker.in_flight == 1)
        server.offer("j", "new")  # the server saw the lease lapse first and handed the job to us again
        assert until(lambda: not server.offers)
        assert until(lambda: "new" in server.renewed)  # the running handler's lease is the new one now
        go.set()
        assert until(lambda: len(server.answers) == 1)
    finally:
        assert worker.stop(timeout=5)
    assert server.releases[0].lease_token == "new" and server.answers[0].released, server.answers
    assert seen == ["new"] and worker.in_flight == 0


def test_a_new_claim_of_a_job_still_winding_down_waits_for_that_run_then_runs() -> None:
    server = FakeServer()
    first_may_end = threading.Event()
    runs: List[str] = []
    lost: List[str] = []

    def handler(job: Job) -> Any:
        runs.append(job.lease_token)
        if job.lease_token == "t1":
            first_may_end.wait(10)  # ignores its signal: winds down slowly
            return "late"
        return "second"

    def on_event(name: str, fields: Dict[str, Any]) -> None:
        if name == "lease_lost":
            lost.append(fields["jobId"])

    worker = fast_worker(server, handler, concurrency=2, on_event=on_event).start()
    try:
        server.offer("j", "t1")
        assert until(lambda: runs == ["t1"])
        with server.lock:
            server.refuse_renew.add("t1")  # the lease is lost: the first run is now winding down
        assert until(lambda: lost == ["j"])
        server.offer("j", "t2")  # claimed again while the first handler has not returned
        assert until(lambda: not server.offers)
        assert until(lambda: server.renewed.count("t2") >= 2), "the waiting claim's lease is not renewed"
        assert runs == ["t1"], "the new claim ran beside the earlier run"
        assert worker.in_flight == 2
        first_may_end.set()
        assert until(lambda: runs == ["t1", "t2"]), "the new claim never ran"
        assert until(lambda: any(a.released for a in server.answers))
    finally:
        first_may_end.set()
        assert worker.stop(timeout=5)
    done = [r for r, a in zip(server.releases, server.answers) if a.released]
    assert [(r.lease_token, r.status, r.result) for r in done] == [("t2", "done", "second")]


def test_a_waiting_claim_whose_signal_is_set_does_not_run() -> None:
    server = FakeServer()
    first_may_end = threading.Event()
    runs: List[str] = []
    lost: List[str] = []

    def handler(job: Job) -> Any:
        runs.append(job.lease_token)
        first_may_end.wait(10)
        return None

    def on_event(name: str, fields: Dict[str, Any]) -> None:
        if name == "lease_lost":
            lost.append(fields["jobId"])

    worker = fast_worker(server, handler, concurrency=2, on_event=on_event).start()
    try:
        server.offer("j", "t1")
        assert until(lambda: runs == ["t1"])
        with server.lock:
            server.refuse_renew.add("t1")
        assert until(lambda: len(lost) == 1)
        server.offer("j", "t2")
        assert until(lambda: "t2" in server.renewed)
        with server.lock:
            server.refuse_renew.add("t2")  # the waiting claim's lease is lost too
        assert until(lambda: len(lost) == 2)
        first_may_end.set()
        assert until(lambda: worker.in_flight == 0)
    finally:
        first_may_end.set()
        assert worker.stop(timeout=5)
    assert runs == ["t1"]


def test_start_after_stop_starts_nothing() -> None:
    server = FakeServer()
    worker = fast_worker(server, _handler)
    worker.stop(wait=False)  # e.g. a SIGTERM between install_sigterm_handler and start()
    assert worker.start() is worker
    assert worker.wait(5)
    time.sleep(0.2)
    assert server.claim_calls == 0 and not worker.running
    assert not [t for t in threading.enumerate() if t.name.startswith("pb-fleet-") and t.name != "pb-fleet-stop"]


def test_a_composed_worker_id_over_256_bytes_stops_the_worker_with_an_error() -> None:
    server = FakeServer(identity_id="r" * 15)
    errors: List[Any] = []
    worker = fast_worker(server, _handler, worker_id="x" * 250,
                         on_event=lambda name, fields: errors.append(fields["error"]) if name == "error" else None)
    worker.start()
    assert worker.wait(5), "the Worker went on claiming with a workerId the server refuses"
    assert server.claim_calls == 0
    assert isinstance(worker.error, ValueError) and "256" in str(worker.error)
    assert errors and errors[0] is worker.error


@pytest.mark.parametrize("where", ["handler", "on_event"])
def test_stop_called_on_a_workers_own_thread_does_not_deadlock(where: str) -> None:
    server = FakeServer()
    holder: List[Worker] = []
    returned: List[bool] = []

    def handler(job: Job) -> Any:
        if where == "handler":
            returned.append(holder[0].stop())
        return "ok"

    def on_event(name: str, fields: Dict[str, Any]) -> None:
        if where == "on_event" and name == "claimed":
            returned.append(holder[0].stop())

    holder.append(fast_worker(server, handler, on_event=on_event))
    holder[0].start()
    server.offer("j", "t1")
    assert holder[0].wait(5), "stop() from the Worker's own thread deadlocked"
    assert returned == [False]
    assert [r.status for r in server.releases] == ["done"]  # stop("finish"): the running job reported


def test_an_answer_larger_than_the_client_reads_is_a_protocol_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_ANSWER_BYTES the client stops reading and says why (never transient: the same call gets the same answer)."""
    import http.server

    limit = 64 * 1024
    monkeypatch.setattr(u, "MAX_ANSWER_BYTES", limit)
    prefix = b'{"counts": {}}'

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            size = int(self.headers["X-Size"])
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            body = prefix + b" " * (size - len(prefix))
            try:
                for at in range(0, size, 4096):
                    self.wfile.write(body[at:at + 4096])
            except OSError:
                pass  # the client stopped reading

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        for size, fits in ((16 * limit, False), (limit, True)):
            client = FleetClient(url, token="t", timeout=5)
            client._opener.addheaders = [("X-Size", str(size))]
            if fits:
                assert client.stats() == {"counts": {}}
            else:
                with pytest.raises(FleetProtocolError) as err:
                    client.stats()
                assert f"larger than {limit} bytes" in str(err.value)
                assert not is_transient(err.value)
    finally:
        server.shutdown()
        server.server_close()
