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
import { WORKER_FIELDS, WORKERS_COLLECTION } from "../lib/identity.js";
import { claimableRecordFilter, expiredLeaseRecordFilter, JOBS_COLLECTION, pbFilter } from "../lib/record-filters.js";

export { pbFilter };
import { DEFAULT_MAX_ATTEMPTS, MAX_BATCH_ITEMS, MAX_ENQUEUE_JOBS } from "../lib/queue.js";
import {
  CLAIM_REFUSALS,
  RELEASE_REFUSALS,
  RENEW_REFUSALS,
  RETRY_REFUSALS,
  type CancelResponse,
  type ClaimRefusal,
  type ClaimNextRequest,
  type ClaimNextResponse,
  type ClaimRequest,
  type ClaimResponse,
  type CompleteItem,
  type CompleteRequest,
  type CompleteResponse,
  type CompleteResult,
  type EnqueueItem,
  type EnqueueRequest,
  type EnqueuedJob,
  type FleetStats,
  type FlowResponse,
  type FlowStateResponse,
  type HeartbeatItem,
  type HeartbeatRequest,
  type HeartbeatResponse,
  type HeartbeatResult,
  type JobIdRequest,
  type JobStatus,
  type JobView,
  type ReleaseRequest,
  type ReleaseResponse,
  type ReleaseTarget,
  type RenewRefusal,
  type RenewRequest,
  type RenewResponse,
  type RetryResponse,
  type QueueJobView,
  type SweepRequest,
  type SweepResponse,
  type SweptJob,
} from "../lib/types.js";
import { MAX_CLAIM_NEXT_LIMIT } from "../lib/validate.js";
import {
  FleetAbortError,
  FleetAuthError,
  FleetForbiddenError,
  FleetHttpError,
  FleetNetworkError,
  FleetProtocolError,
  FleetTimeoutError,
  isMissingEndpoint,
  isTransientError,
} from "./errors.js";
import { isFlowAnswer, isFlowStateAnswer, toFlowQuery, toFlowRequest, type FlowFilter, type SetFlowRequest } from "./flow-options.js";
import {
  checkBatchList, checkBatchWorkerId, checkClaimQueue, checkLeaseSeconds, checkProgress, checkReleaseFields, hasQueueOptions,
  needsQueueServer, REQUEST_OPTION_NAMES, toCompleteItem, toEnqueueItem, toHeartbeatItem,
  type EnqueueJob, type EnqueueOptions,
} from "./queue-options.js";

export * from "./fleet-client/types.js";
import {
  AUTH_PATHS, DEFAULT_TIMEOUT_MS, MAX_LIST_LIMIT, WORKER_AUTH_PATHS,
  type AuthApi, type ClaimNextOptions, type ClaimResult, type EnqueueCallOptions, type EnqueueManyOptions, type FleetApi,
  type FleetClientOptions, type HeartbeatOptions, type HeldJob, type JobQuery, type JobRecord, type ListOptions,
  type ReleaseOptions, type RenewOptions, type RequestOptions, type WorkerCredentials, type WorkerIdentity,
} from "./fleet-client/types.js";

/** Every SweptJob outcome, checked by the compiler against the protocol's type. */
const SWEEP_OUTCOMES: Record<SweptJob["outcome"], true> = { requeued: true, gave_up: true, timed_out: true };

/** One HTTP request of the client. */
interface HttpCall {
  method: "GET" | "POST" | "PATCH";
  /** From the server's root, e.g. /api/fleet/claim. */
  path: string;
  query?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** Without the client's token (the sign-in itself). */
  anonymous?: boolean;
}

export class FleetClient implements FleetApi {
  /** The server's base URL, without a trailing slash. */
  readonly url: string;
  /** The jobs collection: always the server's, JOBS_COLLECTION. */
  readonly collection: typeof JOBS_COLLECTION = JOBS_COLLECTION;
  readonly timeoutMs: number;
  readonly #email: string | undefined;
  readonly #password: string | undefined;
  /** A worker identity's name and password (undefined: an admin client, or a worker token only). */
  readonly #worker: { identity: string; password: string } | undefined;
  readonly #isWorker: boolean;
  /** The worker identity of the last sign-in or refresh (undefined: none yet; always undefined for an admin client). */
  #identity: WorkerIdentity | undefined;
  /** A token-only worker's auth-refresh on the wire (concurrent identity() calls share it). */
  #identifying: Promise<void> | null = null;
  readonly #fetch: typeof fetch;
  #token: string;
  #signingIn: Promise<void> | null = null;
  /** undefined until a sign-in tells which line the server is of. */
  #authApi: AuthApi | undefined;
  /** undefined until the first claimNext tells whether the server has /api/fleet/claim-next. */
  #hasClaimNext: boolean | undefined;
  /** undefined until the first queue-form enqueue tells whether the server has /api/fleet/enqueue. */
  #hasEnqueue: boolean | undefined;
  /** undefined until the first heartbeat (complete) tells whether the server has /api/fleet/heartbeat (/complete). */
  #hasHeartbeat: boolean | undefined;
  #hasComplete: boolean | undefined;

  constructor(opts: FleetClientOptions) {
    if (!opts || typeof opts.url !== "string" || opts.url === "") {
      throw new TypeError("FleetClient: `url` is required (e.g. http://127.0.0.1:8090)");
    }
    const worker = opts.worker === undefined ? undefined : workerCredentials(opts.worker);
    if (worker !== undefined && (opts.email !== undefined || opts.password !== undefined || opts.token !== undefined)) {
      // One client, one identity: which one a call went out as must never be a guess.
      throw new TypeError("FleetClient: give admin/superuser credentials (`email`, `password`, `token`) or `worker`, not both");
    }
    const hasCredentials = typeof opts.email === "string" && typeof opts.password === "string";
    if (worker === undefined && !hasCredentials && !opts.token) {
      throw new TypeError("FleetClient: give admin/superuser `email` and `password`, an admin/superuser `token`, " +
        "or a worker identity's `worker: { identity, password }` or `worker: { token }`");
    }
    // No longer an option: a JS caller may still pass it, and a list of another collection would show jobs the server never claims.
    const collection: unknown = (opts as { collection?: unknown }).collection;
    if (collection !== undefined && collection !== JOBS_COLLECTION) {
      throw new TypeError(`FleetClient: the \`collection\` option is gone: the server always uses ${JOBS_COLLECTION}, ` +
        `so ${JSON.stringify(collection)} would list jobs it never claims; remove the option`);
    }
    this.url = opts.url.replace(/\/+$/, "");
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#email = hasCredentials ? opts.email : undefined;
    this.#password = hasCredentials ? opts.password : undefined;
    this.#isWorker = worker !== undefined;
    this.#worker = worker !== undefined && "identity" in worker ? worker : undefined;
    // Looked up per call, so a fetch installed later (or stubbed in a test) is the one used.
    this.#fetch = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#token = (worker !== undefined && "token" in worker ? worker.token : opts.token) ?? "";
  }

