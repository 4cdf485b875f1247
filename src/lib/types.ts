/**
 * Wire types of the fleet protocol: what the hooks answer and what the client
 * sends, and the plain constants both sides check them against. The client
 * imports this module too, so it holds no PocketBase code.
 */

/** `cancelled` is the queue's (docs/queue.md): terminal like done/failed, held by no one. */
export const JOB_STATUSES = ["pending", "claimed", "running", "done", "failed", "cancelled"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * `retry` is the queue's: back to pending after a backoff, or dead-lettered
 * when the job has used its attempts.
 */
export const RELEASE_TARGETS = ["done", "failed", "pending", "retry"] as const;
export type ReleaseTarget = (typeof RELEASE_TARGETS)[number];

/**
 * Why a release was refused. `refused_stale_token`: the leaseToken sent is not
 * the current claim's (the job was claimed again since). The client accepts
 * exactly these, so a new reason is added here and nowhere else.
 */
export const RELEASE_REFUSALS = [
  "refused_terminal_same_holder",
  "refused_not_holder",
  "refused_lease_live",
  "refused_stale_token",
] as const;
export type ReleaseRefusal = (typeof RELEASE_REFUSALS)[number];

/** The `job` object in every successful answer. Dates use PocketBase's text form. */
export interface JobView {
  id: string;
  probe_key: string;
  status: JobStatus;
  claimed_by: string;
  /** `2006-01-02 15:04:05.000Z`, or `""` when the row has no lease. */
  lease_expires_at: string;
  version: number;
}

export interface ClaimRequest {
  jobId: string;
  workerId: string;
  leaseSeconds?: number;
}
export interface RenewRequest extends ClaimRequest {
  /** Fencing: when sent, the renew is refused unless it is the current claim's token. */
  leaseToken?: string;
  /** Any JSON of at most MAX_PROGRESS_BYTES, stored only when the renew succeeds. null: absent. */
  progress?: unknown;
}
export interface ReleaseRequest {
  jobId: string;
  workerId: string;
  status: ReleaseTarget;
  /** Fencing: when sent, the release is refused (refused_stale_token) unless it is the current claim's token. */
  leaseToken?: string;
  /** Any JSON (at most MAX_RESULT_BYTES), stored in `result` in the release's own transaction. null: absent. */
  result?: unknown;
  /** Stored in `last_error` in the release's own transaction. null: absent. */
  error?: string | null;
  /**
   * Only with status "retry" (docs/flow-control.md): a number 1..86,400. The job is due again
   * this many seconds from now, the attempt is given back, and its group (its
   * queue when it has none) is parked as long.
   */
  rateLimitedFor?: number;
}

/**
 * `leaseToken` is new in pb-fleet (the reference has none): a fresh random token
 * per winning claim, repeated on an alreadyHeld answer.
 */
export type ClaimResponse =
  | { claimed: true; job: JobView; alreadyHeld?: true; leaseToken: string }
  /** A reason only where the reference answers none for a request it cannot make (a worker identity's queues). */
  | { claimed: false; reason?: ClaimRefusal };
/**
 * Why a claim by id was refused besides the protocol: a worker identity's
 * queues, and flow control (docs/flow-control.md, in the order they are checked) of a job
 * the claim would otherwise win.
 */
export const FLOW_CLAIM_REFUSALS = ["start_by_passed", "paused", "concurrency_limit", "rate_limit"] as const;
export const CLAIM_REFUSALS = ["queue_not_allowed", ...FLOW_CLAIM_REFUSALS] as const;
export type ClaimRefusal = (typeof CLAIM_REFUSALS)[number];
/** Why the holder's renew or heartbeat item was refused with a reason: its attempt passed its deadline (docs/flow-control.md "Timeouts"). */
export const RENEW_REFUSALS = ["timed_out"] as const;
export type RenewRefusal = (typeof RENEW_REFUSALS)[number];
export type RenewResponse = { renewed: true; job: JobView } | { renewed: false; reason?: RenewRefusal };
export type ReleaseResponse =
  | { released: true; job: JobView }
  | { released: false; reason: ReleaseRefusal };

/** Body of every HTTP 400. */
export interface ErrorResponse {
  error: string;
}

export interface ClaimNextRequest {
  workerId: string;
  leaseSeconds?: number;
  /** How many jobs to claim at most: an integer 1..100, default 1. */
  limit?: number;
  /** Only jobs whose probe_key starts with this text. */
  probeKeyPrefix?: string;
  /** Only jobs of this queue, or of these (1 to MAX_CLAIM_QUEUES); absent: any queue a worker identity may take. */
  queue?: string | string[];
}
/**
 * What pb-fleet's own endpoints (claim-next, cancel, retry) answer for a job:
 * the reference's view plus the queue's fields (docs/queue.md). The three original
 * endpoints keep answering the reference's JobView.
 */
export interface QueueJobView extends JobView {
  /** The job's queue (docs/flow-control.md); "default" for a job enqueued without one. */
  queue: string;
  payload: unknown;
  priority: number;
  /** When the job becomes (or became) claimable; PocketBase's text form. */
  run_at: string;
  /** Winning claims so far, this one included. */
  attempts: number;
  /** 0: no cap. */
  max_attempts: number;
  last_error: string;
  dead_lettered_at: string;
  unique_key: string;
  progress: unknown;
  /** The job's group (docs/flow-control.md); "" when none. */
  group_key: string;
  /** 0: no timeout. */
  timeout_seconds: number;
  /** The current attempt's deadline (its winning claim + timeout_seconds), PocketBase's text form; null when none. */
  deadline: string | null;
}

export interface ClaimedJob {
  job: QueueJobView;
  leaseToken: string;
}
/** In claim order (docs/queue.md: priority, due time, age with one enqueue call in request order); empty when there is nothing to do. */
export interface ClaimNextResponse {
  jobs: ClaimedJob[];
}

export interface SweepRequest {
  /** Only jobs whose probe_key starts with this text. */
  probeKeyPrefix?: string;
}
/** What a sweep did to a job; timed_out: its attempt passed its deadline, and it was retried (or dead-lettered) as docs/flow-control.md says. */
export const SWEEP_OUTCOMES = ["requeued", "gave_up", "timed_out"] as const;
/** What one sweep did to one job. */
export interface SweptJob {
  id: string;
  outcome: (typeof SWEEP_OUTCOMES)[number];
  /** The holder whose lease had expired. */
  claimedBy: string;
  /** consecutive_orphan_count after the sweep (kept as it was on a give-up). */
  consecutiveOrphanCount: number;
}
/** POST /api/fleet/sweep: counts, and each job it touched (at most one batch). */
export interface SweepResponse {
  requeued: number;
  gaveUp: number;
  /** Held jobs past their deadline (docs/flow-control.md "Timeouts"). */
  timedOut: number;
  jobs: SweptJob[];
}

/** Whether this server re-queues expired leases on its own, and when. */
export interface SweeperState {
  scheduled: boolean;
  /** The cron expression in force; when not scheduled, the one configured ("off", or one that failed). */
  schedule: string;
  /** Why it is not scheduled when it should be (an invalid PB_FLEET_SWEEP_CRON). */
  error?: string;
}

/** One job of POST /api/fleet/enqueue. */
export interface EnqueueItem {
  probeKey: string;
  /** Any JSON, at most MAX_PAYLOAD_BYTES serialized; null when absent. */
  payload?: unknown;
  /** ISO-8601 with a zone (`Z` or an offset), or PocketBase's `2006-01-02 15:04:05.000Z`. Not with delaySeconds. */
  runAt?: string;
  /** A number >= 0: due this many seconds from now. Not with runAt. */
  delaySeconds?: number;
  /** An integer in [MIN_PRIORITY, MAX_PRIORITY]; higher runs first. Default 0. */
  priority?: number;
  /** An integer 0..MAX_MAX_ATTEMPTS; 0: no cap. Default DEFAULT_MAX_ATTEMPTS. */
  maxAttempts?: number;
  /** At most one non-terminal job per non-empty key. */
  uniqueKey?: string;
  /** The job's queue (docs/flow-control.md): a name matching QUEUE_NAME_PATTERN; default DEFAULT_QUEUE. */
  queue?: string;
  /** The job's group (a host, a tenant, an API key): absent, null or "": none. */
  group?: string | null;
  /** An integer 1..MAX_TIMEOUT_SECONDS: the longest one attempt may be held. */
  timeoutSeconds?: number;
  /** An integer 1..MAX_START_WITHIN_SECONDS: never first started later than run_at + this. */
  startWithinSeconds?: number;
}
export interface EnqueueRequest {
  /** 1 to MAX_ENQUEUE_JOBS; written all or nothing. */
  jobs: EnqueueItem[];
}
export interface EnqueuedJob {
  id: string;
  /** Echoes the request's probeKey. */
  probeKey: string;
  /** false: uniqueKey matched a live job (or an earlier item of the call), whose id this is; nothing was written. */
  created: boolean;
}
export interface EnqueueResponse {
  jobs: EnqueuedJob[];
}

export interface JobIdRequest {
  jobId: string;
}
export type CancelResponse = { cancelled: true; job: QueueJobView } | { cancelled: false };
/** Why a retry was refused besides the status (a non-failed, non-cancelled job gets no reason). */
export const RETRY_REFUSALS = ["unique_key_taken"] as const;
export type RetryRefusal = (typeof RETRY_REFUSALS)[number];
export type RetryResponse =
  | { retried: true; job: QueueJobView }
  | { retried: false; reason?: RetryRefusal };

/** One lease of POST /api/fleet/heartbeat: a renew of one job. */
export interface HeartbeatItem {
  jobId: string;
  leaseToken?: string;
  progress?: unknown;
}
export interface HeartbeatRequest {
  workerId: string;
  /** One lease length for every item (renew's leaseSeconds). */
  leaseSeconds?: number;
  /** 1 to MAX_BATCH_ITEMS. */
  leases: HeartbeatItem[];
}
/** As renew answers, per item: a renewed item carries the job as written. */
export type HeartbeatResult =
  | { jobId: string; renewed: true; job: JobView }
  | { jobId: string; renewed: false; reason?: RenewRefusal };
/** One result per item, in request order. */
export interface HeartbeatResponse {
  results: HeartbeatResult[];
}

/** One release of POST /api/fleet/complete: a release of one job. */
export interface CompleteItem {
  jobId: string;
  leaseToken?: string;
  status: ReleaseTarget;
  result?: unknown;
  error?: string | null;
  /** As release's: only with status "retry". */
  rateLimitedFor?: number;
}
export interface CompleteRequest {
  workerId: string;
  /** 1 to MAX_BATCH_ITEMS. */
  releases: CompleteItem[];
  /**
   * Also claim, in the same transaction after the releases, as claim-next
   * would for `workerId` with these fields (a call of a Worker whose slots
   * the releases free: one request instead of two). Absent: no claim.
   */
  claimNext?: Omit<ClaimNextRequest, "workerId">;
}
/** As release answers, per item: a released item carries the job as written. */
export type CompleteResult =
  | { jobId: string; released: true; job: JobView }
  | { jobId: string; released: false; reason: ReleaseRefusal };
/** One result per item, in request order. */
export interface CompleteResponse {
  results: CompleteResult[];
  /** Only when the request had `claimNext`: what that claimed, as claim-next answers it. */
  jobs?: ClaimedJob[];
}

/** GET /api/fleet/stats (JSON; `?format=prometheus` gives the same in Prometheus text). */
export interface FleetStats {
  counts: Record<JobStatus, number>;
  total: number;
  /** Pending, not yet due (run_at in the future). */
  scheduled: number;
  /** Pending after at least one attempt (a retry waiting or due). */
  retrying: number;
  /** Rows with dead_lettered_at set. */
  deadLettered: number;
  /** Seconds the longest-waiting due pending job has waited (since the latest of created, requeued_at and run_at); null when none is due. */
  oldestPendingAgeSeconds: number | null;
  /** claimed/running rows whose lease has passed: work for the sweeper. */
  expiredLeases: number;
  /** Rows whose consecutive_orphan_count has reached the server's cap. */
  pastOrphanCap: number;
  orphanCap: number;
  sweeper: SweeperState;
}

/** A scope's rate limit: at most `limit` winning claims in any window of `periodSeconds`. */
export interface FlowRateLimit {
  limit: number;
  periodSeconds: number;
}

/** POST /api/fleet/flow: exactly one of queue/group, and at least one setting; null clears one. */
export interface FlowRequest {
  queue?: string;
  group?: string;
  paused?: boolean | null;
  concurrency?: number | null;
  rateLimit?: FlowRateLimit | null;
  /** 0..MAX_PARK_SECONDS; 0 clears the park. Not with parkUntil. */
  parkSeconds?: number;
  /** A date with a zone, after now, at most 7 days ahead; null clears the park. */
  parkUntil?: string | null;
}

/** A scope's settings as stored; null for unset. */
export interface FlowSettings {
  paused: boolean;
  concurrency: number | null;
  rateLimit: FlowRateLimit | null;
  /** PocketBase's text form; null when unset or already past. */
  parkedUntil: string | null;
}
export type FlowScopeName = { queue: string } | { group: string };
export interface FlowResponse {
  flow: FlowScopeName & FlowSettings;
}

/** One scope of GET /api/fleet/flow. */
export interface FlowScopeState extends FlowSettings {
  name: string;
  /** Jobs of the scope held under a live lease. */
  held: number;
  /** Pending jobs of the scope that are due and not past their start_by. */
  due: number;
  /** Winning claims counted in the current rate window; 0 without a rate limit. */
  claimsInWindow: number;
}
export interface FlowStateResponse {
  queues: FlowScopeState[];
  groups: FlowScopeState[];
}
