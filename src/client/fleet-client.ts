/**
 * FleetClient: the harness's typed access to a pb-fleet PocketBase, of the 0.22
 * line or of 0.23 and later, over plain `fetch` (no PocketBase SDK: the SDK
 * comes in one version per server line, and this client makes few enough kinds
 * of call to own its transport, its timeouts, retries and typed errors).
 * Claims, renews, releases and sweeps go to the /api/fleet/* compare-and-set
 * endpoints, as do the queue's enqueue, cancel and retry (docs/queue.md); listing,
 * a bare enqueue and result writes use the record API of `probe_jobs`
 * (admin/superuser only). Both lines serve the same paths and the
 * same filter syntax; only the sign-in differs (0.22: `/api/admins`, 0.23+: the
 * `_superusers` auth collection), and the client finds out which on its first
 * sign-in. A worker identity (a record of the auth collection `fleet_workers`)
 * signs in at the same path on both lines, and may call only the worker's
 * routes (claim, renew, release, claim-next, heartbeat, complete; enqueue
 * with `can_enqueue`).
 */
import { JOBS_COLLECTION, pbFilter } from "../lib/record-filters.js";
import type {
  CancelResponse, CompleteItem, CompleteResponse, EnqueuedJob, FleetStats, FlowResponse, FlowStateResponse, HeartbeatItem,
  HeartbeatResponse, ReleaseResponse, ReleaseTarget, RenewResponse, RetryResponse, SweepRequest, SweepResponse,
} from "../lib/types.js";
import type { FlowFilter, SetFlowRequest } from "./flow-options.js";
import type { EnqueueJob } from "./queue-options.js";
import { credentialsOf, Session } from "./fleet-client/auth.js";
import { ProtocolCalls } from "./fleet-client/protocol-calls.js";
import { QueueCalls } from "./fleet-client/queue-calls.js";
import { JobRecords } from "./fleet-client/records.js";
import { nodeHttpRequester } from "./fleet-client/node-http.js";
import { fetchRequester, Transport } from "./fleet-client/transport.js";
import {
  DEFAULT_TIMEOUT_MS,
  type AuthApi, type ClaimNextOptions, type ClaimResult, type CompleteAndClaimResponse, type CompleteClaimOptions, type EnqueueCallOptions, type EnqueueManyOptions, type FleetApi,
  type FleetClientOptions, type HeartbeatOptions, type HeldJob, type JobQuery, type JobRecord, type ListOptions,
  type ReleaseOptions, type RenewOptions, type RequestOptions, type WorkerIdentity,
} from "./fleet-client/types.js";

export { pbFilter };
export * from "./fleet-client/types.js";

/**
 * One client of one identity: its parts are the transport (HTTP, timeouts,
 * JSON), the session (sign-in, token), the record API's rows, and the
 * endpoint calls of the protocol and of the queue, each checking its answers.
 */
export class FleetClient implements FleetApi {
  /** The server's base URL, without a trailing slash. */
  readonly url: string;
  /** The jobs collection: always the server's, JOBS_COLLECTION. */
  readonly collection: typeof JOBS_COLLECTION = JOBS_COLLECTION;
  readonly timeoutMs: number;
  readonly #session: Session;
  readonly #records: JobRecords;
  readonly #protocol: ProtocolCalls;
  readonly #queue: QueueCalls;

  constructor(opts: FleetClientOptions) {
    if (!opts || typeof opts.url !== "string" || opts.url === "") {
      throw new TypeError("FleetClient: `url` is required (e.g. http://127.0.0.1:8090)");
    }
    const credentials = credentialsOf(opts);
    // No longer an option: a JS caller may still pass it, and a list of another collection would show jobs the server never claims.
    const collection: unknown = (opts as { collection?: unknown }).collection;
    if (collection !== undefined && collection !== JOBS_COLLECTION) {
      throw new TypeError(`FleetClient: the \`collection\` option is gone: the server always uses ${JOBS_COLLECTION}, ` +
        `so ${JSON.stringify(collection)} would list jobs it never claims; remove the option`);
    }
    this.url = opts.url.replace(/\/+$/, "");
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const request = opts.fetch ? fetchRequester(opts.fetch) : nodeHttpRequester();
    this.#session = new Session(new Transport(this.url, this.timeoutMs, request, credentials.isWorker), credentials);
    this.#records = new JobRecords(this.#session);
    this.#protocol = new ProtocolCalls(this.#session, this.#records);
    this.#queue = new QueueCalls(this.#session, this.#records, credentials.isWorker);
  }