  /** Whether this client signs in as a worker identity (`worker` option), not as an admin/superuser. */
  get isWorkerIdentity(): boolean {
    return this.#isWorker;
  }

  /**
   * The worker identity this client calls as: `{ id, name, queues,
   * canEnqueue }` of its `fleet_workers` record, as the last sign-in
   * answered it (a worker token only: as PocketBase's auth-refresh answers it,
   * asked once, whose fresh token the client then uses). Signs in first when
   * needed. null for an admin client.
   */
  async identity(req?: RequestOptions): Promise<WorkerIdentity | null> {
    if (!this.#isWorker) return null;
    if (this.#identity !== undefined) return this.#identity;
    if (this.#token === "") {
      await this.authenticate(req);
    } else {
      // A token from elsewhere: its record is PocketBase's to tell (the token itself carries only the id).
      this.#identifying ??= this.#call("identity", { method: "POST", path: WORKER_AUTH_PATHS.refresh }, req)
        .then((body) => this.#adoptWorkerAuth("identity", body))
        .finally(() => {
          this.#identifying = null;
        });
      await this.#identifying;
    }
    if (this.#identity === undefined) throw new FleetProtocolError("identity", "no worker identity after signing in", {});
    return this.#identity;
  }

  /** The admin/superuser token in use, or the worker identity's ("" before the first sign-in). */
  get token(): string {
    return this.#token;
  }

  /**
   * Uses this token from the next request on (say, a token-only client's
   * renewed token). A client with credentials still signs in again when the
   * server refuses it.
   */
  setToken(token: string): void {
    if (typeof token !== "string") throw new TypeError("FleetClient: setToken needs a string");
    this.#token = token;
    // A worker token may be of another record: identity() asks again.
    this.#identity = undefined;
  }

  /**
   * Which sign-in the server has: "superusers" (PocketBase 0.23+) or "admins"
   * (0.22); undefined until the first sign-in (a token-only client never signs in).
   */
  get authApi(): AuthApi | undefined {
    return this.#authApi;
  }

  /** Whether the server has /api/fleet/claim-next (undefined: not probed yet). */
  get hasClaimNext(): boolean | undefined {
    return this.#hasClaimNext;
  }

  /** Whether the server has /api/fleet/enqueue, the queue's (undefined: not probed yet). */
  get hasEnqueue(): boolean | undefined {
    return this.#hasEnqueue;
  }

  /** Whether the server has /api/fleet/heartbeat (undefined: not called yet, or no answer yet). */
  get hasHeartbeat(): boolean | undefined {
    return this.#hasHeartbeat;
  }

  /** Whether the server has /api/fleet/complete (undefined: not called yet, or no answer yet). */
  get hasComplete(): boolean | undefined {
    return this.#hasComplete;
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
    const worker = this.#worker;
    if (worker === undefined && (this.#email === undefined || this.#password === undefined)) {
      return Promise.reject(new FleetAuthError("authenticate", this.#isWorker
        ? "this client has a worker token but no worker password to sign in with"
        : "this client has a token but no credentials to sign in with", {}));
    }
    if (this.#signingIn === null) {
      const signIn = worker !== undefined
        ? this.#signInWorker(worker.identity, worker.password, req)
        : this.#signIn(this.#email as string, this.#password as string, req);
      this.#signingIn = signIn.finally(() => {
        this.#signingIn = null;
      });
    }
    return this.#signingIn;
  }

  /**
   * A worker identity's sign-in: PocketBase's own auth-with-password of
   * `fleet_workers`, the same path on both lines. Wrong name or password is a
   * 400 on both; on 0.23+ a disabled identity is refused too (its authRule:
   * 403), on 0.22 it signs in and its first fleet call is a 401.
   */
  async #signInWorker(identity: string, password: string, req?: RequestOptions): Promise<void> {
    let body: unknown;
    try {
      body = await this.#once("authenticate", {
        method: "POST", path: WORKER_AUTH_PATHS.password, body: { identity, password }, anonymous: true,
      }, req);
    } catch (err) {
      if (!(err instanceof FleetHttpError)) throw err;
      const who = `worker identity ${JSON.stringify(identity)}`;
      if (err.status === 400 || err.status === 401) {
        throw new FleetAuthError("authenticate", `${messageOf(err.body)} (the ${who}'s name or password was refused)`, err.body, {
          cause: err, status: err.status,
        });
      }
      if (err.status === 403) {
        throw new FleetAuthError("authenticate", `${messageOf(err.body)} (the ${who} may not sign in: is it disabled?)`, err.body, {
          cause: err, status: 403,
        });
      }
      if (err.status === 404) {
        throw new FleetHttpError("authenticate", 404, `${this.url} has no ${WORKERS_COLLECTION} collection (${messageOf(err.body)}): ` +
          "is this a pb-fleet server with worker identities, and are its migrations applied?", err.body, { cause: err });
      }
      throw err;
    }
    this.#adoptWorkerAuth("authenticate", body);
  }

