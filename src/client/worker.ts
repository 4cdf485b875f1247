/**
 * Worker: claims jobs, runs a handler on each while renewing its lease, then
 * reports the outcome. The order of the report is what keeps results honest:
 * release first (the compare-and-set), and write the result only when that
 * release committed. A worker that lost its lease writes nothing.
 */
import { DEFAULT_LEASE_SECONDS, MIN_LEASE_SECONDS } from "../lib/lease.js";
import type { JobView, ReleaseResponse, RenewResponse } from "../lib/types.js";
import { backoffDelay, sleep } from "./backoff.js";
import { isTransientError, toError } from "./errors.js";
import { FleetEmitter, type FleetLogger, type LeaseLostReason } from "./events.js";
import type { FleetApi, HeldJob } from "./fleet-client.js";
import {
  integerFrom, LEASE_SECONDS, NON_NEGATIVE_MS, numberOption, POSITIVE_MS, workerIdOption, type NumberRule,
} from "./options.js";

/**
 * What a handler gets: the claimed row's view plus who holds it and with which
 * token. Should the worker win its own running job again (see Worker), these
 * fields are updated in place to the claim the handler now runs under.
 */
export interface WorkerJob extends JobView {
  workerId: string;
  leaseToken: string | undefined;
  alreadyHeld: boolean;
}

/**
 * Runs one job. `signal` aborts when the lease is lost (or the worker stops in
 * "release"/"abandon" mode): stop then, nothing the handler returns afterwards
 * is written. A rejection marks the job failed with `{ error: message }`.
 */
export type JobHandler<R = unknown> = (job: WorkerJob, signal: AbortSignal) => Promise<R>;

export interface WorkerOptions<R = unknown> {
  /**
   * Unique per live worker (include the host/pid/a random part): the server
   * knows holders only by this id. "pb-fleet-sweeper" is reserved (the server's sweeper).
   */
  workerId: string;
  handler: JobHandler<R>;
  /** Jobs run at once (default 1). */
  concurrency?: number;
  /** Lease asked for on claim and renew, seconds: 1 to 3600 (the server's bounds), default 30. */
  leaseSeconds?: number;
  /** Renew after this fraction of the lease (default 1/3), so two renews can fail before it lapses. */
  renewEvery?: number;
  /** First wait when there is nothing to claim, ms (default 500); doubles with jitter per empty poll. */
  pollInterval?: number;
  /** Longest wait between polls, ms (default 10 000). */
  maxPollInterval?: number;
  /** Only jobs whose probe_key starts with this. */
  probeKeyPrefix?: string;
  /** How long to keep retrying a release or result write that fails transiently, ms (default 60 000; 0: no retry). */
  reportRetryMs?: number;
  logger?: FleetLogger;
}

export type StopMode =
  /** Claim nothing more; let running handlers finish and report (default). */
  | "finish"
  /**
   * Abort running handlers and hand their jobs back to pending. The protocol
   * refuses a release to pending while the lease is live (that path exists for
   * a dead holder's job), so the worker first shortens its lease to the
   * server's 1 s floor with a renew, waits it out, and then releases to
   * pending as the holder. Like any re-queue this counts in reclaim_count and
   * consecutive_orphan_count. Takes about 1.3 s.
   */
  | "release"
  /**
   * Abort running handlers and walk away: no renew, no release, nothing
   * written. Leases lapse and the jobs come back through the sweeper or an
   * expired-lease claim, as after a crash.
   */
  | "abandon";

/** The reason a handler's signal carries when its lease is lost. */
export class LeaseLostError extends Error {
  readonly reason: LeaseLostReason;
  constructor(jobId: string, reason: LeaseLostReason) {
    super(`lease on job ${jobId} lost (${reason})`);
    this.name = "LeaseLostError";
    this.reason = reason;
  }
}

/** The reason a handler's signal carries when the worker stops in "release" or "abandon" mode. */
export class WorkerStoppingError extends Error {
  constructor(mode: StopMode) {
    super(`worker stopping (${mode})`);
    this.name = "WorkerStoppingError";
  }
}

type Outcome = { status: "done"; result: unknown } | { status: "failed"; error: string };

