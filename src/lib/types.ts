/**
 * Wire types of the fleet protocol: what the hooks answer and what the client
 * sends, and the plain constants both sides check them against. The client
 * imports this module too, so it holds no PocketBase code.
 */

export const JOB_STATUSES = ["pending", "claimed", "running", "done", "failed"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const RELEASE_TARGETS = ["done", "failed", "pending"] as const;
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
}
export interface ReleaseRequest {
  jobId: string;
  workerId: string;
  status: ReleaseTarget;
  /** Fencing: when sent, the release is refused (refused_stale_token) unless it is the current claim's token. */
  leaseToken?: string;
}

/**
 * `leaseToken` is new in pb-fleet (the reference has none): a fresh random token
 * per winning claim, repeated on an alreadyHeld answer.
 */
export type ClaimResponse =
  | { claimed: true; job: JobView; alreadyHeld?: true; leaseToken: string }
  | { claimed: false };
export type RenewResponse = { renewed: true; job: JobView } | { renewed: false };
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
}
export interface ClaimedJob {
  job: JobView;
  leaseToken: string;
}
/** Oldest claimable jobs first; empty when there is nothing to do. */
export interface ClaimNextResponse {
  jobs: ClaimedJob[];
}

export interface SweepRequest {
  /** Only jobs whose probe_key starts with this text. */
  probeKeyPrefix?: string;
}
/** What one sweep did to one job. */
export interface SweptJob {
  id: string;
  outcome: "requeued" | "gave_up";
  /** The holder whose lease had expired. */
  claimedBy: string;
  /** consecutive_orphan_count after the sweep (kept as it was on a give-up). */
  consecutiveOrphanCount: number;
}
/** POST /api/fleet/sweep: counts, and each job it touched (at most one batch). */
export interface SweepResponse {
  requeued: number;
  gaveUp: number;
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

/** GET /api/fleet/stats (JSON; `?format=prometheus` gives the same in Prometheus text). */
export interface FleetStats {
  counts: Record<JobStatus, number>;
  total: number;
  /** Seconds since the oldest pending job was created (or re-queued); null when none is pending. */
  oldestPendingAgeSeconds: number | null;
  /** claimed/running rows whose lease has passed: work for the sweeper. */
  expiredLeases: number;
  /** Rows whose consecutive_orphan_count has reached the server's cap. */
  pastOrphanCap: number;
  orphanCap: number;
  sweeper: SweeperState;
}