  /** A worker's auth answer `{ token, record }` (sign-in or refresh): its token from now on, and its identity. */
  #adoptWorkerAuth(op: string, body: unknown): void {
    if (!isObject(body) || typeof body["token"] !== "string" || body["token"] === "") {
      throw new FleetProtocolError(op, "answer has no `token`", body);
    }
    const record = body["record"];
    if (!isRecordLike(record) || record["id"] === "") throw new FleetProtocolError(op, "answer has no `record` with an `id`", body);
    this.#token = body["token"];
    this.#identity = toWorkerIdentity(record);
  }

  async #signIn(email: string, password: string, req?: RequestOptions): Promise<void> {
    const order: AuthApi[] = this.#authApi === "admins" ? ["admins", "superusers"] : ["superusers", "admins"];
    let missing: FleetHttpError | undefined;
    for (const api of order) {
      let body: unknown;
      try {
        body = await this.#once("authenticate", {
          method: "POST", path: AUTH_PATHS[api], body: { identity: email, password }, anonymous: true,
        }, req);
      } catch (err) {
        if (isMissingEndpoint(err)) {
          missing = err as FleetHttpError;
          continue; // the other line's endpoint
        }
        // Any other HTTP answer (400 for wrong credentials, ...) says the endpoint exists.
        if (err instanceof FleetHttpError) this.#authApi = api;
        // Both lines answer wrong credentials with a 400: the credentials are
        // refused, which signing in again cannot cure.
        if (err instanceof FleetHttpError && err.status === 400) {
          throw new FleetAuthError("authenticate", `${messageOf(err.body)} ` +
            `(the ${api === "admins" ? "admin" : "superuser"} email or password was refused)`, err.body, { cause: err, status: 400 });
        }
        throw err;
      }
      this.#authApi = api;
      if (!isObject(body) || typeof body["token"] !== "string" || body["token"] === "") {
        throw new FleetProtocolError("authenticate", "answer has no `token`", body);
      }
      this.#token = body["token"];
      return;
    }
    throw new FleetHttpError("authenticate", 404,
      `neither ${AUTH_PATHS.superusers} (PocketBase 0.23+) nor ${AUTH_PATHS.admins} (0.22) exists at ${this.url}: ` +
      "is this the base URL of a PocketBase server?", missing?.body ?? {}, { cause: missing });
  }

  // ---- the compare-and-set endpoints -------------------------------------------------

  /**
   * Claims one job by id. A transient failure (timeout, lost connection, 5xx) is
   * retried once: if the first attempt did commit, the retry is answered
   * alreadyHeld, which is a win like any other.
   */
  async claim(jobId: string, workerId: string, leaseSeconds?: number, req?: RequestOptions): Promise<ClaimResult> {
    const body = await this.#retryOnce(() =>
      this.#post("claim", "/api/fleet/claim", { jobId, workerId, leaseSeconds } satisfies ClaimRequest, req));
    return parseClaim("claim", body);
  }

  /**
   * Extends the lease (only the holder, only while it is live). Retried once on
   * a transient failure (a repeated renew is harmless). `req.progress`: JSON of
   * at most MAX_PROGRESS_BYTES stored with a successful renew (TypeError before
   * any request when larger). A refusal may say why: `reason: "timed_out"`
   * when the holder's attempt has passed its deadline (docs/flow-control.md "Timeouts");
   * a reason the client does not know is left out.
   */
  async renew(
    jobId: string, workerId: string, leaseSeconds?: number, leaseToken?: string, req?: RenewOptions,
  ): Promise<RenewResponse> {
    const progress = req?.progress ?? undefined;
    checkProgress("renew", progress);
    const body = await this.#retryOnce(() =>
      this.#post("renew", "/api/fleet/renew", { jobId, workerId, leaseSeconds, leaseToken, progress } satisfies RenewRequest, req));
    if (!isObject(body) || typeof body["renewed"] !== "boolean" || (body["renewed"] && !isJobView(body["job"]))) {
      throw new FleetProtocolError("renew", "answer has no boolean `renewed` (and `job` when true)", body);
    }
    return body["renewed"] ? body as RenewResponse : renewRefused(body);
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
  async release(
    jobId: string, workerId: string, status: ReleaseTarget, leaseToken?: string, req?: ReleaseOptions,
  ): Promise<ReleaseResponse> {
    const result = req?.result ?? undefined;
    const error = req?.error ?? undefined;
    const rateLimitedFor = req?.rateLimitedFor;
    checkReleaseFields("release", status, { result, error, rateLimitedFor });
    const body = await this.#retryOnce(() =>
      this.#post("release", "/api/fleet/release", {
        jobId, workerId, status, leaseToken, result, error, rateLimitedFor,
      } satisfies ReleaseRequest, req));
    if (!isObject(body) || typeof body["released"] !== "boolean") {
      throw new FleetProtocolError("release", "answer has no boolean `released`", body);
    }
    if (body["released"] ? !isJobView(body["job"]) : !(RELEASE_REFUSALS as readonly unknown[]).includes(body["reason"])) {
      throw new FleetProtocolError("release", "answer has neither a `job` nor a known refusal `reason`", body);
    }
    return body as ReleaseResponse;
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
  async heartbeat(workerId: string, leases: readonly HeartbeatItem[], opts: HeartbeatOptions = {}): Promise<HeartbeatResponse> {
    const op = "heartbeat";
    checkBatchWorkerId(op, workerId);
    checkLeaseSeconds(op, opts.leaseSeconds);
    const items = checkBatchList(op, "leases", leases).map((lease, i) => toHeartbeatItem(`${op}: leases[${i}]`, lease));
    const results: HeartbeatResult[] = [];
    for (let start = 0; start < items.length; start += MAX_BATCH_ITEMS) {
      const chunk = items.slice(start, start + MAX_BATCH_ITEMS);
      const body = await this.#batchCall(op, start, {
        workerId, leaseSeconds: opts.leaseSeconds, leases: chunk,
      } satisfies HeartbeatRequest, opts);
      if (!isObject(body) || !Array.isArray(body["results"]) || body["results"].length !== chunk.length ||
          !body["results"].every((r: unknown, i) => isObject(r) && r["jobId"] === chunk[i]?.jobId && typeof r["renewed"] === "boolean")) {
        throw new FleetProtocolError(op, `answer has no \`results\` array of ${chunk.length} { jobId, renewed } in request order`, body);
      }
      results.push(...(body["results"] as Array<Record<string, unknown>>).map((r): HeartbeatResult =>
        r["renewed"] ? r as unknown as HeartbeatResult : { jobId: r["jobId"] as string, ...renewRefused(r) }));
    }
    return { results };
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
  async complete(workerId: string, releases: readonly CompleteItem[], req?: RequestOptions): Promise<CompleteResponse> {
    const op = "complete";
    checkBatchWorkerId(op, workerId);
    const items = checkBatchList(op, "releases", releases).map((release, i) => toCompleteItem(`${op}: releases[${i}]`, release));
    const results: CompleteResult[] = [];
    for (let start = 0; start < items.length; start += MAX_BATCH_ITEMS) {
      const chunk = items.slice(start, start + MAX_BATCH_ITEMS);
      const body = await this.#batchCall(op, start, { workerId, releases: chunk } satisfies CompleteRequest, req);
      if (!isObject(body) || !Array.isArray(body["results"]) || body["results"].length !== chunk.length ||
          !body["results"].every((r: unknown, i) => isObject(r) && r["jobId"] === chunk[i]?.jobId && (
            r["released"] === true ||
            (r["released"] === false && (RELEASE_REFUSALS as readonly unknown[]).includes(r["reason"]))))) {
        throw new FleetProtocolError(op, `answer has no \`results\` array of ${chunk.length} { jobId, released, reason? } ` +
          "in request order (a known refusal `reason` when released is false)", body);
      }
      results.push(...(body["results"] as CompleteResult[]));
    }
    return { results };
  }

  /** One chunk of heartbeat or complete, retried once; a 404 to the first chunk says the server has no such endpoint. */
  async #batchCall(op: "heartbeat" | "complete", start: number, body: HeartbeatRequest | CompleteRequest, req?: RequestOptions): Promise<unknown> {
    const path = `/api/fleet/${op}`;
    let answer: unknown;
    try {
      answer = await this.#retryOnce(() => this.#post(op, path, body as unknown as Record<string, unknown>, req));
    } catch (err) {
      // Only a 404 before the server ever answered one is a probe: a server
      // that has answered a chunk has the endpoint.
      const known = op === "heartbeat" ? this.#hasHeartbeat : this.#hasComplete;
      if (start > 0 || known === true || !isMissingEndpoint(err)) throw err;
      if (op === "heartbeat") this.#hasHeartbeat = false;
      else this.#hasComplete = false;
      const instead = op === "heartbeat" ? "renew" : "release";
      throw new FleetHttpError(op, 404, `this server has no POST ${path} (a pb-fleet from before it): ${instead} each job instead`,
        (err as FleetHttpError).body, { cause: err });
    }
    if (op === "heartbeat") this.#hasHeartbeat = true;
    else this.#hasComplete = true;
    return answer;
  }

  /**
   * Claims up to `limit` of the oldest claimable jobs. Uses POST
   * /api/fleet/claim-next (one transaction) when the server has it; a server
   * without it answers 404 once, and from then on the client lists claimable
   * rows and claims them one by one (losing some races to other workers).
   */
  async claimNext(opts: ClaimNextOptions, req?: RequestOptions): Promise<HeldJob[]> {
    const queue = checkClaimQueue("claimNext", opts.queue);
    if (this.#hasClaimNext !== false) {
      try {
        const body = await this.#post("claimNext", "/api/fleet/claim-next", {
          workerId: opts.workerId,
          leaseSeconds: opts.leaseSeconds,
          limit: opts.limit,
          probeKeyPrefix: opts.probeKeyPrefix || undefined,
          queue,
        } satisfies ClaimNextRequest, req);
        if (!isObject(body) || !Array.isArray(body["jobs"]) ||
            !body["jobs"].every((j: unknown) => isObject(j) && isJobView(j["job"]))) {
          throw new FleetProtocolError("claimNext", "answer has no `jobs` array of { job, leaseToken }", body);
        }
        this.#hasClaimNext = true;
        return (body as ClaimNextResponse).jobs.map((j) => ({ job: j.job, leaseToken: j.leaseToken || undefined, alreadyHeld: false }));
      } catch (err) {
        if (!(this.#hasClaimNext === undefined && isMissingEndpoint(err))) throw err;
        this.#hasClaimNext = false;
      }
    }
    // Listing cannot filter by queue: a server without claim-next has no queues.
    if (queue !== undefined) {
      throw new FleetHttpError("claimNext", 404, "this server has no POST /api/fleet/claim-next (a pb-fleet from before it), " +
        "which `queue` needs; nothing was claimed", {});
    }
    return this.#claimNextByList(opts, req);
  }

  async #claimNextByList(opts: ClaimNextOptions, req?: RequestOptions): Promise<HeldJob[]> {
    const limit = Math.max(1, Math.min(opts.limit ?? 1, MAX_CLAIM_NEXT_LIMIT));
    // A window wider than `limit`, tried in random order: workers polling at
    // once then mostly try different rows instead of all racing for the oldest.
    const candidates = shuffle(await this.listClaimable({ limit: limit * 4 + 4, probeKeyPrefix: opts.probeKeyPrefix }, req));
    const won: HeldJob[] = [];
    for (const row of candidates) {
      if (won.length >= limit) break;
      let answer: ClaimResult;
      try {
        answer = await this.claim(row.id, opts.workerId, opts.leaseSeconds, req);
      } catch (err) {
        // Jobs already won are ours under live leases: dropping them would leave
        // them unworked until the leases lapse. Hand them over and stop (the
        // server is failing); a lasting error shows again on the next call.
        if (won.length === 0) throw err;
        break;
      }
      if (answer.claimed) won.push({ job: answer.job, leaseToken: answer.leaseToken, alreadyHeld: answer.alreadyHeld });
    }
    return won;
  }

  /**
   * POST /api/fleet/sweep: the server re-queues every held job of one batch
   * whose lease has expired, or fails it at its orphan cap
   * (PB_FLEET_MAX_ORPHANS), in one transaction, and says what it did to each.
   * A server without it answers 404 (FleetHttpError). Not retried: a failed
   * sweep changed nothing, and the next sweep does the same work.
   */
  async sweep(opts: SweepRequest = {}, req?: RequestOptions): Promise<SweepResponse> {
    const body = await this.#post("sweep", "/api/fleet/sweep", {
      probeKeyPrefix: opts.probeKeyPrefix || undefined,
    } satisfies SweepRequest, req);
    if (!isObject(body) || typeof body["requeued"] !== "number" || typeof body["gaveUp"] !== "number" ||
        !Array.isArray(body["jobs"]) || !body["jobs"].every(isSweptJob)) {
      throw new FleetProtocolError("sweep", "answer lacks the counts `requeued` and `gaveUp`, or a `jobs` array of " +
        "{ id, outcome, claimedBy, consecutiveOrphanCount }", body);
    }
    return body as SweepResponse;
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
  async enqueue(probeKey: string, options?: EnqueueCallOptions): Promise<JobRecord | EnqueuedJob> {
    if (!hasQueueOptions(options)) {
      this.#refuseRecordApiEnqueue("enqueue", "enqueue(probeKey, { queue: \"default\" })");
      return this.#createRecord(probeKey, options);
    }
    const item = toEnqueueItem("enqueue", { ...options, probeKey }, REQUEST_OPTION_NAMES);
    const [job] = await this.#enqueueItems("enqueue", [item], options ?? {});
    return job as EnqueuedJob;
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
  async enqueueMany(
    list: readonly (string | EnqueueJob)[], opts: EnqueueManyOptions = {},
  ): Promise<JobRecord[] | EnqueuedJob[]> {
    if (!Array.isArray(list)) throw new TypeError("enqueueMany: give an array of probe keys, or of { probeKey, ...options }");
    if (list.every((entry) => typeof entry === "string")) {
      this.#refuseRecordApiEnqueue("enqueueMany", "enqueueMany(keys.map((probeKey) => ({ probeKey })))");
      return this.#createRecords(list as readonly string[], opts);
    }
    const items = list.map((job, i) => toEnqueueItem(`enqueueMany: jobs[${i}]`, job));
    return this.#enqueueItems("enqueueMany", items, opts);
  }

  /** Checked items through POST /api/fleet/enqueue, MAX_ENQUEUE_JOBS a request; the record API for bare keys on a server without it. */
  async #enqueueItems(op: string, items: readonly EnqueueItem[], opts: EnqueueManyOptions): Promise<EnqueuedJob[]> {
    const needServer = items.filter(needsQueueServer);
    // Known to have no such endpoint, and nothing here needs it. (Anything that
    // does asks again: the server may have been upgraded since.)
    if (this.#hasEnqueue === false && needServer.length === 0) return this.#createBare(items, opts);
    const jobs: EnqueuedJob[] = [];
    for (let start = 0; start < items.length; start += MAX_ENQUEUE_JOBS) {
      const chunk = items.slice(start, start + MAX_ENQUEUE_JOBS);
      let body: unknown;
      try {
        body = await this.#post(op, "/api/fleet/enqueue", { jobs: chunk } satisfies EnqueueRequest, opts);
      } catch (err) {
        // Only an answer before the server ever took an enqueue is a probe; a
        // 404 can only come from the first chunk (a server that answers one
        // chunk has the endpoint).
        if (this.#hasEnqueue === true || start > 0 || !isMissingEndpoint(err)) throw err;
        this.#hasEnqueue = false;
        if (needServer.length === 0) return this.#createBare(items, opts);
        const used = [...new Set(needServer.flatMap((item) => Object.keys(item).filter((k) => k !== "probeKey")))];
        const httpError = err as FleetHttpError;
        throw new FleetHttpError(op, 404,
          `this server has no POST /api/fleet/enqueue (a pb-fleet without the queue), which ${used.map((k) => `\`${k}\``).join(", ")} ` +
          "need; nothing was enqueued (a bare probe key, without options, can still be enqueued)", httpError.body, { cause: err });
      }
      this.#hasEnqueue = true;
      if (!isObject(body) || !Array.isArray(body["jobs"]) || body["jobs"].length !== chunk.length || !body["jobs"].every(isEnqueuedJob)) {
        throw new FleetProtocolError(op, `answer has no \`jobs\` array of ${chunk.length} { id, probeKey, created }`, body);
      }
      jobs.push(...(body["jobs"] as EnqueuedJob[]));
    }
    return jobs;
  }

  /**
   * The bare forms create rows through the record API, which is an admin's
   * only: a worker identity would get a 403 that says nothing of enqueue.
   */
  #refuseRecordApiEnqueue(op: string, instead: string): void {
    if (!this.#isWorker) return;
    throw new TypeError(`${op}: a worker identity cannot create rows through the record API (admins only); ` +
      `enqueue through POST /api/fleet/enqueue with the job form instead, e.g. ${instead}`);
  }

  /** Bare probe keys through the record API (a server without the queue), answered as the queue's enqueue answers. */
  async #createBare(items: readonly EnqueueItem[], opts: EnqueueManyOptions): Promise<EnqueuedJob[]> {
    const rows = await this.#createRecords(items.map((item) => item.probeKey), opts);
    return rows.map((row, i) => ({ id: row.id, probeKey: (items[i] as EnqueueItem).probeKey, created: true }));
  }

  /**
   * Creates a pending job (version 0, counters 0) through the record API. Not
   * retried on a timeout: that could create it twice. It asks for the queue's
   * attempt cap, DEFAULT_MAX_ATTEMPTS, as the queue's enqueue gives a job
   * without one: the field's own default, 0, is "no cap", which a Worker
   * treats as "never retry" (retrying without a cap could run forever). A
   * server without the queue has no such field and ignores it.
   */
  async #createRecord(probeKey: string, req?: RequestOptions): Promise<JobRecord> {
    const body = await this.#call("enqueue", {
      method: "POST",
      path: this.#recordsPath(),
      body: {
        probe_key: probeKey, status: "pending", claimed_by: "", version: 0, reclaim_count: 0, consecutive_orphan_count: 0,
        max_attempts: DEFAULT_MAX_ATTEMPTS,
      },
    }, req);
    return asRecord("enqueue", body);
  }

  /**
   * Creates many pending jobs through the record API, `concurrency` requests at
   * a time (one request a job: PocketBase 0.22 has no batch API, and 0.23+
   * ships its own turned off). Rejects with the first error once the requests
   * in flight have settled; jobs created before it stay.
   */
  async #createRecords(probeKeys: readonly string[], opts: EnqueueManyOptions): Promise<JobRecord[]> {
    const concurrency = Math.max(1, opts.concurrency ?? 8);
    const rows: JobRecord[] = new Array(probeKeys.length);
    let next = 0;
    let failure: unknown = null;
    const lane = async (): Promise<void> => {
      while (failure === null && next < probeKeys.length) {
        const i = next++;
        try {
          rows[i] = await this.#createRecord(probeKeys[i] as string, opts);
        } catch (err) {
          failure ??= err;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, probeKeys.length) }, lane));
    if (failure !== null) throw failure;
    return rows;
  }

  /**
   * POST /api/fleet/cancel: a pending, claimed or running job becomes
   * `cancelled` (terminal; its holder's next renew is refused, which aborts
   * the handler of a Worker, and its release is refused). `{ cancelled: false }`
   * for a job in any other state (or unknown). Not retried: a repeat of a
   * committed cancel would answer cancelled:false. A server without the queue
   * answers 404 (FleetHttpError).
   */
  async cancel(jobId: string, req?: RequestOptions): Promise<CancelResponse> {
    const body = await this.#post("cancel", "/api/fleet/cancel", { jobId } satisfies JobIdRequest, req);
    if (!isObject(body) || typeof body["cancelled"] !== "boolean" || (body["cancelled"] && !isJobView(body["job"]))) {
      throw new FleetProtocolError("cancel", "answer has no boolean `cancelled` (and `job` when true)", body);
    }
    return body as CancelResponse;
  }

  /**
   * POST /api/fleet/retry: a failed (dead-lettered included) or cancelled job
   * goes back to pending, due now, with its attempts reset. `{ retried: false }`
   * for a job in any other state; `reason: "unique_key_taken"` when its
   * uniqueKey now belongs to another live job. Not retried (a repeat would
   * answer retried:false). A server without the queue answers 404 (FleetHttpError).
   */
  async retry(jobId: string, req?: RequestOptions): Promise<RetryResponse> {
    const body = await this.#post("retry", "/api/fleet/retry", { jobId } satisfies JobIdRequest, req);
    if (!isObject(body) || typeof body["retried"] !== "boolean" ||
        (body["retried"] ? !isJobView(body["job"])
          : body["reason"] !== undefined && !(RETRY_REFUSALS as readonly unknown[]).includes(body["reason"]))) {
      throw new FleetProtocolError("retry", "answer has no boolean `retried` (with `job` when true, a known `reason` or none when false)", body);
    }
    return body as RetryResponse;
  }

  // ---- the record API ----------------------------------------------------------------

  /** Writes the result JSON of a job. Callers write only after their own terminal release committed. */
  async writeResult(jobId: string, result: unknown, req?: RequestOptions): Promise<void> {
    await this.#call("writeResult", {
      method: "PATCH", path: this.#recordsPath(jobId), body: { result: result === undefined ? null : result },
    }, req);
  }

  async getJob(jobId: string, req?: RequestOptions): Promise<JobRecord> {
    return asRecord("getJob", await this.#call("getJob", { method: "GET", path: this.#recordsPath(jobId) }, req));
  }

  /**
   * Claimable rows, oldest first: pending and due (run_at empty or come), or
   * claimed/running with an expired lease (by this machine's clock). Flow
   * control (paused queues, limits) is not judged.
   */
  async listClaimable(opts: ListOptions = {}, req?: RequestOptions): Promise<JobRecord[]> {
    return this.#list("listClaimable", claimableRecordFilter(Date.now()), "created", opts, req);
  }

  /** claimed/running rows whose lease has expired (the sweeper's work), the longest-expired first. */
  async listExpiredLeases(opts: ListOptions = {}, req?: RequestOptions): Promise<JobRecord[]> {
    return this.#list("listExpiredLeases", expiredLeaseRecordFilter(Date.now()), "lease_expires_at", opts, req);
  }

  /**
   * Rows of `probe_jobs` in any state, oldest first: every row of a prefix, of
   * some statuses, or up to `limit` of them (the harness's view of a run; the
   * fleet itself never needs it). Pages through the record API, 500 rows a
   * request; each page has the client's timeout.
   */
  async listJobs(query: JobQuery = {}, req?: RequestOptions): Promise<JobRecord[]> {
    const prefix = query.probeKeyPrefix ?? "";
    const statuses: readonly JobStatus[] = query.status === undefined ? [] : typeof query.status === "string" ? [query.status] : query.status;
    if (query.status !== undefined && statuses.length === 0) return [];
    const wanted = query.limit === undefined ? Infinity : Math.max(1, Math.floor(query.limit));
    const terms: string[] = [];
    const params: Record<string, string> = {};
    if (statuses.length > 0) {
      terms.push(`(${statuses.map((status, i) => {
        params[`status${i}`] = status;
        return `status = {:status${i}}`;
      }).join(" || ")})`);
    }
    if (prefix) {
      terms.push("probe_key ~ {:prefix}");
      params["prefix"] = likePrefix(prefix);
    }
    const filter = pbFilter(terms.join(" && "), params);
    const rows: JobRecord[] = [];
    for (let page = 1; rows.length < wanted; page++) {
      const items = await this.#page("listJobs", filter, "created,id", page, MAX_LIST_LIMIT, req);
      for (const row of items) {
        // SQLite's LIKE ignores ASCII case; the prefix is meant exactly.
        if (rows.length < wanted && (!prefix || row.probe_key.startsWith(prefix))) rows.push(row);
      }
      if (items.length < MAX_LIST_LIMIT) break;
    }
    return rows;
  }

  async #list(op: string, filter: string, sort: string, opts: ListOptions, req?: RequestOptions): Promise<JobRecord[]> {
    const limit = Math.max(1, Math.min(opts.limit ?? 50, MAX_LIST_LIMIT));
    const prefix = opts.probeKeyPrefix ?? "";
    const expr = prefix ? pbFilter(`(${filter}) && probe_key ~ {:prefix}`, { prefix: likePrefix(prefix) }) : filter;
    const items = await this.#page(op, expr, sort, 1, limit, req);
    // SQLite's LIKE ignores ASCII case; the prefix is meant exactly.
    return prefix ? items.filter((r) => r.probe_key.startsWith(prefix)) : items;
  }

  /** One page of the record API's list (no total count: PocketBase skips that query). */
  async #page(op: string, filter: string, sort: string, page: number, perPage: number, req?: RequestOptions): Promise<JobRecord[]> {
    const query: Record<string, string> = { page: String(page), perPage: String(perPage), skipTotal: "true", sort };
    if (filter !== "") query["filter"] = filter;
    const body = await this.#call(op, { method: "GET", path: this.#recordsPath(), query }, req);
    if (!isObject(body) || !Array.isArray(body["items"]) || !body["items"].every(isRecordLike)) {
      throw new FleetProtocolError(op, "answer has no `items` array of records", body);
    }
    return body["items"] as JobRecord[];
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
  async setFlow(request: SetFlowRequest, req?: RequestOptions): Promise<FlowResponse["flow"]> {
    const body = toFlowRequest("setFlow", request);
    const answer = await this.#retryOnce(() => this.#post("setFlow", "/api/fleet/flow", { ...body }, req));
    if (!isFlowAnswer(answer, body)) {
      throw new FleetProtocolError("setFlow", "answer has no `flow` { queue | group, paused, concurrency, rateLimit, parkedUntil } " +
        "of the scope asked for", answer);
    }
    return answer.flow;
  }

  /**
   * GET /api/fleet/flow: each scope's settings and figures (`held`, `due`,
   * `claimsInWindow`). Without a filter, every queue that has settings or
   * unfinished jobs and every group that has settings; `{ queue }` answers at
   * most that queue (and no groups), `{ group }` at most that group (and no
   * queues), both: each list narrowed. The names are checked first (a
   * TypeError). Retried once on a transient failure.
   */
  async getFlow(filter?: FlowFilter, req?: RequestOptions): Promise<FlowStateResponse> {
    const query = toFlowQuery("getFlow", filter);
    const answer = await this.#retryOnce(() => this.#call("getFlow", {
      method: "GET", path: "/api/fleet/flow", ...(Object.keys(query).length > 0 ? { query } : {}),
    }, req));
    if (!isFlowStateAnswer(answer)) {
      throw new FleetProtocolError("getFlow", "answer has no `queues` and `groups` arrays of " +
        "{ name, paused, concurrency, rateLimit, parkedUntil, held, due, claimsInWindow }", answer);
    }
    return answer;
  }

  /** GET /api/fleet/stats, optionally of one probe_key prefix (a FleetHttpError 404 from a server without it). */
  async stats(opts: { probeKeyPrefix?: string } = {}, req?: RequestOptions): Promise<FleetStats> {
    const query = opts.probeKeyPrefix ? { probeKeyPrefix: opts.probeKeyPrefix } : undefined;
    const body = await this.#call("stats", { method: "GET", path: "/api/fleet/stats", ...(query ? { query } : {}) }, req);
    if (!isObject(body) || !isObject(body["counts"])) throw new FleetProtocolError("stats", "answer has no `counts`", body);
    return body as unknown as FleetStats;
  }

  // ---- transport ---------------------------------------------------------------------

  #recordsPath(id?: string): string {
    const base = `/api/collections/${encodeURIComponent(this.collection)}/records`;
    return id === undefined ? base : `${base}/${encodeURIComponent(id)}`;
  }

  #post(op: string, path: string, body: Record<string, unknown>, req?: RequestOptions): Promise<unknown> {
    return this.#call(op, { method: "POST", path, body: dropUndefined(body) }, req);
  }

  async #retryOnce<T>(attempt: () => Promise<T>): Promise<T> {
    try {
      return await attempt();
    } catch (err) {
      if (!isTransientError(err)) throw err;
      return attempt();
    }
  }

  /**
   * One authorized call: signs in first if needed; after a 401 or 403 (the
   * fleet endpoints answer 401 to a token they do not take, the record API 403
   * on both lines) signs in again and retries once. A worker identity's 403
   * (FleetForbiddenError) is what the identity may do, not its token: thrown
   * at once.
   */
  async #call(op: string, call: HttpCall, req?: RequestOptions): Promise<unknown> {
    const canSignIn = this.#email !== undefined || this.#worker !== undefined;
    if (this.#token === "" && canSignIn) await this.authenticate(req);
    const refused = this.#token;
    try {
      return await this.#once(op, call, req);
    } catch (err) {
      if (!(err instanceof FleetAuthError) || err instanceof FleetForbiddenError) throw err;
      if (!canSignIn) {
        const why = this.#isWorker ? "a worker token without a password: cannot sign in again" : "token-only client: cannot sign in again";
        throw new FleetAuthError(op, `${messageOf(err.body)} (${why})`, err.body, {
          cause: err, status: authStatus(err),
        });
      }
    }
    // A call that failed beside others shares their sign-in: when the token has
    // changed since this call went out, the new one is tried first.
    if (this.#token === refused) await this.authenticate(req);
    try {
      return await this.#once(op, call, req);
    } catch (err) {
      if (err instanceof FleetAuthError) {
        throw new FleetAuthError(op, `${messageOf(err.body)} (again, right after signing in)`, err.body, {
          cause: err, status: authStatus(err),
        });
      }
      throw err;
    }
  }

  /** One HTTP request, its answer as parsed JSON; anything but a 2xx with JSON is thrown as a typed error. */
  async #once(op: string, call: HttpCall, req?: RequestOptions): Promise<unknown> {
    const timeoutMs = req?.timeoutMs ?? this.timeoutMs;
    const timeout = AbortSignal.timeout(Math.max(1, timeoutMs));
    const signal = req?.signal ? AbortSignal.any([timeout, req.signal]) : timeout;
    const headers: Record<string, string> = { accept: "application/json" };
    if (call.body !== undefined) headers["content-type"] = "application/json";
    // Both lines take the bare token (a "Bearer " prefix is optional there).
    if (!call.anonymous && this.#token !== "") headers["authorization"] = this.#token;
    const query = call.query ? `?${new URLSearchParams(call.query)}` : "";
    let status: number;
    let text: string;
    try {
      const response = await this.#fetch(`${this.url}${call.path}${query}`, {
        method: call.method,
        headers,
        signal,
        ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
      });
      status = response.status;
      text = await response.text();
    } catch (err) {
      if (req?.signal?.aborted) throw new FleetAbortError(op, { cause: err });
      if (timeout.aborted) throw new FleetTimeoutError(op, timeoutMs, { cause: err });
      throw new FleetNetworkError(op, networkMessage(err), { cause: err });
    }
    const parsed = parseJson(text);
    if (status >= 200 && status < 300) {
      if (!parsed.ok) throw new FleetProtocolError(op, `answer is not JSON: ${snippet(text)}`, text);
      return parsed.value;
    }
    // A body that is not JSON (say, a proxy's error page) is kept as its text.
    const body = parsed.ok ? parsed.value : text === "" ? {} : text;
    // A worker identity's token was taken, but it may not do this: no sign-in can change that.
    if (status === 403 && this.#isWorker) throw new FleetForbiddenError(op, messageOf(body), body);
    // Every other call here needs an admin/superuser: 401 or 403 means the token was not taken as one.
    if (status === 401 || status === 403) {
      throw new FleetAuthError(op, messageOf(body), body, { status });
    }
    throw new FleetHttpError(op, status, messageOf(body), body);
  }
}

