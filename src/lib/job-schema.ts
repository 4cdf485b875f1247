/**
 * The probe_jobs collection's one description: its columns with their kinds
 * and roles, and the status classes. The row types (job-row.ts), the bulk
 * transport's columns (bulk.ts), the status predicates in JS (transitions.ts)
 * and SQL, and the unit fake's fields are derived from here; both migration
 * lines are checked against it (test/unit/migrations-lines.test.ts). A new
 * column is added here, in both migration lines, and where it is used.
 * Pure: the client and the dashboard import it too.
 */
import type { JobStatus } from "./types.js";

/** The collection of jobs: the server reads and writes no other (the client's record listing uses it too). */
export const JOBS_COLLECTION = "probe_jobs";

/**
 * How a column is stored. `date`: PocketBase's text form (`""` when empty);
 * `json`: JSON text; `select`: one of JOB_STATUSES; `autodate`: stamped by
 * PocketBase (0.22's built-in created/updated).
 */
export type JobColumnKind = "text" | "select" | "date" | "json" | "number" | "autodate";

export interface JobColumn {
  kind: JobColumnKind;
  /**
   * Read into a JobRow: "always", or "when_set" (flow control's columns: left
   * out of the bulk read on a row that does not use them, so optional; bulk.ts).
   */
  row?: "always" | "when_set";
  /** A JobPatch may write it (a decision of src/lib). */
  patch?: true;
  /** Enqueue writes it on a new row (everything else takes the collection's defaults). */
  insert?: true;
}

/**
 * Every probe_jobs column but `id`, in the migrations' order (docs/protocol.md
 * for the reference's columns, docs/queue.md and docs/flow-control.md for
 * pb-fleet's). JSON columns are read into a JobRow as their JSON text.
 */
export const JOB_COLUMNS = {
  /** What claim-next orders by within a due time. */
  created: { kind: "autodate", row: "always" },
  updated: { kind: "autodate" },
  probe_key: { kind: "text", row: "always", insert: true },
  /** As stored in a JobRow (a hand-edited row may hold anything). */
  status: { kind: "select", row: "always", patch: true, insert: true },
  claimed_by: { kind: "text", row: "always", patch: true },
  lease_expires_at: { kind: "date", row: "always", patch: true },
  version: { kind: "number", row: "always", patch: true },
  /** The last winning claim; with timeout_seconds, the current attempt's deadline. */
  claimed_at: { kind: "date", row: "when_set", patch: true },
  finished_at: { kind: "date", patch: true },
  requeued_at: { kind: "date", patch: true },
  reclaim_count: { kind: "number", row: "always", patch: true },
  consecutive_orphan_count: { kind: "number", row: "always", patch: true },
  /** A release's result, or the server's own when it gives up on a job. */
  result: { kind: "json", patch: true },
  /** Fencing token of the current claim (pb-fleet's addition). */
  lease_token: { kind: "text", row: "always", patch: true },
  payload: { kind: "json", row: "always", insert: true },
  progress: { kind: "json", row: "always", patch: true },
  priority: { kind: "number", row: "always", insert: true },
  /** `""` on a row no hook stamped (counts as due). */
  run_at: { kind: "date", row: "always", patch: true, insert: true },
  attempts: { kind: "number", row: "always", patch: true },
  /** 0: no cap. */
  max_attempts: { kind: "number", row: "always", insert: true },
  last_error: { kind: "text", row: "always", patch: true },
  dead_lettered_at: { kind: "date", row: "always", patch: true },
  unique_key: { kind: "text", row: "always", insert: true },
  /** Position within its enqueue call: the claim order's tie-breaker after run_at. */
  enqueue_index: { kind: "number", row: "always", insert: true },
  /** "" (a row written around enqueue) reads as the default queue. */
  queue: { kind: "text", row: "always", insert: true },
  /** "": none. */
  group_key: { kind: "text", row: "when_set", insert: true },
  /** 0: no timeout. */
  timeout_seconds: { kind: "number", row: "when_set", insert: true },
  start_by: { kind: "date", row: "when_set", patch: true, insert: true },
} as const satisfies { readonly [name: string]: JobColumn };

