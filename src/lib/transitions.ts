/**
 * The compare-and-set decisions of claim, renew and release. Each takes the row
 * as read inside the transaction and answers what to write (a patch) or why not.
 */
import { clampLeaseSeconds, formatPbDate, isLeaseLive } from "./lease";
import type { JobPatch, JobRow } from "./job-row";
import type { ReleaseRefusal, ReleaseTarget } from "./types";

export function isHeldStatus(status: string): boolean {
  return status === "claimed" || status === "running";
}

export function isTerminalStatus(status: string): boolean {
  return status === "done" || status === "failed";
}

export type ClaimDecision =
  | { kind: "win"; patch: JobPatch; steal: boolean }
  | { kind: "already_held" }
  | { kind: "refused" };

/**
 * Claimable: pending, or held with an expired lease (the holder is presumed dead
 * and the lease is stolen). Terminal rows never are. The current holder asking
 * again on a live lease is a retry after a lost answer: it is told it holds the
 * job, and the lease is not extended (its heartbeat does that).
 */
export function decideClaim(
  row: JobRow,
  workerId: string,
  leaseSeconds: unknown,
  nowMs: number,
): ClaimDecision {
  const held = isHeldStatus(row.status);
  const live = held && isLeaseLive(row.lease_expires_at, nowMs);
  if (row.status !== "pending" && !(held && !live)) {
    return live && row.claimed_by === workerId ? { kind: "already_held" } : { kind: "refused" };
  }
  const steal = held;
  const patch: JobPatch = {
    status: "claimed",
    claimed_by: workerId,
    lease_expires_at: leaseEnd(nowMs, leaseSeconds),
    version: row.version + 1,
    // Re-stamped on a steal: queue latency is measured to the last claim.
    claimed_at: formatPbDate(nowMs),
  };
  if (steal) patch.reclaim_count = row.reclaim_count + 1;
  return { kind: "win", patch, steal };
}

/**
 * Only the holder may renew, and only while its lease is live: once it lapsed
 * the job may have been stolen, and the old holder must stop. The first renew
 * promotes claimed to running.
 */
export function decideRenew(
  row: JobRow,
  workerId: string,
  leaseSeconds: unknown,
  nowMs: number,
): JobPatch | null {
  if (!isHeldStatus(row.status)) return null;
  if (row.claimed_by !== workerId) return null;
  if (!isLeaseLive(row.lease_expires_at, nowMs)) return null;
  return {
    status: "running",
    lease_expires_at: leaseEnd(nowMs, leaseSeconds),
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
  workerId: string,
  target: ReleaseTarget,
  nowMs: number,
): ReleaseDecision {
  if (!isHeldStatus(row.status)) {
    // A terminal row still names its last holder, and only that holder's own
    // release can have put it there: its earlier release committed.
    const ownCommit = isTerminalStatus(row.status) && row.claimed_by === workerId;
    return refused(ownCommit ? "refused_terminal_same_holder" : "refused_not_holder");
  }
  if (row.claimed_by !== workerId) return refused("refused_not_holder");
  const live = isLeaseLive(row.lease_expires_at, nowMs);
  if (target === "pending") {
    if (live) return refused("refused_lease_live");
    return {
      kind: "release",
      patch: {
        status: "pending",
        claimed_by: "",
        // The expired lease stays as the row's "last in flight" marker.
        reclaim_count: row.reclaim_count + 1,
        consecutive_orphan_count: row.consecutive_orphan_count + 1,
        requeued_at: formatPbDate(nowMs),
        version: row.version + 1,
      },
    };
  }
  if (!live) return refused("refused_not_holder");
  return {
    kind: "release",
    patch: {
      status: target,
      finished_at: formatPbDate(nowMs),
      // A finished job starts any later orphaning with a fresh budget.
      consecutive_orphan_count: 0,
      version: row.version + 1,
    },
  };
}

function refused(reason: ReleaseRefusal): ReleaseDecision {
  return { kind: "refused", reason };
}

function leaseEnd(nowMs: number, leaseSeconds: unknown): string {
  return formatPbDate(nowMs + clampLeaseSeconds(leaseSeconds) * 1000);
}
