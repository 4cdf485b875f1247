/**
 * The FleetClient's public types and constants: its options, the shapes its
 * calls take and answer, and FleetApi, what Worker and Sweeper need of a client.
 */
import { WORKERS_COLLECTION } from "../../lib/identity.js";
import type { FIRST_MIGRATION_COLUMNS, JobRecordFields } from "../../lib/job-schema.js";
import { JOBS_COLLECTION } from "../../lib/record-filters.js";
import type {
  ClaimNextRequest,
  ClaimRefusal,
  CompleteItem,
  CompleteResponse,
  CompleteResult,
  HeartbeatItem,
  HeartbeatResponse,
  JobStatus,
  JobView,
  QueueJobView,
  ReleaseResponse,
  ReleaseTarget,
  RenewResponse,
  SweepRequest,
  SweepResponse,
} from "../../lib/types.js";
import type { EnqueueOptions } from "../queue-options.js";

/** The jobs collection the server uses (no other can be chosen): JOBS_COLLECTION. */
export const DEFAULT_COLLECTION = JOBS_COLLECTION;
export const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Where each PocketBase line signs in with a password: 0.23 turned the admins
 * into the `_superusers` auth collection. Each line answers 404 at the other's.
 */
export const AUTH_PATHS = {
  /** PocketBase 0.23 and later. */
  superusers: "/api/collections/_superusers/auth-with-password",
  /** PocketBase 0.22. */
  admins: "/api/admins/auth-with-password",
} as const;
/** Which sign-in a server has: "superusers" (PocketBase 0.23+) or "admins" (0.22). */
export type AuthApi = keyof typeof AUTH_PATHS;

/** Where a worker identity signs in, and refreshes its token: the same paths and answers `{ token, record }` on 0.22 and 0.23+. */
export const WORKER_AUTH_PATHS = {
  password: `/api/collections/${WORKERS_COLLECTION}/auth-with-password`,
  refresh: `/api/collections/${WORKERS_COLLECTION}/auth-refresh`,
} as const;

/**
 * A worker identity's credential: its name (the record's `username`) and
 * password, or a token of it. With a password the client signs in lazily, and
 * again once after a 401 (the token may have expired); with a token only, a
 * 401 is thrown.
 */
export type WorkerCredentials = { identity: string; password: string } | { token: string };

/** The signed-in worker identity, from its `fleet_workers` record. */
export interface WorkerIdentity {
  /** The record id: the Worker's workerId is this, or begins with `${id}/`. */
  id: string;
  /** The record's username. */
  name: string;
  /** The queues its claims may take jobs of; empty: every queue. */
  queues: string[];
  /** Whether it may enqueue. */
  canEnqueue: boolean;
}

export interface FleetClientOptions {
  /** PocketBase base URL, e.g. http://127.0.0.1:8090 */
  url: string;
  /**
   * Credentials of an admin (PocketBase 0.22) or a superuser (0.23+): the client
   * signs in lazily, and again after a 401 or 403.
   */
  email?: string;
  password?: string;
  /**
   * An admin (0.22) or superuser (0.23+) token instead of credentials. A 401 or
   * 403 then cannot be cured by the client: it is thrown (setToken() swaps it).
   */
  token?: string;
  /**
   * A worker identity instead of an admin: `{ identity, password }` (the
   * record's username) or `{ token }`. Not with `email`, `password` or `token`.
   * Such a client may call only the worker's routes; a 403 (a route or a
   * queue it may not use) is thrown as a FleetForbiddenError, never retried.
   */
  worker?: WorkerCredentials;
  /** Per-request timeout, ms (default 10 000). Every call can override it. */
  timeoutMs?: number;
  /**
   * A fetch to send requests with (tests pass a fake). Without it the client
   * uses Node's http and https modules with keep-alive connections, which cost
   * less than half of fetch's CPU per call (node-http.ts).
   */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  /** Overrides the client's timeout for this call. */
  timeoutMs?: number;
  /** Cancels this call (it then rejects with FleetAbortError). */
  signal?: AbortSignal;
}

type FirstMigrationColumn = (typeof FIRST_MIGRATION_COLUMNS)[number];

/**
 * A `probe_jobs` row as the record API returns it, from the schema
 * (src/lib/job-schema.ts): JSON fields parsed. The columns later migrations
 * added (the fencing token, the queue's, flow control's) are optional, since
 * a server that has not applied them answers without them. (`created`/`updated`
 * are PocketBase 0.22's system fields; on 0.23+ the collection declares them.)
 */
export type JobRecord =
  & Pick<JobRecordFields, "id" | FirstMigrationColumn>
  & Partial<Omit<JobRecordFields, "id" | FirstMigrationColumn>>;

/**
 * The job of a claim answer: the reference's view, plus the queue's fields
 * (payload, attempts, max_attempts, ...) when it comes from claim-next on a
 * server with the queue (docs/queue.md). Claim by id answers the reference's view.
 */
export type ClaimedJobView = JobView & Partial<Omit<QueueJobView, keyof JobView>>;

/** A job this worker now holds. */
export interface HeldJob {
  job: ClaimedJobView;
  /** Fencing token of the claim; undefined from a server without fencing. */
  leaseToken: string | undefined;
  /** The server says this worker already held it (a retried claim whose first answer was lost). */
  alreadyHeld: boolean;
}
/** `reason` "queue_not_allowed": the job is of a queue this worker identity may not take. */
export type ClaimResult = ({ claimed: true } & HeldJob) | { claimed: false; reason?: ClaimRefusal };

/** renew's last argument: the request's options, and the progress to store with a successful renew. */
export interface RenewOptions extends RequestOptions {
  /**
   * Any JSON of at most MAX_PROGRESS_BYTES, stored only when the renew succeeds
   * (a server without the queue ignores it). null or undefined: none.
   */
  progress?: unknown;
}

