"""Against a real PocketBase (the session's, PB_VERSION picks it): no mocks."""
from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List

import pytest

from pb_fleet import (
    FleetClient,
    FleetForbiddenError,
    FleetHttpError,
    Job,
    JobTimeoutError,
    LeaseLostError,
    PermanentJobError,
    RateLimitedError,
    Release,
    Worker,
    WorkerStoppingError,
)

FAST = dict(lease_seconds=3, poll_interval=0.05, max_poll_interval=0.2)


def worker_client(pb: Any, queues: List[str], can_enqueue: bool = False, url: str = "") -> FleetClient:
    name, password, _ = pb.make_identity(queues, can_enqueue)
    return FleetClient(url or pb.url, worker=(name, password), timeout=5)


def stopped(worker: Worker) -> None:
    assert worker.stop("finish", timeout=30), "the worker did not stop within 30 s"


def test_enqueue_and_drain_exactly_once(pb: Any, admin: FleetClient, queue_name: str, wait: Callable[..., Any]) -> None:
    enqueued = admin.enqueue_many([{"probe_key": f"p/{i}", "payload": {"n": i}, "queue": queue_name} for i in range(30)])
    assert all(e.created for e in enqueued) and len({e.id for e in enqueued}) == 30
    runs: Dict[str, int] = collections.Counter()
    lock = threading.Lock()

    def handler(job: Job) -> Dict[str, Any]:
        with lock:
            runs[job.id] += 1
        return {"double": job.payload["n"] * 2, "attempt": job.attempt}

    client = worker_client(pb, [queue_name])
    identity = client.identity()
    assert identity is not None
    worker = Worker(client, handler=handler, queue=queue_name, worker_id="host-1", concurrency=4, **FAST).start()
    try:
        wait(lambda: admin.stats(queue=queue_name)["counts"]["done"] == 30, what="30 jobs done")
    finally:
        stopped(worker)
    assert worker.worker_id == f"{identity.id}/host-1"
    assert dict(runs) == {e.id: 1 for e in enqueued}
    for i, e in enumerate(enqueued):
        row = pb.row(e.id)
        assert row["status"] == "done"
        assert row["result"] == {"double": 2 * i, "attempt": 1}
        assert row["attempts"] == 1
        assert row["claimed_by"] == worker.worker_id


def test_retry_then_done(pb: Any, admin: FleetClient, queue_name: str, wait: Callable[..., Any]) -> None:
    job = admin.enqueue("retry/1", payload={}, queue=queue_name, max_attempts=3)

    def handler(j: Job) -> Any:
        if j.attempt < 2:
            raise RuntimeError("flaky target")
        return {"ok": j.attempt}

    worker = Worker(worker_client(pb, [queue_name]), handler=handler, queue=queue_name, **FAST).start()
    try:
        row = wait(lambda: (r := pb.row(job.id))["status"] == "done" and r, timeout=20, what="done after a retry")
    finally:
        stopped(worker)
    assert row["attempts"] == 2 and row["result"] == {"ok": 2}
    assert row["last_error"] == "flaky target"


def test_permanent_failure_and_the_dead_letter(pb: Any, admin: FleetClient, queue_name: str, wait: Callable[..., Any]) -> None:
    permanent = admin.enqueue("perm/1", payload={"kind": "permanent"}, queue=queue_name, max_attempts=5)
    capped = admin.enqueue("cap/1", payload={"kind": "always"}, queue=queue_name, max_attempts=1)

    def handler(j: Job) -> Any:
        if j.payload["kind"] == "permanent":
            raise PermanentJobError("no such probe")
        raise ValueError("still broken")

    worker = Worker(worker_client(pb, [queue_name]), handler=handler, queue=queue_name, **FAST).start()
    try:
        wait(lambda: admin.stats(queue=queue_name)["counts"]["failed"] == 2, what="both failed")
    finally:
        stopped(worker)
    row = pb.row(permanent.id)
    assert (row["status"], row["attempts"], row["last_error"]) == ("failed", 1, "no such probe")
    row = pb.row(capped.id)
    assert (row["status"], row["last_error"]) == ("failed", "still broken")
    assert row["dead_lettered_at"] != ""


