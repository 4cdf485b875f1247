/**
 * The transaction skeleton every adapter's updateJob and updateJobs share. An
 * adapter supplies a JobStore: how its hooks API opens a transaction on
 * PocketBase's single writer, finds rows, and saves a patch. No PocketBase
 * code here.
 */
import { bulkPatchStatement, JOB_ROWS_SHAPE, jobRowsQuery, parseJobRows } from "../lib/bulk.js";
import { jobEventChunks, type JobEventFields } from "../lib/job-events.js";
import { jobView, type JobBatch, type JobInsert, type JobPatch, type JobRow, type JobUpdate } from "../lib/job-row.js";
import { formatPbDate } from "../lib/lease.js";
import { jobByIdWhere, type WhereClause } from "../lib/queries.js";
import type { JobView } from "../lib/types.js";
import { ROLLED_BACK } from "./contract.js";

/**
 * One hooks API's reads and writes inside an open transaction. `Tx` is what
 * they go through (a transaction's dao, or its txApp); `Found` is what `find`
 * returns for a row and `write` takes back to patch it (a plain row, or a
 * record loaded once). It opens nothing and reaches no global app: an app's own
 * transaction can be used through it as well (updateJobsWithin).
 */
export interface JobTransaction<Tx, Found> {
  /**
   * The rows matching a where clause from src/lib/queries, in an order, at
   * most `limit`, with the lease as the lease rule judges the stored text
   * (not as record loading would rewrite a date PocketBase can parse).
   */
  find(tx: Tx, where: WhereClause, order: readonly string[], limit: number): Found[];
  rowOf(found: Found): JobRow;
  /**
   * Writes through PocketBase's record save (its model hooks and realtime
   * events), without field validation: 0.22's dao.saveRecord has none, and
   * the protocol writes only values it has checked.
   */
  write(tx: Tx, found: Found, patch: JobPatch): void;
  /** Creates a row through the record save (hooks and realtime as for write); answers its id. */
  insert(tx: Tx, fields: JobInsert): string;
  /** Saves a probe_job_events record (realtime's news of a bulk write). */
  insertEvent(tx: Tx, event: JobEventFields): void;
  /** Rows of a read-only query inside the transaction; a failure throws (and rolls back). */
  queryAll<T extends object>(tx: Tx, query: WhereClause, shape: T): T[];
  /** A statement that writes; answers the rows it changed. A failure throws (and rolls back). */
  execute(tx: Tx, statement: WhereClause): number;
}

/** How a hooks API opens a transaction of pb-fleet's own. */
export interface TransactionOpener<Tx> {
  /**
   * Runs `body` in one transaction on PocketBase's single writer connection,
   * so a read-compare-write inside it is serialized against every other write.
   * Throws when the transaction rolled back.
   */
  transaction(body: (tx: Tx) => void): void;
  /** After a rollback: drop whatever the failed transaction may have made stale. */
  forget(): void;
  logError(message: string, err: unknown): void;
}

/** A JobTransaction that opens transactions of its own: what updateJobIn, updateJobsIn and updateJobsBulkIn run on. */
export interface JobStore<Tx, Found> extends JobTransaction<Tx, Found>, TransactionOpener<Tx> {}

/**
 * The JobStore of `records` and `opener`. Call it with esbuild's @__PURE__
 * mark, so that a build using only `records` (pb-fleet-enqueue.js) leaves the
 * opener, and the `$app` in it, out.
 */
export function jobStore<Tx, Found>(records: JobTransaction<Tx, Found>, opener: TransactionOpener<Tx>): JobStore<Tx, Found> {
  return { ...records, ...opener };
}

export function updateJobIn<Tx, Found, D>(
  store: JobStore<Tx, Found>,
  jobId: string,
  decide: (row: JobRow, nowMs: number) => D,
  patchOf: (decision: D) => JobPatch | null,
): JobUpdate<D> | null {
  return inTransaction(store, (tx) => {
    const found = store.find(tx, jobByIdWhere(jobId), ["id ASC"], 1)[0];
    if (found === undefined) return null;
    const row = store.rowOf(found);
    const decision = decide(row, Date.now());
    const patch = patchOf(decision);
    if (patch !== null) store.write(tx, found, patch);
    return { row, decision };
  });
}

export function updateJobsIn<Tx, Found, T>(store: JobStore<Tx, Found>, work: (batch: JobBatch, nowMs: number) => T): T | null {
  return inTransaction(store, (tx) => work(jobBatchOf(store, tx), Date.now()));
}