  /** Whether this client signs in as a worker identity (`worker` option), not as an admin/superuser. */
  get isWorkerIdentity(): boolean {
    return this.#session.isWorker;
  }

  /**
   * The worker identity this client calls as: `{ id, name, queues,
   * canEnqueue }` of its `fleet_workers` record, as the last sign-in
   * answered it (a worker token only: as PocketBase's auth-refresh answers it,
   * asked once, whose fresh token the client then uses). Signs in first when
   * needed. null for an admin client.
   */
  identity(req?: RequestOptions): Promise<WorkerIdentity | null> {
    return this.#session.identity(req);
  }

  /** The admin/superuser token in use, or the worker identity's ("" before the first sign-in). */
  get token(): string {
    return this.#session.token;
  }

  /**
   * Uses this token from the next request on (say, a token-only client's
   * renewed token). A client with credentials still signs in again when the
   * server refuses it.
   */
  setToken(token: string): void {
    this.#session.setToken(token);
  }

  /**
   * Which sign-in the server has: "superusers" (PocketBase 0.23+) or "admins"
   * (0.22); undefined until the first sign-in (a token-only client never signs in).
   */
  get authApi(): AuthApi | undefined {
    return this.#session.authApi;
  }

  /** Whether the server has /api/fleet/claim-next (undefined: not probed yet). */
  get hasClaimNext(): boolean | undefined {
    return this.#protocol.hasClaimNext;
  }

  /** Whether the server has /api/fleet/enqueue, the queue's (undefined: not probed yet). */
  get hasEnqueue(): boolean | undefined {
    return this.#queue.hasEnqueue;
  }

  /** Whether the server has /api/fleet/heartbeat (undefined: not called yet, or no answer yet). */
  get hasHeartbeat(): boolean | undefined {
    return this.#protocol.hasHeartbeat;
  }

  /** Whether the server has /api/fleet/complete (undefined: not called yet, or no answer yet). */
  get hasComplete(): boolean | undefined {
    return this.#protocol.hasComplete;
  }

  /**
   * Signs in with the credentials (concurrent callers share one sign-in). A
   * worker identity signs in at WORKER_AUTH_PATHS.password (both lines). An
   * admin's first sign-in tries PocketBase 0.23+'s superusers and, on a 404, 0.22's
   * admins, and remembers which answered; a 404 from the remembered one later
   * (the server was upgraded or downgraded under a running client) tries the
   * other again.
   */
  authenticate(req?: RequestOptions): Promise<void> {
    return this.#session.authenticate(req);
  }

  // ---- the compare-and-set endpoints -------------------------------------------------

  /**
   * Claims one job by id. A transient failure (timeout, lost connection, 5xx) is
   * retried once: if the first attempt did commit, the retry is answered
   * alreadyHeld, which is a win like any other.
   */
  claim(jobId: string, workerId: string, leaseSeconds?: number, req?: RequestOptions): Promise<ClaimResult> {
    return this.#protocol.claim(jobId, workerId, leaseSeconds, req);
  }

  /**
   * Extends the lease (only the holder, only while it is live). Retried once on
   * a transient failure (a repeated renew is harmless). `req.progress`: JSON of
   * at most MAX_PROGRESS_BYTES stored with a successful renew (TypeError before
   * any request when larger). A refusal may say why: `reason: "timed_out"`
   * when the holder's attempt has passed its deadline (docs/flow-control.md "Timeouts");
   * a reason the client does not know is left out.
   */
  renew(
    jobId: string, workerId: string, leaseSeconds?: number, leaseToken?: string, req?: RenewOptions,
  ): Promise<RenewResponse> {
    return this.#protocol.renew(jobId, workerId, leaseSeconds, leaseToken, req);
  }

  /**
   * Releases a held job to done, failed, pending or (a server with the queue)
   * retry: back to pending after a backoff, or dead-lettered once its attempts
   * are used up. `req.result` and `req.error` are written in the release's own
   * transaction (TypeError before any request when the result is not JSON or
   * larger than MAX_RESULT_BYTES). `req.rateLimitedFor` (retry only): the
   * job waits out a rate limit instead of the backoff (see ReleaseOptions).
   * Retried once on a transient failure: a repeat of a committed done/failed
   * release is answered refused_terminal_same_holder, which callers treat as
   * their own commit (a repeat of a committed retry finds the job pending:
   * refused_not_holder).
   */
  release(
    jobId: string, workerId: string, status: ReleaseTarget, leaseToken?: string, req?: ReleaseOptions,
  ): Promise<ReleaseResponse> {
    return this.#protocol.release(jobId, workerId, status, leaseToken, req);
  }

