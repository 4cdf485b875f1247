/** The Worker's public types and errors (re-exported by ../worker.ts). */
import { timedOutError } from "../../lib/flow-limits.js";
import type { JobView, QueueJobView } from "../../lib/types.js";
import type { FleetLogger, LeaseLostReason } from "../events.js";

/** What a handler needs to run a job of the queue (docs/queue.md). */
export interface JobContext<P = unknown> {
  /** The job's input as enqueued; null when it has none (and on a server without the queue). */
  payload: P;
  /** This run's attempt, 1-based (the server's `attempts`, this claim included); 1 on a server without the queue, which does not count. */
  attempt: number;
  /** The job's cap on attempts; 0: none (always 0 on a server without the queue). */
  maxAttempts: number;
  /** The handler's own signal (also its second argument): see JobHandler. */
  signal: AbortSignal;
  /**
   * Records the job's latest progress: any JSON of at most MAX_PROGRESS_BYTES
   * (4096), else a TypeError is thrown here; copied as it is at the call. It
   * goes out with a renew of the job's lease within PROGRESS_FLUSH_MS (1 s):
   * calls close together share one heartbeat (the latest value recorded
   * replaces earlier ones not sent yet), and a Worker sends at most one such
   * heartbeat a second. The server stores it only when that renew succeeds.
   * Progress recorded once the handler has returned is not sent, and a server
   * without the queue gets none.
   */
  progress(value: unknown): void;
}

/**
 * What a handler gets: the claimed row's view (with the queue's fields as
 * claim-next answered them, on a server with the queue), who holds it and with
 * which token, and the JobContext. Should the worker win its own running job
 * again (see Worker), these fields are updated in place to the claim the
 * handler now runs under.
 */
export interface WorkerJob<P = unknown>
  extends JobView, Partial<Omit<QueueJobView, keyof JobView | "payload" | "progress">>, JobContext<P> {
  workerId: string;
  leaseToken: string | undefined;
  alreadyHeld: boolean;
  /** The progress stored for the job when it was claimed (say, by a holder that lost its lease); null when none. */
  lastProgress: unknown;
}

/**
 * Runs one job. `signal` (also `job.signal`) aborts when the lease is lost (a
 * renew refused: the lease lapsed, another worker claimed the job, or it was
 * cancelled) or the worker stops in "release"/"abandon" mode: stop then,
 * nothing the handler returns or throws afterwards is written.
 *
 * On a server with the queue, the value returned is the job's result, sent in
 * its `done` release; an error thrown releases `retry` with its message (the
 * job runs again after the server's backoff, or is dead-lettered once its
 * attempts are used up), and a PermanentJobError, or any error in a job with
 * no attempt cap (max_attempts 0, as rows made through the record API have),
 * releases `failed` with its message. On a server without the queue, any rejection marks the job failed
 * with the result `{ error: message }`.
 *
 * Flow control (docs/flow-control.md): a RateLimitedError releases `retry` with
 * `rateLimitedFor` (see there); a job with a deadline has `signal` aborted
 * with a JobTimeoutError shortly before it, and is released `retry` with
 * that error at once: what the handler returns or throws afterwards is not
 * written.
 */
export type JobHandler<R = unknown, P = unknown> = (job: WorkerJob<P>, signal: AbortSignal) => Promise<R>;

