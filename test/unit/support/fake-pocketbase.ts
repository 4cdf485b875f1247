/**
 * A stand-in for what PocketBase 0.22's JSVM gives a hook handler, enough to
 * run pb_hooks/fleet.pb.js the way PocketBase does (plugins/jsvm/binds.go):
 * the file is loaded once, each handler is taken as its source text, and every
 * request runs `{(<text>).apply(undefined, __args)}` in a runtime that never saw
 * the file. Here that runtime is a fresh node:vm context holding only these stubs.
 *
 * The stubs follow PocketBase where the handlers depend on it: records store
 * dates as `2006-01-02 15:04:05.000Z` text and JSON fields as JSON text (a
 * string set on a json field is re-parsed when it is valid JSON, as
 * PocketBase's normalisation does), a new record gets its id and `created` on
 * save and runs the bundle's create hook, findRecordById throws for an unknown
 * id, runInTransaction rolls back (copy-on-write) when its callback throws, the
 * partial unique index on a live job's unique_key is enforced, raw queries fill
 * DynamicModels by their shape, and query conditions are evaluated the way
 * SQLite would for the shapes src/lib builds. A query is recognised by its
 * exact text, rebuilt from its bound parameters with the lib's own builders
 * (any other text throws, so a changed query is noticed here instead of
 * silently mis-evaluated).
 *
 * The database half (FakeDb, FakeDao, FakeRecord, and the SQL evaluator that
 * the pure-logic tests' in-memory batch shares) is shared with the 0.23+ fake
 * (./fake-pocketbase-modern.ts); FAKE_POCKETBASE_0_22 is the 0.22 face: its
 * globals, its request context (with what its auth loader stored: the admin
 * or the auth record, see FakeContext.get) and its create hook. fleet_workers
 * is kept only as far as the hooks write it (FakeDb.workers: the last-seen
 * stamp); a request's worker record comes with the request (Caller).
 */
import { randomInt } from "node:crypto";
import vm from "node:vm";
import { bulkPatchStatement, jobRowsQuery } from "../../../src/lib/bulk";
import type { StoredRow as ModelRow } from "../../support/batch-model";
import { answerPlanQuery, executePlanStatement } from "./fake-plans";
import { deleteOldEventsStatement, JOB_EVENTS_COLLECTION } from "../../../src/lib/job-events";
import {
  JOB_ROW_FLOW_NUMBER_FIELDS, JOB_ROW_FLOW_TEXT_FIELDS, JOB_ROW_NUMBER_FIELDS, JOB_ROW_TEXT_FIELDS, type JobPatch,
} from "../../../src/lib/job-row";
import { jobColumnsOfKind, JOBS_COLLECTION, type JobStoredFields } from "../../../src/lib/job-schema";
import { stampLastSeenStatement, WORKERS_COLLECTION } from "../../../src/lib/identity";
import { formatPbDate, isLeaseLive, LEASE_AS_JUDGED_SQL, parsePbDate } from "../../../src/lib/lease";
import { DEFAULT_QUEUE } from "../../../src/lib/queue-names";
import {
  expiredLeaseWhere, FAMILY_PROBE_LIMIT, familyProbeQuery, jobByIdWhere, jobsByIdsWhere, liveCountsByQueueQuery, liveUniqueKeyQuery,
  LEVEL_ORDER, pendingDueByGroupWhere, pendingDueWhere, pendingGroupCountQuery, statsQuery, statsScanQuery, topPriorityQuery,
  type HeldBack,
} from "../../../src/lib/queries";
import {
  deleteExpiredClaimsStatement, deletePassedParksStatement, dueCountQuery, flowRowsQuery, heldCountQuery, heldBackScopesQuery,
  nextQueueQuery, parkStatement, recordClaimStatement, reExpireClaimsStatement, startByPassedWhere, upsertFlowStatement,
  windowCountQuery, type FlowRow, type Scope, type ScopeKind,
} from "../../../src/lib/flow";
import { flowListQuery, unfinishedInQueueQuery } from "../../../src/lib/flow-endpoint";
import { JOB_COUNTS_READY_QUERY, pruneCompletionsStatement } from "../../../src/lib/job-counts";
import { deleteExpiredQuery, RETENTION_CLASSES, type RetentionClass } from "../../../src/lib/retention";
import { enabledSchedulesQuery, markScheduleStatement } from "../../../src/lib/schedules";
import { HOOKS_BUNDLES } from "../../../scripts/build/bundles.mjs";

const COLLECTION = JOBS_COLLECTION;

/** The fields of each collection a record can be made of, by type. */
interface FieldTypes {
  date: Set<string>;
  number: Set<string>;
  text: Set<string>;
  json: Set<string>;
}
const FIELDS: Record<string, FieldTypes> = {
  // The schema's columns (src/lib/job-schema.ts): a select is text, an autodate a date.
  [COLLECTION]: {
    date: new Set(jobColumnsOfKind("date", "autodate")),
    number: new Set(jobColumnsOfKind("number")),
    text: new Set(jobColumnsOfKind("text", "select")),
    json: new Set(jobColumnsOfKind("json")),
  },
  // What the batch endpoints save once per transaction (src/lib/bulk.ts).
  [JOB_EVENTS_COLLECTION]: {
    date: new Set(["created", "updated"]),
    number: new Set(),
    text: new Set(["source"]),
    json: new Set(["changes"]),
  },
};

function fieldsOf(collection: string): FieldTypes {
  const fields = FIELDS[collection];
  if (fields === undefined) throw new Error(`fake PocketBase: no collection ${collection}`);
  return fields;
}

/**
 * A probe_jobs row as stored: every column of src/lib/job-schema.ts, dates as
 * PocketBase's text ("" when empty), JSON fields as their JSON text ("" for a
 * NULL column), any status text (tests store odd ones). queue is "default"
 * after the migration's backfill, "" on a row written around enqueue and the
 * create hook; flow control's columns "" / 0 when unset.
 */
export type StoredRow = JobStoredFields;

/** A probe_job_events row as stored (changes: JSON text). */
export interface StoredEvent {
  id: string;
  created: string;
  updated: string;
  source: string;
  changes: string;
}

/** A probe_schedules row as stored (payload: JSON text, "" for NULL). */
export interface StoredSchedule {
  id: string;
  name: string;
  probe_key: string;
  cron: string;
  payload: string;
  priority: number;
  max_attempts: number;
  enabled: boolean;
  last_enqueued_for: string;
  /** Flow control's columns (docs/flow-control.md): "" when unset. */
  queue: string;
  group_key: string;
}

/**
 * A probe_flow row as stored (docs/flow-control.md: one per scope). Written only through
 * the raw statements of src/lib/flow.ts here; a column such an INSERT does not
 * name takes the collection's default (0, "").
 */
export interface StoredFlow extends FlowRow {
  id: string;
  created: string;
  updated: string;
}

/** A probe_flow_claims row (the rate window's log): epoch milliseconds. */
export interface StoredFlowClaim {
  scope: string;
  name: string;
  at: number;
  expires: number;
}

/** PocketBase's text form of a date, from the forms the handlers write (ISO `T` or PocketBase's space form). */
export function toPbDateText(value: unknown): string {
  if (value === "" || value === null || value === undefined) return "";
  const text = String(value);
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)Z$/.exec(text);
  const ms = m ? Date.parse(`${m[1]}T${m[2]}Z`) : Number.NaN;
  if (Number.isNaN(ms)) throw new Error(`fake PocketBase: ${JSON.stringify(text)} is not a date this fake stores`);
  return new Date(ms).toISOString().replace("T", " ");
}

export function pbDate(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ");
}

/**
 * What a json field stores for a value set on it: a string that is valid JSON
 * is taken as that JSON (PocketBase 0.22 and 0.23+ normalise `"123"` to the
 * number 123, `"null"` to null), any other string is stored as a JSON string,
 * anything else is serialized.
 */
export function jsonFieldText(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") {
    try {
      JSON.parse(value);
      return value;
    } catch {
      return JSON.stringify(value);
    }
  }
  return JSON.stringify(value);
}

/** A new record's values before anything is set (PocketBase's zero values; a json field is NULL). */
function blankRecord(collection: string): Record<string, string | number> {
  const fields = fieldsOf(collection);
  const blank: Record<string, string | number> = {};
  for (const name of [...fields.date, ...fields.text, ...fields.json]) blank[name] = "";
  for (const name of fields.number) blank[name] = 0;
  return blank;
}

function blankRow(): Omit<StoredRow, "id"> {
  return blankRecord(COLLECTION) as Omit<StoredRow, "id">;
}

/** What `findCollectionByNameOrId` returns: only the name matters to recordQuery and `new Record`. */
export interface FakeCollection {
  name: string;
}

function isCollection(value: unknown): value is FakeCollection {
  return typeof value === "object" && value !== null && "name" in value && !("probe_key" in value);
}

/** models.Record (core.Record on 0.23+): get/set/getString/getInt and `id`, with PocketBase's field normalisation on set. */
export class FakeRecord {
  id: string;
  /** Its collection's name (probe_jobs unless made by `new Record(collection)` of another). */
  readonly collection: string;
  /** Made by `new Record(collection)` and not saved yet: its save is an insert. */
  isNew: boolean;
  readonly #data: Map<string, string | number>;
  readonly #fields: FieldTypes;

  constructor(source?: StoredRow | FakeCollection) {
    if (isCollection(source)) {
      this.collection = source.name;
      this.#fields = fieldsOf(source.name);
      this.id = "";
      this.isNew = true;
      this.#data = new Map(Object.entries(blankRecord(source.name)));
      return;
    }
    this.collection = COLLECTION;
    this.#fields = fieldsOf(COLLECTION);
    this.id = source?.id ?? "";
    this.isNew = false;
    this.#data = new Map(source ? Object.entries(source).filter(([k]) => k !== "id") : []);
  }

