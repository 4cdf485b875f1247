"""Pure pieces shared by the client and the Worker: limits, checks, batching, backoff, deadlines."""
from __future__ import annotations

import json
import math
import random
import re
from typing import Any, Callable, List, Optional, Sequence, Tuple, TypeVar

# The server's limits (src/lib/queue.ts, src/lib/flow-limits.ts, src/lib/validate.ts).
MAX_BATCH_ITEMS = 100
MAX_ENQUEUE_ITEMS = 1000
MAX_CLAIM_NEXT_LIMIT = 100
MAX_CLAIM_QUEUES = 16
MAX_PAYLOAD_BYTES = 1_048_576
MAX_RESULT_BYTES = 1_048_576
MAX_PROGRESS_BYTES = 4096
MAX_ERROR_BYTES = 65_536
MAX_BATCH_BODY_BYTES = 4 * 1_048_576
MAX_RATE_LIMITED_FOR_SECONDS = 86_400
# The most the client reads of one answer (src/lib/queue.ts MAX_ANSWER_BYTES, the Go client's maxAnswerBytes).
MAX_ANSWER_BYTES = 160 * 1_048_576
MAX_TIMEOUT_SECONDS = 86_400
MAX_START_WITHIN_SECONDS = 2_592_000
MIN_LEASE_SECONDS = 1
MAX_LEASE_SECONDS = 3600
RESERVED_WORKER_ID = "pb-fleet-sweeper"
RELEASE_TARGETS = ("done", "failed", "pending", "retry")
# A timeout fires this long before the attempt's deadline at most (docs/flow-control.md: deadline - min(2 s, timeout / 10)).
TIMEOUT_MARGIN_MAX_SECONDS = 2.0

QUEUE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
QUEUE_NAME_RULE = "a queue name: a letter or digit, then up to 63 letters, digits or _ . : -"
# ISO-8601 with a zone ("T" or a space between date and time: PocketBase's own form has a space and a Z).
_ZONED_DATE_TIME_RE = re.compile(
    r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)$", re.IGNORECASE)
_TRUNCATED = " [truncated]"

T = TypeVar("T")


def describe(value: object) -> str:
    """A value as an error message shows it (strings quoted and cut)."""
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 60 else value[:60] + "...")
    return f"{type(value).__name__} {value!r}"[:80]


