"""The conformance worker of docs/client-conformance.md: ``python -m pb_fleet.conformance``.

Signs in as a worker identity, runs one Worker whose handler does what each job's payload asks,
prints one JSON object per line on stdout (diagnostics on stderr), and on SIGTERM stops
gracefully ("finish"), prints {"event":"stopped"} and exits 0.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import threading
from typing import Any, Dict, Mapping, Optional, Set

from . import _util as u
from .client import FleetClient
from .errors import PermanentJobError, RateLimitedError
from .worker import Job, Worker, install_sigterm_handler

_print_lock = threading.Lock()
# Jobs this process has rate-limited once (one id per rate_limited job run here: a test program's set).
_rate_limited_once: Set[str] = set()

EXIT_CRASH = 17
EXIT_BAD_CONFIG = 2


def emit(event: Dict[str, Any]) -> None:
    """One JSON line on stdout, whole and flushed (handlers print from several threads)."""
    line = json.dumps(event, separators=(",", ":")) + "\n"
    with _print_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def echo(job: Job) -> Dict[str, Any]:
    payload = job.payload if isinstance(job.payload, dict) else {}
    return {"echo": payload.get("value"), "attempt": job.attempt}


def _seconds(payload: Mapping[str, Any], default_ms: float) -> float:
    ms = payload.get("ms", default_ms)
    return max(0.0, float(ms)) / 1000 if u.is_number(ms) else default_ms / 1000


def handle(job: Job) -> Any:
    """The conformance handler: the payload's ``op`` says what to do."""
    payload: Mapping[str, Any] = job.payload if isinstance(job.payload, dict) else {}
    op = payload.get("op")
    emit({"event": "start", "jobId": job.id, "attempt": job.attempt})
    until = payload.get("untilAttempt")
    reached = isinstance(until, int) and job.attempt >= until
    message = str(payload.get("message", op))
    if op == "echo":
        return echo(job)
    if op == "fail":
        if reached:
            return echo(job)
        raise RuntimeError(message)
    if op == "permanent":
        raise PermanentJobError(message)
    if op == "sleep":
        if job.signal.wait(_seconds(payload, 0)):
            emit({"event": "signal", "jobId": job.id})
            raise RuntimeError("interrupted")
        return echo(job)
    if op == "wait_signal":
        if job.signal.wait(_seconds(payload, 60_000)):
            emit({"event": "signal", "jobId": job.id})
            raise RuntimeError("interrupted")
        return {"signalled": False}
    if op == "crash":
        if reached:
            return echo(job)
        emit({"event": "crash", "jobId": job.id})
        sys.stderr.flush()
        os._exit(EXIT_CRASH)  # at once, releasing nothing
    if op == "progress":
        job.progress(payload.get("progress"))
        if job.signal.wait(_seconds(payload, 0)):
            emit({"event": "signal", "jobId": job.id})
            raise RuntimeError("interrupted")
        return echo(job)
    if op == "rate_limited":
        # A rate-limited release gives the attempt back, so `attempt` never passes untilAttempt: as the
        # Node reference worker does, only a job's first run in this process is rate-limited.
        with _print_lock:
            first_run = job.id not in _rate_limited_once
            _rate_limited_once.add(job.id)
        if reached or not first_run:
            return echo(job)
        retry_after = payload.get("retryAfterSeconds", 1)
        raise RateLimitedError(float(retry_after) if u.is_number(retry_after) else 1.0,
                               str(payload["message"]) if "message" in payload else None)
    raise PermanentJobError(f"unknown op {op!r}")


def _env_number(env: Mapping[str, str], name: str, default: float, low: float) -> float:
    text = env.get(name)
    if text is None or text == "":
        return default
    try:
        value = float(text)
    except ValueError:
        raise SystemExit(_config_error(f"{name} must be a number (got {text!r})")) from None
    if value < low:
        raise SystemExit(_config_error(f"{name} must be at least {low:g} (got {text!r})"))
    return value


def _config_error(sentence: str) -> int:
    sys.stderr.write(f"pb_fleet.conformance: {sentence}\n")
    return EXIT_BAD_CONFIG


def main(env: Optional[Mapping[str, str]] = None) -> int:
    env = os.environ if env is None else env
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    missing = [name for name in ("PB_FLEET_URL", "PB_FLEET_WORKER_IDENTITY", "PB_FLEET_WORKER_PASSWORD",
                                 "PB_FLEET_WORKER_ID", "PB_FLEET_QUEUE") if not env.get(name)]
    if missing:
        return _config_error(f"missing environment: {', '.join(missing)}")
    concurrency = int(_env_number(env, "PB_FLEET_CONCURRENCY", 4, 1))
    lease_seconds = _env_number(env, "PB_FLEET_LEASE_SECONDS", 3, 1)
    max_poll = _env_number(env, "PB_FLEET_POLL_MS", 200, 1) / 1000
    try:
        client = FleetClient(env["PB_FLEET_URL"], worker=(env["PB_FLEET_WORKER_IDENTITY"], env["PB_FLEET_WORKER_PASSWORD"]))
        identity = client.identity()
        if identity is None:
            raise RuntimeError("no worker identity after signing in")
        worker_id = u.own_worker_id(identity.id, env["PB_FLEET_WORKER_ID"])
        worker = Worker(client, handler=handle, queue=env["PB_FLEET_QUEUE"], worker_id=worker_id,
                        concurrency=concurrency, lease_seconds=lease_seconds,
                        poll_interval=min(0.05, max_poll), max_poll_interval=max_poll)
    except (TypeError, ValueError) as err:
        return _config_error(str(err))
    except Exception as err:  # noqa: BLE001 - a sentence, not a traceback
        sys.stderr.write(f"pb_fleet.conformance: could not sign in: {err}\n")
        return 1
    # A SIGTERM from here on is safe: before start() it makes start() a no-op, and wait() returns.
    install_sigterm_handler(worker, "finish")
    emit({"event": "ready", "workerId": worker.worker_id})
    worker.start()
    worker.wait()
    emit({"event": "stopped"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