  get(name: string): unknown {
    if (name === "id") return this.id;
    const value = this.#data.get(name);
    if (this.#fields.json.has(name)) return value ? JSON.parse(String(value)) : null;
    return value;
  }

  set(name: string, value: unknown): void {
    const fields = this.#fields;
    if (name === "id") this.id = String(value);
    else if (fields.date.has(name)) this.#data.set(name, toPbDateText(value));
    else if (fields.number.has(name)) this.#data.set(name, Number.isFinite(Number(value)) ? Number(value) : 0);
    else if (fields.text.has(name)) this.#data.set(name, value === null || value === undefined ? "" : String(value));
    else if (fields.json.has(name)) this.#data.set(name, jsonFieldText(value));
    // PocketBase would keep an unknown key in memory and never save it: fail loudly instead.
    else throw new Error(`fake PocketBase: ${this.collection} has no field ${JSON.stringify(name)}`);
  }

  /** A json field's JSON text as stored (PocketBase's JsonRaw.String()); other fields as text. */
  getString(name: string): string {
    if (this.#fields.json.has(name)) return String(this.#data.get(name) ?? "");
    const value = this.get(name);
    return value === undefined || value === null ? "" : String(value);
  }

  getInt(name: string): number {
    const n = Number(this.#data.get(name) ?? 0);
    return Number.isFinite(n) ? Math.trunc(n) : 0;
  }

  /** What a query's one(record) does: the record becomes the row. */
  load(row: StoredRow): void {
    this.id = row.id;
    this.#data.clear();
    for (const [k, v] of Object.entries(row)) if (k !== "id") this.#data.set(k, v);
  }

  snapshot(): StoredRow {
    return { id: this.id, ...Object.fromEntries(this.#data) } as unknown as StoredRow;
  }
}

/** What `$dbx.exp(sql, params)` returns, or `$dbx.hashExp({ column: value })`. */
type DbxExpression = { sql: string; params: Record<string, unknown> } | { hash: Record<string, unknown> };
type Params = Record<string, unknown>;

/** The select list of the adapter's record queries: every column, the lease as the lease rule judges it. */
const JUDGED_SELECT = ["probe_jobs.*", LEASE_AS_JUDGED_SQL];

// ---- the SQL evaluator ------------------------------------------------------------------

/** The probe_jobs columns the evaluator reads (a StoredRow, or the pure tests' in-memory row). */
export type SqlJobRow = Pick<StoredRow,
  "id" | "created" | "probe_key" | "status" | "lease_expires_at" | "priority" | "run_at" | "attempts" |
  "dead_lettered_at" | "unique_key" | "consecutive_orphan_count" | "finished_at" | "requeued_at" | "queue" |
  "group_key" | "start_by">;

/**
 * The tables a query sees: the app's, or a transaction's working copies.
 * `workers` (fleet_workers, only the columns the hooks write) is the app's
 * alone: the hooks stamp last_seen_at outside every transaction, so a
 * transaction's copy has none and a stamp inside one throws.
 */
export interface SqlTables<J extends SqlJobRow = StoredRow> {
  jobs: Map<string, J>;
  schedules: Map<string, StoredSchedule>;
  events: Map<string, StoredEvent>;
  /** probe_flow, by id. */
  flow: Map<string, StoredFlow>;
  /** probe_flow_claims, in insertion order. */
  flowClaims: StoredFlowClaim[];
  workers?: Map<string, StoredWorker>;
}

function isHeld(row: SqlJobRow): boolean {
  return row.status === "claimed" || row.status === "running";
}

function isTerminal(status: string): boolean {
  return status === "done" || status === "failed" || status === "cancelled";
}

/** A row the partial unique index covers (LIVE_UNIQUE_KEY_SQL). */
function holdsUniqueKey(row: SqlJobRow): boolean {
  return row.unique_key !== "" && !isTerminal(row.status);
}

function boundNow(params: Params): number {
  const now = parsePbDate(String(params["now"]));
  if (now === null) throw new Error(`fake PocketBase: {:now} is not a PocketBase date: ${String(params["now"])}`);
  return now;
}

/**
 * SQLite's answer to the expired-lease condition, by the JavaScript half of the
 * one lease rule (the integration suite checks that real SQLite agrees with it).
 */
function leaseExpired(row: SqlJobRow, params: Params): boolean {
  return isHeld(row) && !isLeaseLive(row.lease_expires_at, boundNow(params));
}

function requireBound(sql: string, params: Params): void {
  for (const [, name] of sql.matchAll(/\{:(\w+)\}/g)) {
    if (!(name! in params)) throw new Error(`fake PocketBase: {:${name}} is not bound`);
  }
}

/** SQLite's BINARY order of text: UTF-8 bytes (code points), not JavaScript's UTF-16 units. */
export function compareText(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** The prefix a query was built for ("" when none was bound). */
function boundPrefix(params: Params): string {
  return params["prefix"] === undefined ? "" : String(params["prefix"]);
}

/** The bound prefix range ({:prefix} inclusive, {:prefixEnd} exclusive when bound). */
function inPrefix(row: SqlJobRow, params: Params): boolean {
  if (params["prefix"] === undefined) return true;
  if (compareText(row.probe_key, String(params["prefix"])) < 0) return false;
  return params["prefixEnd"] === undefined || compareText(row.probe_key, String(params["prefixEnd"])) < 0;
}

/** The one queue a level query was built for (`queue = {:queue}`), undefined when none was bound. */
function boundQueue(params: Params): string | undefined {
  return params["queue"] === undefined ? undefined : String(params["queue"]);
}

/** `queue = {:queue}` as SQLite compares text: exactly the stored value ("" is not "default" here; the caller asks for both). */
function inQueue(row: SqlJobRow, queue: string | undefined): boolean {
  return queue === undefined || row.queue === queue;
}

/** The values bound as {:queue0}, {:queue1}, ... (expiredLeaseWhere's `queue IN (...)`), in order. */
function boundQueueList(params: Params): string[] {
  return boundList(params, "queue");
}

/**
 * The queue lists a bound IN list may have been built from: storedQueueValues
 * adds "" after the names when the default queue is among them, so the list
 * asked for is the bound values, or those without that trailing "".
 */
function queueListsOf(stored: string[]): string[][] {
  return stored[stored.length - 1] === "" ? [stored, stored.slice(0, -1)] : [stored];
}

/** The values bound as {:<name>0}, {:<name>1}, ..., in order. */
function boundList(params: Params, name: string): string[] {
  const values: string[] = [];
  while (params[`${name}${values.length}`] !== undefined) values.push(String(params[`${name}${values.length}`]));
  return values;
}

/**
 * The HeldBack lists (src/lib/queries.ts) a query may have been built with:
 * the held queues are bound as stored (the default queue's "" after the
 * names, see queueListsOf), the held groups as they are.
 */
function heldBackOf(params: Params): HeldBack[] {
  const stored = boundList(params, "heldQueue");
  const groups = boundList(params, "heldGroup");
  return stored.length === 0 ? [{ queues: [], groups }] : queueListsOf(stored).map((queues) => ({ queues, groups }));
}

/** heldBackTerms as SQLite evaluates them: `queue NOT IN (...)` over the stored values, `group_key NOT IN (...)`. */
function notHeldBack(row: SqlJobRow, params: Params): boolean {
  return !boundList(params, "heldQueue").includes(row.queue) && !boundList(params, "heldGroup").includes(row.group_key);
}

/** STARTABLE_SQL (src/lib/flow.ts): no start_by, started before, or its start_by not passed (dates compared as text). */
function startable(row: SqlJobRow, params: Params): boolean {
  return row.start_by === "" || row.attempts > 0 || compareText(row.start_by, String(params["now"])) > 0;
}

/** The row test of a record query's condition, for the WHERE shapes src/lib/queries.ts builds (dates compared as text, as SQLite does). */
export function jobWhere(expression: DbxExpression, table: Iterable<SqlJobRow> = []): (row: SqlJobRow) => boolean {
  if ("hash" in expression) {
    return (row) => Object.entries(expression.hash).every(([column, value]) => row[column as keyof SqlJobRow] === value);
  }
  const { sql, params } = expression;
  requireBound(sql, params);
  const prefix = boundPrefix(params);
  if (sql === jobByIdWhere("").sql) return (row) => row.id === params["id"];
  const ids = Object.keys(params).filter((name) => /^id\d+$/.test(name)).map((_, i) => String(params[`id${i}`]));
  if (ids.length > 0 && sql === jobsByIdsWhere(ids).sql) return (row) => ids.includes(row.id);
  const held = heldBackOf(params);
  if (held.some((h) => sql === expiredLeaseWhere(0, prefix, null, h).sql)) {
    return (row) => leaseExpired(row, params) && notHeldBack(row, params) && inPrefix(row, params);
  }
  const stored = boundQueueList(params);
  if (stored.length > 0 && queueListsOf(stored).some((queues) => held.some((h) => sql === expiredLeaseWhere(0, prefix, queues, h).sql))) {
    // `queue IN (...)` over the values as stored (the default queue's "" among them when bound).
    return (row) => leaseExpired(row, params) && stored.includes(row.queue) && notHeldBack(row, params) && inPrefix(row, params);
  }
  const priority = params["priority"];
  const queue = boundQueue(params);
  if (typeof priority === "number" &&
    (["filter", "range"] as const).some((use) => held.some((h) => sql === pendingDueWhere(priority, 0, prefix, use, queue, h).sql))) {
    const now = String(params["now"]);
    boundNow(params);
    return (row) => row.status === "pending" && row.priority === params["priority"] &&
      compareText(row.run_at, now) <= 0 && startable(row, params) && notHeldBack(row, params) && inQueue(row, queue) && inPrefix(row, params);
  }
  const groupWant = params["groupWant"];
  const groupQueue = params["groupQueue"];
  if (typeof priority === "number" && typeof groupWant === "number" && typeof groupQueue === "string" &&
    sql === pendingDueByGroupWhere(priority, 0, prefix, groupQueue, boundList(params, "heldGroup"), groupWant).sql) {
    // Per group of the queue's pending rows (all but the held-back ones): its first groupWant due rows at the level.
    const now = String(params["now"]);
    boundNow(params);
    const heldGroups = boundList(params, "heldGroup");
    const due = [...table].filter((row) => row.status === "pending" && row.queue === groupQueue && !heldGroups.includes(row.group_key) &&
      row.priority === priority && compareText(row.run_at, now) <= 0 && startable(row, params) && inPrefix(row, params));
    const chosen = new Set<string>();
    const perGroup = new Map<string, SqlJobRow[]>();
    for (const row of due) perGroup.set(row.group_key, [...(perGroup.get(row.group_key) ?? []), row]);
    for (const rows of perGroup.values()) {
      for (const row of rows.sort(compareBy<SqlJobRow>(LEVEL_ORDER)).slice(0, groupWant)) chosen.add(row.id);
    }
    return (row) => chosen.has(row.id);
  }
  if (sql === startByPassedWhere(0).sql) {
    const now = String(params["now"]);
    boundNow(params);
    return (row) => row.status === "pending" && row.start_by !== "" && compareText(row.start_by, now) <= 0 && row.attempts === 0;
  }
  throw new Error(`fake PocketBase: cannot evaluate WHERE ${sql}`);
}

/** ORDER BY terms of the form `column ASC|DESC`. */
export function compareBy<R extends object>(order: readonly string[]): (a: R, b: R) => number {
  return (a, b) => {
    for (const term of order) {
      const m = /^(\w+) (ASC|DESC)$/.exec(term);
      if (!m) throw new Error(`fake PocketBase: cannot order by ${JSON.stringify(term)}`);
      const field = m[1] as keyof R;
      if (!(field in a)) throw new Error(`fake PocketBase: no column ${String(field)} to order by`);
      const [x, y] = [a[field], b[field]];
      if (x === y) continue;
      const less = typeof x === "string" && typeof y === "string" ? compareText(x, y) < 0 : x < y;
      return (less ? -1 : 1) * (m[2] === "DESC" ? -1 : 1);
    }
    return 0;
  };
}

/** The statuses of each retention class (docs/queue.md: done/cancelled under one keep, failed under the other). */
const RETENTION_STATUSES: Record<RetentionClass, readonly string[]> = { done: ["done", "cancelled"], failed: ["failed"] };

/** jobRowsQuery's text around its where clause and order: [before, between, after]. */
const ROWS_QUERY_PARTS = (() => {
  const template = jobRowsQuery({ sql: "\u0000WHERE\u0000", params: {} }, ["\u0000ORDER\u0000"], 0).sql;
  const [before, rest] = template.split("\u0000WHERE\u0000") as [string, string];
  const [between, after] = rest.split("\u0000ORDER\u0000") as [string, string];
  return { before, between, after };
})();

/** The where clause and order of a jobRowsQuery (src/lib/bulk.ts) text, or null when it is not one. */
function rowsQueryParts(sql: string, params: Params): { where: { sql: string; params: Params }; order: string[]; limit: number } | null {
  const { before, between, after } = ROWS_QUERY_PARTS;
  if (!sql.startsWith(before) || !sql.endsWith(after)) return null;
  const middle = sql.slice(before.length, sql.length - after.length);
  const cut = middle.lastIndexOf(between);
  if (cut === -1) return null;
  const whereParams = { ...params };
  delete whereParams["rowsLimit"];
  const where = { sql: middle.slice(0, cut), params: whereParams };
  const order = middle.slice(cut + between.length).split(", ");
  const limit = Number(params["rowsLimit"]);
  // The whole text must be what the builder makes of those parts.
  return jobRowsQuery(where as never, order, limit).sql === sql ? { where, order, limit } : null;
}

/** A row as jobRowsQuery's json_object makes it: id, the text fields (the lease as judged), the number fields. */
function rowAsJson(row: SqlJobRow): Record<string, unknown> {
  const out: Record<string, unknown> = { id: row.id };
  const all = row as unknown as Record<string, unknown>;
  for (const f of JOB_ROW_TEXT_FIELDS) {
    const value = all[f];
    out[f] = f === "lease_expires_at" ? judgedLease(String(value ?? "")) : value === undefined || value === null ? "" : value;
  }
  for (const f of JOB_ROW_NUMBER_FIELDS) out[f] = all[f] ?? 0;
  // Flow control's fields only on a row that uses them (bulk.ts's CASE).
  const text = (f: string) => (all[f] === undefined || all[f] === null ? "" : all[f]);
  if (text("group_key") !== "" || (Number(all["timeout_seconds"] ?? 0)) !== 0 || text("start_by") !== "") {
    for (const f of JOB_ROW_FLOW_TEXT_FIELDS) out[f] = text(f);
    for (const f of JOB_ROW_FLOW_NUMBER_FIELDS) out[f] = all[f] ?? 0;
  }
  return out;
}

/** The rows of a raw SELECT (queryOne/queryAll, stats), for the queries src/lib builds. */
export function answerQuery(sql: string, params: Params, tables: SqlTables<SqlJobRow>): Record<string, unknown>[] {
  requireBound(sql, params);
  const prefix = boundPrefix(params);
  const jobs = [...tables.jobs.values()];
  const planAnswer = answerPlanQuery(sql, params, tables.jobs as unknown as Map<string, ModelRow>);
  if (planAnswer !== null) return planAnswer;
  const rowsQuery = rowsQueryParts(sql, params);
  if (rowsQuery !== null) {
    const test = jobWhere(rowsQuery.where, jobs);
    const rows = jobs.filter(test).sort(compareBy<SqlJobRow>(rowsQuery.order)).slice(0, rowsQuery.limit).map(rowAsJson);
    return [{ rows: JSON.stringify(rows) }];
  }
  if (typeof params["groupQueue"] === "string" && typeof params["groupLimit"] === "number" &&
    sql === pendingGroupCountQuery(params["groupQueue"], params["groupLimit"] - 1).sql) {
    const groups = new Set(jobs.filter((r) => r.status === "pending" && r.queue === params["groupQueue"]).map((r) => r.group_key));
    return [{ n: Math.min(groups.size, params["groupLimit"]) }];
  }
  const below = params["below"] === undefined ? undefined : Number(params["below"]);
  const queue = boundQueue(params);
  if ((["filter", "range"] as const).some((use) => sql === topPriorityQuery(prefix, below, use, queue).sql)) {
    const levels = jobs
      .filter((r) => r.status === "pending" && (below === undefined || r.priority < below) && inQueue(r, queue) && inPrefix(r, params))
      .map((r) => r.priority);
    return [{ found: levels.length > 0 ? 1 : 0, priority: levels.length > 0 ? Math.max(...levels) : 0 }];
  }
  if (sql === familyProbeQuery(prefix).sql) {
    return [{ n: Math.min(FAMILY_PROBE_LIMIT, jobs.filter((r) => r.status === "pending" && inPrefix(r, params)).length) }];
  }
  if (typeof params["uniqueKey"] === "string" && sql === liveUniqueKeyQuery(params["uniqueKey"]).sql) {
    const holder = jobs.find((r) => holdsUniqueKey(r) && r.unique_key === params["uniqueKey"]);
    return holder ? [{ id: holder.id, queue: holder.queue }] : [];
  }
  // The counts table is exact by construction (SQLite triggers): here it is the rows themselves.
  if (sql === statsQuery(0, 0).sql) return [answerStats(jobs, params)];
  if (sql === statsScanQuery(0, 0, prefix).sql) return [answerStats(jobs.filter((r) => inPrefix(r, params)), params)];
  // One queue's figures (docs/flow-control.md): its rows as stored ({:statsQueue0}, and "" after it for the default queue).
  const statsQueues = boundList(params, "statsQueue");
  if (statsQueues.length > 0 && sql === statsScanQuery(0, 0, prefix, statsQueues[0]).sql) {
    return [answerStats(jobs.filter((r) => statsQueues.includes(r.queue) && inPrefix(r, params)), params)];
  }
  if (typeof params["limit"] === "number" && sql === liveCountsByQueueQuery(params["limit"]).sql) {
    const counts = new Map<string, { queue: string; status: string; n: number }>();
    for (const r of jobs.filter((j) => ["pending", "claimed", "running"].includes(j.status))) {
      const queue = r.queue === "" ? String(params["defaultQueue"]) : r.queue;
      const key = `${queue}\u0000${r.status}`;
      const entry = counts.get(key) ?? { queue, status: r.status, n: 0 };
      entry.n++;
      counts.set(key, entry);
    }
    return [...counts.values()]
      .sort((a, b) => compareText(a.queue, b.queue) || compareText(a.status, b.status))
      .slice(0, params["limit"]);
  }
  if (sql === JOB_COUNTS_READY_QUERY.sql) return [{ ready: 1 }];
  if (sql === enabledSchedulesQuery(0, Number(params["limit"]), String(params["after"])).sql) {
    return [...tables.schedules.values()]
      .filter((s) => s.enabled === true && compareText(s.name, String(params["after"])) > 0 &&
        compareText(String(s.last_enqueued_for ?? ""), String(params["minute"])) < 0)
      .sort((a, b) => compareText(a.name, b.name))
      .slice(0, Number(params["limit"]))
      .map((s) => ({ ...s }));
  }
  const flowAnswer = answerFlowQuery(sql, params, tables);
  if (flowAnswer !== null) return flowAnswer;
  throw new Error(`fake PocketBase: cannot answer ${sql}`);
}

// ---- flow control's tables and counts (src/lib/flow.ts) ---------------------------------

const SCOPE_KINDS: readonly ScopeKind[] = ["queue", "group"];

/** A probe_flow row as FLOW_COLUMNS selects it (the COALESCEs make unset 0 and ""). */
function flowColumns(row: StoredFlow): Record<string, unknown> {
  return {
    scope: row.scope, name: row.name, paused: row.paused, concurrency: row.concurrency, rate_limit: row.rate_limit,
    rate_period: row.rate_period, parked_until: row.parked_until,
  };
}

/** scopeTerm (src/lib/flow.ts) as SQLite evaluates it: a group's rows, or a queue's as stored ("" too for the default queue). */
function inScope(row: SqlJobRow, s: Scope): boolean {
  if (s.scope === "group") return row.group_key !== "" && row.group_key === s.name;
  return row.queue === s.name || (s.name === DEFAULT_QUEUE && row.queue === "");
}

/** The scope a heldCountQuery/dueCountQuery text was built for (its kind is in the text, its name bound), or null. */
function countedScope(sql: string, params: Params, build: (s: Scope, nowMs: number) => { sql: string }): Scope | null {
  if (typeof params["scopeName"] !== "string") return null;
  const name = params["scopeName"];
  for (const scope of SCOPE_KINDS) if (sql === build({ scope, name }, 0).sql) return { scope, name };
  return null;
}

/** The scopes a flowRowsQuery was built for: {:s0}/{:n0}, {:s1}/{:n1}, ... */
function boundScopes(params: Params): Scope[] {
  const kinds = boundList(params, "s");
  const names = boundList(params, "n");
  return kinds.map((scope, i) => ({ scope: scope as ScopeKind, name: names[i] ?? "" }));
}

/** flow.ts's queries over probe_jobs, probe_flow and probe_flow_claims, as SQLite answers them; null: not one of them. */
function answerFlowQuery(sql: string, params: Params, tables: SqlTables<SqlJobRow>): Record<string, unknown>[] | null {
  const jobs = [...tables.jobs.values()];
  const flows = [...tables.flow.values()];
  const scopes = boundScopes(params);
  if (scopes.length > 0 && sql === flowRowsQuery(scopes).sql) {
    return flows.filter((f) => scopes.some((s) => f.scope === s.scope && f.name === s.name)).map(flowColumns);
  }
  const listScope = params["scope"] === undefined ? null : (String(params["scope"]) as ScopeKind);
  const listName = params["name"] === undefined ? null : String(params["name"]);
  if (typeof params["limit"] === "number" && sql === flowListQuery(listScope, listName, params["limit"]).sql) {
    return flows
      .filter((f) => (listScope === null || f.scope === listScope) && (listName === null || f.name === listName))
      .sort((a, b) => compareText(a.scope, b.scope) || compareText(a.name, b.name))
      .slice(0, params["limit"])
      .map(flowColumns);
  }
  if (typeof params["limit"] === "number" && typeof params["nowMs"] === "number" && sql === heldBackScopesQuery(0, params["limit"]).sql) {
    const now = String(params["now"]);
    const nowMs = params["nowMs"];
    const limit = params["limit"];
    const held = (f: StoredFlow) => jobs.filter((r) => inScope(r, { scope: f.scope as ScopeKind, name: f.name }) && isHeld(r) &&
      isLeaseLive(r.lease_expires_at, nowMs)).length;
    const inWindow = (f: StoredFlow) =>
      tables.flowClaims.filter((c) => c.scope === f.scope && c.name === f.name && c.at > nowMs - f.rate_period * 1000).length;
    const parts = [
      flows.filter((f) => f.paused === 1),
      flows.filter((f) => f.parked_until !== "" && compareText(f.parked_until, now) > 0),
      flows.filter((f) => f.scope === "group" && f.concurrency > 0 && held(f) >= f.concurrency),
      flows.filter((f) => f.scope === "queue" && f.concurrency > 0 && held(f) >= f.concurrency),
      flows.filter((f) => f.rate_limit > 0 && inWindow(f) >= f.rate_limit),
    ];
    const seen = new Set<string>();
    const out: { scope: string; name: string }[] = [];
    for (const part of parts) {
      for (const f of part.slice(0, limit)) {
        const key = `${f.scope}\u0000${f.name}`;
        if (!seen.has(key)) out.push({ scope: f.scope, name: f.name });
        seen.add(key);
      }
    }
    return out;
  }
  const heldScope = countedScope(sql, params, heldCountQuery);
  if (heldScope !== null) {
    const now = boundNow(params);
    return [{ n: jobs.filter((r) => inScope(r, heldScope) && isHeld(r) && isLeaseLive(r.lease_expires_at, now)).length }];
  }
  const dueScope = countedScope(sql, params, dueCountQuery);
  if (dueScope !== null) {
    const now = String(params["now"]);
    boundNow(params);
    return [{
      n: jobs.filter((r) => inScope(r, dueScope) && r.status === "pending" && compareText(r.run_at, now) <= 0 && startable(r, params)).length,
    }];
  }
  if (typeof params["since"] === "number" && sql === windowCountQuery({ scope: "queue", name: "" }, 0, 0).sql) {
    const { scope, name, since } = params as { scope: string; name: string; since: number };
    return [{ n: tables.flowClaims.filter((c) => c.scope === scope && c.name === name && c.at > since).length }];
  }
  if (sql === nextQueueQuery(null).sql || (typeof params["after"] === "string" && sql === nextQueueQuery(params["after"]).sql)) {
    const after = params["after"] === undefined ? null : String(params["after"]);
    const next = jobs.map((r) => r.queue).filter((q) => after === null || compareText(q, after) > 0).sort(compareText)[0];
    return next === undefined ? [] : [{ name: next }];
  }
  if (typeof params["queue"] === "string" && sql === unfinishedInQueueQuery(params["queue"]).sql) {
    const stored = params["queue"];
    return [{ n: jobs.some((r) => r.queue === stored && ["pending", "claimed", "running"].includes(r.status)) ? 1 : 0 }];
  }
  return null;
}

/** The probe_flow row of a scope, if any (the (scope, name) unique index: at most one). */
function flowRowOf(tables: SqlTables<SqlJobRow>, scope: string, name: string): StoredFlow | undefined {
  return [...tables.flow.values()].find((f) => f.scope === scope && f.name === name);
}

/** A new probe_flow row as a raw INSERT makes it: the named columns, the collection's defaults for the rest. */
function insertFlowRow(tables: SqlTables<SqlJobRow>, scope: string, name: string, stamp: string): StoredFlow {
  const row: StoredFlow = {
    id: newRecordId(), scope, name, paused: 0, concurrency: 0, rate_limit: 0, rate_period: 0, parked_until: "", created: stamp, updated: stamp,
  };
  tables.flow.set(row.id, row);
  return row;
}

/** flow.ts's statements, applied as SQLite would; the rows changed, or null: not one of them. */
function executeFlowStatement(sql: string, params: Params, tables: SqlTables<SqlJobRow>): number | null {
  const scope = params["scope"];
  const name = params["name"];
  if (typeof scope === "string" && typeof name === "string") {
    const s: Scope = { scope: scope as ScopeKind, name };
    if (typeof params["at"] === "number" && typeof params["expires"] === "number" && sql === recordClaimStatement(s, 0, 0).sql) {
      tables.flowClaims.push({ scope, name, at: params["at"], expires: params["expires"] });
      return 1;
    }
    if (typeof params["periodMs"] === "number" && sql === reExpireClaimsStatement(s, params["periodMs"] / 1000).sql) {
      const periodMs = params["periodMs"];
      let changed = 0;
      for (const c of tables.flowClaims) {
        if (c.scope !== scope || c.name !== name) continue;
        c.expires = c.at + periodMs;
        changed++;
      }
      return changed;
    }
    const stamp = typeof params["stamp"] === "string" ? params["stamp"] : null;
    const stampMs = stamp === null ? null : parsePbDate(stamp);
    if (stamp !== null && stampMs !== null) {
      // The columns an upsert names are bound after scope, name and stamp, in its order.
      const columns = Object.fromEntries(Object.entries(params).filter(([k]) => k !== "scope" && k !== "name" && k !== "stamp"));
      if (sql === upsertFlowStatement(s, columns as never, stampMs).sql) {
        const row = flowRowOf(tables, scope, name) ?? insertFlowRow(tables, scope, name, stamp);
        for (const [column, value] of Object.entries(columns)) {
          if (!(column in row) || column === "id" || column === "created" || column === "updated") {
            throw new Error(`fake PocketBase: probe_flow has no settable column ${column}`);
          }
          (row as unknown as Record<string, unknown>)[column] = column === "parked_until" ? toPbDateText(value) : value;
        }
        row.updated = stamp;
        return 1;
      }
      const untilMs = typeof params["until"] === "string" ? parsePbDate(params["until"]) : null;
      if (untilMs !== null && sql === parkStatement(s, untilMs, stampMs).sql) {
        const until = String(params["until"]);
        const existing = flowRowOf(tables, scope, name);
        if (existing === undefined) {
          insertFlowRow(tables, scope, name, stamp).parked_until = until;
        } else {
          // MAX(COALESCE(parked_until, ''), excluded.parked_until): text order.
          if (compareText(until, existing.parked_until) > 0) existing.parked_until = until;
          existing.updated = stamp;
        }
        return 1;
      }
    }
  }
  const limit = params["limit"];
  if (typeof params["now"] === "number" && typeof limit === "number" && sql === deleteExpiredClaimsStatement(0, limit).sql) {
    const now = params["now"];
    let deleted = 0;
    // In place: the table is the app's (or the transaction's) array.
    for (let i = 0; i < tables.flowClaims.length && deleted < limit;) {
      if ((tables.flowClaims[i] as StoredFlowClaim).expires <= now) {
        tables.flowClaims.splice(i, 1);
        deleted++;
      } else {
        i++;
      }
    }
    return deleted;
  }
  if (typeof limit === "number" && sql === deletePassedParksStatement(0, limit).sql) {
    const now = String(params["now"]);
    boundNow(params);
    const doomed = [...tables.flow.values()]
      .filter((f) => compareText(f.parked_until, now) <= 0 && f.scope === "group" &&
        f.paused === 0 && f.concurrency === 0 && f.rate_limit === 0)
      .slice(0, limit);
    for (const f of doomed) tables.flow.delete(f.id);
    return doomed.length;
  }
  return null;
}

/** SQLite's answer to statsQuery (src/lib/queries.ts), computed over the rows. */
function answerStats(rows: SqlJobRow[], params: Params): Record<string, unknown> {
  const now = String(params["now"]);
  boundNow(params);
  const count = (test: (row: SqlJobRow) => boolean) => rows.filter(test).length;
  const latest = (...texts: string[]) => texts.reduce((a, b) => (compareText(a, b) >= 0 ? a : b));
  const waits = rows
    .filter((r) => r.status === "pending" && compareText(r.run_at, now) <= 0)
    .map((r) => latest(r.created, r.requeued_at, r.run_at))
    .sort(compareText);
  return {
    pending: count((r) => r.status === "pending"),
    claimed: count((r) => r.status === "claimed"),
    running: count((r) => r.status === "running"),
    done: count((r) => r.status === "done"),
    failed: count((r) => r.status === "failed"),
    cancelled: count((r) => r.status === "cancelled"),
    total: rows.length,
    scheduled: count((r) => r.status === "pending" && compareText(r.run_at, now) > 0),
    retrying: count((r) => r.status === "pending" && r.attempts > 0),
    dead_lettered: count((r) => r.dead_lettered_at !== ""),
    oldest_pending: waits[0] ?? "",
    expired_leases: count((r) => leaseExpired(r, params)),
    past_orphan_cap: count((r) => r.consecutive_orphan_count >= Number(params["cap"])),
    counts_ready: 1,
  };
}

/** A statement that writes (retention's deletes, a schedule's mark): applies it and answers the rows it changed. */
export function executeStatement(sql: string, params: Params, tables: SqlTables<SqlJobRow>): number {
  requireBound(sql, params);
  const planWrites = executePlanStatement(sql, params, tables.jobs as unknown as Map<string, ModelRow>);
  if (planWrites !== null) return planWrites;
  if (typeof params["patches"] === "string" && typeof params["updated"] === "string") {
    const items = JSON.parse(params["patches"]) as ({ id: string } & Record<string, unknown>)[];
    const patches = items.map(({ id, ...patch }) => ({ id, patch: patch as JobPatch }));
    if (sql === bulkPatchStatement(patches, params["updated"]).sql) {
      let changed = 0;
      for (const { id, patch } of patches) {
        const row = tables.jobs.get(id) as unknown as Record<string, unknown> | undefined;
        if (row === undefined) continue;
        for (const [column, value] of Object.entries(patch)) {
          // json_extract of a JSON null is SQL NULL: a column this fake (and pb-fleet's reads) never expects.
          if (value === null || typeof value === "object") throw new Error(`fake PocketBase: the bulk write would store ${JSON.stringify(value)} in ${column}`);
          if (!(column in row)) throw new Error(`fake PocketBase: probe_jobs has no column ${column}`);
          row[column] = value;
        }
        if ("updated" in row) row["updated"] = params["updated"];
        checkUniqueKey(row as unknown as SqlJobRow, tables.jobs);
        changed++;
      }
      return changed;
    }
  }
  if (typeof params["id"] === "string" && sql === stampLastSeenStatement(params["id"], 0).sql) {
    boundNow(params);
    if (tables.workers === undefined) throw new Error(`fake PocketBase: ${WORKERS_COLLECTION} stamped inside a transaction (the hooks stamp it outside)`);
    const worker = tables.workers.get(params["id"]);
    if (worker === undefined) return 0;
    worker.last_seen_at = String(params["now"]);
    return 1;
  }
  // probe_job_completions lives in SQLite's triggers, which this fake has none of (the counted reads answer from the rows).
  if (sql === pruneCompletionsStatement(0).sql) return 0;
  if (sql === deleteOldEventsStatement("", 0).sql) {
    const doomed = [...tables.events.values()]
      .filter((e) => compareText(e.created, String(params["cutoff"])) < 0)
      .sort((a, b) => compareText(a.created, b.created))
      .slice(0, Number(params["limit"]));
    for (const e of doomed) tables.events.delete(e.id);
    return doomed.length;
  }
  if (sql === markScheduleStatement(String(params["id"]), { last_enqueued_for: String(params["minute"]) }).sql) {
    const schedule = tables.schedules.get(String(params["id"]));
    if (schedule === undefined) return 0;
    schedule.last_enqueued_for = String(params["minute"]);
    return 1;
  }
  for (const retentionClass of RETENTION_CLASSES) {
    if (sql !== deleteExpiredQuery(retentionClass, "", 0).sql) continue;
    const statuses = RETENTION_STATUSES[retentionClass];
    const cutoff = String(params["cutoff"]);
    const doomed = [...tables.jobs.values()]
      .filter((r) => statuses.includes(r.status) && r.finished_at !== "" && compareText(r.finished_at, cutoff) < 0)
      .slice(0, Number(params["limit"]));
    for (const r of doomed) tables.jobs.delete(r.id);
    return doomed.length;
  }
  const flowChanged = executeFlowStatement(sql, params, tables);
  if (flowChanged !== null) return flowChanged;
  throw new Error(`fake PocketBase: cannot execute ${sql}`);
}

/**
 * A raw query's row as a DynamicModel of `shape` reads it: every column of the
 * shape must be answered, and takes the shape's type (SQLite's 0/1 for a
 * boolean shape; NULL cannot be read into text).
 */
export function shaped<T extends object>(shape: T, answer: Record<string, unknown>): T {
  const out: Record<string, unknown> = {};
  for (const [column, example] of Object.entries(shape)) {
    if (!(column in answer)) throw new Error(`fake PocketBase: the query answers no column ${column}`);
    const value = answer[column];
    if (typeof example === "number") {
      if (typeof value !== "number" && typeof value !== "boolean") throw new Error(`fake PocketBase: column ${column} is not a number: ${String(value)}`);
      out[column] = Number(value);
    } else if (typeof example === "string") {
      if (value === null || value === undefined) throw new Error(`fake PocketBase: converting NULL to string is unsupported (column ${column})`);
      out[column] = String(value);
    } else if (typeof example === "boolean") {
      out[column] = Boolean(value);
    } else {
      out[column] = value;
    }
  }
  return out as T;
}

/** The partial unique index (LIVE_UNIQUE_KEY_SQL) as SQLite enforces it on a write. */
export function checkUniqueKey(row: SqlJobRow, jobs: Map<string, SqlJobRow>): void {
  if (!holdsUniqueKey(row)) return;
  for (const other of jobs.values()) {
    if (other.id !== row.id && holdsUniqueKey(other) && other.unique_key === row.unique_key) {
      throw new Error("fake PocketBase: UNIQUE constraint failed: probe_jobs.unique_key");
    }
  }
}

function clone<T extends object>(row: T): T {
  return { ...row };
}

/** A PocketBase record id: 15 characters of [a-z0-9]. */
function newRecordId(): string {
  return Array.from({ length: 15 }, () => "abcdefghijklmnopqrstuvwxyz0123456789"[randomInt(36)]).join("");
}

/** The database behind the fake: rows, environment, logs, and switches to make it fail. */
export class FakeDb {
  rows = new Map<string, StoredRow>();
  schedules = new Map<string, StoredSchedule>();
  /** probe_job_events, in insertion order. */
  events = new Map<string, StoredEvent>();
  /** probe_flow (docs/flow-control.md: a scope's settings), by id. */
  flow = new Map<string, StoredFlow>();
  /** probe_flow_claims (the rate window's log), in insertion order. */
  flowClaims: StoredFlowClaim[] = [];
  /** fleet_workers: only what the hooks read and write (the adapters get a request's record from PocketBase, as FakeWorker). */
  workers = new Map<string, StoredWorker>();
  env: Record<string, string> = {};
  logs: { level: "info" | "error"; message: string; attrs: unknown[] }[] = [];
  /** $app.store(): one per process, shared by the loader and every pooled runtime. */
  store = new Map<string, unknown>();
  /** saveRecord calls, committed or not. */
  saves = 0;
  /** probe_jobs collection look-ups: handlers cache the model per runtime, so a burst should cost one. */
  collectionLookups = 0;
  /** Look-ups per collection name. */
  lookupsOf: Record<string, number> = {};
  /** When set, the saveRecord call with this number (1-based, counting from now) throws. */
  failSaveNumber: number | null = null;
  /** When true, every raw query (stats, queryOne/queryAll, statements) throws. */
  failQueries = false;
  /** Statements executed (raw writes: the batch endpoints' UPDATE, retention's DELETE), committed or not. */
  executes = 0;
  /** When set, the statement with this number (1-based, counting from now) throws. */
  failExecuteNumber: number | null = null;
  openTransaction = false;
  /**
   * The bundle's probe_jobs create hooks, as the fake of its API runs them
   * (installHooks): false when the insert must not happen (a 0.23+ hook that
   * did not call e.next()). null: no hooks registered.
   */
  onCreate: ((record: FakeRecord) => boolean) | null = null;
  #created = Date.now() - 3_600_000;

  /** Adds a row as if it had been there all along (no hooks); created times increase in insertion order. */
  insert(fields: Partial<StoredRow> = {}): StoredRow {
    this.#created += 1000;
    const created = pbDate(this.#created);
    const row: StoredRow = {
      ...blankRow(),
      id: `job${String(this.rows.size + 1).padStart(12, "0")}`,
      probe_key: `probe-${this.rows.size + 1}`,
      status: "pending",
      created,
      updated: created,
      // The create hook stamps a row's due time at its creation.
      run_at: fields.created ?? created,
      // As the migration backfilled it, enqueue writes it and the create hook stamps it.
      queue: "default",
      ...fields,
    };
    this.rows.set(row.id, row);
    return clone(row);
  }

  /**
   * A fleet_workers record as an admin made it (fields as stored; last seen
   * now unless given, so no stamp is due). Pass it (or worker(id) later) as a
   * request's caller: PocketBase loads the token's record for each request.
   */
  addWorker(fields: Partial<StoredWorker> = {}): StoredWorker {
    const worker: StoredWorker = {
      id: `wrk${String(this.workers.size + 1).padStart(12, "0")}`,
      queues: "", can_enqueue: false, disabled: false, last_seen_at: formatPbDate(Date.now()),
      ...fields,
    };
    this.workers.set(worker.id, worker);
    return { ...worker };
  }

  worker(id: string): StoredWorker {
    const worker = this.workers.get(id);
    if (!worker) throw new Error(`no worker ${id}`);
    return { ...worker };
  }

  addSchedule(fields: Partial<StoredSchedule> & { name: string }): StoredSchedule {
    const schedule: StoredSchedule = {
      id: `sch${String(this.schedules.size + 1).padStart(12, "0")}`,
      probe_key: `scheduled-${fields.name}`, cron: "* * * * *", payload: "", priority: 0, max_attempts: 0,
      enabled: true, last_enqueued_for: "", queue: "", group_key: "",
      ...fields,
    };
    this.schedules.set(schedule.id, schedule);
    return clone(schedule);
  }

  schedule(id: string): StoredSchedule {
    const schedule = this.schedules.get(id);
    if (!schedule) throw new Error(`no schedule ${id}`);
    return clone(schedule);
  }

  /** A probe_flow row as an earlier POST /api/fleet/flow (or a park) left it; unset settings 0 and "". */
  addFlow(fields: Partial<StoredFlow> & { scope: ScopeKind; name: string }): StoredFlow {
    const stamp = pbDate(Date.now());
    const row: StoredFlow = {
      id: newRecordId(), paused: 0, concurrency: 0, rate_limit: 0, rate_period: 0, parked_until: "", created: stamp, updated: stamp,
      ...fields,
    };
    this.flow.set(row.id, row);
    return clone(row);
  }

  /** A scope's probe_flow row, or undefined when it has none. */
  flowOf(scope: ScopeKind, name: string): StoredFlow | undefined {
    const row = [...this.flow.values()].find((f) => f.scope === scope && f.name === name);
    return row === undefined ? undefined : clone(row);
  }

  /** A record created through PocketBase's record API (or the admin UI): saved by the app, the create hooks run. */
  createRecord(fields: Partial<Omit<StoredRow, "id" | "created" | "updated">>): StoredRow {
    const record = new FakeRecord({ name: COLLECTION });
    for (const [field, value] of Object.entries(fields)) record.set(field, value);
    new FakeDao(this).saveRecord(record);
    return this.row(record.id);
  }

  row(id: string): StoredRow {
    const row = this.rows.get(id);
    if (!row) throw new Error(`no row ${id}`);
    return clone(row);
  }

  /** Every row, in insertion order. */
  all(): StoredRow[] {
    return [...this.rows.values()].map(clone);
  }

  /** Arms a failure of the nth saveRecord call from now. */
  failSave(nth = 1): void {
    this.failSaveNumber = this.saves + nth;
  }

  /** Arms a failure of the nth executed statement from now. */
  failExecute(nth = 1): void {
    this.failExecuteNumber = this.executes + nth;
  }
}

/** The statement builder of `dao.db()` / `app.db()`: raw queries into DynamicModels. */
export interface FakeBuilder {
  newQuery(sql: string): {
    bind(params: Params): {
      one(model: object): void;
      all(rows: object[]): void;
      execute(): { rowsAffected(): number };
    };
  };
}

/** What `arrayOf(model)` returns here: an array that remembers the model a raw query fills it with. */
const ARRAY_MODEL = Symbol("arrayOf model");

/** daos.Dao: the app's, or a transaction's working copy of the tables. */
export class FakeDao {
  readonly #db: FakeDb;
  readonly #txTables: SqlTables | null;

  constructor(db: FakeDb, txTables: SqlTables | null = null) {
    this.#db = db;
    this.#txTables = txTables;
  }

  #tables(): SqlTables {
    if (this.#txTables) return this.#txTables;
    // PocketBase has one writer connection: the app dao inside a transaction deadlocks (issue #4859).
    if (this.#db.openTransaction) throw new Error("fake PocketBase: $app.dao() used inside runInTransaction (deadlocks PocketBase)");
    return {
      jobs: this.#db.rows, schedules: this.#db.schedules, events: this.#db.events, flow: this.#db.flow, flowClaims: this.#db.flowClaims,
      workers: this.#db.workers,
    };
  }

  findCollectionByNameOrId(name: string): FakeCollection {
    fieldsOf(name); // throws for a collection this fake does not have
    if (name === COLLECTION) this.#db.collectionLookups++;
    this.#db.lookupsOf[name] = (this.#db.lookupsOf[name] ?? 0) + 1;
    return { name };
  }

  saveRecord(record: FakeRecord): void {
    const { jobs, events } = this.#tables();
    this.#db.saves++;
    if (this.#db.saves === this.#db.failSaveNumber) throw new Error("fake PocketBase: constraint failed (armed by the test)");
    if (!(record instanceof FakeRecord)) throw new Error("fake PocketBase: saveRecord wants a Record");
    const now = pbDate(Date.now());
    if (record.collection !== COLLECTION) {
      if (!record.isNew) throw new Error(`fake PocketBase: ${record.collection} records are only inserted here`);
      record.id = newRecordId();
      record.set("created", now);
      record.set("updated", now);
      events.set(record.id, record.snapshot() as unknown as StoredEvent);
      record.isNew = false;
      return;
    }
    if (record.isNew) {
      // As dao.create: id and created are set before the before-create hooks run.
      record.id = newRecordId();
      record.set("created", now);
      record.set("updated", now);
      if (this.#db.onCreate !== null && !this.#db.onCreate(record)) return;
    } else if (!jobs.has(record.id)) {
      throw new Error(`fake PocketBase: no record ${record.id} to update`);
    }
    const row = record.snapshot();
    row.updated = now;
    checkUniqueKey(row, jobs);
    jobs.set(row.id, row);
    record.isNew = false;
  }

  /** Like PocketBase 0.22: a collection model or its name. */
  recordQuery(collection: string | FakeCollection): FakeRecordQuery {
    const name = typeof collection === "string" ? collection : collection.name;
    if (name !== COLLECTION) throw new Error(`fake PocketBase: no collection ${name}`);
    return new FakeRecordQuery(() => this.#tables().jobs);
  }

  runInTransaction(fn: (tx: FakeDao) => void): void {
    if (this.#txTables || this.#db.openTransaction) throw new Error("fake PocketBase: nested runInTransaction");
    const working: SqlTables = {
      jobs: new Map([...this.#db.rows].map(([id, row]) => [id, clone(row)])),
      schedules: new Map([...this.#db.schedules].map(([id, row]) => [id, clone(row)])),
      events: new Map([...this.#db.events].map(([id, row]) => [id, clone(row)])),
      flow: new Map([...this.#db.flow].map(([id, row]) => [id, clone(row)])),
      flowClaims: this.#db.flowClaims.map(clone),
    };
    this.#db.openTransaction = true;
    try {
      fn(new FakeDao(this.#db, working));
    } finally {
      this.#db.openTransaction = false;
    }
    // commit; a throw above left the tables untouched (rollback)
    this.#db.rows = working.jobs;
    this.#db.schedules = working.schedules;
    this.#db.events = working.events;
    this.#db.flow = working.flow;
    this.#db.flowClaims = working.flowClaims;
  }

  /**
   * 0.22's db() outside a transaction is the concurrent pool: a write there
   * beside an open transaction makes that transaction fail on a real server
   * ("database is locked"), so this fake refuses it; nonconcurrentDB() is the
   * single writer. (0.23+'s $app.db() routes writes to the writer itself.)
   */
  db(): FakeBuilder {
    return this.#builder(this.#txTables === null && this.#concurrentWritesRefused);
  }

  nonconcurrentDB(): FakeBuilder {
    return this.#builder(false);
  }

  /** Set by the 0.22 fake: its app dao's db() is the concurrent pool. */
  #concurrentWritesRefused = false;
  refuseConcurrentWrites(): this {
    this.#concurrentWritesRefused = true;
    return this;
  }

  #builder(writesRefused: boolean): FakeBuilder {
    const db = this.#db;
    const failing = () => {
      if (db.failQueries) throw new Error("fake PocketBase: database is locked (armed by the test)");
    };
    return {
      newQuery: (sql) => ({
        bind: (params) => ({
          one: (model) => {
            failing();
            const row = answerQuery(sql, params, this.#tables())[0];
            if (row === undefined) throw new Error("sql: no rows in result set");
            Object.assign(model, shaped(model, row));
          },
          all: (rows) => {
            failing();
            const model = (rows as { [ARRAY_MODEL]?: object })[ARRAY_MODEL];
            if (model === undefined) throw new Error("fake PocketBase: all() wants an arrayOf(model)");
            for (const row of answerQuery(sql, params, this.#tables())) rows.push(Object.assign(Object.create(Object.getPrototypeOf(model) as object), shaped(model, row)));
          },
          execute: () => {
            failing();
            if (writesRefused) throw new Error("fake PocketBase: a write through the concurrent pool (0.22's $app.dao().db(), 0.23's $app.db()): use nonconcurrentDB()");
            db.executes++;
            if (db.executes === db.failExecuteNumber) throw new Error("fake PocketBase: database is locked (armed by the test)");
            const changed = executeStatement(sql, params, this.#tables());
            return { rowsAffected: () => changed };
          },
        }),
      }),
    };
  }
}

class FakeRecordQuery {
  readonly #rows: () => Map<string, StoredRow>;
  readonly #where: DbxExpression[] = [];
  readonly #order: string[] = [];
  #limit = Number.POSITIVE_INFINITY;
  #judgedLease = false;

  constructor(rows: () => Map<string, StoredRow>) {
    this.#rows = rows;
  }
  /** Only the adapter's select list is understood: anything else throws, so a changed query is noticed. */
  select(...columns: string[]): this {
    if (JSON.stringify(columns) !== JSON.stringify(JUDGED_SELECT)) {
      throw new Error(`fake PocketBase: cannot select ${JSON.stringify(columns)}`);
    }
    this.#judgedLease = true;
    return this;
  }
  andWhere(expression: DbxExpression): this {
    this.#where.push(expression);
    return this;
  }
  orderBy(...terms: string[]): this {
    this.#order.push(...terms);
    return this;
  }
  limit(n: number): this {
    this.#limit = n;
    return this;
  }
  all(out: FakeRecord[]): void {
    for (const row of this.#select()) out.push(new FakeRecord(clone(row)));
  }
  one(record: FakeRecord): void {
    const row = this.#select()[0];
    if (row === undefined) throw new Error("sql: no rows in result set");
    record.load(clone(row));
  }
  #select(): StoredRow[] {
    const tests = this.#where.map((where) => jobWhere(where, this.#rows().values()));
    return [...this.#rows().values()]
      .filter((row) => tests.every((test) => test(row)))
      .sort(compareBy<StoredRow>(this.#order))
      .slice(0, this.#limit)
      .map((row) => (this.#judgedLease ? { ...row, lease_expires_at: judgedLease(row.lease_expires_at) } : row));
  }
}

/** LEASE_AS_JUDGED_SQL, by the JavaScript half of the lease rule: the text when readable, else "". */
function judgedLease(text: string): string {
  return parsePbDate(text) === null ? "" : text;
}

/** What PocketBase could not parse as a request body (invalid JSON, another content type, ...). */
export const UNPARSEABLE_BODY: unique symbol = Symbol("a body PocketBase cannot parse");

/**
 * Who sends a request: a superuser (0.22: an admin), an auth record of another
 * collection, no valid token, or a fleet_workers record (its fields as stored).
 */
export type Caller = "superuser" | "user" | "none" | FakeWorker;

export interface FakeWorker {
  id: string;
  /** The json field's text as PocketBase reads it ("" when empty). */
  queues?: string;
  can_enqueue?: boolean;
  disabled?: boolean;
  /** Default: now (so no last-seen stamp is due). */
  last_seen_at?: string;
  /** Fields the collection lacks (an admin removed them): callerAuth must fail closed. */
  missing?: string[];
}

/** A fleet_workers row as FakeDb keeps it: the fields identity.ts reads, and last_seen_at the hooks stamp. */
export type StoredWorker = Required<Omit<FakeWorker, "missing">> & Pick<FakeWorker, "missing">;

/**
 * The request's auth record as both APIs offer it (models.Record on 0.22,
 * core.Record on 0.23+): its collection, id and typed getters; a json field's
 * getString is its JSON text, a date's is PocketBase's text ("" when empty).
 * `superuser`: what 0.23+ loads for a superuser's token (a _superusers
 * record); 0.22 keeps admins apart (c.get("admin")), so its authRecord is null.
 */
export function fakeAuthRecord(caller: Caller, superuser: "record" | "none" = "none"): object | null {
  if (caller === "none" || (caller === "superuser" && superuser === "none")) return null;
  const collection = caller === "superuser" ? "_superusers" : caller === "user" ? "users" : WORKERS_COLLECTION;
  const fields: Record<string, unknown> = typeof caller === "string" ? {} : {
    queues: "", can_enqueue: false, disabled: false, last_seen_at: formatPbDate(Date.now()), ...caller,
  };
  return {
    id: caller === "superuser" ? "sup000000000001" : caller === "user" ? "user00000000001" : caller.id,
    tableName: () => collection,
    // The collection model, as far as callerAuth reads it (0.22: schema; 0.23+: fields): which fields it has.
    collection: () => {
      const has = (name: string) => (name in fields || name === "id") && !(typeof caller === "object" && caller.missing?.includes(name));
      return { name: collection, schema: { getFieldByName: (n: string) => (has(n) ? { name: n } : null) }, fields: { getByName: (n: string) => (has(n) ? { name: n } : null) } };
    },
    getString: (field: string) => String(fields[field] ?? ""),
    getBool: (field: string) => fields[field] === true,
  };
}

export interface FakeRequest {
  /** The JSON body as PocketBase parsed it, or UNPARSEABLE_BODY. */
  body?: unknown;
  query?: Record<string, string>;
  /** Default "superuser". */
  caller?: Caller;
  /** The declared body length (default 0). */
  contentLength?: number;
}

export interface FakeResponse {
  status: number;
  body?: unknown;
  text?: string;
}

/** Collects the one answer a handler (or a middleware) gives. */
export class Answer {
  response: FakeResponse | null = null;

  json(status: number, body: unknown): void {
    this.#answer({ status, body: JSON.parse(JSON.stringify(body)) as unknown });
  }
  string(status: number, text: string): void {
    this.#answer({ status, text: String(text) });
  }
  #answer(response: FakeResponse): void {
    if (this.response) throw new Error("fake PocketBase: the handler answered twice");
    this.response = response;
  }
}

/** echo.Context: the request's query and the one answer the handler gives; `$apis.requestInfo(c).data` reads `data`. */
export class FakeContext {
  readonly #answer = new Answer();

  constructor(
    readonly data: unknown = {},
    readonly query: Record<string, string> = {},
    /** The request's declared body length (http.Request.ContentLength). */
    readonly contentLength = 0,
    readonly caller: Caller = "superuser",
  ) {}

  /** What 0.22's LoadAuthContext middleware stored: `admin` (a models.Admin) or `authRecord`. */
  get(key: string): unknown {
    if (key === "admin") return this.caller === "superuser" ? { id: "admin0000000001" } : null;
    if (key === "authRecord") return fakeAuthRecord(this.caller);
    return null;
  }

  get response(): FakeResponse | null {
    return this.#answer.response;
  }
  request(): { contentLength: number } {
    return { contentLength: this.contentLength };
  }
  json(status: number, body: unknown): void {
    this.#answer.json(status, body);
  }
  string(status: number, text: string): void {
    this.#answer.string(status, text);
  }
  queryParam(name: string): string {
    return this.query[name] ?? "";
  }
}

/** A route middleware PocketBase runs before the handler: it answers, or lets the request through (null). */
export interface FakeMiddleware {
  readonly middleware: string;
  check(caller: Caller, contentLength?: number): FakeResponse | null;
}

/**
 * What `$apis.requireAdminAuth()` returns while the file loads. The bundle no
 * longer adds it (a worker identity must get past it: serve decides), so a
 * route registered with it shows up in the bundle test's middleware check.
 * Like PocketBase 0.22 (apis/middlewares.go), anyone but an admin gets 401
 * with this body, which serve answers word for word (ADMIN_ONLY_ANSWER).
 */
export const ADMIN_AUTH: FakeMiddleware = Object.freeze({
  middleware: "requireAdminAuth",
  check: (caller: Caller) =>
    caller === "superuser" ? null : { status: 401, body: ADMIN_ONLY_ANSWER },
});

/** PocketBase 0.22's answer to a request without an admin token (apis.RequireAdminAuth). */
export const ADMIN_ONLY_ANSWER = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };

const ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** `$security`, `$os`, the logger and the store: the same on every PocketBase version. */
export function runtimeBasics(db: FakeDb) {
  const log = (level: "info" | "error") => (message: string, ...attrs: unknown[]) => {
    db.logs.push({ level, message, attrs });
  };
  return {
    logger: () => ({ info: log("info"), error: log("error") }),
    store: () => fakeStore(db.store),
    $security: {
      randomString: (n: number) => Array.from({ length: n }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join(""),
    },
    $os: { getenv: (name: string) => db.env[name] ?? "" },
    /** An empty array that remembers its model: a raw query's all() fills it with rows of the model's shape. */
    arrayOf: (model: object) => Object.defineProperty([] as unknown[], ARRAY_MODEL, { value: model }),
    DynamicModel: class DynamicModel {
      constructor(shape: object) {
        Object.assign(this, shape);
      }
    },
    $dbx: {
      exp: (sql: string, params: Record<string, unknown> = {}): DbxExpression => ({ sql, params }),
      hashExp: (hash: Record<string, unknown>): DbxExpression => ({ hash }),
    },
    Record: FakeRecord,
  };
}

/** The only globals a 0.22 handler's runtime has here: PocketBase's, stubbed over one FakeDb. */
export function pocketBaseGlobals(db: FakeDb): Record<string, unknown> {
  const appDao = new FakeDao(db).refuseConcurrentWrites();
  const { logger, store, ...globals } = runtimeBasics(db);
  return {
    ...globals,
    $app: { dao: () => appDao, logger, store },
    ForbiddenError: FakeForbiddenError,
    $apis: {
      requestInfo: (c: FakeContext) => ({ data: c.data }),
      requireAdminAuth: () => ADMIN_AUTH,
    },
  };
}

/** $app.store(): get answers null for a missing key, as PocketBase's store does. */
function fakeStore(store: Map<string, unknown>) {
  return {
    get: (key: string) => (store.has(key) ? store.get(key) : null),
    set: (key: string, value: unknown) => void store.set(key, value),
    has: (key: string) => store.has(key),
  };
}

export interface CapturedRoute {
  method: string;
  path: string;
  /** The handler's source text, as PocketBase takes it (`handler.String()`). */
  text: string;
  middlewares: unknown[];
}

export interface CapturedCron {
  id: string;
  schedule: string;
  text: string;
}

/** A record create hook (0.22's onModelBeforeCreate, 0.23+'s onRecordCreate) and the collections it is for. */
export interface CapturedCreateHook {
  registrar: string;
  /** The tags it was registered with (collection names); none: every collection. */
  collections: string[];
  text: string;
}

export interface LoadedHooks {
  routes: CapturedRoute[];
  crons: CapturedCron[];
  createHooks: CapturedCreateHook[];
  /** The account request hooks (scripts/build/bundles.mjs accountRequestHooks), with the collections they are for. */
  accountHooks: CapturedCreateHook[];
}

/** PocketBase's ForbiddenError (apis.NewForbiddenError), as both hooks APIs construct it. */
export class FakeForbiddenError extends Error {
  readonly status = 403;
}

/** A bundle's account request hook names, as esbuild.config.mjs registers them for its API. */
export function accountRequestHooksOf(api: string): readonly string[] {
  const bundle = (HOOKS_BUNDLES as { api: string; accountRequestHooks: string[] }[]).find((b) => b.api === api);
  if (!bundle) throw new Error(`no hooks bundle for API ${api}`);
  return bundle.accountRequestHooks;
}

function sourceText(handler: unknown, what: string): string {
  if (typeof handler !== "function") throw new Error(`${what}: the handler is not a function`);
  return handler.toString();
}

/**
 * Loads a hooks file as PocketBase's loader runtime does: registrations are
 * captured, each handler kept only as its text. `loaderGlobals` are what the
 * loader has besides the registrars (the cron schedule reads $os.getenv and
 * records the sweeper's state in the app's store). `createRegistrar` is the
 * API's record create hook: the only one its loader defines, so a bundle using
 * the other API's fails to load, as it would on that PocketBase.
 */
export function loadHooksWith(
  source: string, loaderGlobals: Record<string, unknown>, createRegistrar: string, accountRegistrars: readonly string[] = [],
): LoadedHooks {
  const routes: CapturedRoute[] = [];
  const crons: CapturedCron[] = [];
  const createHooks: CapturedCreateHook[] = [];
  const accountHooks: CapturedCreateHook[] = [];
  const loader = vm.createContext({
    ...loaderGlobals,
    ...Object.fromEntries(accountRegistrars.map((registrar) => [registrar, (handler: unknown, ...collections: unknown[]) => {
      accountHooks.push({ registrar, collections: collections.map(String), text: sourceText(handler, registrar) });
    }])),
    [createRegistrar]: (handler: unknown, ...collections: unknown[]) => {
      createHooks.push({ registrar: createRegistrar, collections: collections.map(String), text: sourceText(handler, createRegistrar) });
    },
    routerAdd: (method: string, path: string, handler: unknown, ...middlewares: unknown[]) => {
      routes.push({ method, path, text: sourceText(handler, `routerAdd ${path}`), middlewares });
    },
    cronAdd: (id: string, schedule: unknown, handler: unknown) => {
      if (typeof schedule !== "string") throw new Error(`cronAdd ${id}: the schedule is not a string`);
      crons.push({ id, schedule, text: sourceText(handler, `cronAdd ${id}`) });
    },
  });
  vm.runInContext(source, loader, { filename: "fleet.pb.js" });
  return { routes, crons, createHooks, accountHooks };
}

/** The create hooks that fire for a probe_jobs record. */
export function jobCreateHooks(hooks: LoadedHooks): CapturedCreateHook[] {
  return hooks.createHooks.filter((h) => h.collections.length === 0 || h.collections.includes(COLLECTION));
}

/** One hook call, as PocketBase runs it: `{(<text>).apply(undefined, __args)}` in a runtime of the pool. */
export function runHookWith(hook: CapturedCreateHook, runtime: vm.Context, event: unknown): void {
  runtime["__args"] = [event];
  vm.runInContext(`{(${hook.text}).apply(undefined, __args)}`, runtime, { filename: `${hook.registrar} ${hook.collections.join(",")}` });
}

/**
 * One request as PocketBase runs it: the route's middlewares, then the
 * handler's text alone, `{(<text>).apply(undefined, __args)}`, in the given
 * runtime (a fresh one per request unless a pooled one is passed).
 */
export function runRouteWith(
  route: CapturedRoute,
  caller: Caller,
  context: { response: FakeResponse | null },
  runtime: vm.Context,
  contentLength = 0,
): FakeResponse {
  for (const middleware of route.middlewares) {
    const stopped = (middleware as FakeMiddleware).check(caller, contentLength);
    if (stopped !== null) return stopped;
  }
  runtime["__args"] = [context];
  vm.runInContext(`{(${route.text}).apply(undefined, __args)}`, runtime, { filename: `${route.method} ${route.path}` });
  if (!context.response) throw new Error(`${route.method} ${route.path} gave no answer`);
  return context.response;
}

/** One cron tick, as cronAdd runs it: `{(<text>).apply(undefined)}` in a fresh context. */
export function runCronWith(cron: CapturedCron, runtime: vm.Context): void {
  vm.runInContext(`{(${cron.text}).apply(undefined)}`, runtime, { filename: `cron ${cron.id}` });
}

/** One hooks API's fake: how it loads a hooks file and runs its routes and cron jobs over a FakeDb. */
export interface FakePocketBase {
  /** The hooks API, as scripts/build/bundles.mjs's HOOKS_BUNDLES name it. */
  api: string;
  /** What every route registration of the bundle must carry. */
  routeMiddlewares: readonly FakeMiddleware[];
  /** Pass a FakeDb to share its store and logs with the requests that follow. */
  loadHooks(source: string, env?: Record<string, string>, db?: FakeDb): LoadedHooks;
  /** A runtime of PocketBase's pool: one context that serves request after request. */
  pooledRuntime(db: FakeDb): vm.Context;
  runRoute(route: CapturedRoute, db: FakeDb, request?: FakeRequest, runtime?: vm.Context): FakeResponse;
  runCron(cron: CapturedCron, db: FakeDb): void;
  /** Makes the db run the bundle's probe_jobs create hooks on every insert, as this API calls them. */
  installHooks(hooks: LoadedHooks, db: FakeDb): void;
}

/** PocketBase 0.22: `(c) => ...` handlers on an echo.Context; who may call is the bundle's own check (serve). */
export const FAKE_POCKETBASE_0_22: FakePocketBase = {
  api: "0.22",
  // None: serve() decides who may call (esbuild.config.mjs).
  routeMiddlewares: [],
  loadHooks(source, env = {}, db = new FakeDb()) {
    const { logger, store } = runtimeBasics(db);
    return loadHooksWith(source, {
      $apis: { requireAdminAuth: () => ADMIN_AUTH },
      $os: { getenv: (name: string) => env[name] ?? "" },
      $app: { logger, store },
    }, "onModelBeforeCreate", accountRequestHooksOf("0.22"));
  },
  pooledRuntime: (db) => vm.createContext(pocketBaseGlobals(db)),
  runRoute(route, db, request = {}, runtime = vm.createContext(pocketBaseGlobals(db))) {
    // PocketBase 0.22 reads a body it cannot parse as {}.
    const data = request.body === UNPARSEABLE_BODY ? {} : request.body ?? {};
    const caller = request.caller ?? "superuser";
    return runRouteWith(route, caller, new FakeContext(data, request.query ?? {}, request.contentLength ?? 0, caller),
      runtime, request.contentLength ?? 0);
  },
  runCron(cron, db) {
    runCronWith(cron, this.pooledRuntime(db));
  },
  installHooks(hooks, db) {
    // Hooks run in a runtime of the pool, not the request's.
    const runtime = vm.createContext(pocketBaseGlobals(db));
    const fired = jobCreateHooks(hooks);
    db.onCreate = (record) => {
      // core.ModelEvent: the record about to be inserted, its id and created already set.
      for (const hook of fired) runHookWith(hook, runtime, { model: record });
      return true;
    };
  },
};
