/**
 * Worker: claims jobs, runs a handler on each while renewing its lease, then
 * reports the outcome with one compare-and-set release. A worker that lost its
 * lease writes nothing.
 *
 * Which server it talks to is read from each claim answer: a job view that
 * carries `attempts` (a number) comes from claim-next of a server with the
 * queue (docs/queue.md), whose release takes the handler's result and error in its
 * own transaction and the target "retry", and whose renew takes progress. Any
 * other answer (an older pb-fleet, or claim-next's list-and-claim fallback)
 * gets the two-step report of before: release done/failed first, then write
 * the result (`{ error }` for a failure) only when that release committed.
 *
 * Requests are shared between jobs where the server allows it: one
 * POST /api/fleet/heartbeat per renew interval renews every lease the worker
 * holds (see worker/lease-upkeep.ts), and the releases of jobs finishing together go
 * out in one POST /api/fleet/complete (see worker/reports.ts). A server without
 * those endpoints (a 404 to the first call, remembered) gets one renew and one
 * release per job, as before.
 *
 * A client signed in as a worker identity may only claim under that
 * identity's record id: the Worker asks the client for the identity when it
 * starts, and claims, renews and reports as `${id}/${workerId}` from then on
 * (see WorkerOptions.workerId).
 *
 * Claim ahead (see worker/claim-ahead.ts): besides its free slots the
 * Worker keeps a few claimed jobs waiting in a local buffer (at most
 * `prefetch`, and only as many as will start within about
 * CLAIM_AHEAD_HORIZON_MS), so that a slot freed by a handler is filled at
 * once instead of after a claim-next round trip. A buffered job holds its
 * lease like a running one (the same heartbeat renews it), is dropped unrun
 * when that lease is lost or its attempt's timeout comes first, and is run on
 * a "finish" stop (see StopMode).
 *
 * Flow control (docs/flow-control.md): `handlers` gives one handler per queue, and the
 * Worker claims only from those queues. A job claimed with a deadline (its
 * `timeout_seconds`) has its handler aborted with a JobTimeoutError shortly
 * before it, and is released `retry` at once, while the lease is still live
 * (see worker/timeouts.ts); a handler that throws a RateLimitedError has its job
 * released `retry` with `rateLimitedFor`.
 */
import { hostname } from "node:os";
import { DEFAULT_LEASE_SECONDS } from "../lib/lease.js";
import { MAX_PROGRESS_BYTES } from "../lib/queue.js";
import { toError } from "./errors.js";
import { FleetEmitter, type FleetEventName, type FleetEvents, type FleetLogger } from "./events.js";
import type { FleetApi, HeldJob } from "./fleet-client.js";
import {
  integerFrom, LEASE_SECONDS, NON_NEGATIVE_MS, numberOption, POSITIVE_MS, workerIdOption, type NumberRule,
} from "./options.js";
import { jsonSizeProblem } from "./json-bytes.js";
import { checkClaimQueue } from "./queue-options.js";
import {
  RENEW_RETRY_MAX_MS, attemptDeadline, disarmTimeout, isDropped, leaseEnd, type ActiveJob, type Outcome,
} from "./worker/active-job.js";
import type { StopMode, WorkerJob, WorkerOptions } from "./worker/api.js";
import { ClaimAheadBuffer } from "./worker/claim-ahead.js";
import { ClaimLoop } from "./worker/claim-loop.js";
import { ClaimRides } from "./worker/claim-rides.js";
import type { WorkerEvents } from "./worker/events.js";
import { runHandler, type Handlers } from "./worker/handlers.js";
import { LeaseUpkeep } from "./worker/lease-upkeep.js";
import { claimContext, handlerOption, identityWorkerId, isQueueClaim } from "./worker/options.js";
import { JobReports } from "./worker/reports.js";
import { AttemptTimeouts } from "./worker/timeouts.js";
import { applyStopMode, handBack } from "./worker/stop.js";

export { COMPLETE_FLUSH_DELAY_MS } from "./completion-queue.js";

