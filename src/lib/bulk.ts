/**
 * How the batch endpoints (claim-next, heartbeat, complete, sweep) read and
 * write many rows in one transaction without paying PocketBase's record load
 * and save per row: the rows come back as one JSON text (one value crosses
 * from Go to JavaScript, not one per field), and the patches go back as one
 * UPDATE ... FROM json_each. Every decision is still made by src/lib on the
 * row as read inside the transaction; only the transport changes. Realtime
 * does not see such an UPDATE, so the adapter saves one probe_job_events
 * record per transaction listing each job as written (JobEventChange).
 */
import { LEASE_AS_JUDGED_SQL } from "./lease.js";
import type { JobPatch, JobRow } from "./job-row.js";
import { JOB_ROW_NUMBER_FIELDS, JOB_ROW_TEXT_FIELDS } from "./job-row.js";
import type { WhereClause } from "./queries.js";
import type { JobView } from "./types.js";

export const JOB_EVENTS_COLLECTION = "probe_job_events";

/** A probe_job_events record: who wrote the batch, and each job as written (the reference's view). */
export interface JobEventFields {
  source: string;
  changes: JobView[];
}

/** The lease column as the lease rule judges it (LEASE_AS_JUDGED_SQL without its alias). */
const JUDGED_LEASE = LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "");

/** A JobRow as a JSON object, in SQL: text columns never NULL, the lease as judged. */
const ROW_AS_JSON = "json_object('id', id, " +
  JOB_ROW_TEXT_FIELDS.map((f) => `'${f}', ${f === "lease_expires_at" ? JUDGED_LEASE : `COALESCE(${f}, '')`}`).join(", ") +
  ", " + JOB_ROW_NUMBER_FIELDS.map((f) => `'${f}', COALESCE(${f}, 0)`).join(", ") + ")";

/**
 * The rows matching a where clause, in an order, at most `limit`, as one JSON
 * array in the column `rows` (read into JOB_ROWS_SHAPE; parse with parseJobRows).
 */
export function jobRowsQuery(where: WhereClause, order: readonly string[], limit: number): WhereClause {
  const params = Object.assign({}, where.params, { rowsLimit: limit });
  return {
    sql: `SELECT COALESCE(json_group_array(json(r)), '[]') AS rows FROM (SELECT ${ROW_AS_JSON} AS r FROM probe_jobs ` +
      `WHERE ${where.sql} ORDER BY ${order.join(", ")} LIMIT {:rowsLimit})`,
    params,
  };
}
export const JOB_ROWS_SHAPE = { rows: "" };

export function parseJobRows(text: string): JobRow[] {
  return JSON.parse(text) as JobRow[];
}

/** The columns a JobPatch may write, by how the statement reads them back from JSON. */
const PATCH_TEXT: readonly string[] = [
  "status", "claimed_by", "lease_expires_at", "claimed_at", "finished_at", "requeued_at", "lease_token", "run_at",
  "last_error", "dead_lettered_at",
];
const PATCH_NUMBER: readonly string[] = ["version", "reclaim_count", "consecutive_orphan_count", "attempts"];
/** Sent as their JSON text (a string), so the column stores JSON, as PocketBase's record save does. */
const PATCH_JSON: readonly string[] = ["result", "progress"];

/**
 * One statement writing every patch (at most one per id: merge them first).
 * A column is set only on the rows whose patch names it. `updated` is
 * stamped as PocketBase's record save would.
 */
export function bulkPatchStatement(patches: readonly { id: string; patch: JobPatch }[], updated: string): WhereClause {
  const columns: string[] = [];
  const items = patches.map(({ id, patch }) => {
    const item: { [field: string]: unknown } = { id };
    for (const field in patch) {
      const value = (patch as { [field: string]: unknown })[field];
      if (value === undefined) continue;
      if (PATCH_TEXT.indexOf(field) === -1 && PATCH_NUMBER.indexOf(field) === -1 && PATCH_JSON.indexOf(field) === -1) {
        throw new Error(`pb-fleet: the bulk write has no column for ${field}`);
      }
      item[field] = PATCH_JSON.indexOf(field) === -1 ? value : JSON.stringify(value);
      if (columns.indexOf(field) === -1) columns.push(field);
    }
    return item;
  });
  const sets = columns.map((c) =>
    `${c} = CASE WHEN json_type(p.value, '$.${c}') IS NULL THEN probe_jobs.${c} ELSE json_extract(p.value, '$.${c}') END`);
  sets.push("updated = {:updated}");
  return {
    sql: `UPDATE probe_jobs SET ${sets.join(", ")} FROM json_each({:patches}) AS p ` +
      "WHERE probe_jobs.id = json_extract(p.value, '$.id')",
    params: { patches: JSON.stringify(items), updated },
  };
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

/** How long probe_job_events records are kept: long enough for a dashboard that reconnects. */
export const JOB_EVENTS_KEEP_MS = 15 * 60_000;
export const JOB_EVENTS_RETENTION_BATCH = 2000;

/** Deletes at most `limit` events created before `cutoff` (PocketBase's date text). */
export function deleteOldEventsStatement(cutoff: string, limit: number): WhereClause {
  return {
    sql: `DELETE FROM ${JOB_EVENTS_COLLECTION} WHERE id IN (SELECT id FROM ${JOB_EVENTS_COLLECTION} ` +
      "WHERE created < {:cutoff} ORDER BY created LIMIT {:limit})",
    params: { cutoff, limit },
  };
}