interface ActiveJob {
  id: string;
  /** What the handler was given. */
  view: WorkerJob;
  leaseToken: string | undefined;
  /**
   * Bumped when a new claim of the job replaces the lease this entry runs
   * under: the answer of a renew sent under the old lease is then ignored.
   */
  leaseGeneration: number;
  /** Local end of the lease: send time of the last successful claim/renew + lease. Never later than the server's. */
  deadline: number;
  controller: AbortController;
  renewTimer: ReturnType<typeof setTimeout> | null;
  deadlineTimer: ReturnType<typeof setTimeout> | null;
  renewing: Promise<void> | null;
  /** The handler has settled: no more renews. */
  settled: boolean;
  lost: boolean;
  stopMode: StopMode | null;
  done: Promise<void>;
}

const HAND_BACK_FLOOR_SECONDS = MIN_LEASE_SECONDS;
/** Wait past the shortened lease, for the request's own transit and clock granularity. */
const HAND_BACK_MARGIN_MS = 300;
const REPORT_BACKOFF = { initialMs: 200, maxMs: 2_000 };

export class Worker<R = unknown> extends FleetEmitter {
  readonly workerId: string;
  readonly #client: FleetApi;
  readonly #handler: JobHandler<R>;
  readonly #concurrency: number;
  readonly #leaseSeconds: number;
  readonly #leaseMs: number;
  readonly #renewIntervalMs: number;
  readonly #poll: { initialMs: number; maxMs: number };
  readonly #probeKeyPrefix: string | undefined;
  readonly #reportRetryMs: number;
  /**
   * A Set, not a map by job id: a job lost and then claimed again by this
   * worker is two entries until the first ends (the second waits for it).
   */
  readonly #active = new Set<ActiveJob>();
  #running = false;
  #loop: Promise<void> | null = null;
  #stopping: Promise<void> | null = null;
  /** Aborted by stop() to cut a poll wait short. */
  readonly #wake = new AbortController();
  #slotFreed: (() => void) | null = null;

  constructor(client: FleetApi, opts: WorkerOptions<R>) {
    super("worker", opts.logger);
    const option = (name: keyof WorkerOptions, fallback: number, rule: NumberRule): number =>
      numberOption("Worker", name, opts[name], fallback, rule);
    this.workerId = workerIdOption("Worker", "workerId", opts.workerId);
    if (typeof opts.handler !== "function") throw new TypeError("Worker: `handler` must be a function (job, signal) => Promise<result>");
    this.#concurrency = option("concurrency", 1, integerFrom(1));
    this.#leaseSeconds = option("leaseSeconds", DEFAULT_LEASE_SECONDS, LEASE_SECONDS);
    const renewEvery = option("renewEvery", 1 / 3, { test: (n) => n > 0 && n < 1, expected: "a fraction of the lease between 0 and 1" });
    this.#poll = { initialMs: option("pollInterval", 500, POSITIVE_MS), maxMs: option("maxPollInterval", 10_000, POSITIVE_MS) };
    this.#reportRetryMs = option("reportRetryMs", 60_000, NON_NEGATIVE_MS);
    this.#client = client;
    this.#handler = opts.handler;
    this.#leaseMs = this.#leaseSeconds * 1000;
    this.#renewIntervalMs = this.#leaseMs * renewEvery;
    this.#probeKeyPrefix = opts.probeKeyPrefix;
  }

  /** Jobs whose handler or report is still running. */
  get inFlight(): number {
    return this.#active.size;
  }

  get running(): boolean {
    return this.#running;
  }