def test_cancel_sets_the_handlers_signal_and_writes_nothing(pb: Any, admin: FleetClient, queue_name: str,
                                                            wait: Callable[..., Any]) -> None:
    started = threading.Event()
    seen: List[BaseException] = []

    def handler(j: Job) -> Any:
        if j.payload["op"] == "echo":
            return "next"
        started.set()
        if j.signal.wait(20):
            assert j.signal.reason is not None
            seen.append(j.signal.reason)
            return {"should": "not be written"}
        return {"signalled": False}

    victim = admin.enqueue("cancel/1", payload={"op": "wait"}, queue=queue_name)
    worker = Worker(worker_client(pb, [queue_name]), handler=handler, queue=queue_name, **FAST).start()
    try:
        assert started.wait(10)
        assert admin.cancel(victim.id).cancelled
        wait(lambda: seen, timeout=10, what="the handler's signal")
        after = admin.enqueue("cancel/2", payload={"op": "echo"}, queue=queue_name)
        wait(lambda: pb.row(after.id)["status"] == "done", what="the next job done")
    finally:
        stopped(worker)
    assert isinstance(seen[0], LeaseLostError)
    row = pb.row(victim.id)
    assert row["status"] == "cancelled" and row["result"] in (None, "")


def test_a_forbidden_call_is_fleet_forbidden_error(pb: Any, queue_name: str) -> None:
    client = worker_client(pb, [queue_name], can_enqueue=False)
    with pytest.raises(FleetForbiddenError) as stats_err:
        client.stats()
    assert stats_err.value.status == 403
    with pytest.raises(FleetForbiddenError):
        client.enqueue("nope", queue=queue_name)
    with pytest.raises(FleetForbiddenError):
        client.claim_next(client.identity().id + "/x", queue="another-queue")  # type: ignore[union-attr]


def test_complete_and_claim_releases_and_claims_in_one_call(pb: Any, admin: FleetClient, queue_name: str) -> None:
    admin.enqueue_many([{"probe_key": f"cc/{i}", "queue": queue_name} for i in range(4)])
    first = admin.claim_next("cc-w", limit=1, queue=queue_name)
    assert len(first) == 1
    out = admin.complete_and_claim("cc-w", [Release(first[0].job["id"], "done", lease_token=first[0].lease_token,
                                                    result={"n": 1})], limit=2, queue=queue_name, lease_seconds=60)
    assert [(r.job_id, r.released) for r in out.results] == [(first[0].job["id"], True)]
    assert out.jobs is not None and len(out.jobs) == 2
    assert first[0].job["id"] not in {c.job["id"] for c in out.jobs}
    assert all(c.job["status"] == "claimed" and c.job["claimed_by"] == "cc-w" and c.lease_token for c in out.jobs)
    # A refused release is answered per item; the claim still runs in the same call.
    again = admin.complete_and_claim("cc-w", [Release(first[0].job["id"], "done", lease_token="not-the-token")],
                                     limit=5, queue=queue_name)
    assert [r.reason for r in again.results] == ["refused_stale_token"]
    assert again.jobs is not None and len(again.jobs) == 1
    # Bad claim fields are the server's 400 too when the client cannot know (a prefix over the limit).
    with pytest.raises(FleetHttpError) as err:
        admin.complete_and_claim("cc-w", [Release(again.jobs[0].job["id"], "done", lease_token=again.jobs[0].lease_token)],
                                 limit=1, probe_key_prefix="x" * 2000)
    assert err.value.status == 400 and "claimNext" in err.value.message


def test_a_400_is_fleet_http_error_with_the_servers_message(admin: FleetClient) -> None:
    with pytest.raises(FleetHttpError) as err:
        admin.claim_next("w-400", probe_key_prefix="x" * 2000)
    assert err.value.status == 400
    assert "probeKeyPrefix" in err.value.message
    assert not isinstance(err.value, FleetForbiddenError)


def test_wrong_password_is_an_auth_error(pb: Any, queue_name: str) -> None:
    name, _, _ = pb.make_identity([queue_name])
    from pb_fleet import FleetAuthError
    with pytest.raises(FleetAuthError) as err:
        FleetClient(pb.url, worker=(name, "wrong-password-123")).identity()
    assert err.value.status == 400


