/**
 * The PocketBase 0.23+ adapter (checked on 0.23.12 and 0.40.4): the
 * FleetAdapter (./contract.ts) on the hooks API 0.23 introduced (`(e) => ...`
 * handlers, `e.requestInfo()`, `$app.runInTransaction((txApp) => ...)`,
 * `txApp.saveNoValidate`). It answers every request as the 0.22 adapter does; where
 * PocketBase itself changed, it says how below.
 *
 * esbuild copies what each handler uses from here into that handler's closure
 * (PocketBase still compiles every handler from its own text), so this module
 * is written once and emitted per handler.
 */
import { JOB_EVENTS_COLLECTION } from "../lib/job-events.js";
import type { JobBatch, JobPatch, JobRow, JobUpdate } from "../lib/job-row.js";
import { dueTimeOnCreate, queueOnCreate } from "../lib/transitions.js";
import type { WhereClause } from "../lib/queries.js";
import type * as thisAdapter from "./pocketbase-0.23.js";
import { ACCOUNT_REQUEST_REFUSED, authorize, WORKERS_COLLECTION, type CallerAuth, type RouteAccess } from "../lib/identity.js";
import { answerRequest, JOBS_COLLECTION, notInTransaction, oversizedBodyReply, type AdapterModule, type RouteHandler } from "./contract.js";
import { executeStatement, findJudgedRecords, logError, readAll, readAllOrNull, readOne, readRow, setFields, workerAuth } from "./runtime.js";
import { updateJobIn, updateJobsBulkIn, updateJobsIn, updateJobsWithin, jobStore, type JobStore, type JobTransaction } from "./transactions.js";

export { json, JOBS_COLLECTION, type FleetRequest, type Reply } from "./contract.js";
export { getenv, logError, logInfo, newLeaseToken, storeGet, storeSet } from "./runtime.js";

/** Compile-time proof that this module is a FleetAdapter (a type: nothing of it is bundled). */
export type Adapter = AdapterModule<typeof thisAdapter, core.RequestEvent, core.RecordEvent, AppTransaction>;

export function serve(e: core.RequestEvent, handler: RouteHandler, access: RouteAccess): void {
  const reply = answerRequest({
    auth: callerAuth(e),
    contentLength: e.request!.contentLength,
    // A body of unknown length (chunked) meets PocketBase's limit only as it is read.
    bodyOverLimit: () => bodyOverLimit(e),
    body: () => requestBody(e),
    // Not requestInfo().query: requestInfo() throws on a body it cannot parse.
    query: (name) => e.request!.url!.query().get(name),
    execute: (statement) => {
      // The single-connection writer: 0.23.12's db() is the concurrent pool (0.40's routes writes
      // itself), whose write beside an open transaction made that transaction fail ("database is locked").
      executeStatement($app.nonconcurrentDB(), statement);
    },
  }, access, handler, logError);
  if ("text" in reply) return e.string(reply.status, reply.text);
  return answerJson(e, reply.status, reply.json);
}

/**
 * A JSON answer, its text from JSON.stringify: each object's members in the
 * order src/lib built them. Not e.json: 0.40's writes through
 * encoding/json/v2, which gives a map's keys in random order (0.36.8's still
 * sorted them), a new order per object, and a JSON client pays for each new
 * order (in V8 a hidden class per job: most of why the Worker spent 1.7x the
 * client CPU per job against 0.40.4 that it did against 0.22.21). A request
 * with PocketBase's `?fields=` picker still gets e.json, which applies it (as
 * 0.22's c.json does).
 */
function answerJson(e: core.RequestEvent, status: number, json: unknown): void {
  if (e.request!.url!.query().get("fields") !== "") return e.json(status, json);
  e.response!.header().set("Content-Type", "application/json");
  return e.string(status, JSON.stringify(json) ?? "null");
}

/**
 * Who sent the request: a superuser, a fleet_workers record (PocketBase
 * loaded it from the token for this request), or anyone else. 0.22's answers
 * are kept: anyone else gets 0.22's 401 (0.23's $apis.requireSuperuserAuth()
 * would answer a user token 403, in 0.23's error shape).
 */
function callerAuth(e: core.RequestEvent): CallerAuth {
  if (e.hasSuperuserAuth()) return { kind: "admin" };
  const rec = e.auth;
  // tableName() is the collection's name as a plain string: no wrapper of the whole collection model.
  if (!rec || rec.tableName() !== WORKERS_COLLECTION) return { kind: "none" };
  const fields = rec.collection().fields;
  return workerAuth(rec, (name) => !!fields.getByName(name));
}

/**
 * A route middleware (the build adds it to every route, before PocketBase's
 * own body limit, pbBodyLimit at priority -990, and after the auth token is
 * loaded at -1020): a declared length over the limit is answered pb-fleet's
 * 413, or the refusal of a caller the route does not admit (as serve would
 * answer it), instead of PocketBase's 413 in its own shape.
 */
export function refuseOversizedBody(e: core.RequestEvent, access: RouteAccess): void {
  const tooLarge = oversizedBodyReply(e.request!.contentLength);
  if (tooLarge === null) return e.next();
  const verdict = authorize(callerAuth(e), access);
  if (!("caller" in verdict)) return answerJson(e, verdict.status, verdict.body);
  return answerJson(e, tooLarge.status, (tooLarge as { json: unknown }).json);
}