/** release's last argument: the request's options, and what the release writes with the status change. */
export interface ReleaseOptions extends RequestOptions {
  /**
   * Any JSON of at most MAX_RESULT_BYTES, stored in `result` in the release's
   * own transaction. Only a server with the queue takes it (an older one
   * ignores it: write it with writeResult after the release there).
   */
  result?: unknown;
  /** Stored in `last_error` in the release's own transaction (a server with the queue). */
  error?: string | null;
  /**
   * Only with status "retry" (docs/flow-control.md): a number of seconds from 1 to
   * MAX_RATE_LIMITED_FOR_SECONDS. The job is due again that long from now
   * (not after the backoff), its attempt is given back, and its group (its
   * queue when it has none) is parked as long. A TypeError before any request
   * with another status or out of range.
   */
  rateLimitedFor?: number;
}

/** heartbeat's options: the lease asked for every item, and the request's (each chunk's request, see heartbeat). */
export interface HeartbeatOptions extends RequestOptions {
  /** The lease each renewed item gets, seconds (a number > 0; the server clamps it to [1, 3600]); default: the server's 30. */
  leaseSeconds?: number;
}

/** enqueue's options: the job's (queue form, see enqueue) and the request's. */
export type EnqueueCallOptions = EnqueueOptions & RequestOptions;

/** enqueueMany's options: how many record API requests at once (bare probe keys only), and the request's. */
export interface EnqueueManyOptions extends RequestOptions {
  /** Record API requests in flight at once when jobs are created one by one (default 8). */
  concurrency?: number;
}

/**
 * claimNext's options are claim-next's request body. `queue`: only jobs of
 * this queue or these (1 to MAX_CLAIM_QUEUES names); without it, every queue
 * the caller may take (a worker identity with `queues`: only those).
 */
export type ClaimNextOptions = Omit<ClaimNextRequest, "queue"> & { queue?: string | readonly string[] };

/** What completeAndClaim claims: claimNext's options but the holder (the call's workerId). */
export type CompleteClaimOptions = Omit<ClaimNextOptions, "workerId">;

/** completeAndClaim's answer: the releases' results, and the jobs claimed (null: a server that claims nothing in a complete). */
export interface CompleteAndClaimResponse {
  results: CompleteResult[];
  jobs: HeldJob[] | null;
}

/** Most rows one list asks for (PocketBase 0.22's page size limit; 0.23+ allows 1000). */
export const MAX_LIST_LIMIT = 500;

export interface ListOptions {
  /** Rows at most (1..500, default 50). */
  limit?: number;
  probeKeyPrefix?: string;
}

/** What listJobs selects; every field narrows it. */
export interface JobQuery {
  /** Only rows whose probe_key starts with this text (exactly: case and all). */
  probeKeyPrefix?: string;
  /** Only rows in this status, or in one of these. */
  status?: JobStatus | readonly JobStatus[];
  /** Rows at most (default: every matching row, fetched 500 a page). */
  limit?: number;
}

/** What Worker and Sweeper need from a client; FleetClient implements it, unit tests fake it. */
export interface FleetApi {
  /** The client's request timeout, ms (the Worker lets a call with a large body wait longer than this). */
  readonly timeoutMs?: number;
  /** Whether the client signs in as a worker identity (a Worker may then leave out its workerId). */
  readonly isWorkerIdentity?: boolean;
  /**
   * The signed-in worker identity, or null for an admin client. A Worker asks
   * once when it starts, and claims under the identity's id (see WorkerOptions.workerId).
   */
  identity?(req?: RequestOptions): Promise<WorkerIdentity | null>;
  claimNext(opts: ClaimNextOptions, req?: RequestOptions): Promise<HeldJob[]>;
  claim(jobId: string, workerId: string, leaseSeconds?: number, req?: RequestOptions): Promise<ClaimResult>;
  renew(
    jobId: string, workerId: string, leaseSeconds?: number, leaseToken?: string, req?: RenewOptions,
  ): Promise<RenewResponse>;
  release(
    jobId: string, workerId: string, status: ReleaseTarget, leaseToken?: string, req?: ReleaseOptions,
  ): Promise<ReleaseResponse>;
  writeResult(jobId: string, result: unknown, req?: RequestOptions): Promise<void>;
  listExpiredLeases(opts?: ListOptions, req?: RequestOptions): Promise<JobRecord[]>;
  /** POST /api/fleet/sweep; a server without it rejects with a FleetHttpError 404. */
  sweep(opts?: SweepRequest, req?: RequestOptions): Promise<SweepResponse>;
  /**
   * POST /api/fleet/heartbeat: many renews in one call, results in request
   * order. A server without it rejects with a FleetHttpError 404. Optional: a
   * FleetApi without it gets one renew per job from the Worker.
   */
  heartbeat?(workerId: string, leases: readonly HeartbeatItem[], opts?: HeartbeatOptions): Promise<HeartbeatResponse>;
  /**
   * POST /api/fleet/complete: many releases in one call, results in request
   * order. A server without it rejects with a FleetHttpError 404. Optional: a
   * FleetApi without it gets one release per job from the Worker.
   */
  complete?(workerId: string, releases: readonly CompleteItem[], req?: RequestOptions): Promise<CompleteResponse>;
  /**
   * POST /api/fleet/complete with `claimNext`: the releases, then a claim in
   * the same transaction, in one request sent once (never retried: a lost
   * answer would have claimed). Optional: a FleetApi without it gets its
   * Worker's claims from claimNext alone.
   */
  completeAndClaim?(
    workerId: string, releases: readonly CompleteItem[], claim: CompleteClaimOptions, req?: RequestOptions,
  ): Promise<CompleteAndClaimResponse>;
}
