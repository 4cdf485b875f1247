/**
 * POST /api/fleet/heartbeat and /complete: many renews or releases in one
 * transaction, each item judged by exactly the rule of its single-job
 * endpoint (decideRenew, decideRelease). A refused item does not stop the
 * others. The rows are read with one query; an item naming a job twice sees
 * the earlier item's write.
 */
import { jobView, type JobBatch, type JobRow } from "./job-row.js";
import { parkFor } from "./flow.js";
import { jobsByIdsWhere } from "./queries.js";
import { decideRelease, decideRenew } from "./transitions.js";
import type { CompleteResult, HeartbeatResult } from "./types.js";
import type { ReleaseRequestFields, RenewRequestFields } from "./validate.js";

export function heartbeatJobs(batch: JobBatch, renewals: readonly RenewRequestFields[], nowMs: number): HeartbeatResult[] {
  const rows = rowsById(batch, renewals);
  return renewals.map((renewal) => {
    const row = rows[renewal.jobId];
    if (row === undefined) return { jobId: renewal.jobId, renewed: false };
    const decision = decideRenew(row, renewal, nowMs);
    if (decision.kind === "refused") {
      return decision.reason === undefined ? { jobId: renewal.jobId, renewed: false } : { jobId: renewal.jobId, renewed: false, reason: decision.reason };
    }
    const patch = decision.patch;
    batch.write(row, patch);
    const job = jobView(row, patch);
    Object.assign(row, patch);
    return { jobId: renewal.jobId, renewed: true, job };
  });
}

/** `jitter`: one Math.random() per item (retry backoff), drawn by the caller to keep this pure. */
export function completeJobs(
  batch: JobBatch,
  releases: readonly ReleaseRequestFields[],
  nowMs: number,
  jitter: () => number,
): CompleteResult[] {
  const rows = rowsById(batch, releases);
  return releases.map((release): CompleteResult => {
    const row = rows[release.jobId];
    // No such job: what a single release answers.
    if (row === undefined) return { jobId: release.jobId, released: false, reason: "refused_not_holder" };
    const { workerId, target, leaseToken, result, error, rateLimitedFor } = release;
    const decision = decideRelease(row, { workerId, target, leaseToken, result, error, jitter: jitter(), rateLimitedFor }, nowMs);
    if (decision.kind === "refused") return { jobId: release.jobId, released: false, reason: decision.reason };
    batch.write(row, decision.patch);
    if (decision.park !== undefined) parkFor(batch, row, decision.park, nowMs);
    const job = jobView(row, decision.patch);
    Object.assign(row, decision.patch);
    return { jobId: release.jobId, released: true, job };
  });
}

function rowsById(batch: JobBatch, items: readonly { jobId: string }[]): { [id: string]: JobRow } {
  const ids: string[] = [];
  for (const item of items) if (ids.indexOf(item.jobId) === -1) ids.push(item.jobId);
  const rows: { [id: string]: JobRow } = {};
  for (const row of batch.find(jobsByIdsWhere(ids), ["id ASC"], ids.length)) rows[row.id] = row;
  return rows;
}