  /**
   * POST /api/fleet/heartbeat: renews many leases of one worker, each item
   * judged exactly as renew judges it (only the holder, only while its lease
   * is live, the token when given; `progress` stored with a successful renew),
   * all with `opts.leaseSeconds`. A refused item (`renewed: false`) does not
   * stop the others. Answers `{ results: [{ jobId, renewed }] }` in request
   * order (no job view: read a job with getJob when you need one); a refused
   * item may carry `reason: "timed_out"`, as renew's answer.
   *
   * Everything is checked before the first request, with the server's rules:
   * `workerId`, a non-empty `leases` array, each item's `jobId`,
   * `leaseToken` (a non-empty string when given) and `progress` (JSON of at
   * most MAX_PROGRESS_BYTES), and `leaseSeconds` (> 0): a TypeError naming
   * the item and the field, and nothing is sent (the server would refuse the
   * whole call with a 400). One request carries at most MAX_BATCH_ITEMS (100)
   * items, in one transaction; a longer list is sent in chunks of 100, one
   * after the other, and **each chunk is its own transaction**: when one
   * fails its error is thrown, the chunks before it have renewed, and the
   * ones after it are not sent (sending the whole list again is harmless: a
   * renew only extends a live lease of its holder). `timeoutMs` and `signal`
   * apply to each chunk's request.
   *
   * Each chunk is retried once on a transient failure (timeout, lost
   * connection, 5xx), like renew: a heartbeat whose answer was lost may have
   * committed, and sending it again only renews the same leases again.
   * A server without the endpoint (a pb-fleet from before it) answers 404: a
   * FleetHttpError 404 (`hasHeartbeat` false); renew each job instead.
   */
  heartbeat(workerId: string, leases: readonly HeartbeatItem[], opts: HeartbeatOptions = {}): Promise<HeartbeatResponse> {
    return this.#protocol.heartbeat(workerId, leases, opts);
  }

  /**
   * POST /api/fleet/complete: releases many jobs of one worker, each item
   * judged exactly as release judges it (done, failed, pending or retry; its
   * `result` and `error` written in the same transaction; `rateLimitedFor`
   * with retry only). A refused item
   * does not stop the others. Answers `{ results: [{ jobId, released: true }
   * | { jobId, released: false, reason }] }` in request order.
   *
   * Checked before the first request like heartbeat: `workerId`, a non-empty
   * `releases` array, each item's `jobId`, `leaseToken`, `status`, `result`
   * (JSON of at most MAX_RESULT_BYTES) and `error` (a string of at most
   * MAX_ERROR_BYTES): a TypeError naming the item and the field, and nothing
   * is sent. At most MAX_BATCH_ITEMS (100) items a request, in one
   * transaction; a longer list goes in chunks of 100, one after the other,
   * and **each chunk is its own transaction**: when one fails its error is
   * thrown, the chunks before it have committed and the ones after it are not
   * sent.
   *
   * Each chunk is retried once on a transient failure, like release: an item
   * whose first attempt committed is then answered `refused_terminal_same_holder`
   * (done/failed: the caller's own release, to be treated as committed), or,
   * for a committed `retry`, `refused_not_holder` (the job is pending under
   * no one, or dead-lettered). Sending the same list again after an error is
   * safe in the same way. A server without the endpoint answers 404: a
   * FleetHttpError 404 (`hasComplete` false); release each job instead.
   */
  complete(workerId: string, releases: readonly CompleteItem[], req?: RequestOptions): Promise<CompleteResponse> {
    return this.#protocol.complete(workerId, releases, req);
  }

  /**
   * POST /api/fleet/complete with `claimNext`: the releases (at most
   * MAX_BATCH_ITEMS, checked as complete checks them), then in the same
   * transaction a claim as claimNext would make for `workerId` with `claim`'s
   * options, all in one request, as a Worker reports finished jobs and asks
   * for the next ones at once. Answers `{ results, jobs }`: the results as
   * complete answers them, and the claimed jobs (as claimNext answers them),
   * or `jobs: null` from a server that claims nothing in a complete (one from
   * before it: it ignores the field).
   *
   * Sent once, never retried (a lost answer may have claimed jobs: they are
   * held by `workerId` until their leases lapse): after a failure, send the
   * releases again with complete, which is safe.
   */
  completeAndClaim(
    workerId: string, releases: readonly CompleteItem[], claim: CompleteClaimOptions, req?: RequestOptions,
  ): Promise<CompleteAndClaimResponse> {
    return this.#protocol.completeAndClaim(workerId, releases, claim, req);
  }