export {
  JobTimeoutError, LeaseLostError, WorkerStoppingError,
  type JobContext, type JobHandler, type StopMode, type WorkerJob, type WorkerOptions,
} from "./worker/api.js";
export { CLAIM_AHEAD_HORIZON_MS, PROGRESS_FLUSH_MS } from "./worker/active-job.js";
export { identityWorkerId } from "./worker/options.js";

export class Worker<R = unknown, P = unknown> extends FleetEmitter {
  /** The configured id until start() has the client's worker identity, then the id it claims under. */
  #workerId: string;
  readonly #client: FleetApi;
  /** The one handler, or the handlers by queue name (see WorkerOptions.handlers). */
  readonly #handler: Handlers<R, P>;
  readonly #leaseSeconds: number;
  readonly #leaseMs: number;
  readonly #renewIntervalMs: number;
  readonly #reportRetryMs: number;
  readonly #logger: FleetLogger | undefined;
  /**
   * A Set, not a map by job id: a job lost and then claimed again by this
   * worker is two entries until the first ends (the second waits for it).
   * Buffered, running and reporting jobs alike.
   */
  readonly #active = new Set<ActiveJob>();
  /** The newest entry of each job id in #active (see #startJob). */
  readonly #latest = new Map<string, ActiveJob>();
  #running = false;
  #loop: Promise<void> | null = null;
  #stopping: Promise<void> | null = null;
  #stopMode: StopMode | null = null;
  /** The claim-ahead buffer (claimed jobs not started yet) and the slots it fills. */
  readonly #buffer: ClaimAheadBuffer;
  /** Claims jobs into the buffer while the Worker runs. */
  readonly #claims: ClaimLoop;
  /** The claims on the wire, and those that ride on complete calls. */
  readonly #rides: ClaimRides;
  /** Resolves stop()'s wait once no job is left. */
  #idle: (() => void) | null = null;
  /** Renews the leases of #active, and loses those that end or are refused. */
  readonly #leases: LeaseUpkeep;
  /** Fires the attempts' timeouts. */
  readonly #timeouts: AttemptTimeouts;
  /** Finished jobs' reports (made again once the workerId is resolved, before any claim). */
  #reports: JobReports;
  /** This Worker's events, as its parts tell them. */
  readonly #events: WorkerEvents = {
    report: <K extends FleetEventName>(event: K, payload: FleetEvents[K][0]) => this.report(event, payload),
    wants: (event) => this.#wants(event),
  };

  constructor(client: FleetApi, opts: WorkerOptions<R, P>) {
    super("worker", opts.logger);
    const option = (name: keyof WorkerOptions, fallback: number, rule: NumberRule): number =>
      numberOption("Worker", name, opts[name], fallback, rule);
    // A worker identity's Worker needs no id of its own: its record id tells it apart (see WorkerOptions.workerId).
    this.#workerId = opts.workerId === undefined && client.isWorkerIdentity === true
      ? `${hostname()}-${process.pid}`
      : workerIdOption("Worker", "workerId", opts.workerId);
    this.#handler = handlerOption(opts);
    const queue = this.#handler instanceof Map ? [...this.#handler.keys()] : checkClaimQueue("Worker", opts.queue);
    const concurrency = option("concurrency", 1, integerFrom(1));
    const prefetch = option("prefetch", 0, integerFrom(0));
    this.#leaseSeconds = option("leaseSeconds", DEFAULT_LEASE_SECONDS, LEASE_SECONDS);
    const renewEvery = option("renewEvery", 1 / 3, { test: (n) => n > 0 && n < 1, expected: "a fraction of the lease between 0 and 1" });
    const poll = { initialMs: option("pollInterval", 500, POSITIVE_MS), maxMs: option("maxPollInterval", 10_000, POSITIVE_MS) };
    this.#reportRetryMs = option("reportRetryMs", 60_000, NON_NEGATIVE_MS);
    this.#client = client;
    this.#logger = opts.logger;
    this.#leaseMs = this.#leaseSeconds * 1000;
    this.#renewIntervalMs = this.#leaseMs * renewEvery;
    this.#buffer = new ClaimAheadBuffer({
      jobs: this.#active, concurrency, prefetch,
      startMarginMs: Math.min(this.#renewIntervalMs / 2, RENEW_RETRY_MAX_MS),
      // Stopping in "release" or "abandon" mode: nothing more starts (stop() winds them down).
      mayStart: () => this.#stopMode !== "release" && this.#stopMode !== "abandon",
      launch: (job) => this.#launch(job),
      onRoom: () => this.#claims.roomMade(),
    });
    this.#rides = new ClaimRides({
      isRunning: () => this.#running,
      room: () => this.#buffer.claimLimit(),
      roomAfter: (ended) => this.#buffer.claimLimitAfter(ended),
      claim: () => ({
        leaseSeconds: this.#leaseSeconds,
        ...(opts.probeKeyPrefix !== undefined ? { probeKeyPrefix: opts.probeKeyPrefix } : {}),
        ...(queue !== undefined ? { queue } : {}),
      }),
      take: (held, sentAt) => this.#startJob(held, sentAt), fill: () => this.#buffer.fill(), roomMade: () => this.#claims.roomMade(),
    });
    this.#claims = new ClaimLoop({
      client, workerId: () => this.#workerId, leaseSeconds: this.#leaseSeconds, probeKeyPrefix: opts.probeKeyPrefix, queue, poll,
      events: this.#events, isRunning: () => this.#running, claimLimit: () => this.#rides.available(),
      reserve: (n) => this.#rides.reserve(n),
      take: (held, sentAt) => this.#startJob(held, sentAt), fill: () => this.#buffer.fill(),
      onIdentity: (identity) => {
        this.#workerId = identityWorkerId(identity.id, this.#workerId);
        // Nothing is queued yet: no job has been claimed.
        this.#reports = this.#jobReports();
      },
    });
    this.#leases = new LeaseUpkeep({
      jobs: this.#active, client, workerId: () => this.#workerId, leaseSeconds: this.#leaseSeconds,
      renewIntervalMs: this.#renewIntervalMs, events: this.#events,
      // A buffered job whose lease is gone is never run.
      onLost: (job) => { if (!job.started) this.#buffer.unbuffer(job); },
      // A buffered job held back for its short lease may start now.
      onRenewed: (job) => { if (!job.started) this.#buffer.fill(); },
    });
    this.#timeouts = new AttemptTimeouts({
      report: (job, outcome) => this.#reports.report(job, outcome), unbuffer: (job) => this.#buffer.unbuffer(job),
    });
    this.#reports = this.#jobReports();
  }

  /**
   * The id this worker claims, renews and reports under: the configured
   * workerId, and once started with a worker identity's client
   * `${identity id}/${workerId}` (see WorkerOptions.workerId).
   */
  get workerId(): string {
    return this.#workerId;
  }

  #jobReports(): JobReports {
    return new JobReports({
      workerId: this.#workerId, client: this.#client, reportRetryMs: this.#reportRetryMs, events: this.#events, rider: this.#rides,
    });
  }

  /** Jobs whose handler or report is still running (not those waiting in the claim-ahead buffer). */
  get inFlight(): number {
    return this.#active.size - this.#buffer.length;
  }

  /** Claimed jobs waiting in the claim-ahead buffer for a free slot. */
  get buffered(): number {
    return this.#buffer.length;
  }

  get running(): boolean {
    return this.#running;
  }

  /** Starts claiming. Returns the worker for chaining. */
  start(): this {
    if (this.#stopping) throw new Error("Worker: cannot start again after stop()");
    if (!this.#running) {
      this.#running = true;
      this.#loop = this.#claims.run();
    }
    return this;
  }

  /**
   * Stops claiming, deals with running jobs (and those in the claim-ahead
   * buffer) as `mode` says, and resolves when nothing is in flight. Releases
   * waiting in the completion queue are sent at once.
   */
  stop(opts: { mode?: StopMode } = {}): Promise<void> {
    const mode = opts.mode ?? "finish";
    if (this.#stopping) return this.#stopping;
    this.#running = false;
    // From now on a "release" or "abandon" stop starts no buffered job (see ClaimAheadBuffer.fill).
    this.#stopMode = mode;
    this.#claims.stop();
    // Releases waiting for company go now: no more jobs will be claimed to join them.
    this.#reports.flush();
    this.#stopping = (async () => {
      // The loop and the rides on the wire may still be starting jobs they have
      // just claimed: let them, then treat those like the others.
      await this.#loop;
      await this.#rides.landed();
      applyStopMode(this.#active, mode, (job) => this.#buffer.unbuffer(job));
      if (this.#active.size > 0) await new Promise<void>((resolve) => (this.#idle = resolve));
      this.#leases.stop();
    })();
    return this.#stopping;
  }

  /** Out of the buffer: runs the job's handler (unless its signal has been aborted) and its report. */
  #launch(job: ActiveJob): void {
    job.started = true;
    void this.#run(job);
  }

  /**
   * One handler per job in this worker, whatever the server hands out:
   * - the job's handler is running (or waiting in the buffer) under a live
   *   lease: no second handler. An alreadyHeld answer is that same lease
   *   (nothing to do); a fresh win (the server saw the lease lapse first, its
   *   clock ahead of ours) replaces the lease the running handler works
   *   under, so it goes on undisturbed;
   * - the job's handler has finished and its report is under way: an
   *   alreadyHeld answer is the lease that report releases, so nothing starts;
   * - otherwise an earlier run of the job is still winding down (its lease was
   *   lost and its handler has not returned yet, or a report under a lapsed
   *   lease): the new claim is the job to do again, so it waits in the buffer
   *   until that run has ended, never beside it. Its lease is renewed meanwhile.
   * Returns whether a new entry was added (to the buffer, which starts it).
   */
  #startJob(held: HeldJob, sentAt: number): boolean {
    const previous = this.#latest.get(held.job.id);
    // (A run that timed out has let its claim go, like a lost one: a new claim is a new run.)
    if (previous && !previous.settled && !previous.lost && previous.timedOut === null) {
      if (!held.alreadyHeld) this.#adoptClaim(previous, held, sentAt);
      return false;
    }
    if (previous && previous.settled && !previous.lost && held.alreadyHeld) return false;
    const controller = new AbortController();
    const attempt = attemptDeadline(held.job, sentAt);
    const job: ActiveJob = {
      id: held.job.id,
      view: undefined as unknown as WorkerJob,
      leaseToken: held.leaseToken,
      queue: isQueueClaim(held.job),
      progress: null,
      leaseGeneration: 0,
      deadline: leaseEnd(sentAt + this.#leaseMs, attempt),
      version: held.job.version,
      controller,
      attempt,
      timeoutTimer: null,
      timedOut: null,
      renewing: null,
      renewSoon: held.alreadyHeld,
      settled: false,
      lost: false,
      stopMode: null,
      started: false,
      previous: previous ?? null,
    };
    job.view = this.#handlerView(held, job);
    this.#active.add(job);
    this.#latest.set(job.id, job);
    this.#buffer.push(job);
    this.#reportClaimed(held);
    this.#leases.watch(job);
    if (attempt !== null) this.#timeouts.arm(job);
    this.#leases.keepRenewing(job);
    return true;
  }

  /**
   * What the handler gets: the claim's view, then the JobContext and the
   * claim's holder fields, in this order (as `{ ...job, ...context, ... }`
   * would make it). Built by assignment onto a copy: an object spread that
   * then adds keys makes V8 build a map per object, about 15 µs a job.
   */
  #handlerView(held: HeldJob, job: ActiveJob): WorkerJob {
    const claimed = held.job;
    const view = Object.assign({}, claimed) as unknown as WorkerJob;
    view.payload = claimed.payload ?? null;
    view.attempt = typeof claimed.attempts === "number" && claimed.attempts > 0 ? claimed.attempts : 1;
    view.maxAttempts = typeof claimed.max_attempts === "number" ? claimed.max_attempts : 0;
    view.lastProgress = claimed.progress ?? null;
    view.workerId = this.#workerId;
    view.leaseToken = held.leaseToken;
    view.alreadyHeld = held.alreadyHeld;
    view.signal = job.controller.signal;
    view.progress = (value: unknown) => this.#recordProgress(job, value);
    return view;
  }

  /** A fresh claim of a job this worker is running (or holds in its buffer): the handler goes on under the new lease. */
  #adoptClaim(job: ActiveJob, held: HeldJob, sentAt: number): void {
    job.leaseToken = held.leaseToken;
    job.queue = isQueueClaim(held.job);
    job.leaseGeneration++;
    // A new winning claim is a new attempt, with a deadline of its own.
    job.attempt = attemptDeadline(held.job, sentAt);
    job.deadline = leaseEnd(sentAt + this.#leaseMs, job.attempt);
    job.version = held.job.version;
    // The view's own `progress` (the method) and `signal` stay: the handler runs on.
    const { progress: _stored, ...fields } = held.job;
    Object.assign(job.view, fields, claimContext(held.job), { leaseToken: held.leaseToken, alreadyHeld: false });
    this.#reportClaimed(held);
    this.#leases.watch(job);
    this.#timeouts.arm(job);
    // A renew on the wire under the old lease is ignored when it answers: the
    // new lease need not wait for it, and goes in the next tick.
    job.renewing = null;
    job.renewSoon = false;
    this.#leases.keepRenewing(job);
  }

  #reportClaimed(held: HeldJob): void {
    if (!this.#wants("claimed")) return;
    this.report("claimed", {
      jobId: held.job.id,
      probeKey: held.job.probe_key,
      workerId: this.#workerId,
      version: held.job.version,
      leaseToken: held.leaseToken,
      alreadyHeld: held.alreadyHeld,
    });
  }

  /** Whether anyone hears an event: a logger, or a listener (else its payload is not even built). */
  #wants(event: FleetEventName): boolean {
    return this.#logger !== undefined || this.listenerCount(event) > 0;
  }

  /** A job out of the buffer, to its end: its handler (unless aborted before it began), then its report. */
  async #run(job: ActiveJob): Promise<void> {
    try {
      let outcome: Outcome | null = null;
      // Aborted before it began (lost or timed out while buffered, or stopping): the handler never runs.
      if (!job.controller.signal.aborted) {
        const startedAt = this.#buffer.handlerStarted();
        outcome = await runHandler(this.#handler, job);
        this.#buffer.handlerEnded(startedAt);
        job.settled = true;
        // Its slot is free (prefetch 0: once the report has been answered, see ClaimAheadBuffer).
        this.#buffer.fill();
        this.#claims.roomMade();
      }
      job.settled = true;
      disarmTimeout(job);
      // Timed out: the timeout's release is the job's report, whatever the handler did since.
      if (job.timedOut !== null) return await job.timedOut;
      // A renew (heartbeat) still on the wire may yet say the lease is gone.
      if (job.renewing) await job.renewing;
      if (job.lost || job.stopMode === "abandon") return;
      if (job.stopMode === "release") return await handBack(job, { client: this.#client, workerId: this.#workerId, events: this.#events });
      if (outcome) await this.#reports.report(job, outcome);
    } catch (err) {
      this.report("error", { op: "run", jobId: job.id, error: toError(err) });
    } finally {
      this.#end(job);
    }
  }

  /** A job has left the worker: its room goes to the buffer, or to the loop's next claim. */
  #end(job: ActiveJob): void {
    disarmTimeout(job);
    this.#active.delete(job);
    if (this.#latest.get(job.id) === job) this.#latest.delete(job.id);
    this.#buffer.fill();
    this.#claims.roomMade();
    if (this.#active.size > 0) return;
    this.#leases.noneHeld();
    if (this.#idle !== null) {
      const idle = this.#idle;
      this.#idle = null;
      idle();
    }
  }

  /** JobContext.progress: checked, kept for the next renew, which goes within PROGRESS_FLUSH_MS (see there). */
  #recordProgress(job: ActiveJob, value: unknown): void {
    const problem = jsonSizeProblem(value, MAX_PROGRESS_BYTES);
    if (problem !== null) throw new TypeError(`Worker: job.progress(value): the value must be ${problem}`);
    if (isDropped(job)) return; // no renew will carry it
    // A copy: the progress as it was at this call, whatever the handler does to the object afterwards.
    job.progress = { value: JSON.parse(JSON.stringify(value)) };
    // A server without the queue stores no progress: nothing to hurry.
    if (job.queue) this.#leases.planProgressFlush();
  }
}
