/**
 * The PocketBase 0.22 adapter: the FleetAdapter (./contract.ts) on 0.22's
 * hooks API (`$app.dao()`, `$apis.requestInfo(c).data`, echo contexts, daos,
 * models). Handlers read a request, run one transaction through `updateJob` or
 * `updateJobs`, decide with src/lib, and return a Reply; `serve` answers it.
 * Admin auth is the route's `$apis.requireAdminAuth()` middleware (the build adds it).
 *
 * esbuild copies what each handler uses from here into that handler's closure
 * (PocketBase runs every handler from its own text, without the file's top
 * level), so this module is written once and emitted per handler.
 */
import type { JobBatch, JobPatch, JobRow, JobUpdate } from "../lib/job-row.js";
import type { WhereClause } from "../lib/queries.js";
import type * as thisAdapter from "./pocketbase-0.22.js";
import { JOBS_COLLECTION, type AdapterModule, type RouteHandler } from "./contract.js";
import { findJudgedRecords, logError, readOne, readRow } from "./runtime.js";
import { updateJobIn, updateJobsIn, type JobStore } from "./transactions.js";

export { json, JOBS_COLLECTION, type FleetRequest, type Reply } from "./contract.js";
export { getenv, logError, logInfo, newLeaseToken, storeGet, storeSet } from "./runtime.js";

/** Compile-time proof that this module is a FleetAdapter (a type: nothing of it is bundled). */
export type Adapter = AdapterModule<typeof thisAdapter, echo.Context>;

export function serve(c: echo.Context, handler: RouteHandler): void {
  const reply = handler({
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
  });
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json as object);
}

// ---- transactions ----------------------------------------------------------------------

/** A transaction's dao, and probe_jobs' collection model for the records it saves. */
interface Tx {
  dao: daos.Dao;
  collection: models.Collection;
}

/**
 * Inside a transaction only its dao may be used: `$app.dao()` there would wait
 * for the writer this transaction holds (PocketBase issue #4859).
 */
const STORE: JobStore<Tx, models.Record> = {
  transaction(body) {
    const collection = jobsCollection(Date.now());
    $app.dao().runInTransaction((dao) => {
      body({ dao, collection });
    });
  },
  find({ dao, collection }, where, order, limit) {
    return findJudgedRecords(dao.recordQuery(collection), where, order, limit);
  },
  rowOf: readRow,
  write({ dao }, rec, patch) {
    for (const field in patch) rec.set(field, patch[field as keyof JobPatch]);
    dao.saveRecord(rec);
  },
  forget: forgetJobsCollection,
  logError,
};

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

/** How long a pooled runtime reuses probe_jobs' collection model before looking it up again. */
export const COLLECTION_CACHE_MS = 2000;

interface RuntimeCache {
  pbFleetJobs?: { collection: models.Collection; loadedAt: number };
}

/**
 * probe_jobs' collection model for the record queries. Its look-up is a query
 * plus schema decoding, costlier than the rest of a claim, so it is done before
 * the transaction (which holds PocketBase's only writer) and kept in the pooled
 * runtime's globalThis for a moment: a schema change is seen within
 * COLLECTION_CACHE_MS, and sooner after a rollback.
 */
function jobsCollection(nowMs: number): models.Collection {
  const cache = globalThis as RuntimeCache;
  const hit = cache.pbFleetJobs;
  // A clock that stepped back must not keep an entry alive: both bounds are checked.
  if (hit !== undefined && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = $app.dao().findCollectionByNameOrId(JOBS_COLLECTION);
  cache.pbFleetJobs = { collection, loadedAt: nowMs };
  return collection;
}

function forgetJobsCollection(): void {
  delete (globalThis as RuntimeCache).pbFleetJobs;
}

// ---- plain reads -----------------------------------------------------------------------

export function queryOne<T extends object>(query: WhereClause, shape: T): T | null {
  return readOne($app.dao().db(), query, shape);
}
