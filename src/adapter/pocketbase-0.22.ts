/**
 * The PocketBase 0.22 adapter: the FleetAdapter (./contract.ts) on 0.22's
 * hooks API (`$app.dao()`, `$apis.requestInfo(c).data`, echo contexts, daos,
 * models). Handlers read a request, run one transaction through `updateJob` or
 * `updateJobs`, decide with src/lib, and return a Reply; `serve` answers it.
 * Who may call is decided in serve (contract.ts answerRequest), from the
 * admin or record PocketBase's auth middleware loaded for the request.
 *
 * esbuild copies what each handler uses from here into that handler's closure
 * (PocketBase runs every handler from its own text, without the file's top
 * level), so this module is written once and emitted per handler.
 */
import { JOB_EVENTS_COLLECTION } from "../lib/job-events.js";
import type { JobBatch, JobPatch, JobRow, JobUpdate } from "../lib/job-row.js";
import { dueTimeOnCreate, queueOnCreate } from "../lib/transitions.js";
import type { WhereClause } from "../lib/queries.js";
import type * as thisAdapter from "./pocketbase-0.22.js";
import { ACCOUNT_REQUEST_REFUSED, WORKERS_COLLECTION, type CallerAuth, type RouteAccess } from "../lib/identity.js";
import { answerRequest, JOBS_COLLECTION, notInTransaction, type AdapterModule, type RouteHandler } from "./contract.js";
import { executeStatement, findJudgedRecords, logError, readAll, readAllOrNull, readOne, readRow, setFields, workerAuth } from "./runtime.js";
import { updateJobIn, updateJobsBulkIn, updateJobsIn, updateJobsWithin, jobStore, type JobStore, type JobTransaction } from "./transactions.js";

export { json, JOBS_COLLECTION, type FleetRequest, type Reply } from "./contract.js";
export { getenv, logError, logInfo, newLeaseToken, storeGet, storeSet } from "./runtime.js";

/** Compile-time proof that this module is a FleetAdapter (a type: nothing of it is bundled). */
export type Adapter = AdapterModule<typeof thisAdapter, echo.Context, core.ModelEvent, AppTransaction>;

export function serve(c: echo.Context, handler: RouteHandler, access: RouteAccess): void {
  const reply = answerRequest({
    auth: callerAuth(c),
    contentLength: c.request().contentLength,
    // 0.22 reads a body of unknown length up to its limit and parses what it read.
    bodyOverLimit: () => false,
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
    execute: (statement) => {
      // The single-connection writer: 0.22's db() is the concurrent pool, whose write
      // beside an open transaction made that transaction fail ("database is locked").
      executeStatement($app.dao().nonconcurrentDB(), statement);
    },
  }, access, handler, logError);
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json as object);
}

/** Who sent the request, from what PocketBase's LoadAuthContext put in the context (the token's admin or record). */
function callerAuth(c: echo.Context): CallerAuth {
  if (c.get("admin")) return { kind: "admin" };
  const rec = c.get("authRecord") as models.Record | null | undefined;
  // tableName() is the collection's name as a plain string: no wrapper of the whole collection model.
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const schema = rec.collection().schema;
  return workerAuth(rec, (name) => !!schema.getFieldByName(name));
}

// ---- transactions ----------------------------------------------------------------------

/** A transaction's dao, and the collection models of the records it saves. */
interface Tx {
  dao: daos.Dao;
  collection: models.Collection;
  events: models.Collection;
}

/**
 * Reads and writes inside a transaction, through its dao only: `$app.dao()`
 * there would wait for the writer this transaction holds (PocketBase issue #4859).
 */
const RECORDS: JobTransaction<Tx, models.Record> = {
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    setFields(rec, patch);
    dao.saveRecord(rec);
  },
  insert({ dao, collection }, fields) {
    const rec = new Record(collection);
    setFields(rec, fields);
    dao.saveRecord(rec);
    return rec.id;
  },
  insertEvent({ dao, events }, event) {
    const rec = new Record(events);
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    dao.saveRecord(rec);
  },
  queryAll: ({ dao }, query, shape) => readAll(dao.db(), query, shape),
  execute: ({ dao }, statement) => executeStatement(dao.db(), statement),
};

/** RECORDS in transactions of pb-fleet's own. */
const STORE: JobStore<Tx, models.Record> = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    const now = Date.now();
    // Looked up before the transaction: it holds PocketBase's only writer.
    const collection = cachedCollection(JOBS_COLLECTION, now, $app.dao());
    const events = cachedCollection(JOB_EVENTS_COLLECTION, now, $app.dao());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection, events });
    });
  },
  forget: forgetCollections,
  logError,
});

