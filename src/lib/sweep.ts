/**
 * The server-side sweeper's decision for one row it found with an expired
 * lease: hand it back to pending with the bookkeeping of a `pending` release,
 * or, once it has been orphaned `cap` times in a row, give it up as failed so a
 * job that kills every worker does not loop forever.
 */
import { SWEEPER_HOLDER } from "./config";
import { formatPbDate } from "./lease";
import type { JobPatch, JobRow } from "./job-row";
import { isClaimable, isHeldStatus, requeuePatch } from "./transitions";

export const ORPHAN_CAP_REASON = "orphan_cap";

export type SweepDecision =
  | { kind: "requeue"; patch: JobPatch }
  | { kind: "give_up"; patch: JobPatch }
  | { kind: "skip" };

export function decideSweep(row: JobRow, nowMs: number, cap: number): SweepDecision {
  // Re-checked inside the sweep's transaction: the holder may have renewed since the query.
  if (!isHeldStatus(row.status) || !isClaimable(row, nowMs)) return { kind: "skip" };
  if (row.consecutive_orphan_count < cap) return { kind: "requeue", patch: requeuePatch(row, nowMs) };
  return {
    kind: "give_up",
    patch: {
      status: "failed",
      // The sweeper, not the last worker, finished it (see SWEEPER_HOLDER);
      // the worker stays on record in result.lastHolder.
      claimed_by: SWEEPER_HOLDER,
      lease_token: "",
      finished_at: formatPbDate(nowMs),
      // consecutive_orphan_count is kept (not reset as by a worker's release):
      // it is the evidence, and what the stats count as "past the orphan cap".
      result: {
        error: `pb-fleet gave up: the lease of this job expired ${row.consecutive_orphan_count + 1} times in a row without a release`,
        reason: ORPHAN_CAP_REASON,
        lastHolder: row.claimed_by,
      },
      version: row.version + 1,
    },
  };
}
