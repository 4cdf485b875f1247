/**
 * The server-side sweeper's decision for one row it found with an expired
 * lease: hand it back to pending with the bookkeeping of a `pending` release,
 * or give it up as failed so a job that kills every worker does not loop
 * forever: dead-lettered when it has used its attempts (no claim could take it
 * again), or once it has been orphaned `cap` times in a row.
 */
import type { JobBatch, JobPatch, JobRow } from "./job-row.js";
import { expiredLeaseWhere } from "./queries.js";
import { hasAttemptsLeft, MAX_ATTEMPTS_ERROR } from "./queue.js";
import {
  deadLetterPatch, giveUpPatch, isClaimable, isHeldStatus, isPastDeadline, requeuePatch, timeoutPatch,
} from "./transitions.js";
import type { SweepResponse } from "./types.js";

export type SweepDecision =
  | { kind: "requeue"; patch: JobPatch }
  | { kind: "give_up"; patch: JobPatch }
  | { kind: "timed_out"; patch: JobPatch }
  | { kind: "skip" };

export function decideSweep(row: JobRow, nowMs: number, cap: number): SweepDecision {
  // Re-checked inside the sweep's transaction: the holder may have renewed since the query.
  if (!isHeldStatus(row.status) || !isClaimable(row, nowMs)) return { kind: "skip" };
  // A failed attempt, not an orphan (docs/flow-control.md "Timeouts").
  if (isPastDeadline(row, nowMs)) return { kind: "timed_out", patch: timeoutPatch(row, nowMs) };
  if (!hasAttemptsLeft(row.attempts, row.max_attempts)) {
    return { kind: "give_up", patch: deadLetterPatch(row, nowMs, MAX_ATTEMPTS_ERROR) };
  }
  if (row.consecutive_orphan_count < cap) return { kind: "requeue", patch: requeuePatch(row, nowMs) };
  return { kind: "give_up", patch: giveUpPatch(row, nowMs) };
}

/** One sweep: at most `limit` held rows whose lease passed, the longest-expired first. */
export function sweepExpired(
  batch: JobBatch,
  nowMs: number,
  cap: number,
  probeKeyPrefix: string,
  limit: number,
): SweepResponse {
  const answer: SweepResponse = { requeued: 0, gaveUp: 0, timedOut: 0, jobs: [] };
  for (const row of batch.find(expiredLeaseWhere(nowMs, probeKeyPrefix), SWEEP_ORDER, limit)) {
    const decision = decideSweep(row, nowMs, cap);
    if (decision.kind === "skip") continue;
    batch.write(row, decision.patch);
    if (decision.kind === "requeue") answer.requeued++;
    else if (decision.kind === "timed_out") answer.timedOut++;
    else answer.gaveUp++;
    answer.jobs.push({
      id: row.id,
      outcome: decision.kind === "requeue" ? "requeued" : decision.kind === "timed_out" ? "timed_out" : "gave_up",
      claimedBy: row.claimed_by,
      consecutiveOrphanCount: decision.patch.consecutive_orphan_count ?? row.consecutive_orphan_count,
    });
  }
  return answer;
}

const SWEEP_ORDER = ["lease_expires_at ASC"] as const;