function parseClaim(op: string, body: unknown): ClaimResult {
  if (!isObject(body) || typeof body["claimed"] !== "boolean") {
    throw new FleetProtocolError(op, "answer has no boolean `claimed`", body);
  }
  if (!body["claimed"]) {
    const reason = body["reason"];
    return (CLAIM_REFUSALS as readonly unknown[]).includes(reason) ? { claimed: false, reason: reason as ClaimRefusal } : { claimed: false };
  }
  if (!isJobView(body["job"])) throw new FleetProtocolError(op, "claimed:true without a `job`", body);
  const token = body["leaseToken"];
  return {
    claimed: true,
    job: body["job"],
    leaseToken: typeof token === "string" && token !== "" ? token : undefined,
    alreadyHeld: body["alreadyHeld"] === true,
  };
}

/** A refused renew (or heartbeat item): its reason when the client knows it, else none. */
function renewRefused(body: Record<string, unknown>): { renewed: false; reason?: RenewRefusal } {
  const reason = body["reason"];
  return (RENEW_REFUSALS as readonly unknown[]).includes(reason) ? { renewed: false, reason: reason as RenewRefusal } : { renewed: false };
}

function asRecord(op: string, body: unknown): JobRecord {
  if (!isRecordLike(body)) throw new FleetProtocolError(op, "answer is not a record (no string `id`)", body);
  return body as unknown as JobRecord;
}

