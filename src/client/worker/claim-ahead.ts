/**
 * The claim-ahead buffer, and the slots it fills: how many jobs the next
 * claim asks for, and which claimed jobs start when.
 *
 * A claimed job joins the buffer, and leaves it as soon as a slot takes it
 * (at once, when the claim was for free slots). With `prefetch` > 0 the
 * poll loop also claims ahead: when no slot is free and the buffer holds
 * at most half its target, it asks claim-next for the rest of the target,
 * so a handler that returns is replaced at once, from the buffer, while
 * the next claim-next is on the wire. The target is the number of jobs the
 * slots will start within about CLAIM_AHEAD_HORIZON_MS, at most `prefetch`
 * (see #aheadTarget), so none waits long: fast handlers: up to `prefetch`;
 * handlers of 10 s at concurrency 50: 2; slower ones, or before a handler
 * has returned: none; and fewer when starts come slower than the handlers
 * would allow (reports held back by a slow server, say).
 *
 * A buffered job is claimed: its attempt is counted, its lease held, its
 * `timeout_seconds` running. So:
 * - its lease is renewed by the heartbeat with every other lease (it is in
 *   the Worker's jobs like a running job), and lost the same way: a renew
 *   refused, or its local end reached unrenewed. A lost buffered job is
 *   dropped and never run (lease_lost, as for a running job);
 * - its timeout is armed at its claim: when it fires while the job waits,
 *   the job is released `retry` with the timeout's error (as the server
 *   would retry it at its deadline) and never run; a job is not started
 *   once its timeout is due, nor with less than `startMarginMs` left on its
 *   lease (it waits for the next renew, which then starts it, or for the
 *   loss of its lease);
 * - `start_by` is the server's: it guards the claim (the first start as the
 *   server counts it), which a buffered job has passed;
 * - on stop, see StopMode: "finish" runs it, "release" hands it back,
 *   "abandon" walks away; it is never released unrun with `retry` (that
 *   would spend an attempt) nor with `rateLimitedFor` (that would park
 *   its group or queue).
 * A slot is a running handler: with the buffer, a job whose handler has
 * returned frees its slot while its report is under way (at most
 * `concurrency` such reports: see #maxStarted). Without it (prefetch 0) a
 * slot is taken until the report is answered, as before.
 */
import {
  CLAIM_AHEAD_HORIZON_MS, DURATION_WEIGHT, START_GAP_MAX_MS, timeoutMargin, type ActiveJob,
} from "./active-job.js";

export interface ClaimAheadOptions {
  /** The Worker's jobs (buffered, running and reporting). Read live. */
  jobs: ReadonlySet<ActiveJob>;
  concurrency: number;
  prefetch: number;
  /** A buffered job is not started with less than this left on its lease (it waits for the next renew, or its loss). */
  startMarginMs: number;
  /** Whether buffered jobs may start: not once a "release" or "abandon" stop has begun (stop() winds them down). */
  mayStart: () => boolean;
  /** Runs a job taken out of the buffer: its handler (unless its signal has been aborted), then its report. */
  launch: (job: ActiveJob) => void;
  /** The buffer has room again: the loop may claim (ahead). */
  onRoom: () => void;
}

export class ClaimAheadBuffer {
  readonly #jobs: ReadonlySet<ActiveJob>;
  readonly #concurrency: number;
  readonly #prefetch: number;
  /**
   * At most this many jobs started and not yet ended (handler or report
   * running): `concurrency` without the buffer (a slot is taken until its
   * report is answered, as before it), else twice that (a slot is free once
   * its handler returns, and at most `concurrency` reports wait behind the
   * running handlers, so results waiting for a slow server stay bounded).
   */
  readonly #maxStarted: number;
  readonly #startMarginMs: number;
  readonly #mayStartAny: () => boolean;
  readonly #launch: (job: ActiveJob) => void;
  readonly #onRoom: () => void;
  /** Claimed jobs not started yet, in claim order. */
  readonly #buffer: ActiveJob[] = [];
  /** Handlers running now. */
  #handlers = 0;
  /** Running average of handlers' durations, ms; null until one has returned. */
  #handlerMs: number | null = null;
  /**
   * Running average of the time between two handlers' starts, ms (each gap
   * counted up to START_GAP_MAX_MS); and when the last one started.
   */
  #startGapMs = 0;
  #lastStartAt: number | null = null;

  constructor(opts: ClaimAheadOptions) {
    this.#jobs = opts.jobs;
    this.#concurrency = opts.concurrency;
    this.#prefetch = opts.prefetch;
    this.#maxStarted = opts.prefetch === 0 ? opts.concurrency : 2 * opts.concurrency;
    this.#startMarginMs = opts.startMarginMs;
    this.#mayStartAny = opts.mayStart;
    this.#launch = opts.launch;
    this.#onRoom = opts.onRoom;
  }

