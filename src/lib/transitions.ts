/**
 * The compare-and-set decisions of claim, renew and release. Each takes the row
 * as read inside the transaction and answers what to write (a patch) or why not.
 */
import { SWEEPER_HOLDER } from "./config.js";
import { clampLeaseSeconds, formatPbDate, isLeaseLive } from "./lease.js";
import type { JobPatch, JobRow } from "./job-row.js";
import type { ReleaseRefusal, ReleaseTarget } from "./types.js";

export function isHeldStatus(status: string): boolean {
  return status === "claimed" || status === "running";
}

export function isTerminalStatus(status: string): boolean {
  return status === "done" || status === "failed";
}

/** Claimable: pending, or held with an expired lease (the holder is presumed dead). Terminal rows never are. */
export function isClaimable(row: JobRow, nowMs: number): boolean {
  return row.status === "pending" ||
    (isHeldStatus(row.status) && !isLeaseLive(row.lease_expires_at, nowMs));
}

export type ClaimDecision =
  | { kind: "win"; patch: JobPatch; steal: boolean }
  | { kind: "already_held"; leaseToken: string }
  | { kind: "refused" }
  /** A steal that would pass the orphan cap: the job is failed instead (see StealRule). */
  | { kind: "give_up"; patch: JobPatch };

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
): ClaimDecision {
  if (!isClaimable(row, nowMs)) {
    const heldByCaller = isHeldStatus(row.status) && row.claimed_by === workerId;
    return heldByCaller ? { kind: "already_held", leaseToken: row.lease_token } : { kind: "refused" };
  }
  const steal = isHeldStatus(row.status);
  const countsOrphans = steal && stealRule.kind === "count_orphans";
  if (countsOrphans && row.consecutive_orphan_count >= stealRule.cap) {
    return { kind: "give_up", patch: giveUpPatch(row, nowMs) };
  }
  const patch: JobPatch = {
    status: "claimed",
    claimed_by: workerId,
    lease_expires_at: leaseEnd(nowMs, leaseSeconds),
    lease_token: newLeaseToken(), // only for a winner: most claimers of a contended job lose
    version: row.version + 1,
    // Re-stamped on a steal: queue latency is measured to the last claim.
    claimed_at: formatPbDate(nowMs),
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

/**
 * Only the holder may renew, and only while its lease is live: once it lapsed
 * the job may have been stolen, and the old holder must stop. The first renew
 * promotes claimed to running.
 */
export function decideRenew(
  row: JobRow,
  req: HolderRequest & { leaseSeconds: unknown },
  nowMs: number,
): JobPatch | null {
  if (!isHeldStatus(row.status)) return null;
  if (row.claimed_by !== req.workerId || isStaleToken(row, req)) return null;
  if (!isLeaseLive(row.lease_expires_at, nowMs)) return null;
  return {
    status: "running",
    lease_expires_at: leaseEnd(nowMs, req.leaseSeconds),
    version: row.version + 1,
  };
}

export type ReleaseDecision =
  | { kind: "release"; patch: JobPatch }
  | { kind: "refused"; reason: ReleaseRefusal };

/**
 * Release by the holder. `done`/`failed` finish the job and need a live lease
 * (past it the caller may have been replaced). `pending` is the sweeper handing
 * back a dead holder's job: it needs an expired lease, re-checked here because
 * the holder may have renewed since the sweeper listed the row.
 */
export function decideRelease(
  row: JobRow,
  req: HolderRequest & { target: ReleaseTarget },
  nowMs: number,
): ReleaseDecision {
  if (!isHeldStatus(row.status)) {
    // A terminal row still names its last holder (and keeps its token), and
    // only that holder's own release can have put it there.
    if (isTerminalStatus(row.status) && row.claimed_by === req.workerId) {
      return refused(isStaleToken(row, req) ? "refused_stale_token" : "refused_terminal_same_holder");
    }
    return refused("refused_not_holder");
  }
  if (row.claimed_by !== req.workerId) return refused("refused_not_holder");
  if (isStaleToken(row, req)) return refused("refused_stale_token");
  const live = isLeaseLive(row.lease_expires_at, nowMs);
  if (req.target === "pending") {
    return live ? refused("refused_lease_live") : { kind: "release", patch: requeuePatch(row, nowMs) };
  }
  if (!live) return refused("refused_not_holder");
  return {
    kind: "release",
    patch: {
      status: req.target,
      finished_at: formatPbDate(nowMs),
      // A finished job starts any later orphaning with a fresh budget.
      consecutive_orphan_count: 0,
      version: row.version + 1,
    },
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

/**
 * The server gives up on a job whose lease expired once more after `cap`
 * consecutive orphanings (the sweeper, or a claim-next steal).
 */
export function giveUpPatch(row: JobRow, nowMs: number): JobPatch {
  return {
    status: "failed",
    // The server, not the last worker, finished it: that worker's late release
    // must get refused_not_holder, not refused_terminal_same_holder (which
    // would let it write its result). It stays on record in result.lastHolder.
    claimed_by: SWEEPER_HOLDER,
    lease_token: "",
    finished_at: formatPbDate(nowMs),
    // Kept, not reset as by a worker's release: it is the evidence, and what
    // the stats count as "past the orphan cap".
    result: {
      error: `pb-fleet gave up: the lease of this job expired ${row.consecutive_orphan_count + 1} times in a row without a release`,
      reason: ORPHAN_CAP_REASON,
      lastHolder: row.claimed_by,
    },
    version: row.version + 1,
  };
}

function refused(reason: ReleaseRefusal): ReleaseDecision {
  return { kind: "refused", reason };
}

function leaseEnd(nowMs: number, leaseSeconds: unknown): string {
  return formatPbDate(nowMs + clampLeaseSeconds(leaseSeconds) * 1000);
}
