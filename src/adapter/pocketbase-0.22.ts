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
import { JOB_ROW_SHAPE, type JobBatch, type JobPatch, type JobRow, type JobUpdate } from "../lib/job-row.js";
import { jobByIdWhere, jobRowsQuery, type WhereClause } from "../lib/queries.js";

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
    const row = readRows(tx, jobRowsQuery(jobByIdWhere(jobId), ["id ASC"], 1))[0];
    if (row === undefined) return null;
    const decision = decide(row, Date.now());
    const patch = patchOf(decision);
    if (patch !== null) write(tx, collection, row, patch);
    return { row, decision };
  });
}

/**
 * Runs `work` in one transaction on PocketBase's single writer: concurrent
 * callers see each other's writes. null when it rolled back (nothing written).
 */
export function updateJobs<T>(work: (batch: JobBatch, nowMs: number) => T): T | null {
  return inTransaction((tx, collection) => work({
    find: (where, order, limit) => readRows(tx, jobRowsQuery(where, order, limit)),
    write: (row, patch) => write(tx, collection, row, patch),
  }, Date.now()));
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
 * Rows as stored. Not through a record query: loading a record rewrites a
 * date PocketBase can parse into its own layout, so the handlers would judge a
 * hand-edited lease differently from the SQL that found it.
 */
function readRows(tx: daos.Dao, query: WhereClause): JobRow[] {
  const models = arrayOf(new DynamicModel(JOB_ROW_SHAPE)) as unknown as JobRow[];
  tx.db().newQuery(query.sql).bind(query.params).all(models);
  // Plain objects: the decisions copy rows with Object.assign, which sees no fields on a Go value.
  return models.map((model) => {
    const row = {} as { [column: string]: unknown };
    for (const column in JOB_ROW_SHAPE) row[column] = model[column as keyof JobRow];
    return row as unknown as JobRow;
  });
}

/** Writes through PocketBase's record save (its validation, model hooks and realtime events). */
function write(tx: daos.Dao, collection: models.Collection, row: JobRow, patch: JobPatch): void {
  const rec = new Record();
  tx.recordQuery(collection).andWhere($dbx.hashExp({ id: row.id })).limit(1).one(rec);
  for (const field in patch) rec.set(field, patch[field as keyof JobPatch]);
  tx.saveRecord(rec);
}

/** How long a pooled runtime reuses probe_jobs' collection model before looking it up again. */
export const COLLECTION_CACHE_MS = 2000;

interface RuntimeCache {
  pbFleetJobs?: { collection: models.Collection; loadedAt: number };
}

/**
 * probe_jobs' collection model, for the record a write loads and saves. Its
 * look-up is a query plus schema decoding, costlier than the rest of a claim,
 * so it is done before the transaction (which holds PocketBase's only writer)
 * and kept in the pooled runtime's globalThis for a moment: a schema change is
 * seen within COLLECTION_CACHE_MS, and sooner after a rollback.
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