/**
 * updateJobsIn inside a transaction the caller opened and owns (an app's own
 * hook: src/handlers/enqueue-in-transaction.ts): the same batch over its `tx`.
 * Nothing is caught, logged or forgotten here: an error reaches the caller, so
 * its transaction rolls back with everything written through `tx`.
 */
export function updateJobsWithin<Tx, Found, T>(
  store: JobTransaction<Tx, Found>, tx: Tx, work: (batch: JobBatch, nowMs: number) => T,
): T {
  return work(jobBatchOf(store, tx), Date.now());
}

/** The JobBatch over one open transaction: record loads and saves through the store. */
function jobBatchOf<Tx, Found>(store: JobTransaction<Tx, Found>, tx: Tx): JobBatch {
  const foundById: { [id: string]: Found } = {};
  return {
    find(where, order, limit) {
      return store.find(tx, where, order, limit).map((found) => {
        const row = store.rowOf(found);
        foundById[row.id] = found;
        return row;
      });
    },
    write(row, patch) {
      const found = foundById[row.id];
      if (found === undefined) throw new Error(`pb-fleet: job ${row.id} was not read in this transaction`);
      store.write(tx, found, patch);
    },
    insert: (fields) => store.insert(tx, fields),
    queryOne: (query, shape) => firstOf(store.queryAll(tx, query, shape)),
    queryAll: (query, shape) => store.queryAll(tx, query, shape),
    execute: (statement) => store.execute(tx, statement),
    // Record saves are seen by realtime; a statement's writes are told in an event record, as the bulk path tells them.
    noteWritten: (changes) => {
      for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source: "statement", changes: chunk });
    },
  };
}

/**
 * updateJobsIn for the batch endpoints, without a record load or save per
 * row (see src/lib/bulk.ts): rows are read as one JSON text, writes are kept
 * (merged per job) and sent as one statement before the next read and at the
 * end, and one probe_job_events record lists every job as written, so
 * realtime subscribers learn what changed.
 */
export function updateJobsBulkIn<Tx, Found, T>(
  store: JobStore<Tx, Found>,
  source: string,
  work: (batch: JobBatch, nowMs: number) => T,
): T | null {
  return inTransaction(store, (tx) => {
    // One patch per job and statement (an UPDATE ... FROM applies only one source row per target).
    let pending: { [id: string]: JobPatch } = {};
    const written: { [id: string]: JobView } = {};
    const flush = (): void => {
      const ids = Object.keys(pending);
      if (ids.length === 0) return;
      store.execute(tx, bulkPatchStatement(ids.map((id) => ({ id, patch: pending[id] as JobPatch })), formatPbDate(Date.now())));
      pending = {};
    };
    const result = work({
      find(where, order, limit) {
        flush();
        const found = store.queryAll(tx, jobRowsQuery(where, order, limit), JOB_ROWS_SHAPE)[0];
        return found === undefined ? [] : parseJobRows(found.rows);
      },
      write(row, patch) {
        const earlier = pending[row.id];
        // Rare (one job twice in a batch): merged into a copy, since the decision's patch may still be read.
        pending[row.id] = earlier === undefined ? patch : Object.assign({}, earlier, patch);
        written[row.id] = jobView(row, patch);
      },
      insert(fields) {
        flush();
        return store.insert(tx, fields);
      },
      queryOne(query, shape) {
        flush();
        return firstOf(store.queryAll(tx, query, shape));
      },
      queryAll(query, shape) {
        flush();
        return store.queryAll(tx, query, shape);
      },
      execute(statement) {
        flush();
        return store.execute(tx, statement);
      },
      noteWritten(changes) {
        for (const change of changes) written[change.id] = change;
      },
    }, Date.now());
    flush();
    const changes = Object.keys(written).map((id) => written[id] as JobView);
    for (const chunk of jobEventChunks(changes)) store.insertEvent(tx, { source, changes: chunk });
    return result;
  });
}

function firstOf<T>(rows: T[]): T | null {
  return rows.length > 0 ? (rows[0] as T) : null;
}

/**
 * A rollback (SQLite error, failed save, schema change) is logged and answered
 * null: callers turn it into their refusal, never a 500.
 */
function inTransaction<Tx, Found, T>(store: JobStore<Tx, Found>, fn: (tx: Tx) => T): T | null {
  const result: { value: T | null } = { value: null };
  try {
    store.transaction((tx) => {
      result.value = fn(tx);
    });
    return result.value;
  } catch (err) {
    store.forget();
    store.logError(ROLLED_BACK, err);
    return null;
  }
}