export interface WorkerOptions<R = unknown, P = unknown> {
  /**
   * Unique per live worker (include the host/pid/a random part): the server
   * knows holders only by this id. "pb-fleet-sweeper" is reserved (the server's sweeper).
   *
   * With a client signed in as a worker identity, the Worker claims as
   * `${id}/${workerId}` (id: the identity's record id, known once signed in,
   * when the Worker starts), since the server takes only the id or
   * `${id}/...` from it; a workerId that already is the id or begins with
   * `${id}/` is kept as it is. Optional then: the default is
   * `${hostname}-${pid}`. `worker.workerId` is the id in use.
   */
  workerId?: string;
  /** Runs every job the Worker claims. Give this or `handlers`, not both. */
  handler?: JobHandler<R, P>;
  /**
   * One handler per queue, by queue name (1 to MAX_CLAIM_QUEUES of them): the
   * Worker claims only jobs of these queues (claim-next's `queue`) and runs
   * each with its queue's handler. Not with `handler`, nor with `queue` (the
   * queues claimed from are these names). Needs a server with claim-next.
   */
  handlers?: Readonly<Record<string, JobHandler<R, P>>>;
  /** Jobs run at once (default 1). */
  concurrency?: number;
  /**
   * At most this many claimed jobs waiting in the Worker's claim-ahead buffer
   * for a free slot (default 0: none, and a slot stays taken until its job's
   * report has been answered, as before the buffer; measured, claiming ahead
   * raised p99 claim-to-completion 2.7x and gained no throughput against a
   * server that is the bottleneck, so it is opt-in: README, "Worker"). Fewer
   * are claimed ahead when handlers are slow: only as many as the slots
   * would start within about CLAIM_AHEAD_HORIZON_MS (500 ms) at the handlers'
   * measured pace, and none until a first handler has returned. A buffered
   * job is claimed (its attempt counted, its `timeout_seconds` running from
   * that claim) and its lease is renewed with the others'. See
   * worker/claim-ahead.ts.
   */
  prefetch?: number;
  /** Lease asked for on claim and renew, seconds: 1 to 3600 (the server's bounds), default 30. */
  leaseSeconds?: number;
  /**
   * Renew after this fraction of the lease (default 1/3), so two renews can
   * fail before it lapses. The worker renews all its leases together, in one
   * heartbeat per this interval.
   */
  renewEvery?: number;
  /** First wait when there is nothing to claim, ms (default 500); doubles with jitter per empty poll. */
  pollInterval?: number;
  /** Longest wait between polls, ms (default 10 000). */
  maxPollInterval?: number;
  /** Only jobs whose probe_key starts with this. */
  probeKeyPrefix?: string;
  /**
   * Only jobs of this queue, or of these (1 to MAX_CLAIM_QUEUES names), sent
   * as claim-next's `queue`. Default: every queue the client may take (a
   * worker identity with `queues`: only those). Not with `handlers`.
   */
  queue?: string | readonly string[];
  /** How long to keep retrying a release (or complete) or result write that fails transiently, ms (default 60 000; 0: no retry). */
  reportRetryMs?: number;
  logger?: FleetLogger;
}

export type StopMode =
  /**
   * Claim nothing more; let running handlers finish and report (default).
   * Jobs waiting in the claim-ahead buffer are run too, as slots free up:
   * each is claimed already, its attempt counted, and running it is the one
   * way to neither spend that attempt for nothing (a hand-back to pending
   * keeps the count) nor hold other jobs back (the server gives an attempt
   * back only with `retry` + `rateLimitedFor`, which parks the job's whole
   * group or queue). At most `prefetch` jobs, each due to start within about
   * CLAIM_AHEAD_HORIZON_MS: the stop takes about that much longer.
   */
  | "finish"
  /**
   * Abort running handlers and hand their jobs back to pending. The protocol
   * refuses a release to pending while the lease is live (that path exists for
   * a dead holder's job), so the worker first shortens its lease to the
   * server's 1 s floor with a renew, waits it out, and then releases to
   * pending as the holder. Like any re-queue this counts in reclaim_count and
   * consecutive_orphan_count. Takes about 1.3 s. Jobs waiting in the
   * claim-ahead buffer are handed back the same way, never run (their
   * attempt stays counted, as for a running job handed back).
   */
  | "release"
  /**
   * Abort running handlers and walk away: no renew, no release, nothing
   * written. Leases lapse and the jobs come back through the sweeper or an
   * expired-lease claim, as after a crash. So do the claim-ahead buffer's.
   */
  | "abandon";

/** What each reason of a lost lease means, as the worker can tell it. */
const LEASE_LOST_MEANING: Partial<Record<LeaseLostReason, string>> = {
  renew_refused: "the server refused the renew: the lease lapsed, another worker claimed the job, or it was cancelled",
  timed_out: "the job's attempt passed its deadline (timeout_seconds); the server retries it",
  lease_expired: "the lease ran out while renews could not reach the server",
};

/**
 * The reason a handler's signal carries when its lease is lost. A cancel is
 * one of these (reason "renew_refused"): the renew's answer does not tell a
 * cancelled job from one claimed by another worker.
 */
export class LeaseLostError extends Error {
  readonly reason: LeaseLostReason;
  constructor(jobId: string, reason: LeaseLostReason) {
    const meaning = LEASE_LOST_MEANING[reason];
    super(`lease on job ${jobId} lost (${reason}${meaning ? `: ${meaning}` : ""})`);
    this.name = "LeaseLostError";
    this.reason = reason;
  }
}

/**
 * The reason a handler's signal carries when its job's attempt is about to
 * pass its deadline (docs/flow-control.md "Timeouts"); its message, the server's own
 * wording ("timed out after N s"), is the error the job is released with.
 */
export class JobTimeoutError extends Error {
  readonly jobId: string;
  readonly timeoutSeconds: number;
  constructor(jobId: string, timeoutSeconds: number) {
    super(timedOutError(timeoutSeconds));
    this.name = "JobTimeoutError";
    this.jobId = jobId;
    this.timeoutSeconds = timeoutSeconds;
  }
}

/** The reason a handler's signal carries when the worker stops in "release" or "abandon" mode. */
export class WorkerStoppingError extends Error {
  constructor(mode: StopMode) {
    super(`worker stopping (${mode})`);
    this.name = "WorkerStoppingError";
  }
}