def test_lost_answers_do_not_drop_results(pb: Any, admin: FleetClient, queue_name: str, wait: Callable[..., Any],
                                          dropping_proxy: Callable[..., Any]) -> None:
    proxy = dropping_proxy({"/api/fleet/complete": 2, "/api/fleet/heartbeat": 1})
    jobs = admin.enqueue_many([{"probe_key": f"lost/{i}", "payload": {"i": i}, "queue": queue_name} for i in range(6)])
    runs: Dict[str, int] = collections.Counter()
    lock = threading.Lock()

    def handler(j: Job) -> Any:
        with lock:
            runs[j.id] += 1
        if j.payload["i"] == 0:
            time.sleep(1.5)  # long enough for a heartbeat to go out (and its answer to be lost)
        return {"i": j.payload["i"]}

    client = worker_client(pb, [queue_name], url=proxy.url)
    worker = Worker(client, handler=handler, queue=queue_name, concurrency=3, **FAST).start()
    try:
        wait(lambda: admin.stats(queue=queue_name)["counts"]["done"] == 6, timeout=30, what="6 done")
    finally:
        stopped(worker)
    assert proxy.dropped.get("/api/fleet/complete") == 2, proxy.dropped
    assert proxy.dropped.get("/api/fleet/heartbeat") == 1, proxy.dropped
    assert dict(runs) == {j.id: 1 for j in jobs}
    for i, j in enumerate(jobs):
        row = pb.row(j.id)
        assert (row["status"], row["result"], row["attempts"]) == ("done", {"i": i}, 1)


def test_timeout_sets_the_signal_and_retries(pb: Any, admin: FleetClient, queue_name: str, wait: Callable[..., Any]) -> None:
    job = admin.enqueue("slow/1", payload={}, queue=queue_name, timeout_seconds=2, max_attempts=1)
    seen: List[Any] = []

    def handler(j: Job) -> Any:
        started = time.monotonic()
        j.signal.wait(30)
        seen.append((j.signal.reason, time.monotonic() - started))
        return "late"

    worker = Worker(worker_client(pb, [queue_name]), handler=handler, queue=queue_name, **FAST).start()
    try:
        row = wait(lambda: (r := pb.row(job.id))["status"] == "failed" and r, timeout=15, what="timed out")
    finally:
        stopped(worker)
    reason, after = seen[0]
    assert isinstance(reason, JobTimeoutError)
    assert 1.5 <= after <= 2.0  # deadline - min(2 s, 2 s / 10) = 1.8 s after the claim
    assert row["last_error"] == "timed out after 2 s" and row["result"] in (None, "")


def test_progress_is_stored_while_the_job_runs(pb: Any, admin: FleetClient, queue_name: str, wait: Callable[..., Any]) -> None:
    job = admin.enqueue("progress/1", payload={}, queue=queue_name)
    release = threading.Event()

    def handler(j: Job) -> Any:
        j.progress({"step": 1})
        release.wait(20)
        return "ok"

    worker = Worker(worker_client(pb, [queue_name]), handler=handler, queue=queue_name, lease_seconds=30,
                    poll_interval=0.05, max_poll_interval=0.2).start()
    try:
        # The lease is 30 s (renewed every 10 s): only the progress flush can store it this soon.
        started = time.monotonic()
        wait(lambda: pb.row(job.id)["progress"] == {"step": 1}, timeout=5, what="progress on the row")
        assert time.monotonic() - started < 3
        release.set()
        wait(lambda: pb.row(job.id)["status"] == "done")
    finally:
        release.set()
        stopped(worker)


def test_rate_limited_parks_the_job(pb: Any, admin: FleetClient, queue_name: str, wait: Callable[..., Any]) -> None:
    job = admin.enqueue("rl/1", payload={}, queue=queue_name, max_attempts=1)
    starts: List[float] = []

    def handler(j: Job) -> Any:
        starts.append(time.monotonic())
        if len(starts) == 1:
            raise RateLimitedError(2)
        return {"attempt": j.attempt}

    worker = Worker(worker_client(pb, [queue_name]), handler=handler, queue=queue_name, **FAST).start()
    try:
        row = wait(lambda: (r := pb.row(job.id))["status"] == "done" and r, timeout=15, what="done after the park")
    finally:
        stopped(worker)
    assert starts[1] - starts[0] >= 1.9
    # The rate-limited attempt was given back: max_attempts 1 did not dead-letter it.
    assert row["result"] == {"attempt": 1}


