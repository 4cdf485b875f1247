/** Rows and instants for the pure-decision tests, and an in-memory JobBatch for the transaction logic. */
import { blankJobRow, blankJobValue, jobColumnsWhere, type JobStoredFields } from "../../../src/lib/job-schema";
import { JOB_JSON_FIELDS, type JobBatch, type JobInsert, type JobPatch, type JobRow } from "../../../src/lib/job-row";
import { formatPbDate } from "../../../src/lib/lease";
import type { WhereClause } from "../../../src/lib/queries";
import type { JobView } from "../../../src/lib/types";
import { shaped, type StoredEvent, type StoredFlow, type StoredFlowClaim, type StoredSchedule } from "./fake-pocketbase";
import { SqlTables } from "./sql-tables";
import type { HooksLine, SqliteRow } from "./sqlite-db";

/** A fixed "now" so every expected date is exact. */
export const NOW = Date.UTC(2025, 0, 15, 12, 0, 0, 0);

/** Lease texts relative to NOW, in PocketBase's stored form. */
export const LIVE = formatPbDate(NOW + 10_000);
export const EXPIRED = formatPbDate(NOW - 10_000);
export const ENDS_NOW = formatPbDate(NOW);

export function row(overrides: Partial<JobRow> = {}): JobRow {
  // Every other column blank (src/lib/job-schema.ts): no payload, no cap, no lease; flow control's
  // fields (docs/flow-control.md) none: no group, no timeout, no start_by, never claimed.
  return {
    ...blankJobRow(),
    id: "job-1",
    created: formatPbDate(NOW - 60_000),
    probe_key: "probe-a",
    status: "pending",
    version: 3,
    reclaim_count: 2,
    consecutive_orphan_count: 1,
    // As a bare record-API row has it once the create hook stamped it: due at its creation.
    run_at: formatPbDate(NOW - 60_000),
    // As the migration backfilled it (a row written around enqueue and the create hook has "": tests say so).
    queue: "default",
    ...overrides,
  };
}

/** A job from enqueue: its defaults (max_attempts 25, a JSON null payload), fresh counters. */
export function enqueued(overrides: Partial<JobRow> = {}): JobRow {
  return row({ max_attempts: 25, payload: "null", reclaim_count: 0, consecutive_orphan_count: 0, version: 0, ...overrides });
}

/** A row held by `workerId` under `token`, with a lease text. */
export function held(
  workerId: string,
  lease: string,
  overrides: Partial<JobRow> = {},
): JobRow {
  return row({ status: "claimed", claimed_by: workerId, lease_expires_at: lease, lease_token: "tok-current", ...overrides });
}

/**
 * A row in the in-memory batch: every column but `updated` (src/lib/job-schema.ts), so a JobRow plus the
 * columns only the server writes; a stored row always has flow control's columns (only the bulk read leaves them out).
 */
export type MemoryRow = Omit<JobStoredFields, "updated">;
/** The columns a MemoryRow has beyond a JobRow, blank. */
const BEYOND_JOB_ROW = Object.fromEntries(
  jobColumnsWhere((c, name) => name !== "updated" && c.row !== "always").map((name) => [name, blankJobValue(name)]),
);

export interface BatchCall {
  op: "find" | "queryOne" | "queryAll" | "execute";
  query: WhereClause;
  order?: readonly string[];
  limit?: number;
}

/**
 * A JobBatch over pb-fleet's tables in an in-memory SQLite (./sql-tables.ts,
 * the schema of a hooks line): the lib's queries and statements run there as
 * SQL, `find` as the record query the adapter builds, patches are written as
 * the adapter writes them (JSON fields as JSON text), the schema's unique
 * index holds, and every call is recorded. The table getters are snapshots,
 * in insertion order.
 */
export interface MemoryBatch extends JobBatch {
  readonly tables: SqlTables;
  readonly jobs: Map<string, MemoryRow>;
  readonly schedules: Map<string, StoredSchedule>;
  readonly events: Map<string, StoredEvent>;
  /** probe_flow, by id. */
  readonly flow: Map<string, StoredFlow>;
  /** probe_flow_claims, in insertion order. */
  readonly flowClaims: StoredFlowClaim[];
  writes: { id: string; patch: JobPatch }[];
  inserts: { id: string; fields: JobInsert }[];
  calls: BatchCall[];
  /** What noteWritten was told, in order. */
  noted: JobView[];
  row(id: string): MemoryRow;
  /** Adds a row as stored (no create hook), as if it had been there all along. */
  add(row: JobRow | MemoryRow): void;
}

export function memoryRow(from: JobRow): MemoryRow {
  return { ...BEYOND_JOB_ROW, ...from } as MemoryRow;
}

const JOBS = "probe_jobs";