  /** Claimed jobs waiting for a slot. */
  get length(): number {
    return this.#buffer.length;
  }

  /** A claimed job waits here until fill() starts it. */
  push(job: ActiveJob): void {
    this.#buffer.push(job);
  }

  /** A handler starts: counted in its slot and in the pace of starts. Returns its start time (for handlerEnded). */
  handlerStarted(): number {
    this.#handlers++;
    const startedAt = Date.now();
    if (this.#lastStartAt !== null) {
      const gap = Math.min(START_GAP_MAX_MS, startedAt - this.#lastStartAt);
      this.#startGapMs += DURATION_WEIGHT * (gap - this.#startGapMs);
    }
    this.#lastStartAt = startedAt;
    return startedAt;
  }

  /** A handler started at `startedAt` has returned: its slot is free, and its duration counts in the handlers' pace. */
  handlerEnded(startedAt: number): void {
    this.#handlers--;
    const ms = Date.now() - startedAt;
    this.#handlerMs = this.#handlerMs === null ? ms : this.#handlerMs + DURATION_WEIGHT * (ms - this.#handlerMs);
  }

  /**
   * How many jobs the next claim asks for: the free slots it would fill at
   * once; without any, the buffer's room once it is at most half full (so a
   * claim is worth its round trip); 0: none now.
   */
  claimLimit(): number {
    return this.claimLimitAfter(0);
  }

  /**
   * claimLimit once `ended` of the jobs started (their handlers returned,
   * their reports under way) have left: what a claim sent with those
   * reports may ask for (see claim-rides.ts).
   */
  claimLimitAfter(ended: number): number {
    const buffered = this.#buffer.length;
    const free = this.#startRoom(ended) - buffered;
    if (free > 0) return free;
    const target = this.#aheadTarget();
    return buffered * 2 <= target ? target - buffered : 0;
  }

  /**
   * Jobs that may start now (or once `ended` started jobs have left): free
   * slots, within the bound of jobs started and not ended (#maxStarted).
   */
  #startRoom(ended = 0): number {
    return Math.min(this.#concurrency - this.#handlers, this.#maxStarted - (this.#jobs.size - ended - this.#buffer.length));
  }

  /**
   * How many jobs the buffer should hold (see the top of this file): as
   * many as the slots start within CLAIM_AHEAD_HORIZON_MS, at the slower of
   * two paces: the handlers' (their average duration / concurrency) and the
   * starts' as seen (slower when something else holds the slots back, such
   * as reports waiting for a slow server). None before a handler has returned.
   */
  #aheadTarget(): number {
    if (this.#prefetch === 0 || this.#handlerMs === null) return 0;
    const perStartMs = Math.max(this.#handlerMs / this.#concurrency, this.#startGapMs);
    if (perStartMs <= 0) return this.#prefetch;
    return Math.min(this.#prefetch, Math.floor(CLAIM_AHEAD_HORIZON_MS / perStartMs));
  }

  /** Starts buffered jobs, in claim order, while there is room and one may start (see #mayStart). */
  fill(): void {
    const buffer = this.#buffer;
    if (buffer.length === 0) return;
    if (!this.#mayStartAny()) return;
    let room = this.#startRoom();
    if (room <= 0) return;
    const now = Date.now();
    for (let i = 0; i < buffer.length && room > 0;) {
      const job = buffer[i]!;
      if (!this.#mayStart(job, now)) {
        i++;
        continue;
      }
      buffer.splice(i, 1);
      room--;
      this.#launch(job);
    }
    // The buffer has room again: the loop may claim ahead.
    this.#onRoom();
  }

  /** A buffered job may start: no earlier run of it is left, its lease is not about to end, its timeout is not due. */
  #mayStart(job: ActiveJob, now: number): boolean {
    if (job.previous !== null) {
      if (this.#jobs.has(job.previous)) return false;
      job.previous = null;
    }
    if (job.attempt === null) return job.deadline - now > this.#startMarginMs;
    // A lease cut short by the attempt's deadline is the timeout's concern: its margin, not the lease's.
    if (job.deadline < job.attempt.at && job.deadline - now <= this.#startMarginMs) return false;
    return job.attempt.at - timeoutMargin(job.attempt) > now;
  }

  /** Takes a job out of the buffer unrun (lost, timed out, or stopping): wound down at once. */
  unbuffer(job: ActiveJob): void {
    const i = this.#buffer.indexOf(job);
    if (i < 0) return;
    this.#buffer.splice(i, 1);
    this.#launch(job);
    this.#onRoom();
  }
}