def test_graceful_stop_finishes_running_jobs_and_claims_nothing_new(pb: Any, admin: FleetClient, queue_name: str,
                                                                    wait: Callable[..., Any]) -> None:
    first = admin.enqueue_many([{"probe_key": f"stop/{i}", "payload": {}, "queue": queue_name} for i in range(2)])
    running = threading.Semaphore(0)

    def handler(j: Job) -> Any:
        running.release()
        time.sleep(1.0)
        return {"finished": True, "signalled": j.signal.is_set()}

    worker = Worker(worker_client(pb, [queue_name]), handler=handler, queue=queue_name, concurrency=2, **FAST).start()
    assert running.acquire(timeout=10) and running.acquire(timeout=10)
    worker.stop("finish", wait=False)
    later = admin.enqueue("stop/later", payload={}, queue=queue_name)
    assert worker.wait(15)
    for e in first:
        row = pb.row(e.id)
        assert row["status"] == "done" and row["result"] == {"finished": True, "signalled": False}
    assert pb.row(later.id)["status"] == "pending"


def test_stop_release_hands_jobs_back(pb: Any, admin: FleetClient, queue_name: str) -> None:
    job = admin.enqueue("handback/1", payload={}, queue=queue_name)
    started = threading.Event()
    reasons: List[Any] = []

    def handler(j: Job) -> Any:
        started.set()
        j.signal.wait(20)
        reasons.append(j.signal.reason)
        return "never written"

    worker = Worker(worker_client(pb, [queue_name]), handler=handler, queue=queue_name, **FAST).start()
    assert started.wait(10)
    assert worker.stop("release", timeout=15)
    assert isinstance(reasons[0], WorkerStoppingError)
    row = pb.row(job.id)
    assert (row["status"], row["claimed_by"]) == ("pending", "")
    assert row["result"] in (None, "")


def test_conformance_worker(pb: Any, admin: FleetClient, queue_name: str, wait: Callable[..., Any]) -> None:
    """python -m pb_fleet.conformance: ready, start lines, a retry, SIGTERM -> stopped and exit 0."""
    name, password, record_id = pb.make_identity([queue_name])
    env = {**os.environ, "PB_FLEET_URL": pb.url, "PB_FLEET_WORKER_IDENTITY": name, "PB_FLEET_WORKER_PASSWORD": password,
           "PB_FLEET_WORKER_ID": "conf-1", "PB_FLEET_QUEUE": queue_name, "PB_FLEET_POLL_MS": "100"}
    echo = admin.enqueue("conf/echo", payload={"op": "echo", "value": [1, "a"]}, queue=queue_name)
    flaky = admin.enqueue("conf/fail", payload={"op": "fail", "message": "boom", "untilAttempt": 2},
                          queue=queue_name, max_attempts=3)
    proc = subprocess.Popen([sys.executable, "-m", "pb_fleet.conformance"], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    lines: List[Dict[str, Any]] = []
    try:
        lines.append(json.loads(proc.stdout.readline()))
        assert lines[0] == {"event": "ready", "workerId": f"{record_id}/conf-1"}
        wait(lambda: pb.row(flaky.id)["status"] == "done", timeout=20, what="the flaky job done")
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines += [json.loads(line) for line in out.splitlines()]
    assert proc.returncode == 0
    assert lines[-1] == {"event": "stopped"}
    starts = [line for line in lines if line["event"] == "start"]
    assert {"event": "start", "jobId": echo.id, "attempt": 1} in starts
    assert [s["attempt"] for s in starts if s["jobId"] == flaky.id] == [1, 2]
    assert pb.row(echo.id)["result"] == {"echo": [1, "a"], "attempt": 1}
    assert pb.row(flaky.id)["result"] == {"echo": None, "attempt": 2}


def test_admin_sign_in_finds_the_line_and_signs_in_again_after_a_401(pb: Any, admin: FleetClient) -> None:
    assert admin.stats()["counts"]["pending"] >= 0
    assert admin._auth_api == ("admins" if pb.version.startswith("0.22.") else "superusers")
    # A token the server no longer takes (expired, rotated): one 401, one sign-in, the call goes through.
    admin._token = pb.token[:-4] + "AAAA"
    assert "counts" in admin.stats()
    assert admin.token not in ("", pb.token[:-4] + "AAAA")


def test_a_token_only_client_raises_the_401(pb: Any) -> None:
    from pb_fleet import FleetAuthError
    with pytest.raises(FleetAuthError) as err:
        FleetClient(pb.url, token="not-a-token").stats()
    assert err.value.status == 401
