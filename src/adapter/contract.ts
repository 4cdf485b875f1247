/**
 * What every PocketBase adapter offers the handlers. There is one adapter per
 * hooks API (pocketbase-0.22.ts; pocketbase-0.23.ts for 0.23 to 0.40), the
 * build picks one per bundle, and handlers import it through the one specifier
 * `@pb-fleet/adapter` (mapped by each hooks tsconfig's `paths`). This module
 * holds no PocketBase code: it is shared by both.
 */
import type { JobBatch, JobPatch, JobRow, JobUpdate } from "../lib/job-row.js";
import type { WhereClause } from "../lib/queries.js";
import { authorize, lastSeenIsStale, stampLastSeenStatement, type Caller, type CallerAuth, type RouteAccess } from "../lib/identity.js";
import { MAX_REQUEST_BODY_BYTES, REQUEST_TOO_LARGE } from "../lib/queue.js";

export { JOBS_COLLECTION } from "../lib/job-schema.js";

/** What an adapter logs (with the error) when a transaction rolled back, and when a plain read failed. */
export const ROLLED_BACK = "pb-fleet: transaction rolled back";
export const QUERY_FAILED = "pb-fleet: query failed";

/** What a handler sees of a request. */
export interface FleetRequest {
  /**
   * The JSON body; `{}` for invalid JSON, a top-level array or another content
   * type (PocketBase 0.22's reading; the 0.23+ adapter answers the same).
   */
  body(): unknown;
  /** A query-string parameter, "" when absent. */
  query(name: string): string;
  /** Whom the call is served as: an admin, or a worker identity the route admits (serve refused anyone else). */
  caller: Caller;
}

/** What a handler answers: JSON, or plain text (Prometheus). */
export type Reply = { status: number; json: unknown } | { status: number; text: string };

export type RouteHandler = (req: FleetRequest) => Reply;

export function json(status: number, body: unknown): Reply {
  return { status, json: body };
}

/**
 * The 413 for a request whose declared length is over what PocketBase reads
 * (0.22 would read the cut body as `{}` and answer "workerId is required";
 * 0.23+'s own answer has another shape); null for any other request.
 */
export function oversizedBodyReply(contentLength: number): Reply | null {
  return contentLength > MAX_REQUEST_BODY_BYTES ? json(413, { error: REQUEST_TOO_LARGE }) : null;
}

/** What an adapter's serve knows of a request before its body is read. */
export interface IncomingRequest {
  auth: CallerAuth;
  /** The declared length; -1 when unknown (chunked). */
  contentLength: number;
  /** For a body of unknown length: whether reading it stopped at PocketBase's limit. */
  bodyOverLimit(): boolean;
  body(): unknown;
  query(name: string): string;
  /** Runs a statement outside any transaction (the last-seen stamp); throws when it fails. */
  execute(statement: WhereClause): void;
}

/**
 * Every route's answer, on both lines: who is calling (src/lib/identity.ts)
 * before the body is read, then the 413 for a body over the limit, then the
 * handler. A worker identity's call stamps its last activity at most once
 * per LAST_SEEN_EVERY_MS, outside the handler's transaction; a failed stamp
 * is logged and the call goes on.
 */
export function answerRequest(
  req: IncomingRequest, access: RouteAccess, handler: RouteHandler, logError: (message: string, err: unknown) => void,
): Reply {
  const verdict = authorize(req.auth, access);
  if (!("caller" in verdict)) return json(verdict.status, verdict.body);
  const tooLarge = oversizedBodyReply(req.contentLength) ?? (req.contentLength < 0 && req.bodyOverLimit() ? oversizedBodyReply(Infinity) : null);
  if (tooLarge !== null) return tooLarge;
  const auth = req.auth;
  const now = Date.now();
  if (auth.kind === "worker" && lastSeenIsStale(auth.lastSeenAt, now)) {
    try {
      req.execute(stampLastSeenStatement(auth.id, now));
    } catch (err) {
      logError(LAST_SEEN_FAILED, err);
    }
  }
  return handler({ body: () => req.body(), query: (name) => req.query(name), caller: verdict.caller });
}

