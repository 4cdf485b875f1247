/**
 * POST /api/fleet/cancel and /retry, each one transaction: cancel finishes a
 * job not yet finished; retry brings a failed or cancelled job back to
 * pending, unless its unique key now belongs to another live job (the key's
 * one live job stays the only one).
 */
import { queueJobView, type JobBatch } from "./job-row.js";
import { ID_SHAPE, jobByIdWhere, liveUniqueKeyQuery } from "./queries.js";
import { decideCancel, retryJobPatch } from "./transitions.js";
import type { CancelResponse, RetryResponse } from "./types.js";

export function cancelJob(batch: JobBatch, jobId: string, nowMs: number): CancelResponse {
  const row = batch.find(jobByIdWhere(jobId), ["id ASC"], 1)[0];
  const patch = row === undefined ? null : decideCancel(row, nowMs);
  if (row === undefined || patch === null) return { cancelled: false };
  batch.write(row, patch);
  return { cancelled: true, job: queueJobView(row, patch) };
}

export function retryJob(batch: JobBatch, jobId: string, nowMs: number): RetryResponse {
  const row = batch.find(jobByIdWhere(jobId), ["id ASC"], 1)[0];
  const patch = row === undefined ? null : retryJobPatch(row, nowMs);
  if (row === undefined || patch === null) return { retried: false };
  if (row.unique_key !== "") {
    const holder = batch.queryOne(liveUniqueKeyQuery(row.unique_key), ID_SHAPE);
    if (holder !== null && holder.id !== row.id) return { retried: false, reason: "unique_key_taken" };
  }
  batch.write(row, patch);
  return { retried: true, job: queueJobView(row, patch) };
}
