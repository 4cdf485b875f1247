/**
 * The compare-and-set decisions of claim, renew and release. Each takes the row
 * as read inside the transaction and answers what to write (a patch) or why not.
 */
import { SWEEPER_HOLDER } from "./config.js";
import { deadlineMs, rateLimitedUntilMs, startByPassed } from "./flow.js";
import { notStartedByError, timedOutError } from "./flow-limits.js";
import { clampLeaseSeconds, formatPbDate, isLeaseLive } from "./lease.js";
import type { JobPatch, JobRow } from "./job-row.js";
import { DEFAULT_QUEUE } from "./queue-names.js";
import { hasAttemptsLeft, MAX_ATTEMPTS_ERROR, retryBackoffMs, TIMEOUT_BACKOFF_DRAW } from "./queue.js";
import type { ClaimRefusal, ReleaseRefusal, ReleaseTarget, RenewRefusal } from "./types.js";
import { HELD_STATUSES, inStatusClass, RETRYABLE_STATUSES, TERMINAL_STATUSES } from "./job-schema.js";

export function isHeldStatus(status: string): boolean {
  return inStatusClass(HELD_STATUSES, status);
}

export function isTerminalStatus(status: string): boolean {
  return inStatusClass(TERMINAL_STATUSES, status);
}

/**
 * Due: its run_at has come. Compared as text, as claim-next's SQL compares it
 * (PocketBase's layout is fixed-width, so text order is time order); an empty
 * run_at (a row no hook stamped) is due.
 */
export function isDue(row: JobRow, nowMs: number): boolean {
  return row.run_at <= formatPbDate(nowMs);
}

/**
 * The due time a row gets when it is created without one (through the record
 * API, say): its creation time. null: it has one.
 */
export function dueTimeOnCreate(runAt: string, nowMs: number): string | null {
  return runAt === "" ? formatPbDate(nowMs) : null;
}

/** The queue a row created without one gets (the record API, the admin UI), so its queue's index finds it. */
export function queueOnCreate(queue: string): string | null {
  return queue === "" ? DEFAULT_QUEUE : null;
}

/**
 * Claimable: pending and due, or held with an expired lease (the holder is
 * presumed dead). Terminal rows never are.
 */
export function isClaimable(row: JobRow, nowMs: number): boolean {
  return (row.status === "pending" && isDue(row, nowMs)) ||
    (isHeldStatus(row.status) && !isLeaseLive(row.lease_expires_at, nowMs));
}

export type ClaimDecision =
  | { kind: "win"; patch: JobPatch; steal: boolean }
  | { kind: "already_held"; leaseToken: string }
  /** `reason`: only a worker identity's claim of another queue's job gets one (identity.ts). */
  | { kind: "refused"; reason?: ClaimRefusal }
  /**
   * A claim of a job that used its attempts (dead-lettered), or a steal that
   * would pass the orphan cap (see StealRule): the job is failed instead.
   */
  | { kind: "give_up"; patch: JobPatch }
  /** A held row past its deadline (docs/flow-control.md "Timeouts"): the timeout is written instead of a claim. */
  | { kind: "timed_out"; patch: JobPatch };

/**
 * Flow control's say on a claim that would win (docs/flow-control.md "Limits"): a reason
 * to hold it back, or null. Absent: no flow control (a test model's claim).
 */
export type FlowCheck = (row: JobRow) => ClaimRefusal | null;

/**
 * What a steal of an expired lease means for the orphan count. The reference's
 * claim by id does not count it ("reference"), and its bookkeeping is kept
 * there. claim-next is pb-fleet's own: a steal is an orphaning like a sweeper
 * re-queue ("count_orphans"), and a job already orphaned `cap` times in a row
 * is given up rather than handed to one more worker, so a job that kills its
 * workers ends failed on whichever path reclaims it.
 */
export type StealRule = { kind: "reference" } | { kind: "count_orphans"; cap: number };
const REFERENCE_STEAL: StealRule = { kind: "reference" };

/**
 * A claimable row is won, and a held one is stolen (reclaim_count + 1). The
 * current holder asking again on a live lease is a retry after a lost answer:
 * it is told it holds the job (with its token), and the lease is not extended
 * (its heartbeat does that).
 */
