/**
 * The fields of a `probe_jobs` row that the protocol reads and writes, as plain
 * values. The adapter reads a JobRow, the transition functions decide on it,
 * and the adapter writes the returned patch back.
 */
import { deadlineMs } from "./flow.js";
import { formatPbDate } from "./lease.js";
import { isHeldStatus } from "./transitions.js";
import type { WhereClause } from "./queries.js";
import type { JobInsertFields, JobPatchFields, JobRowFields } from "./job-schema.js";
import { storedQueueName } from "./queue-names.js";
import type { JobStatus, JobView, QueueJobView } from "./types.js";

export { JOBS_COLLECTION } from "./job-schema.js";

/**
 * A row as read: the JobRow columns of JOB_COLUMNS (./job-schema), dates in
 * PocketBase's text form and `""` when empty, JSON columns as their JSON text
 * (`""` or `"null"` when empty: parsed only for an answer that shows them).
 * Flow control's columns (docs/flow-control.md) are optional: absent means
 * empty, since the batch endpoints' read leaves them out of a row that does
 * not use them (bulk.ts).
 */
export type JobRow = JobRowFields;

/** Field values to write; dates in PocketBase's text form, JSON columns as values. */
export type JobPatch = JobPatchFields;

/** A new row, as enqueue writes it (everything else takes the collection's defaults); always pending. */
export type JobInsert = Omit<JobInsertFields, "status"> & { status: "pending" };

export { JOB_JSON_FIELDS } from "./job-schema.js";

/** One job's compare-and-set: the row as read inside the transaction, and what was decided on it. */
export interface JobUpdate<D> {
  row: JobRow;
  decision: D;
}

/**
 * Rows found and written inside one transaction (the adapter's updateJobs):
 * what claim-next and the sweeper work through.
 */
export interface JobBatch {
  /** Rows matching a where clause from ./queries, in the given order. */
  find(where: WhereClause, order: readonly string[], limit: number): JobRow[];
  /** Writes a patch to a row this batch found. */
  write(row: JobRow, patch: JobPatch): void;
  /** Creates a row; answers its id. */
  insert(fields: JobInsert): string;
  /** One row of a read-only query inside the transaction (`shape`: its columns, a value of each one's type); null when there is none. */
  queryOne<T extends object>(query: WhereClause, shape: T): T | null;
  /**
   * Every row of a query inside the transaction, or of a statement's
   * RETURNING clause (claim-next's round: claim-plan.ts), which writes.
   */
  queryAll<T extends object>(query: WhereClause, shape: T): T[];
  /** A statement that writes (retention's deletes, a schedule's mark); answers the rows it changed. */
  execute(statement: WhereClause): number;
  /**
   * Jobs a statement of this batch wrote (batch-plans.ts), as written: a
   * statement is not seen by realtime, so they go into the transaction's
   * probe_job_events record beside the batch's own writes (job-events.ts).
   */
  noteWritten(changes: readonly JobView[]): void;
}

export { JOB_ROW_FLOW_NUMBER_FIELDS, JOB_ROW_FLOW_TEXT_FIELDS, JOB_ROW_NUMBER_FIELDS, JOB_ROW_TEXT_FIELDS } from "./job-schema.js";

/**
 * The `job` object of an answer: the row as it is after the patch. Field by
 * field, not Object.assign: in goja a copy of the whole row per job was 13%
 * of a batch's server CPU (measured with pprof).
 */
export function jobView(row: JobRow, patch?: JobPatch): JobView {
  const p = patch ?? {};
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: (p.status ?? row.status) as JobStatus,
    claimed_by: p.claimed_by ?? row.claimed_by,
    lease_expires_at: p.lease_expires_at ?? row.lease_expires_at,
    version: p.version ?? row.version,
  };
}

/** A JSON field's text as a value: null when empty. */
export function parseJsonField(text: string): unknown {
  if (text === "" || text === "null") return null;
  try {
    return JSON.parse(text);
  } catch {
    return null; // PocketBase stores only valid JSON; a hand-edited column reads as empty
  }
}

/** The queue's view of a job (claim-next, cancel, retry): the reference's view plus the queue's fields. */
export function queueJobView(row: JobRow, patch?: JobPatch): QueueJobView {
  const p = patch ?? {};
  const view = jobView(row, patch) as QueueJobView;
  view.payload = parseJsonField(row.payload);
  view.priority = row.priority;
  view.run_at = p.run_at ?? row.run_at;
  view.attempts = p.attempts ?? row.attempts;
  view.max_attempts = row.max_attempts;
  view.last_error = p.last_error ?? row.last_error;
  view.dead_lettered_at = p.dead_lettered_at ?? row.dead_lettered_at;
  view.unique_key = row.unique_key;
  view.queue = storedQueueName(row.queue);
  view.progress = p.progress !== undefined ? p.progress : parseJsonField(row.progress);
  view.group_key = row.group_key ?? "";
  view.timeout_seconds = row.timeout_seconds ?? 0;
  const deadline = isHeldStatus(p.status ?? row.status)
    ? deadlineMs({ timeout_seconds: row.timeout_seconds, claimed_at: p.claimed_at ?? row.claimed_at })
    : null;
  view.deadline = deadline === null ? null : formatPbDate(deadline);
  return view;
}