/** What identity() answers of a `fleet_workers` record (a `queues` that is not an array of names reads as none). */
function toWorkerIdentity(record: Record<string, any>): WorkerIdentity {
  const queues: unknown = record[WORKER_FIELDS.queues];
  const name: unknown = record[WORKER_FIELDS.name];
  return {
    id: record["id"] as string,
    name: typeof name === "string" ? name : "",
    queues: Array.isArray(queues) ? queues.filter((q): q is string => typeof q === "string") : [],
    canEnqueue: record[WORKER_FIELDS.canEnqueue] === true,
  };
}

/** The `worker` option, checked: a name and a password, or a token (TypeError otherwise). */
function workerCredentials(worker: unknown): WorkerCredentials {
  if (isObject(worker)) {
    const { identity, password, token } = worker;
    const given = (v: unknown) => v !== undefined;
    if (!given(token) && typeof identity === "string" && identity !== "" && typeof password === "string" && password !== "") {
      return { identity, password };
    }
    if (!given(identity) && !given(password) && typeof token === "string" && token !== "") return { token };
  }
  throw new TypeError("FleetClient: `worker` must be { identity, password } (a worker identity's name and password) " +
    "or { token } (a worker identity's token), each a non-empty string");
}

function authStatus(err: FleetAuthError): 400 | 401 | 403 {
  return err.status === 403 ? 403 : err.status === 400 ? 400 : 401;
}


