/** Rows and instants for the pure-decision tests, and an in-memory JobBatch for the transaction logic. */
import { blankJobRow, blankJobValue, jobColumnsWhere, type JobStoredFields } from "../../../src/lib/job-schema";
import { JOB_JSON_FIELDS, type JobBatch, type JobInsert, type JobPatch, type JobRow } from "../../../src/lib/job-row";
import { formatPbDate } from "../../../src/lib/lease";
import type { WhereClause } from "../../../src/lib/queries";
import type { JobView } from "../../../src/lib/types";
import {
  answerQuery, checkUniqueKey, compareBy, executeStatement, jobWhere, shaped, type StoredEvent, type StoredFlow, type StoredFlowClaim,
  type StoredSchedule,
} from "./fake-pocketbase";

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
 * A JobBatch over tables in memory that answers the lib's queries as the fake
 * PocketBase's SQL evaluator does (./fake-pocketbase.ts: recognised by their
 * exact text, evaluated as SQLite would), writes patches as the adapter does
 * (JSON fields as JSON text), enforces the unique_key index, and records every
 * call.
 */
export interface MemoryBatch extends JobBatch {
  jobs: Map<string, MemoryRow>;
  schedules: Map<string, StoredSchedule>;
  events: Map<string, StoredEvent>;
  /** probe_flow, by id. */
  flow: Map<string, StoredFlow>;
  /** probe_flow_claims, in insertion order. */
  flowClaims: StoredFlowClaim[];
  writes: { id: string; patch: JobPatch }[];
  inserts: { id: string; fields: JobInsert }[];
  calls: BatchCall[];
  /** What noteWritten was told, in order. */
  noted: JobView[];
  row(id: string): MemoryRow;
}

export function memoryRow(from: JobRow): MemoryRow {
  return { ...BEYOND_JOB_ROW, ...from } as MemoryRow;
}

export function memoryBatch(
  rows: (JobRow | MemoryRow)[] = [],
  options: {
    schedules?: StoredSchedule[]; events?: StoredEvent[]; flow?: StoredFlow[]; flowClaims?: StoredFlowClaim[]; nowMs?: number;
  } = {},
): MemoryBatch {
  const jobs = new Map(rows.map((r) => [r.id, memoryRow(r)]));
  const schedules = new Map((options.schedules ?? []).map((s) => [s.id, { ...s }]));
  const events = new Map((options.events ?? []).map((e) => [e.id, { ...e }]));
  const flow = new Map((options.flow ?? []).map((f) => [f.id, { ...f }]));
  const flowClaims = (options.flowClaims ?? []).map((c) => ({ ...c }));
  const tables = { jobs, schedules, events, flow, flowClaims };
  const found = new Set<string>();
  const writes: MemoryBatch["writes"] = [];
  const inserts: MemoryBatch["inserts"] = [];
  const calls: BatchCall[] = [];
  const noted: JobView[] = [];
  let nextId = 0;
  const asText = (field: string, value: unknown) => (JOB_JSON_FIELDS.includes(field) ? JSON.stringify(value) : value);
  return {
    jobs,
    schedules,
    events,
    flow,
    flowClaims,
    writes,
    inserts,
    calls,
    row(id) {
      const r = jobs.get(id);
      if (r === undefined) throw new Error(`no row ${id}`);
      return { ...r };
    },
    find(where, order, limit) {
      calls.push({ op: "find", query: where, order, limit });
      const test = jobWhere(where, jobs.values());
      return [...jobs.values()]
        .filter(test)
        .sort(compareBy<MemoryRow>(order))
        .slice(0, limit)
        .map((r) => {
          found.add(r.id);
          return { ...r };
        });
    },
    write(r, patch) {
      if (!found.has(r.id)) throw new Error(`job ${r.id} was not read in this transaction`);
      const next = { ...(jobs.get(r.id) as MemoryRow) } as unknown as Record<string, unknown>;
      for (const [field, value] of Object.entries(patch)) if (value !== undefined) next[field] = asText(field, value);
      checkUniqueKey(next as unknown as MemoryRow, jobs);
      jobs.set(r.id, next as unknown as MemoryRow);
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
      checkUniqueKey(inserted, jobs);
      jobs.set(id, inserted);
      inserts.push({ id, fields });
      return id;
    },
    queryOne(query, shape) {
      calls.push({ op: "queryOne", query });
      const answer = answerQuery(query.sql, query.params, tables)[0];
      return answer === undefined ? null : shaped(shape, answer);
    },
    queryAll(query, shape) {
      calls.push({ op: "queryAll", query });
      return answerQuery(query.sql, query.params, tables).map((answer) => shaped(shape, answer));
    },
    execute(statement) {
      calls.push({ op: "execute", query: statement });
      return executeStatement(statement.sql, statement.params, tables);
    },
    noteWritten(changes) {
      noted.push(...changes);
    },
    noted,
  };
}
