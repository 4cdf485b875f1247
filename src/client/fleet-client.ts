/**
 * FleetClient: the harness's typed access to a pb-fleet PocketBase 0.22, on the
 * PocketBase JS SDK. Claims, renews, releases and sweeps go to the
 * /api/fleet/* compare-and-set endpoints; enqueueing, listing and result writes
 * use the record API of `probe_jobs` (admin only).
 */
import PocketBase, { BaseAuthStore, ClientResponseError } from "pocketbase";
import { formatPbDate } from "../lib/lease.js";
import {
  RELEASE_REFUSALS,
  type ClaimNextRequest,
  type ClaimNextResponse,
  type ClaimRequest,
  type ClaimResponse,
  type FleetStats,
  type JobStatus,
  type JobView,
  type ReleaseRequest,
  type ReleaseResponse,
  type ReleaseTarget,
  type RenewRequest,
  type RenewResponse,
  type SweepRequest,
  type SweepResponse,
  type SweptJob,
} from "../lib/types.js";
import { MAX_CLAIM_NEXT_LIMIT } from "../lib/validate.js";
import {
  FleetAbortError,
  FleetAuthError,
  FleetHttpError,
  FleetNetworkError,
  FleetProtocolError,
  FleetTimeoutError,
  isMissingEndpoint,
  isTransientError,
} from "./errors.js";

export const DEFAULT_COLLECTION = "probe_jobs";
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface FleetClientOptions {
  /** PocketBase base URL, e.g. http://127.0.0.1:8090 */
  url: string;
  /** Admin credentials: the client signs in lazily and again after a 401. */
  email?: string;
  password?: string;
  /** An admin token instead of credentials (a 401 then cannot be cured: it is thrown). */
  token?: string;
  /** Per-request timeout, ms (default 10 000). Every call can override it. */
  timeoutMs?: number;
  /** Collection name (default "probe_jobs"). */
  collection?: string;
  /** fetch implementation (default: the global one); tests pass a fake. */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  /** Overrides the client's timeout for this call. */
  timeoutMs?: number;
  /** Cancels this call (it then rejects with FleetAbortError). */
  signal?: AbortSignal;
}

/** A `probe_jobs` row as the record API returns it. */
export interface JobRecord {
  id: string;
  created: string;
  updated: string;
  probe_key: string;
  status: JobStatus;
  claimed_by: string;
  lease_expires_at: string;
  version: number;
  claimed_at: string;
  finished_at: string;
  requeued_at: string;
  reclaim_count: number;
  consecutive_orphan_count: number;
  result: unknown;
  /** Present once the fencing migration is applied. */
  lease_token?: string;
}

/** A job this worker now holds. */
export interface HeldJob {
  job: JobView;
  /** Fencing token of the claim; undefined from a server without fencing. */
  leaseToken: string | undefined;
  /** The server says this worker already held it (a retried claim whose first answer was lost). */
  alreadyHeld: boolean;
}
export type ClaimResult = ({ claimed: true } & HeldJob) | { claimed: false };

/** claimNext's options are claim-next's request body. */
export type ClaimNextOptions = ClaimNextRequest;

/** Most rows one list asks for (PocketBase's page size limit). */
export const MAX_LIST_LIMIT = 500;

export interface ListOptions {
  /** Rows at most (1..500, default 50). */
  limit?: number;
  probeKeyPrefix?: string;
}

/** What Worker and Sweeper need from a client; FleetClient implements it, unit tests fake it. */
export interface FleetApi {
  claimNext(opts: ClaimNextOptions, req?: RequestOptions): Promise<HeldJob[]>;
  claim(jobId: string, workerId: string, leaseSeconds?: number, req?: RequestOptions): Promise<ClaimResult>;
  renew(
    jobId: string, workerId: string, leaseSeconds?: number, leaseToken?: string, req?: RequestOptions,
  ): Promise<RenewResponse>;
  release(
    jobId: string, workerId: string, status: ReleaseTarget, leaseToken?: string, req?: RequestOptions,
  ): Promise<ReleaseResponse>;
  writeResult(jobId: string, result: unknown, req?: RequestOptions): Promise<void>;
  listExpiredLeases(opts?: ListOptions, req?: RequestOptions): Promise<JobRecord[]>;
  /** POST /api/fleet/sweep; a server without it rejects with a FleetHttpError 404. */
  sweep(opts?: SweepRequest, req?: RequestOptions): Promise<SweepResponse>;
}