/**
 * The columns of probe_jobs' first migration: every pb-fleet server has them,
 * the later migrations' may be absent on an old one (the client's JobRecord
 * makes those optional). test/unit/migrations-lines.test.ts checks both lines.
 */
export const FIRST_MIGRATION_COLUMNS = [
  "created", "updated", "probe_key", "status", "claimed_by", "lease_expires_at", "version",
  "claimed_at", "finished_at", "requeued_at", "reclaim_count", "consecutive_orphan_count", "result",
] as const satisfies readonly (keyof typeof JOB_COLUMNS)[];

type Columns = typeof JOB_COLUMNS;
export type JobColumnName = keyof Columns;
type Where<P extends object> = { [K in JobColumnName]: Columns[K] extends P ? K : never }[JobColumnName];
type KindOf<K extends JobColumnName> = Columns[K]["kind"];
/** A column's value as read (JSON as its text). */
type ReadValue<K extends JobColumnName> = KindOf<K> extends "number" ? number : string;
/** A column's value as written (JSON as a value, which the adapter serializes), and as the record API answers it. */
type WriteValue<K extends JobColumnName> =
  KindOf<K> extends "number" ? number : KindOf<K> extends "json" ? unknown : KindOf<K> extends "select" ? JobStatus : string;

/** The columns read into a JobRow: always, or only when set (optional). */
export type JobRowColumn = Where<{ row: "always" }>;
export type JobRowOptionalColumn = Where<{ row: "when_set" }>;
export type JobPatchColumn = Where<{ patch: true }>;
export type JobInsertColumn = Where<{ insert: true }>;

export type JobRowFields =
  & { id: string }
  & { [K in JobRowColumn]: ReadValue<K> }
  & { [K in JobRowOptionalColumn]?: ReadValue<K> };
/** Every column as stored, as read (a test fake's row): dates and JSON as their text. */
export type JobStoredFields = { id: string } & { [K in JobColumnName]: ReadValue<K> };
/** A probe_jobs record as PocketBase's record API answers it (JSON parsed; the status taken as one of JOB_STATUSES). */
export type JobRecordFields = { id: string } & { [K in JobColumnName]: WriteValue<K> };
export type JobPatchFields = { [K in JobPatchColumn]?: WriteValue<K> };
export type JobInsertFields = { [K in JobInsertColumn]: WriteValue<K> };

/** The columns a test holds for (by kind, by role), in the table's order. */
export function jobColumnsWhere<K extends JobColumnName = JobColumnName>(test: (column: JobColumn, name: JobColumnName) => boolean): K[] {
  const out: K[] = [];
  for (const name in JOB_COLUMNS) if (test(JOB_COLUMNS[name as JobColumnName], name as JobColumnName)) out.push(name as K);
  return out;
}
const isNumber = (c: JobColumn) => c.kind === "number";
const isJson = (c: JobColumn) => c.kind === "json";
/** Read and written as text: every kind but number. */
const isText = (c: JobColumn) => !isNumber(c);

/** The JobRow columns a record is read into, by type. */
export const JOB_ROW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere<JobRowColumn>((c) => c.row === "always" && isText(c));
export const JOB_ROW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere<JobRowColumn>((c) => c.row === "always" && isNumber(c));
/** Flow control's JobRow columns, by type (read whole by a record load; left out by the bulk read when empty). */
export const JOB_ROW_FLOW_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere<JobRowOptionalColumn>((c) => c.row === "when_set" && isText(c));
export const JOB_ROW_FLOW_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere<JobRowOptionalColumn>((c) => c.row === "when_set" && isNumber(c));