export const LAST_SEEN_FAILED = "pb-fleet: could not stamp a worker identity's last_seen_at";

/**
 * The exports of an adapter module; `RouteContext` is what PocketBase passes a
 * route handler (0.22: echo.Context; 0.23+: core.RequestEvent), `CreateEvent`
 * what it passes a probe_jobs create hook (0.22: core.ModelEvent of
 * onModelBeforeCreate; 0.23+: core.RecordEvent of onRecordCreate),
 * `AppTransaction` what an app's own hook holds of its open transaction
 * (0.22: the txDao of runInTransaction or a model hook's e.dao; 0.23+: the
 * txApp of runInTransaction or a record hook's e.app).
 */
export interface FleetAdapter<RouteContext, CreateEvent, AppTransaction> {
  JOBS_COLLECTION: string;
  /** How long a pooled runtime reuses probe_jobs' collection model; 0: the adapter keeps none. */
  COLLECTION_CACHE_MS: number;
  json(status: number, body: unknown): Reply;
  /** Runs a handler for one request of a route, for the callers `access` admits (answerRequest), and answers its Reply. */
  serve(context: RouteContext, handler: RouteHandler, access: RouteAccess): void;
  /** The probe_jobs create hook: gives a row created without a due time its creation time. */
  stampDueTime(event: CreateEvent): void;
  /**
   * Finds a job inside one transaction on PocketBase's single writer, lets
   * `decide` judge the row, and writes the patch `patchOf` takes from the
   * decision (none: nothing is written). null when there is no such job, or when
   * the transaction rolled back (nothing was written, whatever was decided).
   */
  updateJob<D>(
    jobId: string,
    decide: (row: JobRow, nowMs: number) => D,
    patchOf: (decision: D) => JobPatch | null,
  ): JobUpdate<D> | null;
  /**
   * Runs `work` in one transaction on PocketBase's single writer: concurrent
   * callers see each other's writes. null when it rolled back (nothing written).
   */
  updateJobs<T>(work: (batch: JobBatch, nowMs: number) => T): T | null;
  /**
   * updateJobs for the batch endpoints: the same rules and one transaction,
   * without a record load and save per row (src/lib/bulk.ts). Realtime sees
   * one probe_job_events record (its `source` names the endpoint) instead of
   * one update per job.
   */
  updateJobsBulk<T>(source: string, work: (batch: JobBatch, nowMs: number) => T): T | null;
  /**
   * updateJobs inside a transaction an app's own hook opened (pb-fleet-enqueue.js):
   * every read and write goes through `tx`, never through `$app`, and an error
   * propagates, so the app's transaction rolls back with the jobs. Throws
   * (notInTransaction) before anything is written when `tx` is not inside a transaction.
   */
  updateJobsInAppTransaction<T>(tx: AppTransaction, work: (batch: JobBatch, nowMs: number) => T): T;
  /** One row of a read-only query (`shape`: its columns with a value of each one's type); null when it failed (logged). */
  queryOne<T extends object>(query: WhereClause, shape: T): T | null;
  /** A fencing token for a new claim: unguessable, so only the claim's own answer carries it. */
  newLeaseToken(): string;
  getenv(name: string): string;
  /** PocketBase's app store: one for the process, shared by every pooled runtime. */
  storeGet(key: string): unknown;
  storeSet(key: string, value: string): void;
  logInfo(message: string, ...attrs: unknown[]): void;
  logError(message: string, err: unknown): void;
}

/** `AdapterModule<typeof import("./x.js"), Context, Event, Tx>` fails to compile unless module x is a FleetAdapter. */
export type AdapterModule<
  Module extends FleetAdapter<RouteContext, CreateEvent, AppTransaction>, RouteContext, CreateEvent, AppTransaction,
> = Module;

/**
 * The refusal of a handle that is not inside a transaction: jobs written
 * through it would be committed on their own, and outlive an app write that
 * rolls back. `handles` names what the line's hooks hand out inside one.
 */
export function notInTransaction(handles: string): string {
  return `pb-fleet enqueue: the handle passed is not inside a transaction, so its jobs could outlive a rolled-back write (nothing was written): pass ${handles}`;
}