export function decideClaim(
  row: JobRow,
  workerId: string,
  leaseSeconds: unknown,
  nowMs: number,
  newLeaseToken: () => string,
  stealRule: StealRule = REFERENCE_STEAL,
  flow?: FlowCheck,
): ClaimDecision {
  if (!isClaimable(row, nowMs)) {
    const heldByCaller = isHeldStatus(row.status) && row.claimed_by === workerId;
    return heldByCaller ? { kind: "already_held", leaseToken: row.lease_token } : { kind: "refused" };
  }
  const steal = isHeldStatus(row.status);
  // An attempt past its deadline failed: it is not an orphan, and not stolen.
  if (steal && isPastDeadline(row, nowMs)) return { kind: "timed_out", patch: timeoutPatch(row, nowMs) };
  // The two poison-job guards; attempts first: a job out of attempts is not delivered, whatever its orphan count.
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) {
    return { kind: "give_up", patch: deadLetterPatch(row, nowMs, MAX_ATTEMPTS_ERROR) };
  }
  const countsOrphans = steal && stealRule.kind === "count_orphans";
  if (countsOrphans && row.consecutive_orphan_count >= stealRule.cap) {
    return { kind: "give_up", patch: giveUpPatch(row, nowMs) };
  }
  if (startByPassed(row, nowMs)) return { kind: "refused", reason: "start_by_passed" };
  const held = flow === undefined ? null : flow(row);
  if (held !== null) return { kind: "refused", reason: held };
  const claimedAt = formatPbDate(nowMs);
  const patch: JobPatch = {
    status: "claimed",
    claimed_by: workerId,
    lease_expires_at: leaseEnd(nowMs, leaseSeconds, deadlineMs({ timeout_seconds: row.timeout_seconds, claimed_at: claimedAt })),
    lease_token: newLeaseToken(), // only for a winner: most claimers of a contended job lose
    version: row.version + 1,
    // Re-stamped on a steal: queue latency is measured to the last claim, and a timeout's deadline from it.
    claimed_at: claimedAt,
    attempts: row.attempts + 1,
  };
  if (steal) patch.reclaim_count = row.reclaim_count + 1;
  if (countsOrphans) patch.consecutive_orphan_count = row.consecutive_orphan_count + 1;
  return { kind: "win", patch, steal };
}

export interface HolderRequest {
  workerId: string;
  /** When given, the request is refused unless it is the current claim's token. */
  leaseToken: string | undefined;
}

function isStaleToken(row: JobRow, req: HolderRequest): boolean {
  return req.leaseToken !== undefined && req.leaseToken !== row.lease_token;
}

export type RenewDecision = { kind: "renew"; patch: JobPatch } | { kind: "refused"; reason?: RenewRefusal };

/**
 * Only the holder may renew, and only while its lease is live: once it lapsed
 * the job may have been stolen, and the old holder must stop. The first renew
 * promotes claimed to running. A job with a timeout is never renewed past its
 * deadline, and the holder asking at or after it is told "timed_out".
 */
export function decideRenew(
  row: JobRow,
  req: HolderRequest & { leaseSeconds: unknown; progress?: unknown },
  nowMs: number,
): RenewDecision {
  if (!isHeldStatus(row.status)) return REFUSED_RENEW;
  if (row.claimed_by !== req.workerId || isStaleToken(row, req)) return REFUSED_RENEW;
  if (isPastDeadline(row, nowMs)) return { kind: "refused", reason: "timed_out" };
  if (!isLeaseLive(row.lease_expires_at, nowMs)) return REFUSED_RENEW;
  const patch: JobPatch = {
    status: "running",
    lease_expires_at: leaseEnd(nowMs, req.leaseSeconds, deadlineMs(row)),
    version: row.version + 1,
  };
  if (req.progress !== undefined) patch.progress = req.progress;
  return { kind: "renew", patch };
}
const REFUSED_RENEW: RenewDecision = { kind: "refused" };

/** The row's attempt has a deadline and it has come (docs/flow-control.md "Timeouts"). */
export function isPastDeadline(row: JobRow, nowMs: number): boolean {
  const deadline = deadlineMs(row);
  return deadline !== null && nowMs >= deadline;
}

/**
 * An attempt that passed its deadline: a failed attempt by the retry rules
 * (backoff, or the dead letter at max_attempts) with the timeout as its
 * error; the orphan count is left as it is (a timeout is not an orphaning).
 */
export function timeoutPatch(row: JobRow, nowMs: number): JobPatch {
  const error = timedOutError(row.timeout_seconds ?? 0);
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) return deadLetterPatch(row, nowMs, error);
  const patch = backToPendingPatch(row, formatPbDate(nowMs + retryBackoffMs(row.attempts, TIMEOUT_BACKOFF_DRAW)));
  patch.last_error = error;
  return patch;
}

/** What a release may carry besides its target (docs/queue.md); undefined: absent. */
export interface ReleaseOutcome {
  result?: unknown;
  error?: string;
  /** In [0, 1): the retry backoff's jitter (Math.random() in the server). */
  jitter?: number;
  /** Only with target "retry" (docs/flow-control.md): due again this many seconds from now, the attempt given back. */
  rateLimitedFor?: number;
}

