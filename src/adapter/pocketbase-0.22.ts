/**
 * The PocketBase 0.22 adapter: the only code that touches PocketBase's hooks
 * API (`$app`, `$apis`, `$dbx`, `$os`, `$security`, echo contexts, records).
 * Handlers read a request, run one transaction through `updateJob` or
 * `updateJobs`, decide with src/lib, and return a Reply; `serve` answers it.
 *
 * esbuild copies what each handler uses from here into that handler's closure
 * (PocketBase runs every handler from its own text, without the file's top
 * level), so this module is written once and emitted per handler.
 */
import {
  JOB_ROW_NUMBER_FIELDS, JOB_ROW_TEXT_FIELDS, type JobBatch, type JobPatch, type JobRow, type JobUpdate,
} from "../lib/job-row.js";
import { LEASE_AS_JUDGED_SQL } from "../lib/lease.js";
import { jobByIdWhere, type WhereClause } from "../lib/queries.js";

export const JOBS_COLLECTION = "probe_jobs";

/** What a handler sees of a request. */
export interface FleetRequest {
  /** The JSON body; `{}` for invalid JSON, a top-level array or another content type (PocketBase 0.22's reading). */
  body(): unknown;
  /** A query-string parameter, "" when absent. */
  query(name: string): string;
}

/** What a handler answers: JSON, or plain text (Prometheus). */
export type Reply = { status: number; json: unknown } | { status: number; text: string };

export function json(status: number, body: unknown): Reply {
  return { status, json: body };
}

/** Runs a handler for one request of a route. */
export function serve(c: echo.Context, handler: (req: FleetRequest) => Reply): void {
  const reply = handler({
    body: () => $apis.requestInfo(c).data,
    query: (name) => c.queryParam(name),
  });
  if ("text" in reply) return c.string(reply.status, reply.text);
  return c.json(reply.status, reply.json as object);
}

// ---- transactions ----------------------------------------------------------------------

/**
 * Finds a job inside one transaction on PocketBase's single writer, lets
 * `decide` judge the row, and writes the patch `patchOf` takes from the
 * decision (none: nothing is written). null when there is no such job, or when
 * the transaction rolled back (nothing was written, whatever was decided).
 */
export function updateJob<D>(
  jobId: string,
  decide: (row: JobRow, nowMs: number) => D,
  patchOf: (decision: D) => JobPatch | null,
): JobUpdate<D> | null {
  return inTransaction((tx, collection) => {
    const rec = findRecords(tx, collection, jobByIdWhere(jobId), [], 1)[0];
    if (rec === undefined) return null;
    const row = readRow(rec);
    const decision = decide(row, Date.now());
    const patch = patchOf(decision);
    if (patch !== null) write(tx, rec, patch);
    return { row, decision };
  });
}

/**
 * Runs `work` in one transaction on PocketBase's single writer: concurrent
 * callers see each other's writes. null when it rolled back (nothing written).
 */
export function updateJobs<T>(work: (batch: JobBatch, nowMs: number) => T): T | null {
  return inTransaction((tx, collection) => {
    const found: { [id: string]: models.Record } = {};
    return work({
      find(where, order, limit) {
        return findRecords(tx, collection, where, order, limit).map((rec) => {
          found[rec.id] = rec;
          return readRow(rec);
        });
      },
      write(row, patch) {
        const rec = found[row.id];
        if (rec === undefined) throw new Error(`pb-fleet: job ${row.id} was not read in this transaction`);
        write(tx, rec, patch);
      },
    }, Date.now());
  });
}

/**
 * The transaction skeleton of every handler. A rollback (SQLite error, failed
 * save, schema change) is logged and answered null: callers turn it into their
 * refusal, never a 500. Inside fn only `tx` may be used: `$app.dao()` there
 * would wait for the writer this transaction holds.
 */
function inTransaction<T>(fn: (tx: daos.Dao, collection: models.Collection) => T): T | null {
  const result: { value: T | null } = { value: null };
  try {
    const collection = jobsCollection(Date.now());
    $app.dao().runInTransaction((tx) => {
      result.value = fn(tx, collection);
    });
    return result.value;
  } catch (err) {
    forgetJobsCollection();
    logError("pb-fleet: transaction rolled back", err);
    return null;
  }
}

/**
 * Records matching a where clause from src/lib/queries, their lease read as the
 * lease rule judges it (LEASE_AS_JUDGED_SQL, selected after `*` so that it is
 * the value the record gets).
 */
function findRecords(
  tx: daos.Dao,
  collection: models.Collection,
  where: WhereClause,
  order: readonly string[],
  limit: number,
): models.Record[] {
  const records = arrayOf(new Record());
  tx.recordQuery(collection)
    .select(`${JOBS_COLLECTION}.*`, LEASE_AS_JUDGED_SQL)
    .andWhere($dbx.exp(where.sql, where.params))
    .orderBy(...order)
    .limit(limit)
    .all(records);
  return records;
}

function readRow(rec: models.Record): JobRow {
  const row = { id: rec.id } as { [field: string]: string | number };
  for (const field of JOB_ROW_TEXT_FIELDS) row[field] = rec.getString(field);
  for (const field of JOB_ROW_NUMBER_FIELDS) row[field] = rec.getInt(field);
  return row as unknown as JobRow;
}

/** Writes through PocketBase's record save (its validation, model hooks and realtime events). */
function write(tx: daos.Dao, rec: models.Record, patch: JobPatch): void {
  for (const field in patch) rec.set(field, patch[field as keyof JobPatch]);
  tx.saveRecord(rec);
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
 * schema change is seen within COLLECTION_CACHE_MS, and sooner after a rollback.
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

/**
 * One row of a read-only query; `shape` names its columns with a value of each
 * one's type. null when the query failed (logged).
 */
export function queryOne<T extends object>(query: WhereClause, shape: T): T | null {
  const row = new DynamicModel(shape) as unknown as T;
  try {
    $app.dao().db().newQuery(query.sql).bind(query.params).one(row);
    return row;
  } catch (err) {
    logError("pb-fleet: query failed", err);
    return null;
  }
}

// ---- the rest of PocketBase's runtime ----------------------------------------------------

/** A fencing token for a new claim: unguessable, so only the claim's own answer carries it. */
export function newLeaseToken(): string {
  return $security.randomString(24);
}

export function getenv(name: string): string {
  return $os.getenv(name);
}

/** PocketBase's app store: one for the process, shared by every pooled runtime. */
export function storeGet(key: string): unknown {
  return $app.store().get(key);
}

export function storeSet(key: string, value: string): void {
  $app.store().set(key, value);
}

export function logInfo(message: string, ...attrs: unknown[]): void {
  $app.logger().info(message, ...attrs);
}

export function logError(message: string, err: unknown): void {
  $app.logger().error(message, "error", String(err));
}
