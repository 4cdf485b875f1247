/**
 * The PocketBase side of every handler: reading the request body, finding a
 * job row, copying it into a JobRow and writing a patch back. esbuild copies
 * what each handler uses into that handler's closure (PocketBase runs handlers
 * without the file's top level), so this module is written once and emitted
 * per handler.
 */
import type { WhereClause } from "../lib/queries";
import {
  JOB_ROW_NUMBER_FIELDS,
  JOB_ROW_TEXT_FIELDS,
  type JobPatch,
  type JobRow,
} from "../lib/job-row";

export const JOBS_COLLECTION = "probe_jobs";

/** The JSON body; PocketBase gives `{}` for invalid JSON, an array or another content type. */
export function requestBody(c: echo.Context): unknown {
  return $apis.requestInfo(c).data;
}

/**
 * Runs fn in one transaction on PocketBase's writer and returns its value.
 * Throws when the transaction rolled back. Inside fn only `tx` may be used:
 * `$app.dao()` there would wait for the writer this transaction holds.
 */
export function transact<T>(fn: (tx: daos.Dao) => T): T {
  const result: { value?: T } = {};
  $app.dao().runInTransaction((tx) => {
    result.value = fn(tx);
  });
  return result.value as T;
}

/** How long a pooled runtime reuses probe_jobs' collection model before looking it up again. */
export const COLLECTION_CACHE_MS = 2000;

interface RuntimeCache {
  pbFleetJobs?: { collection: models.Collection; loadedAt: number };
}

/**
 * probe_jobs' collection model. findRecordById looks it up on every call (a
 * query plus schema decoding, costlier than the rest of a claim) and inside a
 * transaction that holds PocketBase's only writer. So it is looked up before
 * the transaction and kept in the pooled runtime's globalThis for a moment: a
 * schema change is seen within COLLECTION_CACHE_MS, and sooner when a failed
 * transaction calls forgetJobsCollection.
 */
export function jobsCollection(nowMs: number): models.Collection {
  const cache = globalThis as RuntimeCache;
  const hit = cache.pbFleetJobs;
  // A clock that stepped back must not keep an entry alive: both bounds are checked.
  if (hit !== undefined && nowMs >= hit.loadedAt && nowMs - hit.loadedAt < COLLECTION_CACHE_MS) return hit.collection;
  const collection = $app.dao().findCollectionByNameOrId(JOBS_COLLECTION);
  cache.pbFleetJobs = { collection, loadedAt: nowMs };
  return collection;
}

export function forgetJobsCollection(): void {
  delete (globalThis as RuntimeCache).pbFleetJobs;
}

/** The row, or null when no such job exists. */
export function findJob(dao: daos.Dao, collection: models.Collection, jobId: string): models.Record | null {
  const rec = new Record();
  try {
    dao.recordQuery(collection).andWhere($dbx.hashExp({ id: jobId })).limit(1).one(rec);
    return rec;
  } catch {
    return null; // no such row
  }
}

export function readRow(rec: models.Record): JobRow {
  const row = { id: rec.id } as Record<string, string | number>;
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row as unknown as JobRow;
}

export function writePatch(rec: models.Record, patch: JobPatch): void {
  for (const field in patch) rec.set(field, patch[field as keyof JobPatch]);
}

/** Rows matching a where clause from src/lib/queries, in the given order. */
export function findJobs(
  dao: daos.Dao,
  collection: models.Collection,
  where: WhereClause,
  order: readonly string[],
  limit: number,
): models.Record[] {
  const records = arrayOf(new Record());
  dao.recordQuery(collection)
    .andWhere($dbx.exp(where.sql, where.params))
    .orderBy(...order)
    .limit(limit)
    .all(records);
  return records;
}

/** A fencing token for a new claim: unguessable, so only the claim's own answer carries it. */
export function newLeaseToken(): string {
  return $security.randomString(24);
}

export function getenv(name: string): string {
  return $os.getenv(name);
}