export function updateJob<D>(
  jobId: string,
  decide: (row: JobRow, nowMs: number) => D,
  patchOf: (decision: D) => JobPatch | null,
): JobUpdate<D> | null {
  return updateJobIn(STORE, jobId, decide, patchOf);
}

export function updateJobs<T>(work: (batch: JobBatch, nowMs: number) => T): T | null {
  return updateJobsIn(STORE, work);
}

export function updateJobsBulk<T>(source: string, work: (batch: JobBatch, nowMs: number) => T): T | null {
  return updateJobsBulkIn(STORE, source, work);
}

/**
 * What an app's own hook holds of its open transaction on 0.22: a Dao bound
 * to it, the txDao of `$app.dao().runInTransaction((txDao) => ...)`, or the
 * e.dao of a model hook (onModelBeforeCreate...) fired by a save through one.
 */
export type AppTransaction = daos.Dao;

const APP_TRANSACTION_HANDLES =
  "the txDao of $app.dao().runInTransaction((txDao) => ...), or the e.dao of onModelBeforeCreate/onModelBeforeUpdate for a save made through such a txDao";

export function updateJobsInAppTransaction<T>(dao: AppTransaction, work: (batch: JobBatch, nowMs: number) => T): T {
  if (!isTransactionDao(dao)) throw new Error(notInTransaction(APP_TRANSACTION_HANDLES));
  // Looked up through the app's dao: `$app.dao()` must not be used inside its transaction (issue #4859).
  const now = Date.now();
  const tx = { dao, collection: cachedCollection(JOBS_COLLECTION, now, dao), events: cachedCollection(JOB_EVENTS_COLLECTION, now, dao) };
  return updateJobsWithin(RECORDS, tx, work);
}

/**
 * Whether a dao writes inside a transaction (0.22 has no isTransactional()):
 * a txDao's builder is the *dbx.Tx, whose methods the runtime exposes (commit
 * among them); any other dao's is the *dbx.DB pool, which has none.
 */
function isTransactionDao(dao: unknown): boolean {
  const candidate = dao as { nonconcurrentDB?: () => unknown } | null | undefined;
  if (candidate === null || candidate === undefined || typeof candidate.nonconcurrentDB !== "function") return false;
  const builder = candidate.nonconcurrentDB() as { commit?: unknown } | null;
  return builder !== null && typeof builder.commit === "function";
}

/** How long a pooled runtime reuses a collection model before looking it up again. */
export const COLLECTION_CACHE_MS = 2000;

interface RuntimeCache {
  pbFleetCollections?: { [name: string]: { collection: models.Collection; loadedAt: number } };
}

/**
 * A collection model for the record queries and saves. Its look-up is a query
 * plus schema decoding, costlier than the rest of a claim, so it is done before
 * the transaction (which holds PocketBase's only writer) and kept in the pooled
 * runtime's globalThis for a moment: a schema change is seen within
 * COLLECTION_CACHE_MS, and sooner after a rollback.
 */
function cachedCollection(name: string, nowMs: number, dao: daos.Dao): models.Collection {
  const cache = globalThis as RuntimeCache;
  const collections = cache.pbFleetCollections || (cache.pbFleetCollections = {});
  const hit = collections[name];
  // A clock that stepped back must not keep an entry alive: both bounds are checked.
  if (hit !== undefined && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = dao.findCollectionByNameOrId(name);
  collections[name] = { collection, loadedAt: nowMs };
  return collection;
}

function forgetCollections(): void {
  delete (globalThis as RuntimeCache).pbFleetCollections;
}

// ---- plain reads -----------------------------------------------------------------------

export function queryOne<T extends object>(query: WhereClause, shape: T): T | null {
  return readOne($app.dao().db(), query, shape);
}

/** Every row of a read-only query, outside a transaction; null when it failed (logged). */
export function queryAll<T extends object>(query: WhereClause, shape: T): T[] | null {
  return readAllOrNull($app.dao().db(), query, shape);
}

// ---- record hooks ----------------------------------------------------------------------

/**
 * onModelBeforeCreate for probe_jobs: a row created another way than enqueue
 * (the record API, the admin UI) gets its due time and queue, so the claim indexes order every
 * row. PocketBase has set `created` by then.
 */
export function stampDueTime(e: core.ModelEvent): void {
  const rec = e.model as models.Record;
  const runAt = dueTimeOnCreate(rec.getString("run_at"), Date.now());
  if (runAt !== null) rec.set("run_at", runAt);
  const queue = queueOnCreate(rec.getString("queue"));
  if (queue !== null) rec.set("queue", queue);
}

/**
 * PocketBase's own email change, password reset and verification requests of
 * a fleet_workers record (the bundle registers this for them): refused with a
 * 403, before PocketBase sends any mail.
 */
export function refuseAccountRequest(): void {
  throw new ForbiddenError(ACCOUNT_REQUEST_REFUSED);
}
