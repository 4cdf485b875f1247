"""Pure pieces: option checks (before any request), batching, backoff, timeout arithmetic."""
from __future__ import annotations

import socket
from datetime import datetime
from typing import Any, Iterator

import pytest

from pb_fleet import FleetClient, FleetHttpError, FleetNetworkError, FleetTimeoutError, Job, JobSignal, RateLimitedError, Worker
from pb_fleet import _util as u
from pb_fleet.client import Release, release_item
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
