/**
 * The fields of a `probe_jobs` row that the protocol reads and writes, as plain
 * values. The adapter reads a JobRow, the transition functions decide on it,
 * and the adapter writes the returned patch back.
 */
import { deadlineMs } from "./flow.js";
import { formatPbDate } from "./lease.js";
import { isHeldStatus } from "./transitions.js";
import type { WhereClause } from "./queries.js";
import { storedQueueName } from "./queue-names.js";
import type { JobStatus, JobView, QueueJobView } from "./types.js";

/** The collection of jobs: the server reads and writes no other (the client's record listing uses it too). */
export const JOBS_COLLECTION = "probe_jobs";

export interface JobRow {
  id: string;
  /** PocketBase's text form; what claim-next orders by. */
  created: string;
  probe_key: string;
  /** As stored; a hand-edited row may hold anything, so it is not narrowed. */
  status: string;
  claimed_by: string;
  /** PocketBase's text form, `""` when empty. */
  lease_expires_at: string;
  version: number;
  reclaim_count: number;
  consecutive_orphan_count: number;
  /** Fencing token of the current claim (pb-fleet's addition); `""` when none. */
  lease_token: string;
  // The queue's fields (docs/queue.md). JSON fields are kept as their JSON text
  // (`""` or `"null"` when empty): parsed only for an answer that shows them.
  payload: string;
  progress: string;
  priority: number;
  /** PocketBase's text form; `""` on a row no hook stamped (counts as due). */
  run_at: string;
  attempts: number;
  /** 0: no cap. */
  max_attempts: number;
  last_error: string;
  dead_lettered_at: string;
  unique_key: string;
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: number;
  /** As stored: "" (a row written around enqueue) reads as the default queue. */
  queue: string;
  // Flow control's fields (docs/flow-control.md). Absent means empty: the batch endpoints' read leaves all four out
  // of a row with no group, timeout or start_by (bulk.ts), which is most rows, so the common path does
  // not pay for them.
  /** "" or absent: none. */
  group_key?: string;
  /** 0 or absent: no timeout. */
  timeout_seconds?: number;
  /** PocketBase's text form; "" or absent: none. */
  start_by?: string;
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. "" before any. */
  claimed_at?: string;
}

/** Field values to write; dates in PocketBase's text form. */
export interface JobPatch {
  status?: JobStatus;
  claimed_by?: string;
  lease_expires_at?: string;
  version?: number;
  claimed_at?: string;
  finished_at?: string;
  requeued_at?: string;
  reclaim_count?: number;
  consecutive_orphan_count?: number;
  lease_token?: string;
  /** JSON: a release's result, or the server's own when it gives up on a job. */
  result?: unknown;
  progress?: unknown;
  run_at?: string;
  attempts?: number;
  last_error?: string;
  dead_lettered_at?: string;
  start_by?: string;
}

/** A new row, as enqueue writes it (everything else takes the collection's defaults). */
export interface JobInsert {
  probe_key: string;
  status: "pending";
  payload: unknown;
  run_at: string;
  priority: number;
  max_attempts: number;
  unique_key: string;
  enqueue_index: number;
  queue: string;
  group_key: string;
  timeout_seconds: number;
  start_by: string;
}

/**
 * Fields whose values are JSON: an adapter writes them as JSON text, since
 * PocketBase re-parses a plain string set on a json field (`"123"` would
 * become the number 123).
 */
export const JOB_JSON_FIELDS: readonly string[] = ["payload", "progress", "result"];

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
  /** Every row of a read-only query inside the transaction. */
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

/** The JobRow fields a record is read into, by type. */
export const JOB_ROW_TEXT_FIELDS = [
  "created", "probe_key", "status", "claimed_by", "lease_expires_at", "lease_token",
  "payload", "progress", "run_at", "last_error", "dead_lettered_at", "unique_key", "queue",
] as const;
export const JOB_ROW_NUMBER_FIELDS = [
  "version", "reclaim_count", "consecutive_orphan_count", "priority", "attempts", "max_attempts", "enqueue_index",
] as const;
/** Flow control's JobRow fields, by type (read whole by a record load; left out by the bulk read when empty). */
export const JOB_ROW_FLOW_TEXT_FIELDS = ["group_key", "start_by", "claimed_at"] as const;
export const JOB_ROW_FLOW_NUMBER_FIELDS = ["timeout_seconds"] as const;

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
