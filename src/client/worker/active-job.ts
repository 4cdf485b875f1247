/** The Worker's record of one claimed job, its attempt's deadline, and the timing constants of its upkeep. */
import { MIN_LEASE_SECONDS, parsePbDate } from "../../lib/lease.js";
import type { ClaimedJobView } from "../fleet-client.js";
import type { StopMode, WorkerJob } from "./api.js";

export type Outcome =
  | { status: "done"; result: unknown }
  | { status: "failed"; error: string; permanent: boolean }
  /**
   * Released retry whatever the job's cap: its attempt timed out (as the
   * server's own timeout would retry it), or it waits out a rate limit
   * (`rateLimitedFor`, which never uses up an attempt).
   */
  | { status: "retry"; error: string; rateLimitedFor?: number };

export interface ActiveJob {
  id: string;
  /** What the handler was given. */
  view: WorkerJob<any>;
  leaseToken: string | undefined;
  /** The claim came from a server with the queue (its job view carries `attempts`): one release with result/error, progress on renews. */
  queue: boolean;
  /** The latest progress the handler recorded that no successful renew has carried yet. */
  progress: { value: unknown } | null;
  /**
   * Bumped when a new claim of the job replaces the lease this entry runs
   * under: the answer of a renew sent under the old lease is then ignored.
   */
  leaseGeneration: number;
  /** Local end of the lease: send time of the last successful claim/renew + lease. Never later than the server's. */
  deadline: number;
  /**
   * The row's version as last known: the claim's, then the renew answers'
   * (+1 per item a heartbeat answered renewed: a renew bumps it by one, and
   * nothing else writes a row while its holder's lease is live). null once a
   * renew's answer was lost (it may have written): not known any more.
   */
  version: number | null;
  controller: AbortController;
  /** The attempt's deadline on the local clock, and its timeout (see attemptDeadline); null: none. */
  attempt: AttemptDeadline | null;
  /** Fires the timeout (see timeouts.ts). */
  timeoutTimer: ReturnType<typeof setTimeout> | null;
  /** The timeout's release, once the timeout fired: the handler's own outcome is then ignored. */
  timedOut: Promise<void> | null;
  /** The renew (heartbeat) of this lease on the wire; the next tick leaves the lease out until it has answered. */
  renewing: Promise<void> | null;
  /** Renew before the next regular tick: an alreadyHeld claim (its lease's end is unknown), or a renew that got no answer. */
  renewSoon: boolean;
  /** The handler has settled (or will never run: the job was dropped from the buffer): no more renews. */
  settled: boolean;
  lost: boolean;
  stopMode: StopMode | null;
  /** Out of the claim-ahead buffer: its handler runs, or it is being wound down unrun. */
  started: boolean;
  /**
   * An earlier run of the same job in this worker (its lease lost, its
   * handler or report not ended yet) that this one must not overlap: it
   * waits in the buffer until that run has left the worker (see Worker#startJob).
   */
  previous: ActiveJob | null;
}

/** The end of a claimed attempt (docs/flow-control.md "Timeouts"), epoch ms on the local clock, and its timeout. */
export interface AttemptDeadline {
  at: number;
  seconds: number;
}

/** What one renew of a lease sent: the lease (by generation) and the progress it carried. */
export interface Renewal {
  job: ActiveJob;
  generation: number;
  progress: { value: unknown } | null;
}

export const HAND_BACK_FLOOR_SECONDS = MIN_LEASE_SECONDS;
/** Wait past the shortened lease, for the request's own transit and clock granularity. */
export const HAND_BACK_MARGIN_MS = 300;
/** A renew that got no answer is tried again after min(renew interval / 2, this): see lease-upkeep.ts. */
export const RENEW_RETRY_MAX_MS = 1_000;
/** A timeout fires this long before the attempt's deadline at most (docs/flow-control.md: deadline − min(2 s, timeout / 10)). */
export const TIMEOUT_MARGIN_MAX_MS = 2_000;
/**
 * The claim-ahead buffer holds at most as many jobs as the slots start in
 * this long at the handlers' measured pace (see claim-ahead.ts):
 * a few claim-next round trips of a busy server (20-50 ms each), and far
 * below a lease or any timeout (1 s at least), since a buffered job's
 * deadline runs from its claim.
 */
export const CLAIM_AHEAD_HORIZON_MS = 500;
/**
 * A gap between two starts counts for at most this in their running average:
 * a pause with nothing to claim says little of the pace once jobs flow again
 * (after one, the buffer is back within a few dozen starts).
 */
export const START_GAP_MAX_MS = 10 * CLAIM_AHEAD_HORIZON_MS;
/** Weight of the latest sample in the running averages the buffer is sized by (handlers' durations, gaps between starts). */
export const DURATION_WEIGHT = 0.2;

/**
 * A progress value recorded by a handler is sent within this, in a heartbeat
 * of its own when the regular tick is further away, and a Worker sends at most
 * one such progress heartbeat per this interval (carrying every job with new
 * progress, up to MAX_BATCH_ITEMS a call): see lease-upkeep.ts.
 */
export const PROGRESS_FLUSH_MS = 1_000;

/** No more lease upkeep: the handler settled, the lease is gone, the job timed out, or the worker walked away. */
export function isDropped(job: ActiveJob): boolean {
  return job.settled || job.lost || job.timedOut !== null || job.stopMode === "abandon";
}

/**
 * The end of a claimed attempt on this machine's clock, or null when the
 * claim has no deadline. The server's deadline is the instant of its winning
 * claim + timeout_seconds, and that instant came after the claim was sent:
 * the send time + timeout_seconds is never later than the deadline, whatever
 * each clock reads (the claim's own answer is the estimate of the server's
 * clock, off by at most the request's round trip, always early). Without a
 * timeout_seconds, the deadline as the local clock reads it.
 */
export function attemptDeadline(job: ClaimedJobView, sentAt: number): AttemptDeadline | null {
  if (typeof job.deadline !== "string" || job.deadline === "") return null;
  const seconds = job.timeout_seconds;
  if (typeof seconds === "number" && Number.isFinite(seconds) && seconds > 0) return { at: sentAt + seconds * 1000, seconds };
  const at = parsePbDate(job.deadline);
  return at === null ? null : { at, seconds: Math.max(1, Math.round((at - sentAt) / 1000)) };
}

/** How long before the attempt's deadline its timeout fires: min(2 s, timeout / 10) (docs/flow-control.md). */
export function timeoutMargin(attempt: AttemptDeadline): number {
  return Math.min(TIMEOUT_MARGIN_MAX_MS, (attempt.seconds * 1000) / 10);
}

/** A lease's local end: the server clamps every lease to the attempt's deadline. */
export function leaseEnd(leaseEndsAt: number, attempt: AttemptDeadline | null): number {
  return attempt === null ? leaseEndsAt : Math.min(leaseEndsAt, attempt.at);
}

/** Cancels the job's timeout (see timeouts.ts): it has ended, lost its lease, or is being walked away from. */
export function disarmTimeout(job: ActiveJob): void {
  if (job.timeoutTimer !== null) clearTimeout(job.timeoutTimer);
  job.timeoutTimer = null;
}