  /** Starts claiming. Returns the worker for chaining. */
  start(): this {
    if (this.#stopping) throw new Error("Worker: cannot start again after stop()");
    if (!this.#running) {
      this.#running = true;
      this.#loop = this.#pollLoop();
    }
    return this;
  }

  /** Stops claiming, deals with running jobs as `mode` says, and resolves when nothing is in flight. */
  stop(opts: { mode?: StopMode } = {}): Promise<void> {
    const mode = opts.mode ?? "finish";
    if (this.#stopping) return this.#stopping;
    this.#running = false;
    this.#wake.abort();
    this.#slotFreed?.();
    this.#stopping = (async () => {
      // The loop may still be starting jobs it has just claimed: let it, then
      // treat those like the others.
      await this.#loop;
      for (const job of this.#active.values()) {
        if (mode === "finish" || job.settled) continue;
        job.stopMode = mode;
        if (mode === "abandon") this.#clearTimers(job);
        job.controller.abort(new WorkerStoppingError(mode));
      }
      await Promise.all([...this.#active.values()].map((j) => j.done));
    })();
    return this.#stopping;
  }

  async #pollLoop(): Promise<void> {
    let emptyPolls = 0;
    while (this.#running) {
      const free = this.#concurrency - this.#active.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => {
          this.#slotFreed = resolve;
        });
        this.#slotFreed = null;
        continue;
      }
      const sentAt = Date.now();
      let held: HeldJob[];
      try {
        held = await this.#client.claimNext({
          workerId: this.workerId,
          leaseSeconds: this.#leaseSeconds,
          limit: free,
          probeKeyPrefix: this.#probeKeyPrefix,
        });
      } catch (err) {
        this.report("error", { op: "claimNext", error: toError(err) });
        await sleep(backoffDelay(emptyPolls++, this.#poll), this.#wake.signal);
        continue;
      }
      // Claims of jobs already running here start nothing: polling again at
      // once would only get them again, so such a poll counts as empty.
      let started = 0;
      for (const h of held) if (this.#startJob(h, sentAt)) started++;
      if (started === 0) {
        await sleep(backoffDelay(emptyPolls++, this.#poll), this.#wake.signal);
        continue;
      }
      emptyPolls = 0;
    }
  }

  /**
   * One handler per job in this worker, whatever the server hands out:
   * - the job's handler is running under a live lease: no second handler. An
   *   alreadyHeld answer is that same lease (nothing to do); a fresh win (the
   *   server saw the lease lapse first, its clock ahead of ours) replaces the
   *   lease the running handler works under, so it goes on undisturbed;
   * - the job's handler has finished and its report is under way: an
   *   alreadyHeld answer is the lease that report releases, so nothing starts;
   * - otherwise an earlier run of the job is still winding down (its lease was
   *   lost and its handler has not returned yet, or a report under a lapsed
   *   lease): the new claim is the job to do again, so its handler starts once
   *   that run has ended, never beside it. Its lease is renewed meanwhile.
   * Returns whether a new run was added.
   */
  #startJob(held: HeldJob, sentAt: number): boolean {
    const previous = this.#latestRunOf(held.job.id);
    if (previous && !previous.settled && !previous.lost) {
      if (!held.alreadyHeld) this.#adoptClaim(previous, held, sentAt);
      return false;
    }
    if (previous && previous.settled && !previous.lost && held.alreadyHeld) return false;
    const view: WorkerJob = { ...held.job, workerId: this.workerId, leaseToken: held.leaseToken, alreadyHeld: held.alreadyHeld };
    const job: ActiveJob = {
      id: held.job.id,
      view,
      leaseToken: held.leaseToken,
      leaseGeneration: 0,
      deadline: sentAt + this.#leaseMs,
      controller: new AbortController(),
      renewTimer: null,
      deadlineTimer: null,
      renewing: null,
      settled: false,
      lost: false,
      stopMode: null,
      done: Promise.resolve(),
    };
    this.#active.add(job);
    this.#reportClaimed(held);
    this.#armDeadline(job);
    // An alreadyHeld claim did not extend the lease: its end is unknown, so renew at once.
    this.#scheduleRenew(job, held.alreadyHeld ? 0 : this.#renewIntervalMs);
    job.done = this.#run(job, previous?.done ?? null).finally(() => {
      this.#clearTimers(job);
      this.#active.delete(job);
      this.#slotFreed?.();
    });
    return true;
  }

  /** The newest entry of a job: a second one exists only while it waits for the first to end. */
  #latestRunOf(jobId: string): ActiveJob | undefined {
    let latest: ActiveJob | undefined;
    for (const job of this.#active) if (job.id === jobId) latest = job;
    return latest;
  }

  /** A fresh claim of a job this worker is running: the handler goes on under the new lease. */
  #adoptClaim(job: ActiveJob, held: HeldJob, sentAt: number): void {
    job.leaseToken = held.leaseToken;
    job.leaseGeneration++;
    job.deadline = sentAt + this.#leaseMs;
    Object.assign(job.view, held.job, { leaseToken: held.leaseToken, alreadyHeld: false });
    this.#reportClaimed(held);
    this.#armDeadline(job);
    this.#scheduleRenew(job, this.#renewIntervalMs);
  }

  #reportClaimed(held: HeldJob): void {
    this.report("claimed", {
      jobId: held.job.id,
      probeKey: held.job.probe_key,
      workerId: this.workerId,
      version: held.job.version,
      leaseToken: held.leaseToken,
      alreadyHeld: held.alreadyHeld,
    });
  }

  /** `earlierRun`: the end of this job's previous run in this worker, which this one must not overlap. */
  async #run(job: ActiveJob, earlierRun: Promise<void> | null): Promise<void> {
    if (earlierRun) await earlierRun;
    // Aborted before it began (lost while waiting, or stopping): the handler never runs.
    const outcome = job.controller.signal.aborted ? null : await this.#runHandler(job);
    job.settled = true;
    this.#clearTimers(job);
    // A renew still on the wire may yet say the lease is gone.
    if (job.renewing) await job.renewing;
    if (job.lost || job.stopMode === "abandon") return;
    if (job.stopMode === "release") return this.#handBack(job);
    if (outcome) await this.#report(job, outcome);
  }

  async #runHandler(job: ActiveJob): Promise<Outcome> {
    try {
      return { status: "done", result: await this.#handler(job.view, job.controller.signal) };
    } catch (err) {
      return { status: "failed", error: toError(err).message };
    }
  }

  // ---- lease upkeep ------------------------------------------------------------------

  #scheduleRenew(job: ActiveJob, delayMs: number): void {
    if (isDropped(job)) return;
    if (job.renewTimer) clearTimeout(job.renewTimer);
    job.renewTimer = setTimeout(() => {
      job.renewTimer = null;
      const renewing: Promise<void> = this.#renew(job).finally(() => {
        if (job.renewing === renewing) job.renewing = null;
      });
      job.renewing = renewing;
    }, delayMs);
  }

  async #renew(job: ActiveJob): Promise<void> {
    if (isDropped(job)) return;
    const sentAt = Date.now();
    const remaining = job.deadline - sentAt;
    if (remaining <= 0) return this.#loseLease(job, "lease_expired");
    const generation = job.leaseGeneration;
    // A new claim adopted meanwhile has its own lease and renew schedule.
    const superseded = (): boolean => job.leaseGeneration !== generation;
    let answer: RenewResponse;
    try {
      // An answer after the lease ended would be useless: wait no longer than that.
      answer = await this.#client.renew(job.id, this.workerId, this.#leaseSeconds, job.leaseToken, { timeoutMs: remaining });
    } catch (err) {
      if (isDropped(job) || superseded()) return;
      this.report("error", { op: "renew", jobId: job.id, error: toError(err) });
      // Try again soon; the deadline timer ends it if the lease runs out first.
      this.#scheduleRenew(job, Math.min(this.#renewIntervalMs / 2, 1_000));
      return;
    }
    if (isDropped(job) || superseded()) return;
    if (!answer.renewed) return this.#loseLease(job, "renew_refused");
    job.deadline = sentAt + this.#leaseMs;
    this.#armDeadline(job);
    this.report("renewed", {
      jobId: job.id, workerId: this.workerId, version: answer.job.version, leaseExpiresAt: answer.job.lease_expires_at,
    });
    this.#scheduleRenew(job, this.#renewIntervalMs);
  }

  #armDeadline(job: ActiveJob): void {
    if (job.deadlineTimer) clearTimeout(job.deadlineTimer);
    job.deadlineTimer = setTimeout(() => {
      job.deadlineTimer = null;
      if (!job.settled) this.#loseLease(job, "lease_expired");
    }, Math.max(0, job.deadline - Date.now()));
  }

  #loseLease(job: ActiveJob, reason: LeaseLostReason): void {
    if (job.lost) return;
    job.lost = true;
    this.#clearTimers(job);
    this.report("lease_lost", { jobId: job.id, workerId: this.workerId, reason });
    job.controller.abort(new LeaseLostError(job.id, reason));
  }

  #clearTimers(job: ActiveJob): void {
    if (job.renewTimer) clearTimeout(job.renewTimer);
    if (job.deadlineTimer) clearTimeout(job.deadlineTimer);
    job.renewTimer = null;
    job.deadlineTimer = null;
  }

  // ---- reporting ---------------------------------------------------------------------

  async #report(job: ActiveJob, outcome: Outcome): Promise<void> {
    const release = await this.#persist("release", job.id, () =>
      this.#client.release(job.id, this.workerId, outcome.status, job.leaseToken));
    if (release === null) return;
    const answer = release.value;
    if (!answer.released && answer.reason !== "refused_terminal_same_holder") {
      // Someone else holds the job now (or it lapsed): its result is theirs to write.
      this.report("lease_lost", { jobId: job.id, workerId: this.workerId, reason: answer.reason });
      return;
    }
    this.report("released", {
      jobId: job.id,
      workerId: this.workerId,
      status: outcome.status,
      version: answer.released ? answer.job.version : null,
      committed: answer.released ? "released" : "refused_terminal_same_holder",
    });
    const result = outcome.status === "done" ? outcome.result : { error: outcome.error };
    const written = await this.#persist("writeResult", job.id, () => this.#client.writeResult(job.id, result));
    if (written === null) return;
    this.report("result_written", { jobId: job.id, workerId: this.workerId, status: outcome.status });
    if (outcome.status === "failed") this.report("failed", { jobId: job.id, workerId: this.workerId, error: outcome.error });
  }

  /** Hands a job back to pending: see StopMode "release". */
  async #handBack(job: ActiveJob): Promise<void> {
    try {
      const shortened = await this.#client.renew(job.id, this.workerId, HAND_BACK_FLOOR_SECONDS, job.leaseToken);
      if (!shortened.renewed) {
        this.report("lease_lost", { jobId: job.id, workerId: this.workerId, reason: "renew_refused" });
        return;
      }
      await sleep(HAND_BACK_FLOOR_SECONDS * 1000 + HAND_BACK_MARGIN_MS);
      for (let attempt = 0; ; attempt++) {
        const answer: ReleaseResponse = await this.#client.release(job.id, this.workerId, "pending", job.leaseToken);
        if (answer.released) {
          this.report("released", {
            jobId: job.id, workerId: this.workerId, status: "pending", version: answer.job.version, committed: "released",
          });
          return;
        }
        // The server's clock may be a little behind ours: wait a little more.
        if (answer.reason === "refused_lease_live" && attempt < 5) {
          await sleep(HAND_BACK_MARGIN_MS);
          continue;
        }
        this.report("lease_lost", { jobId: job.id, workerId: this.workerId, reason: answer.reason });
        return;
      }
    } catch (err) {
      // The lease lapses on its own; the sweeper or a claim picks the job up.
      this.report("error", { op: "handBack", jobId: job.id, error: toError(err) });
    }
  }

  /**
   * Runs a report step, retrying transient failures with backoff for up to
   * reportRetryMs. Safe because both steps are idempotent for this worker: a
   * repeated terminal release is answered refused_terminal_same_holder, and a
   * result write just writes the same value. null = gave up (reported).
   */
  async #persist<T>(op: string, jobId: string, step: () => Promise<T>): Promise<{ value: T } | null> {
    const giveUpAt = Date.now() + this.#reportRetryMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return { value: await step() };
      } catch (err) {
        this.report("error", { op, jobId, error: toError(err) });
        if (!isTransientError(err) || Date.now() >= giveUpAt) return null;
        await sleep(backoffDelay(attempt, REPORT_BACKOFF));
      }
    }
  }
}

/** No more lease upkeep: the handler settled, the lease is gone, or the worker walked away. */
function isDropped(job: ActiveJob): boolean {
  return job.settled || job.lost || job.stopMode === "abandon";
}