/** Whether reading the body stopped at PocketBase's limit (its reader's error says so). */
function bodyOverLimit(e: core.RequestEvent): boolean {
  try {
    e.requestInfo();
    return false;
  } catch (err) {
    return String(err).indexOf("too large") !== -1;
  }
}

/**
 * The JSON body as 0.22 read it. 0.23+ throws on a body it cannot parse
 * (invalid JSON, a top-level array or scalar, another content type; 0.40 also
 * refuses duplicate keys and invalid UTF-8) where 0.22 gave `{}`: so `{}`, and
 * validation answers its 400 as on 0.22.
 */
function requestBody(e: core.RequestEvent): unknown {
  try {
    return e.requestInfo().body;
  } catch (_) {
    return {};
  }
}

// ---- transactions ----------------------------------------------------------------------

/**
 * Reads and writes inside a transaction, through its `txApp` only: `$app`
 * there would wait for the single-connection writer the transaction holds.
 * Records are found by collection name: PocketBase 0.23+ keeps collections in
 * its own cache, so the 0.22 adapter's per-runtime cache has nothing to save.
 */
const RECORDS: JobTransaction<core.App, core.Record> = {
  find(txApp, where, order, limit) {
    return findJudgedRecords(txApp.recordQuery(JOBS_COLLECTION), where, order, limit);
  },
  rowOf: readRow,
  write(txApp, rec, patch) {
    setFields(rec, patch);
    // Not save(): that validates every field of the row (0.22's saveRecord
    // validates none), so a hand-edited row, a negative version say, would
    // refuse every transition on 0.23+ and none on 0.22.
    txApp.saveNoValidate(rec);
  },
  insert(txApp, fields) {
    const rec = new Record(txApp.findCachedCollectionByNameOrId(JOBS_COLLECTION));
    setFields(rec, fields);
    txApp.saveNoValidate(rec);
    return rec.id;
  },
  insertEvent(txApp, event) {
    const rec = new Record(txApp.findCachedCollectionByNameOrId(JOB_EVENTS_COLLECTION));
    rec.set("source", event.source);
    rec.set("changes", JSON.stringify(event.changes));
    txApp.saveNoValidate(rec);
  },
  queryAll: (txApp, query, shape) => readAll(txApp.db(), query, shape),
  execute: (txApp, statement) => executeStatement(txApp.db(), statement),
};

/** RECORDS in transactions of pb-fleet's own, on PocketBase's single-connection writer pool. */
const STORE: JobStore<core.App, core.Record> = /* @__PURE__ */ jobStore(RECORDS, {
  transaction(body) {
    $app.runInTransaction((txApp) => {
      body(txApp);
    });
  },
  forget() {
    // nothing cached
  },
  logError,
});

/** No per-runtime collection cache on 0.23+ (see STORE). */
export const COLLECTION_CACHE_MS = 0;

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
 * What an app's own hook holds of its open transaction on 0.23+: the txApp of
 * `$app.runInTransaction((txApp) => ...)`, or the e.app of a record hook
 * (onRecordCreate, onRecordCreateExecute...) fired by a save through one.
 */
export type AppTransaction = core.App;

const APP_TRANSACTION_HANDLES =
  "the txApp of $app.runInTransaction((txApp) => ...), or the e.app of onRecordCreate/onRecordCreateExecute for a save made through such a txApp";

export function updateJobsInAppTransaction<T>(txApp: AppTransaction, work: (batch: JobBatch, nowMs: number) => T): T {
  const candidate = txApp as Partial<core.App> | null | undefined;
  const inTransaction = candidate !== null && candidate !== undefined && typeof candidate.isTransactional === "function" && candidate.isTransactional();
  if (!inTransaction) throw new Error(notInTransaction(APP_TRANSACTION_HANDLES));
  return updateJobsWithin(RECORDS, txApp, work);
}

// ---- plain reads -----------------------------------------------------------------------

export function queryOne<T extends object>(query: WhereClause, shape: T): T | null {
  // Outside a transaction $app.db() sends a SELECT to the concurrent (reader) pool.
  return readOne($app.db(), query, shape);
}

/** Every row of a read-only query, outside a transaction; null when it failed (logged). */
export function queryAll<T extends object>(query: WhereClause, shape: T): T[] | null {
  return readAllOrNull($app.db(), query, shape);
}

// ---- record hooks ----------------------------------------------------------------------

/**
 * onRecordCreate for probe_jobs: a row created another way than enqueue (the
 * record API, the admin UI) gets its due time and queue, so the claim indexes order every row.
 */
export function stampDueTime(e: core.RecordEvent): void {
  const runAt = dueTimeOnCreate(e.record!.getString("run_at"), Date.now());
  if (runAt !== null) e.record!.set("run_at", runAt);
  const queue = queueOnCreate(e.record!.getString("queue"));
  if (queue !== null) e.record!.set("queue", queue);
  e.next();
}

/**
 * PocketBase's own email change, password reset and verification requests of
 * a fleet_workers record (the bundle registers this for them): refused with a
 * 403, before PocketBase sends any mail.
 */
export function refuseAccountRequest(): void {
  throw new ForbiddenError(ACCOUNT_REQUEST_REFUSED);
}