/** Every SweptJob outcome, checked by the compiler against the protocol's type. */
const SWEEP_OUTCOMES: Record<SweptJob["outcome"], true> = { requeued: true, gave_up: true };

/** A LIKE pattern matching values that start with `prefix` (PocketBase escapes with `\`). */
function likePrefix(prefix: string): string {
  return prefix.replace(/[\\%_]/g, (c) => "\\" + c) + "%";
}

/** The SDK's token store, in memory (its default would reach for localStorage in a browser). */
class MemoryAuthStore extends BaseAuthStore {}

type SendOptions = { signal: AbortSignal; fetch?: typeof fetch; requestKey: null };

export class FleetClient implements FleetApi {
  /** The underlying SDK instance (auto-cancellation off: concurrent identical calls are normal here). */
  readonly pb: PocketBase;
  readonly collection: string;
  readonly timeoutMs: number;
  readonly #email: string | undefined;
  readonly #password: string | undefined;
  readonly #fetch: typeof fetch | undefined;
  #signingIn: Promise<void> | null = null;
  /** undefined until the first claimNext tells whether the server has /api/fleet/claim-next. */
  #hasClaimNext: boolean | undefined;

  constructor(opts: FleetClientOptions) {
    if (!opts || typeof opts.url !== "string" || opts.url === "") {
      throw new TypeError("FleetClient: `url` is required (e.g. http://127.0.0.1:8090)");
    }
    const hasCredentials = typeof opts.email === "string" && typeof opts.password === "string";
    if (!hasCredentials && !opts.token) {
      throw new TypeError("FleetClient: give admin `email` and `password`, or an admin `token`");
    }
    this.pb = new PocketBase(opts.url, new MemoryAuthStore());
    this.pb.autoCancellation(false);
    this.collection = opts.collection ?? DEFAULT_COLLECTION;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#email = hasCredentials ? opts.email : undefined;
    this.#password = hasCredentials ? opts.password : undefined;
    this.#fetch = opts.fetch;
    if (opts.token) this.pb.authStore.save(opts.token, null);
  }

  /** The admin token in use ("" before the first sign-in). */
  get token(): string {
    return this.pb.authStore.token;
  }

  /** Whether the server has /api/fleet/claim-next (undefined: not probed yet). */
  get hasClaimNext(): boolean | undefined {
    return this.#hasClaimNext;
  }

  /** Signs in with the admin credentials (concurrent callers share one sign-in). */
  authenticate(req?: RequestOptions): Promise<void> {
    if (this.#email === undefined || this.#password === undefined) {
      return Promise.reject(new FleetAuthError("authenticate", "this client has a token but no credentials to sign in with", {}));
    }
    if (this.#signingIn === null) {
      const email = this.#email;
      const password = this.#password;
      this.#signingIn = this.#once("authenticate", (o) => this.pb.admins.authWithPassword(email, password, o), req)
        .then(() => undefined)
        .finally(() => {
          this.#signingIn = null;
        });
    }
    return this.#signingIn;
  }

  // ---- the compare-and-set endpoints -------------------------------------------------

  /**
   * Claims one job by id. A transient failure (timeout, lost connection, 5xx) is
   * retried once: if the first attempt did commit, the retry is answered
   * alreadyHeld, which is a win like any other.
   */
  async claim(jobId: string, workerId: string, leaseSeconds?: number, req?: RequestOptions): Promise<ClaimResult> {
    const body = await this.#retryOnce(() =>
      this.#post<ClaimResponse>("claim", "/api/fleet/claim", { jobId, workerId, leaseSeconds } satisfies ClaimRequest, req));
    return parseClaim("claim", body);
  }