  /**
   * Claims up to `limit` of the oldest claimable jobs. Uses POST
   * /api/fleet/claim-next (one transaction) when the server has it; a server
   * without it answers 404 once, and from then on the client lists claimable
   * rows and claims them one by one (losing some races to other workers).
   */
  claimNext(opts: ClaimNextOptions, req?: RequestOptions): Promise<HeldJob[]> {
    return this.#protocol.claimNext(opts, req);
  }

  /**
   * POST /api/fleet/sweep: the server re-queues every held job of one batch
   * whose lease has expired, or fails it at its orphan cap
   * (PB_FLEET_MAX_ORPHANS), in one transaction, and says what it did to each.
   * A server without it answers 404 (FleetHttpError). Not retried: a failed
   * sweep changed nothing, and the next sweep does the same work.
   */
  sweep(opts: SweepRequest = {}, req?: RequestOptions): Promise<SweepResponse> {
    return this.#protocol.sweep(opts, req);
  }

  // ---- the queue: enqueue, cancel, retry ---------------------------------------------

  /**
   * Enqueues one job, in one of two forms, told apart by the options object:
   *
   * - `enqueue(probeKey)`, or with only request options (`timeoutMs`,
   *   `signal`): as before, a pending row created through the record API and
   *   answered as that row. On a server with the queue it is a row with the
   *   queue's defaults: max_attempts DEFAULT_MAX_ATTEMPTS (25, what
   *   /api/fleet/enqueue gives a job without `maxAttempts`, so that adding a
   *   payload does not change how a job is retried), due at once, priority
   *   0, no payload.
   * - with any job option (`payload`, `runAt`, `delaySeconds`, `priority`,
   *   `maxAttempts`, `uniqueKey`, and flow control's `queue`, `group`,
   *   `timeoutSeconds`, `startWithinSeconds`; present counts, even when
   *   undefined): POST /api/fleet/enqueue, answered `{ id, probeKey,
   *   created }` (`created: false`: a live job already has the uniqueKey, and
   *   its id is the one answered). The options are checked first with the
   *   server's limits (`group`: null or "" is no group, as on the server): a
   *   bad one (or an unknown name) is a TypeError naming it, and nothing is
   *   sent. A server without the queue has no such endpoint (found out by its
   *   404, remembered as hasEnqueue = false) and cannot take these options:
   *   the answer is a FleetHttpError 404 saying so, and nothing is created.
   *
   * Not retried on a timeout: that could create the job twice (a uniqueKey
   * makes a retry by the caller safe).
   */
  enqueue(probeKey: string, req?: RequestOptions): Promise<JobRecord>;
  enqueue(probeKey: string, options: EnqueueCallOptions): Promise<EnqueuedJob>;
  enqueue(probeKey: string, options?: EnqueueCallOptions): Promise<JobRecord | EnqueuedJob> {
    return this.#queue.enqueue(probeKey, options);
  }

  /**
   * Enqueues many jobs, in one of two forms:
   *
   * - `enqueueMany(probeKeys: string[], { concurrency })`: as before, one
   *   record API request per key, `concurrency` at a time (default 8),
   *   answered with the rows in order. Rejects with the first error once the
   *   requests in flight have settled; jobs created before it stay.
   * - `enqueueMany(jobs: { probeKey, payload?, runAt?, ... }[])`: POST
   *   /api/fleet/enqueue with up to MAX_ENQUEUE_JOBS (1000) jobs a request,
   *   answered `{ id, probeKey, created }` per job in order. Every job is
   *   checked before the first request (TypeError naming the job and the
   *   option). Each request is one transaction, all or nothing; a longer
   *   array is sent in chunks of MAX_ENQUEUE_JOBS, one after the other, and
   *   **the chunks are separate transactions**: when one fails, the chunks
   *   before it stay enqueued and the ones after it are not sent (a uniqueKey
   *   per job makes sending the whole array again safe). On a server without
   *   the queue (a 404, remembered), jobs that are bare probe keys are created
   *   through the record API as in the first form (`created: true`), and jobs
   *   with any option are refused with a FleetHttpError 404 before anything is
   *   created.
   */
  enqueueMany(probeKeys: readonly string[], opts?: EnqueueManyOptions): Promise<JobRecord[]>;
  enqueueMany(jobs: readonly EnqueueJob[], opts?: EnqueueManyOptions): Promise<EnqueuedJob[]>;
  enqueueMany(list: readonly (string | EnqueueJob)[], opts: EnqueueManyOptions = {}): Promise<JobRecord[] | EnqueuedJob[]> {
    return this.#queue.enqueueMany(list, opts);
  }