/** A probe_jobs row as the batch's rows have it: every column but `updated` (the adapter's, not the lib's). */
function asMemoryRow(tables: SqlTables, stored: SqliteRow): MemoryRow {
  const { updated: _updated, ...row } = tables.read(JOBS, stored);
  return row as unknown as MemoryRow;
}

export function memoryBatch(
  rows: (JobRow | MemoryRow)[] = [],
  options: {
    schedules?: StoredSchedule[]; events?: StoredEvent[]; flow?: StoredFlow[]; flowClaims?: StoredFlowClaim[]; nowMs?: number;
    line?: HooksLine;
  } = {},
): MemoryBatch {
  const tables = new SqlTables(options.line ?? "0.22");
  for (const r of rows) tables.insert(JOBS, memoryRow(r));
  for (const s of options.schedules ?? []) tables.insert("probe_schedules", s);
  for (const e of options.events ?? []) tables.insert("probe_job_events", e);
  for (const f of options.flow ?? []) tables.insert("probe_flow", f);
  for (const c of options.flowClaims ?? []) tables.insert("probe_flow_claims", c);
  const jobRows = (where = "", params: Record<string, unknown> = {}) =>
    tables.sql.all(`SELECT * FROM ${JOBS}${where === "" ? "" : ` WHERE ${where}`} ORDER BY rowid`, params).map((r) => asMemoryRow(tables, r));
  const found = new Set<string>();
  const writes: MemoryBatch["writes"] = [];
  const inserts: MemoryBatch["inserts"] = [];
  const calls: BatchCall[] = [];
  const noted: JobView[] = [];
  let nextId = 0;
  const asText = (field: string, value: unknown) => (JOB_JSON_FIELDS.includes(field) ? JSON.stringify(value) : value);
  return {
    tables,
    get jobs() {
      return new Map(jobRows().map((r) => [r.id, r]));
    },
    get schedules() {
      return new Map(tables.select("probe_schedules").map((s) => [String(s["id"]), s as unknown as StoredSchedule]));
    },
    get events() {
      return new Map(tables.select("probe_job_events").map((e) => [String(e["id"]), e as unknown as StoredEvent]));
    },
    get flow() {
      return new Map(tables.select("probe_flow").map((f) => [String(f["id"]), f as unknown as StoredFlow]));
    },
    get flowClaims() {
      return tables.select("probe_flow_claims", "scope, name, at, expires") as unknown as StoredFlowClaim[];
    },
    writes,
    inserts,
    calls,
    row(id) {
      const r = jobRows("id = {:id}", { id })[0];
      if (r === undefined) throw new Error(`no row ${id}`);
      return r;
    },
    add(r) {
      tables.insert(JOBS, memoryRow(r));
    },
    find(where, order, limit) {
      calls.push({ op: "find", query: where, order, limit });
      const sql = `SELECT * FROM ${JOBS} WHERE ${where.sql}${order.length === 0 ? "" : ` ORDER BY ${order.join(", ")}`}` +
        (Number.isFinite(limit) ? ` LIMIT ${limit}` : "");
      return tables.sql.all(sql, where.params).map((stored) => {
        const r = asMemoryRow(tables, stored);
        found.add(r.id);
        return r;
      });
    },
    write(r, patch) {
      if (!found.has(r.id)) throw new Error(`job ${r.id} was not read in this transaction`);
      const values = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined).map(([f, v]) => [f, asText(f, v)]));
      tables.update(JOBS, r.id, values);
      writes.push({ id: r.id, patch });
    },
    insert(fields) {
      const id = `new-${String(++nextId).padStart(4, "0")}`;
      const created = formatPbDate(options.nowMs ?? NOW);
      const inserted = memoryRow(row({
        id, created, version: 0, reclaim_count: 0, consecutive_orphan_count: 0,
        ...(Object.fromEntries(Object.entries(fields).map(([f, v]) => [f, asText(f, v)])) as Partial<JobRow>),
      }));
      if (inserted.run_at === "") inserted.run_at = created; // the create hook's stamp
      tables.insert(JOBS, inserted);
      inserts.push({ id, fields });
      return id;
    },
    queryOne(query, shape) {
      calls.push({ op: "queryOne", query });
      const answer = tables.sql.one(query.sql, query.params);
      return answer === null ? null : shaped(shape, answer);
    },
    queryAll(query, shape) {
      calls.push({ op: "queryAll", query });
      return tables.sql.all(query.sql, query.params).map((answer) => shaped(shape, answer));
    },
    execute(statement) {
      calls.push({ op: "execute", query: statement });
      return tables.sql.execute(statement.sql, statement.params);
    },
    noteWritten(changes) {
      noted.push(...changes);
    },
    noted,
  };
}