  /** Extends the lease (only the holder, only while it is live). Retried once on a transient failure (a repeated renew is harmless). */
  async renew(
    jobId: string, workerId: string, leaseSeconds?: number, leaseToken?: string, req?: RequestOptions,
  ): Promise<RenewResponse> {
    const body = await this.#retryOnce(() =>
      this.#post<RenewResponse>("renew", "/api/fleet/renew", { jobId, workerId, leaseSeconds, leaseToken } satisfies RenewRequest, req));
    if (!isObject(body) || typeof body.renewed !== "boolean" || (body.renewed && !isJobView(body.job))) {
      throw new FleetProtocolError("renew", "answer has no boolean `renewed` (and `job` when true)", body);
    }
    return body;
  }

  /**
   * Releases a held job to done, failed or pending. Retried once on a transient
   * failure: a repeat of a committed done/failed release is answered
   * refused_terminal_same_holder, which callers treat as their own commit.
   */
  async release(
    jobId: string, workerId: string, status: ReleaseTarget, leaseToken?: string, req?: RequestOptions,
  ): Promise<ReleaseResponse> {
    const body = await this.#retryOnce(() =>
      this.#post<ReleaseResponse>("release", "/api/fleet/release", { jobId, workerId, status, leaseToken } satisfies ReleaseRequest, req));
    if (!isObject(body) || typeof body.released !== "boolean") {
      throw new FleetProtocolError("release", "answer has no boolean `released`", body);
    }
    if (body.released ? !isJobView(body.job) : !(RELEASE_REFUSALS as readonly unknown[]).includes(body.reason)) {
      throw new FleetProtocolError("release", "answer has neither a `job` nor a known refusal `reason`", body);
    }
    return body;
  }