/** A LIKE pattern matching values that start with `prefix` (PocketBase escapes with `\`). */
function likePrefix(prefix: string): string {
  return prefix.replace(/[\\%_]/g, (c) => "\\" + c) + "%";
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isRecordLike(value: unknown): value is Record<string, any> {
  return isObject(value) && typeof value["id"] === "string";
}

function isJobView(value: unknown): value is JobView {
  return isObject(value) && typeof value["id"] === "string" && typeof value["status"] === "string";
}

function isEnqueuedJob(value: unknown): value is EnqueuedJob {
  return isObject(value) && typeof value["id"] === "string" && value["id"] !== "" &&
    typeof value["probeKey"] === "string" && typeof value["created"] === "boolean";
}

function isSweptJob(value: unknown): value is SweptJob {
  return isObject(value) && typeof value["id"] === "string" && typeof value["claimedBy"] === "string" &&
    typeof value["consecutiveOrphanCount"] === "number" &&
    typeof value["outcome"] === "string" && Object.hasOwn(SWEEP_OUTCOMES, value["outcome"]);
}

function dropUndefined(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === "") return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function snippet(text: string): string {
  if (text === "") return "(empty)";
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}...` : flat;
}

/** The protocol's `{ error }`, or PocketBase's `{ message, data }` with its field errors, or a text answer's start. */
function messageOf(body: unknown): string {
  if (typeof body === "string") return snippet(body);
  if (!isObject(body)) return "no message";
  if (typeof body["error"] === "string") return body["error"];
  let text = typeof body["message"] === "string" ? body["message"] : "no message";
  const data = body["data"];
  if (isObject(data) && Object.keys(data).length > 0) {
    const fields = Object.entries(data)
      .map(([field, e]) => `${field}: ${isObject(e) && typeof e["message"] === "string" ? e["message"] : JSON.stringify(e)}`);
    text += ` (${fields.join("; ")})`;
  }
  return text;
}

/** fetch's own message with the system's code when it has one ("fetch failed (ECONNREFUSED)"). */
function networkMessage(err: unknown): string {
  const cause = isObject(err) ? err["cause"] : undefined;
  const code = isObject(cause) && typeof cause["code"] === "string" ? cause["code"] : undefined;
  const message = err instanceof Error ? err.message : String(err);
  return code ? `${message} (${code})` : message;
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}