  /**
   * POST /api/fleet/cancel: a pending, claimed or running job becomes
   * `cancelled` (terminal; its holder's next renew is refused, which aborts
   * the handler of a Worker, and its release is refused). `{ cancelled: false }`
   * for a job in any other state (or unknown). Not retried: a repeat of a
   * committed cancel would answer cancelled:false. A server without the queue
   * answers 404 (FleetHttpError).
   */
  cancel(jobId: string, req?: RequestOptions): Promise<CancelResponse> {
    return this.#queue.cancel(jobId, req);
  }

  /**
   * POST /api/fleet/retry: a failed (dead-lettered included) or cancelled job
   * goes back to pending, due now, with its attempts reset. `{ retried: false }`
   * for a job in any other state; `reason: "unique_key_taken"` when its
   * uniqueKey now belongs to another live job. Not retried (a repeat would
   * answer retried:false). A server without the queue answers 404 (FleetHttpError).
   */
  retry(jobId: string, req?: RequestOptions): Promise<RetryResponse> {
    return this.#queue.retry(jobId, req);
  }

  // ---- the record API ----------------------------------------------------------------

  /** Writes the result JSON of a job. Callers write only after their own terminal release committed. */
  writeResult(jobId: string, result: unknown, req?: RequestOptions): Promise<void> {
    return this.#records.writeResult(jobId, result, req);
  }

  getJob(jobId: string, req?: RequestOptions): Promise<JobRecord> {
    return this.#records.get(jobId, req);
  }

  /**
   * Claimable rows, oldest first: pending and due (run_at empty or come), or
   * claimed/running with an expired lease (by this machine's clock). Flow
   * control (paused queues, limits) is not judged.
   */
  listClaimable(opts: ListOptions = {}, req?: RequestOptions): Promise<JobRecord[]> {
    // A server known to have no claim-next is from before the queue: it has no run_at.
    return this.#records.listClaimable(opts, req, this.#protocol.hasClaimNext !== false);
  }

  /** claimed/running rows whose lease has expired (the sweeper's work), the longest-expired first. */
  listExpiredLeases(opts: ListOptions = {}, req?: RequestOptions): Promise<JobRecord[]> {
    return this.#records.listExpiredLeases(opts, req);
  }

  /**
   * Rows of `probe_jobs` in any state, oldest first: every row of a prefix, of
   * some statuses, or up to `limit` of them (the harness's view of a run; the
   * fleet itself never needs it). Pages through the record API, 500 rows a
   * request; each page has the client's timeout.
   */
  listJobs(query: JobQuery = {}, req?: RequestOptions): Promise<JobRecord[]> {
    return this.#records.listJobs(query, req);
  }

  // ---- flow control -------------------------------------------------------------------

  /**
   * POST /api/fleet/flow: changes the settings of one scope, a queue or a group
   * (docs/flow-control.md "Limits"): `paused`, `concurrency`, `rateLimit` `{ limit,
   * periodSeconds }`, and a park for `parkSeconds` or until `parkUntil` (a
   * Date or ISO text with a zone). A setting not given keeps its value; null
   * clears it (`paused: null` is false, `parkSeconds: 0` or `parkUntil: null`
   * ends a park). Checked first with the server's bounds: exactly one of
   * `queue`/`group`, at least one setting, each in range (a TypeError naming
   * it, and nothing is sent). Answers the scope's settings as stored (null for
   * unset; a park already past reads null). Retried once on a transient
   * failure: sending the same settings again stores the same settings (a
   * `parkSeconds` park then counts from the repeat).
   */
  setFlow(request: SetFlowRequest, req?: RequestOptions): Promise<FlowResponse["flow"]> {
    return this.#queue.setFlow(request, req);
  }

  /**
   * GET /api/fleet/flow: each scope's settings and figures (`held`, `due`,
   * `claimsInWindow`). Without a filter, every queue that has settings or
   * unfinished jobs and every group that has settings; `{ queue }` answers at
   * most that queue (and no groups), `{ group }` at most that group (and no
   * queues), both: each list narrowed. The names are checked first (a
   * TypeError). Retried once on a transient failure.
   */
  getFlow(filter?: FlowFilter, req?: RequestOptions): Promise<FlowStateResponse> {
    return this.#queue.getFlow(filter, req);
  }

  /** GET /api/fleet/stats, optionally of one probe_key prefix (a FleetHttpError 404 from a server without it). */
  stats(opts: { probeKeyPrefix?: string } = {}, req?: RequestOptions): Promise<FleetStats> {
    return this.#queue.stats(opts, req);
  }
}