  /**
   * Claims up to `limit` of the oldest claimable jobs. Uses POST
   * /api/fleet/claim-next (one transaction) when the server has it; a server
   * without it answers 404 once, and from then on the client lists claimable
   * rows and claims them one by one (losing some races to other workers).
   */
  async claimNext(opts: ClaimNextOptions, req?: RequestOptions): Promise<HeldJob[]> {
    if (this.#hasClaimNext !== false) {
      try {
        const body = await this.#post<ClaimNextResponse>("claimNext", "/api/fleet/claim-next", {
          workerId: opts.workerId,
          leaseSeconds: opts.leaseSeconds,
          limit: opts.limit,
          probeKeyPrefix: opts.probeKeyPrefix || undefined,
        } satisfies ClaimNextRequest, req);
        if (!isObject(body) || !Array.isArray(body.jobs) ||
            !body.jobs.every((j) => isObject(j) && isJobView(j.job))) {
          throw new FleetProtocolError("claimNext", "answer has no `jobs` array of { job, leaseToken }", body);
        }
        this.#hasClaimNext = true;
        return body.jobs.map((j) => ({ job: j.job, leaseToken: j.leaseToken || undefined, alreadyHeld: false }));
      } catch (err) {
        if (!(this.#hasClaimNext === undefined && isMissingEndpoint(err))) throw err;
        this.#hasClaimNext = false;
      }
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
    const body = await this.#post<SweepResponse>("sweep", "/api/fleet/sweep", {
      probeKeyPrefix: opts.probeKeyPrefix || undefined,
    } satisfies SweepRequest, req);
    if (!isObject(body) || typeof body.requeued !== "number" || typeof body.gaveUp !== "number" ||
        !Array.isArray(body.jobs) || !body.jobs.every(isSweptJob)) {
      throw new FleetProtocolError("sweep", "answer lacks the counts `requeued` and `gaveUp`, or a `jobs` array of " +
        "{ id, outcome, claimedBy, consecutiveOrphanCount }", body);
    }
    return body;
  }

  // ---- the record API ----------------------------------------------------------------

  /** Creates a pending job (version 0, counters 0). Not retried on a timeout: that could create it twice. */
  async enqueue(probeKey: string, req?: RequestOptions): Promise<JobRecord> {
    return this.#call("enqueue", (o) => this.pb.collection(this.collection).create<JobRecord>({
      probe_key: probeKey,
      status: "pending",
      claimed_by: "",
      version: 0,
      reclaim_count: 0,
      consecutive_orphan_count: 0,
    }, o), req);
  }

  /**
   * Creates many pending jobs, `concurrency` requests at a time (PocketBase 0.22
   * has no batch API). Rejects with the first error once the requests in flight
   * have settled; jobs created before it stay.
   */
  async enqueueMany(probeKeys: readonly string[], opts: { concurrency?: number } & RequestOptions = {}): Promise<JobRecord[]> {
    const concurrency = Math.max(1, opts.concurrency ?? 8);
    const rows: JobRecord[] = new Array(probeKeys.length);
    let next = 0;
    let failure: unknown = null;
    const lane = async (): Promise<void> => {
      while (failure === null && next < probeKeys.length) {
        const i = next++;
        try {
          rows[i] = await this.enqueue(probeKeys[i] as string, opts);
        } catch (err) {
          failure ??= err;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, probeKeys.length) }, lane));
    if (failure !== null) throw failure;
    return rows;
  }

  /** Writes the result JSON of a job. Callers write only after their own terminal release committed. */
  async writeResult(jobId: string, result: unknown, req?: RequestOptions): Promise<void> {
    await this.#call("writeResult", (o) =>
      this.pb.collection(this.collection).update(jobId, { result: result === undefined ? null : result }, o), req);
  }

  async getJob(jobId: string, req?: RequestOptions): Promise<JobRecord> {
    return this.#call("getJob", (o) => this.pb.collection(this.collection).getOne<JobRecord>(jobId, o), req);
  }

  /** Claimable rows, oldest first: pending, or claimed/running with an expired lease (by this machine's clock). */
  async listClaimable(opts: ListOptions = {}, req?: RequestOptions): Promise<JobRecord[]> {
    const filter = `(status = "pending" || ((status = "claimed" || status = "running") && lease_expires_at < {:now}))`;
    return this.#list("listClaimable", filter, "created", opts, req);
  }

  /** claimed/running rows whose lease has expired (the sweeper's work), the longest-expired first. */
  async listExpiredLeases(opts: ListOptions = {}, req?: RequestOptions): Promise<JobRecord[]> {
    const filter = `(status = "claimed" || status = "running") && lease_expires_at < {:now}`;
    return this.#list("listExpiredLeases", filter, "lease_expires_at", opts, req);
  }

  async #list(op: string, filter: string, sort: string, opts: ListOptions, req?: RequestOptions): Promise<JobRecord[]> {
    const limit = Math.max(1, Math.min(opts.limit ?? 50, MAX_LIST_LIMIT));
    const prefix = opts.probeKeyPrefix ?? "";
    // An empty lease_expires_at is "" and sorts before any date: it counts as
    // expired, as the protocol says.
    const expr = this.pb.filter(prefix ? `${filter} && probe_key ~ {:prefix}` : filter, {
      now: formatPbDate(Date.now()),
      prefix: likePrefix(prefix),
    });
    const page = await this.#call(op, (o) => this.pb.collection(this.collection).getList<JobRecord>(1, limit, {
      ...o, filter: expr, sort, skipTotal: true,
    }), req);
    // SQLite's LIKE ignores ASCII case; the prefix is meant exactly.
    return prefix ? page.items.filter((r) => r.probe_key.startsWith(prefix)) : page.items;
  }

  /** GET /api/fleet/stats, optionally of one probe_key prefix (a FleetHttpError 404 from a server without it). */
  async stats(opts: { probeKeyPrefix?: string } = {}, req?: RequestOptions): Promise<FleetStats> {
    const query = opts.probeKeyPrefix ? { probeKeyPrefix: opts.probeKeyPrefix } : {};
    return this.#call("stats", (o) => this.pb.send<FleetStats>("/api/fleet/stats", { ...o, method: "GET", query }), req);
  }

  // ---- transport ---------------------------------------------------------------------

  #post<T>(op: string, path: string, body: Record<string, unknown>, req?: RequestOptions): Promise<T> {
    return this.#call(op, (o) => this.pb.send<T>(path, { ...o, method: "POST", body: dropUndefined(body) }), req);
  }

  async #retryOnce<T>(attempt: () => Promise<T>): Promise<T> {
    try {
      return await attempt();
    } catch (err) {
      if (!isTransientError(err)) throw err;
      return attempt();
    }
  }

  /** One call: signs in first if needed; after a 401 (or the record API's 403) signs in again and retries once. */
  async #call<T>(op: string, send: (o: SendOptions) => Promise<T>, req?: RequestOptions): Promise<T> {
    const canSignIn = this.#email !== undefined;
    if (this.token === "" && canSignIn) await this.authenticate(req);
    try {
      return await this.#once(op, send, req);
    } catch (err) {
      if (!(err instanceof FleetAuthError)) throw err;
      if (!canSignIn) {
        throw new FleetAuthError(op, `${messageOf(err.body)} (token-only client: cannot sign in again)`, err.body, {
          cause: err, status: authStatus(err),
        });
      }
    }
    await this.authenticate(req);
    try {
      return await this.#once(op, send, req);
    } catch (err) {
      if (err instanceof FleetAuthError) {
        throw new FleetAuthError(op, `${messageOf(err.body)} (again, right after signing in)`, err.body, {
          cause: err, status: authStatus(err),
        });
      }
      throw err;
    }
  }

  async #once<T>(op: string, send: (o: SendOptions) => Promise<T>, req?: RequestOptions): Promise<T> {
    const timeoutMs = req?.timeoutMs ?? this.timeoutMs;
    const timeout = AbortSignal.timeout(Math.max(1, timeoutMs));
    const signal = req?.signal ? AbortSignal.any([timeout, req.signal]) : timeout;
    const options: SendOptions = { signal, requestKey: null };
    if (this.#fetch) options.fetch = this.#fetch;
    try {
      return await send(options);
    } catch (err) {
      if (req?.signal?.aborted) throw new FleetAbortError(op, { cause: err });
      if (timeout.aborted) throw new FleetTimeoutError(op, timeoutMs, { cause: err });
      if (err instanceof ClientResponseError && err.status > 0) {
        const body = err.response;
        // Every call here is admin-only: a 403 means the token was not taken as an admin's.
        if (err.status === 401 || err.status === 403) {
          throw new FleetAuthError(op, messageOf(body), body, { cause: err, status: err.status });
        }
        throw new FleetHttpError(op, err.status, messageOf(body), body, { cause: err });
      }
      throw new FleetNetworkError(op, networkMessage(err), { cause: err });
    }
  }
}