export type ReleaseDecision =
  /** `park`: a rate-limited release's seconds, for which its group (or queue) is parked in the same transaction. */
  | { kind: "release"; patch: JobPatch; park?: number }
  | { kind: "refused"; reason: ReleaseRefusal };

/**
 * Release by the holder. `done`/`failed` finish the job and need a live lease
 * (past it the caller may have been replaced). `pending` is the sweeper handing
 * back a dead holder's job: it needs an expired lease, re-checked here because
 * the holder may have renewed since the sweeper listed the row.
 */
export function decideRelease(
  row: JobRow,
  req: HolderRequest & { target: ReleaseTarget } & ReleaseOutcome,
  nowMs: number,
): ReleaseDecision {
  if (!isHeldStatus(row.status)) {
    // A done/failed row still names its last holder (and keeps its token),
    // and only that holder's own release can have put it there. A cancelled
    // one was finished by the canceller: held by no one.
    if (isTerminalStatus(row.status) && row.status !== "cancelled" && row.claimed_by === req.workerId) {
      return refused(isStaleToken(row, req) ? "refused_stale_token" : "refused_terminal_same_holder");
    }
    return refused("refused_not_holder");
  }
  if (row.claimed_by !== req.workerId) return refused("refused_not_holder");
  if (isStaleToken(row, req)) return refused("refused_stale_token");
  const live = isLeaseLive(row.lease_expires_at, nowMs);
  if (req.target === "pending") {
    if (live) return refused("refused_lease_live");
    // A sweeper handing back an attempt past its deadline: a failed attempt, as the server's sweep writes it.
    const patch = isPastDeadline(row, nowMs) ? timeoutPatch(row, nowMs) : requeuePatch(row, nowMs);
    return { kind: "release", patch: withOutcome(patch, req) };
  }
  if (!live) return refused("refused_not_holder");
  if (req.target === "retry" && req.rateLimitedFor !== undefined) {
    return { kind: "release", patch: withOutcome(rateLimitedPatch(row, nowMs, req.rateLimitedFor), req), park: req.rateLimitedFor };
  }
  if (req.target === "retry") return { kind: "release", patch: withOutcome(retryPatch(row, nowMs, req), req) };
  return {
    kind: "release",
    patch: withOutcome({
      status: req.target,
      finished_at: formatPbDate(nowMs),
      // A finished job starts any later orphaning with a fresh budget.
      consecutive_orphan_count: 0,
      version: row.version + 1,
    }, req),
  };
}

/** A release's result and error, written in the release's own transaction. */
function withOutcome(patch: JobPatch, req: ReleaseOutcome): JobPatch {
  if (req.result !== undefined) patch.result = req.result;
  if (req.error !== undefined) patch.last_error = req.error;
  return patch;
}

/**
 * A `retry` release: back to pending after the backoff while the job has
 * attempts left, dead-lettered otherwise. Its holder answered, so the orphan
 * count restarts; reclaim_count and requeued_at count only lost holders.
 */
function retryPatch(row: JobRow, nowMs: number, req: ReleaseOutcome): JobPatch {
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) {
    return deadLetterPatch(row, nowMs, req.error !== undefined ? req.error : MAX_ATTEMPTS_ERROR);
  }
  const patch = backToPendingPatch(row, formatPbDate(nowMs + retryBackoffMs(row.attempts, req.jitter ?? 0)));
  patch.consecutive_orphan_count = 0;
  return patch;
}

/**
 * A `retry` release with `rateLimitedFor` (docs/flow-control.md): due when the target's
 * limit has reset, and the attempt given back, so waiting out a rate limit
 * never dead-letters a job (max_attempts is not consulted).
 */
function rateLimitedPatch(row: JobRow, nowMs: number, seconds: number): JobPatch {
  const patch = backToPendingPatch(row, formatPbDate(rateLimitedUntilMs(nowMs, seconds)));
  patch.attempts = Math.max(0, row.attempts - 1);
  patch.consecutive_orphan_count = 0;
  // It has started (docs/flow-control.md: start_by guards the first start only), though its attempt is given back.
  if ((row.start_by ?? "") !== "") patch.start_by = "";
  return patch;
}

/** Back to pending, due at `runAt`, held by no one. */
function backToPendingPatch(row: JobRow, runAt: string): JobPatch {
  return {
    status: "pending",
    run_at: runAt,
    claimed_by: "",
    lease_token: "",
    // A pending row must not look held until then.
    lease_expires_at: "",
    progress: null,
    version: row.version + 1,
  };
}

/**
 * Dead-lettered: failed, held by no one (the last holder's late release gets
 * refused_not_holder), with when and why. `retry` brings it back.
 */
export function deadLetterPatch(row: JobRow, nowMs: number, error: string): JobPatch {
  const now = formatPbDate(nowMs);
  return {
    status: "failed",
    claimed_by: "",
    lease_token: "",
    dead_lettered_at: now,
    finished_at: now,
    last_error: error,
    version: row.version + 1,
  };
}

