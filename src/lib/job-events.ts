/**
 * probe_job_events: what the batch endpoints (claim-next, heartbeat,
 * complete, sweep) changed. Their one bulk UPDATE per batch (bulk.ts) is not
 * seen by PocketBase's realtime, so the adapter saves records here in the same
 * transaction, and subscribers (the dashboard) learn every change. Kept 15
 * minutes; the maintenance tick deletes older ones.
 */
import type { WhereClause } from "./queries.js";
import type { JobView } from "./types.js";

export const JOB_EVENTS_COLLECTION = "probe_job_events";

/** A probe_job_events record: who wrote the batch, and each job as written (the reference's view). */
export interface JobEventFields {
  source: string;
  changes: JobView[];
}

/**
 * The most one probe_job_events record's `changes` may hold, in bytes of JSON:
 * half of the field's declared 2,000,000 (PocketBase does not enforce it on
 * these saves), so no batch, however long its jobs' keys, writes an outsized
 * value. A longer list is split over several records of one transaction.
 */
export const JOB_EVENT_MAX_BYTES = 1_000_000;

/**
 * An upper bound on a change's size as JSON, from its texts' lengths: JSON
 * writes a UTF-16 unit as at most 6 bytes (`\u001f`), plus the keys, quotes
 * and numbers around them. Cheaper than serializing each change on the hot path.
 */
function changeBytesBound(change: JobView): number {
  const texts = change.id.length + change.probe_key.length + change.status.length + change.claimed_by.length +
    change.lease_expires_at.length;
  return 6 * texts + 120;
}

/** The changes of one transaction cut into lists of at most JOB_EVENT_MAX_BYTES each (one record each). */
export function jobEventChunks(changes: readonly JobView[]): JobView[][] {
  const chunks: JobView[][] = [];
  let chunk: JobView[] = [];
  let bytes = 2;
  for (const change of changes) {
    const size = changeBytesBound(change) + 1;
    if (chunk.length > 0 && bytes + size > JOB_EVENT_MAX_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    chunk.push(change);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/**
 * How long probe_job_events records are kept unless PB_FLEET_KEEP_EVENTS says
 * otherwise (config.ts's KEEP_EVENTS_ENV): how far back the dashboard's
 * job history reaches.
 */
export const JOB_EVENTS_KEEP_MS = 15 * 60_000;
/** Events deleted per retention transaction (one record per batch transaction, up to 1 MB each). */
export const JOB_EVENTS_RETENTION_BATCH = 500;

/** Deletes at most `limit` events created before `cutoff` (PocketBase's date text). */
export function deleteOldEventsStatement(cutoff: string, limit: number): WhereClause {
  return {
    sql: `DELETE FROM ${JOB_EVENTS_COLLECTION} WHERE id IN (SELECT id FROM ${JOB_EVENTS_COLLECTION} ` +
      "WHERE created < {:cutoff} ORDER BY created LIMIT {:limit})",
    params: { cutoff, limit },
  };
}