function parseClaim(op: string, body: unknown): ClaimResult {
  if (!isObject(body) || typeof body["claimed"] !== "boolean") {
    throw new FleetProtocolError(op, "answer has no boolean `claimed`", body);
  }
  if (!body["claimed"]) return { claimed: false };
  if (!isJobView(body["job"])) throw new FleetProtocolError(op, "claimed:true without a `job`", body);
  const token = body["leaseToken"];
  return {
    claimed: true,
    job: body["job"],
    leaseToken: typeof token === "string" && token !== "" ? token : undefined,
    alreadyHeld: body["alreadyHeld"] === true,
  };
}

function authStatus(err: FleetAuthError): 401 | 403 {
  return err.status === 403 ? 403 : 401;
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isJobView(value: unknown): value is JobView {
  return isObject(value) && typeof value["id"] === "string" && typeof value["status"] === "string";
}

function isSweptJob(value: unknown): value is SweptJob {
  return isObject(value) && typeof value["id"] === "string" && typeof value["claimedBy"] === "string" &&
    typeof value["consecutiveOrphanCount"] === "number" &&
    typeof value["outcome"] === "string" && Object.hasOwn(SWEEP_OUTCOMES, value["outcome"]);
}

function dropUndefined(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

/** The protocol's `{ error }`, or PocketBase's `{ message, data }` with its field errors. */
function messageOf(body: unknown): string {
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

function networkMessage(err: unknown): string {
  const original = err instanceof ClientResponseError ? err.originalError : err;
  const cause = isObject(original) ? original["cause"] : undefined;
  const code = isObject(cause) && typeof cause["code"] === "string" ? cause["code"] : undefined;
  const message = original instanceof Error ? original.message : String(original);
  return code ? `${message} (${code})` : message;
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}