/** The columns a JobPatch may write, by how the bulk statement reads them back from JSON (bulk.ts). */
export const JOB_PATCH_TEXT_FIELDS = /* @__PURE__ */ jobColumnsWhere<JobPatchColumn>((c) => c.patch === true && isText(c) && !isJson(c));
export const JOB_PATCH_NUMBER_FIELDS = /* @__PURE__ */ jobColumnsWhere<JobPatchColumn>((c) => c.patch === true && isNumber(c));
export const JOB_PATCH_JSON_FIELDS = /* @__PURE__ */ jobColumnsWhere<JobPatchColumn>((c) => c.patch === true && isJson(c));

/** A column's value before anything writes it, as read: 0 or "" (a NULL json or date column reads as ""). */
export function blankJobValue(column: JobColumnName): string | number {
  return JOB_COLUMNS[column].kind === "number" ? 0 : "";
}

/** Every JobRow column (flow control's too) blank: a test's row before its own values. */
export function blankJobRow(): Omit<JobRowFields, "id"> {
  const row: { [column: string]: string | number } = {};
  for (const name of jobColumnsWhere((c) => c.row !== undefined)) row[name] = blankJobValue(name);
  return row as Omit<JobRowFields, "id">;
}

/** The columns stored as some kinds (a test fake's record fields, by type). */
export function jobColumnsOfKind(...kinds: JobColumnKind[]): JobColumnName[] {
  return jobColumnsWhere((c) => kinds.indexOf(c.kind) !== -1);
}

/**
 * Columns whose values are JSON: an adapter writes them as JSON text, since
 * PocketBase re-parses a plain string set on a json field (`"123"` would
 * become the number 123).
 */
export const JOB_JSON_FIELDS: readonly string[] = /* @__PURE__ */ jobColumnsWhere(isJson);

// ---- Status classes (docs/protocol.md, docs/queue.md) ------------------------------------

/** Held under a lease by a worker. */
export const HELD_STATUSES = ["claimed", "running"] as const satisfies readonly JobStatus[];
/** Finished for good: held by no one, never claimable. `cancelled` is the queue's. */
export const TERMINAL_STATUSES = ["done", "failed", "cancelled"] as const satisfies readonly JobStatus[];
/** Finished by a worker's release (or the server giving up), with a finished_at: what completions and retention count. */
export const COMPLETED_STATUSES = ["done", "failed"] as const satisfies readonly TerminalStatus[];
/** What an operator's retry puts back to pending. */
export const RETRYABLE_STATUSES = ["failed", "cancelled"] as const satisfies readonly TerminalStatus[];
/** Not finished: pending or held (a unique key's holders, the per-queue gauges). */
export const LIVE_STATUSES = ["pending", ...HELD_STATUSES] as const;

export type HeldStatus = (typeof HELD_STATUSES)[number];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

/** Every status of JOB_STATUSES is live or terminal, never both: a status added there must be put in a class. */
type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const STATUSES_PARTITIONED: Exactly<(typeof LIVE_STATUSES)[number] | TerminalStatus, JobStatus> = true;
const LIVE_NOT_TERMINAL: Exactly<Extract<(typeof LIVE_STATUSES)[number], TerminalStatus>, never> = true;
void STATUSES_PARTITIONED;
void LIVE_NOT_TERMINAL;

/**
 * A status class as an SQL list, `('a', 'b')`: statuses are fixed names, so
 * they are written in the text (a partial index's WHERE must be repeated word
 * for word).
 */
export function statusListSql(statuses: readonly JobStatus[]): string {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}

/** `column IN (...)` of a status class. */
export function statusInSql(statuses: readonly JobStatus[], column = "status"): string {
  return `${column} IN ${statusListSql(statuses)}`;
}

/** Whether a status (as stored: any text) is in a class. */
export function inStatusClass(statuses: readonly JobStatus[], status: string): boolean {
  return (statuses as readonly string[]).indexOf(status) !== -1;
}