def is_int_in(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_queue_name(value: object) -> bool:
    return isinstance(value, str) and QUEUE_NAME_RE.match(value) is not None


def is_zoned_date_time(value: object) -> bool:
    return isinstance(value, str) and _ZONED_DATE_TIME_RE.match(value) is not None


def json_text(value: Any) -> str:
    """Compact JSON as it goes on the wire; ValueError for what JSON cannot carry (NaN, a set...)."""
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ValueError(f"not JSON-serializable ({err})") from None


def json_size_problem(value: Any, max_bytes: int) -> Optional[str]:
    """None when ``value`` is JSON of at most ``max_bytes`` UTF-8 bytes, else what is wrong with it."""
    try:
        size = len(json_text(value).encode("utf-8"))
    except ValueError as err:
        return f"JSON ({err})"
    if size > max_bytes:
        return f"JSON of at most {max_bytes} bytes (it is {size})"
    return None


def fit_error(message: str) -> str:
    """An error text cut to the server's MAX_ERROR_BYTES (a longer one would fail the whole release)."""
    raw = message.encode("utf-8")
    if len(raw) <= MAX_ERROR_BYTES:
        return message
    budget = MAX_ERROR_BYTES - len(_TRUNCATED.encode("utf-8"))
    # errors="ignore" drops a code point cut in half at the end.
    return raw[:budget].decode("utf-8", errors="ignore") + _TRUNCATED


def check_claim_queue(where: str, queue: object) -> Optional[List[str]]:
    """A claim's ``queue`` option: None, a name, or 1..16 names (as a list)."""
    if queue is None:
        return None
    if isinstance(queue, str):
        if not is_queue_name(queue):
            raise ValueError(f"{where}: queue must be {QUEUE_NAME_RULE} (got {describe(queue)})")
        return [queue]
    if isinstance(queue, (list, tuple)):
        if not 1 <= len(queue) <= MAX_CLAIM_QUEUES:
            raise ValueError(f"{where}: queue must be a name or a list of 1 to {MAX_CLAIM_QUEUES} names (got {len(queue)})")
        for i, name in enumerate(queue):
            if not is_queue_name(name):
                raise ValueError(f"{where}: queue[{i}] must be {QUEUE_NAME_RULE} (got {describe(name)})")
        return [str(name) for name in queue]
    raise TypeError(f"{where}: queue must be a queue name or a list of names (got {describe(queue)})")


MAX_WORKER_ID_BYTES = 256  # the server's limit on a workerId (UTF-8)


def check_worker_id(where: str, worker_id: object) -> str:
    if not isinstance(worker_id, str) or worker_id == "":
        raise TypeError(f"{where}: worker_id must be a non-empty string (got {describe(worker_id)})")
    if worker_id == RESERVED_WORKER_ID:
        raise ValueError(f"{where}: worker_id {RESERVED_WORKER_ID!r} is reserved for the server's sweeper")
    if len(worker_id.encode("utf-8")) > MAX_WORKER_ID_BYTES:
        raise ValueError(f"{where}: worker_id must be at most {MAX_WORKER_ID_BYTES} bytes of UTF-8")
    return worker_id


def check_job_id(where: str, job_id: object) -> str:
    if not isinstance(job_id, str) or job_id == "":
        raise TypeError(f"{where}: job_id must be a non-empty string (got {describe(job_id)})")
    return job_id


def check_lease_seconds(where: str, lease_seconds: object) -> None:
    if lease_seconds is None:
        return
    if isinstance(lease_seconds, bool) or not isinstance(lease_seconds, (int, float)) \
            or not MIN_LEASE_SECONDS <= lease_seconds <= MAX_LEASE_SECONDS:
        raise ValueError(f"{where}: lease_seconds must be a number from {MIN_LEASE_SECONDS} to {MAX_LEASE_SECONDS} "
                         f"(got {describe(lease_seconds)})")


def own_worker_id(identity_id: str, configured: str) -> str:
    """The workerId a worker identity claims under: its record id, or ``<id>/<anything>``."""
    if configured == identity_id or configured.startswith(identity_id + "/"):
        return configured
    return f"{identity_id}/{configured}"


def chunks(items: Sequence[T], size: int) -> List[Sequence[T]]:
    """``items`` cut into consecutive runs of at most ``size``."""
    if size < 1:
        raise ValueError("chunks: size must be >= 1")
    return [items[i:i + size] for i in range(0, len(items), size)]


def cut_batch(sizes: Sequence[int], max_items: int = MAX_BATCH_ITEMS, max_bytes: int = MAX_BATCH_BODY_BYTES,
              envelope_bytes: int = 64) -> int:
    """How many of the leading items (of these JSON sizes) go in one call: at most ``max_items``,
    and no more body than ``max_bytes`` (items, commas and the envelope), but always at least one."""
    total = envelope_bytes
    count = 0
    for size in sizes:
        if count >= max_items:
            break
        extra = size + (1 if count > 0 else 0)
        if count > 0 and total + extra > max_bytes:
            break
        total += extra
        count += 1
    return count


def backoff_delay(attempt: int, initial: float, maximum: float, factor: float = 2.0,
                  rand: Callable[[], float] = random.random) -> float:
    """Delay before retry number ``attempt`` (0-based): initial * factor^attempt, capped, then
    "equal jitter" (between half and all of it), so a fleet that failed together does not retry
    in lock-step, yet never retries at once."""
    exponent = min(max(0, attempt), 64)  # (a long idle run must not overflow the float)
    base = min(maximum, initial * factor ** exponent)
    return base / 2 + rand() * (base / 2)


def rate_limited_for(retry_after_seconds: float) -> int:
    """A RateLimitedError's wait as a release takes it: whole seconds, 1 to 86400."""
    if not math.isfinite(retry_after_seconds):
        return MAX_RATE_LIMITED_FOR_SECONDS
    return min(MAX_RATE_LIMITED_FOR_SECONDS, max(1, math.ceil(retry_after_seconds)))


def timeout_margin(timeout_seconds: float) -> float:
    """How long before an attempt's deadline the Worker fires its timeout: min(2 s, timeout / 10)."""
    return min(TIMEOUT_MARGIN_MAX_SECONDS, timeout_seconds / 10)


def attempt_deadline(job: dict[str, Any], sent_at: float) -> Optional[Tuple[float, int]]:
    """The end of a claimed attempt on the local monotonic clock, and its timeout in seconds, or None.

    The server's deadline is its winning claim's instant + timeout_seconds, and that instant came
    after the claim was sent: send time + timeout is never later than it, whatever the clocks read.
    """
    deadline = job.get("deadline")
    seconds = job.get("timeout_seconds")
    if not isinstance(deadline, str) or deadline == "":
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds <= 0:
        return None
    return sent_at + float(seconds), int(seconds)


def timeout_fires_at(sent_at: float, timeout_seconds: float) -> float:
    """When the Worker sets a job's signal for its timeout: deadline - min(2 s, timeout / 10)."""
    return sent_at + timeout_seconds - timeout_margin(timeout_seconds)


def lease_end(renewed_at: float, lease_seconds: float, attempt_at: Optional[float]) -> float:
    """A lease's local end: the server clamps every lease to the attempt's deadline."""
    end = renewed_at + lease_seconds
    return end if attempt_at is None else min(end, attempt_at)