/** POST /api/fleet/cancel: a job not yet finished is cancelled; its holder's renew and release are refused from then on. */
export function decideCancel(row: JobRow, nowMs: number): JobPatch | null {
  if (row.status !== "pending" && !isHeldStatus(row.status)) return null;
  return {
    status: "cancelled",
    finished_at: formatPbDate(nowMs),
    // claimed_by stays on record (who was running it); decideRelease treats a cancelled row as held by no one.
    lease_token: "",
    version: row.version + 1,
  };
}

/** Statuses POST /api/fleet/retry brings back. */
export function isRetryable(status: string): boolean {
  return inStatusClass(RETRYABLE_STATUSES, status);
}

/**
 * POST /api/fleet/retry: a failed or cancelled job goes back to pending, due
 * now, with its attempts and orphan count reset; last_error is kept as its
 * history. null when its status is not retryable.
 */
export function retryJobPatch(row: JobRow, nowMs: number): JobPatch | null {
  if (!isRetryable(row.status)) return null;
  return {
    status: "pending",
    run_at: formatPbDate(nowMs),
    attempts: 0,
    finished_at: "",
    dead_lettered_at: "",
    claimed_by: "",
    lease_token: "",
    consecutive_orphan_count: 0,
    progress: null,
    // start_by guards a first start only; a retried job starts afresh.
    start_by: "",
    version: row.version + 1,
  };
}

/**
 * A job never started by its start_by (docs/flow-control.md): failed by the maintenance
 * tick, with the date in PocketBase's layout; not a dead letter (no attempt
 * of it ever failed).
 */
export function notStartedPatch(row: JobRow, nowMs: number): JobPatch {
  return {
    status: "failed",
    finished_at: formatPbDate(nowMs),
    last_error: notStartedByError(row.start_by ?? ""),
    version: row.version + 1,
  };
}

/** Back to pending on behalf of a holder whose lease lapsed (a release to pending, or the server sweeper). */
export function requeuePatch(row: JobRow, nowMs: number): JobPatch {
  return {
    status: "pending",
    claimed_by: "",
    lease_token: "",
    // The expired lease stays as the row's "last in flight" marker.
    reclaim_count: row.reclaim_count + 1,
    consecutive_orphan_count: row.consecutive_orphan_count + 1,
    requeued_at: formatPbDate(nowMs),
    version: row.version + 1,
  };
}

/** `result.reason` of a job the server gave up on at the orphan cap. */
export const ORPHAN_CAP_REASON = "orphan_cap";

/** A given-up job's `last_error`, around the orphanings it counts (giveUpPatch; giveUpErrorSql in SQL). */
const GIVE_UP_BEFORE = "pb-fleet gave up: the lease of this job expired ";
const GIVE_UP_AFTER = " times in a row without a release";

/** giveUpPatch's error in SQLite, of the orphan count before the give-up (an SQL expression). */
export function giveUpErrorSql(orphanCount: string): string {
  return `('${GIVE_UP_BEFORE}' || ((${orphanCount}) + 1) || '${GIVE_UP_AFTER}')`;
}

/**
 * The server gives up on a job whose lease expired once more after `cap`
 * consecutive orphanings (the sweeper, or a claim-next steal).
 */
export function giveUpPatch(row: JobRow, nowMs: number): JobPatch {
  const error = `${GIVE_UP_BEFORE}${row.consecutive_orphan_count + 1}${GIVE_UP_AFTER}`;
  return {
    status: "failed",
    // A dead letter too (stats, retry), with its own reason.
    dead_lettered_at: formatPbDate(nowMs),
    last_error: error,
    // The server, not the last worker, finished it: that worker's late release
    // must get refused_not_holder, not refused_terminal_same_holder (which
    // would let it write its result). It stays on record in result.lastHolder.
    claimed_by: SWEEPER_HOLDER,
    lease_token: "",
    finished_at: formatPbDate(nowMs),
    // Kept, not reset as by a worker's release: it is the evidence, and what
    // the stats count as "past the orphan cap".
    result: {
      error,
      reason: ORPHAN_CAP_REASON,
      lastHolder: row.claimed_by,
    },
    version: row.version + 1,
  };
}

function refused(reason: ReleaseRefusal): ReleaseDecision {
  return { kind: "refused", reason };
}

/** now + the clamped lease, but never past the attempt's deadline (which wins over the 1-second floor). */
function leaseEnd(nowMs: number, leaseSeconds: unknown, deadline: number | null): string {
  const end = nowMs + clampLeaseSeconds(leaseSeconds) * 1000;
  return formatPbDate(deadline === null ? end : Math.min(end, deadline));
}
