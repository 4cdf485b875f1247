/**
 * The transaction skeleton every adapter's updateJob and updateJobs share. An
 * adapter supplies a JobStore: how its hooks API opens a transaction on
 * PocketBase's single writer, finds rows, and saves a patch. No PocketBase
 * code here.
 */
import type { JobBatch, JobPatch, JobRow, JobUpdate } from "../lib/job-row.js";
import { jobByIdWhere, type WhereClause } from "../lib/queries.js";
import { ROLLED_BACK } from "./contract.js";

/**
 * One hooks API's way of running a transaction. `Tx` is what reads and writes
 * inside it go through; `Found` is what `find` returns for a row and `write`
 * takes back to patch it (a plain row, or a record loaded once).
 */
export interface JobStore<Tx, Found> {
  /**
   * Runs `body` in one transaction on PocketBase's single writer connection,
   * so a read-compare-write inside it is serialized against every other write.
   * Throws when the transaction rolled back.
   */
  transaction(body: (tx: Tx) => void): void;
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
  /** After a rollback: drop whatever the failed transaction may have made stale. */
  forget(): void;
  logError(message: string, err: unknown): void;
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
  return inTransaction(store, (tx) => {
    const foundById: { [id: string]: Found } = {};
    return work({
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
    }, Date.now());
  });
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
