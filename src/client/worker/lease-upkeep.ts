/**
 * Lease upkeep: renewing every lease the Worker holds, and losing those
 * that end or are refused.
 *
 * One heartbeat per renew interval renews every lease the worker holds,
 * instead of one renew per job on a timer of its own:
 *
 * - The regular tick fires every renew interval while a lease is held (the
 *   first job held starts it; a tick that finds none stops it). It renews
 *   every held lease that has no renew on the wire, in one heartbeat call
 *   per MAX_BATCH_ITEMS (100) leases. A job claimed since the last tick is
 *   in the next one, at most one interval after its claim: no lease waits
 *   longer between renews than with a timer of its own. Progress rides on
 *   the item of its job. Items are cut by count only: a heartbeat item is
 *   at most MAX_PROGRESS_BYTES (4 KiB) plus its ids, so 100 of them stay
 *   far below MAX_BATCH_BODY_BYTES.
 * - The progress heartbeat renews the leases whose handler recorded
 *   progress that no renew has carried yet, so that it is stored soon and
 *   not only at the next tick (up to a third of the lease away): at once
 *   when the last progress heartbeat is PROGRESS_FLUSH_MS (1 s) old, else
 *   1 s after it; not at all when the regular tick comes first. A lease
 *   with a renew on the wire goes once that renew has answered. So a value
 *   is sent at most 1 s after it is recorded (or after that answer), and
 *   the cost is at most one heartbeat call a second per Worker (per 100 jobs
 *   with new progress), only while handlers record progress.
 * - The urgent tick renews only the leases flagged renewSoon: an alreadyHeld
 *   claim (its lease was not extended and its end is unknown: at once), and
 *   leases whose renew got no answer (below). It is never planned past the
 *   next regular tick, which renews them anyway (and cancels it).
 * - A lease with a renew on the wire is left out of a tick: one renew at a
 *   time per lease, as before.
 * - Each item's answer is that job's: renewed moves its local deadline to
 *   the heartbeat's send time + the lease; renewed:false loses that lease
 *   (its handler is aborted, as after a refused renew), and no other.
 *
 * A heartbeat whose answer is lost (timeout, network error, a 5xx after the
 * client's one retry) loses no lease that was renewed. The server either
 * committed it (those leases now end at its clock + the lease, after the
 * send) or did not (they end where they did). Either way the deadline the
 * worker keeps, the send time of the last renew answered renewed + the
 * lease, is never later than the server's: keeping it is safe; moving it
 * would not be, and dropping the lease would abort work that may well be
 * fine. What a lost answer may hide is a renewed:false (a lease taken, a job
 * cancelled): the next answer tells it, and meanwhile the handler runs on as
 * it does between two renews. Sending the same renews again is safe (a renew
 * only extends its holder's live lease, and stores the same progress), so
 * they are: not at the next regular tick, but by an urgent tick after
 * min(interval / 2, 1 s). The lost answer has used up part of the lease's
 * slack, and waiting a whole interval could leave a single attempt before it
 * lapses (with renewEvery 1/3: the next regular tick would come at two
 * thirds of the lease, the one after at its end); a retry a second later
 * costs one small request, and keeps trying until the lease's own timer
 * declares it lost (lease_expired) should no renew get through. For the
 * same reason no attempt waits for its answer longer than min(interval,
 * time left on the earliest lease in it), the client's own retry included:
 * a later answer would come when the next attempt is due, and a hung
 * request could otherwise use up the slack without a second try.
 */
import { MAX_BATCH_ITEMS } from "../../lib/queue.js";
import type { HeartbeatItem, HeartbeatResponse, JobView, RenewRefusal, RenewResponse } from "../../lib/types.js";
import { FleetAbortError, FleetTimeoutError, isMissingEndpoint, toError } from "../errors.js";
import type { LeaseLostReason } from "../events.js";
import type { FleetApi, RequestOptions } from "../fleet-client.js";
import {
  PROGRESS_FLUSH_MS, RENEW_RETRY_MAX_MS, disarmTimeout, isDropped, leaseEnd, type ActiveJob, type Renewal,
} from "./active-job.js";
import { LeaseLostError } from "./api.js";
import type { WorkerEvents } from "./events.js";

export interface LeaseUpkeepOptions {
  /** The Worker's jobs (buffered, running and reporting): the leases to keep. Read live. */
  jobs: ReadonlySet<ActiveJob>;
  client: Pick<FleetApi, "heartbeat" | "renew">;
  /** The id the worker renews under (it may change once, before any claim). */
  workerId: () => string;
  leaseSeconds: number;
  renewIntervalMs: number;
  events: WorkerEvents;
  /** A job's lease is gone (its handler aborted already): the Worker winds it down. */
  onLost: (job: ActiveJob) => void;
  /** A job's lease was renewed. */
  onRenewed: (job: ActiveJob) => void;
}

export class LeaseUpkeep {
  readonly #jobs: ReadonlySet<ActiveJob>;
  readonly #client: LeaseUpkeepOptions["client"];
  readonly #workerId: () => string;
  readonly #leaseSeconds: number;
  readonly #leaseMs: number;
  readonly #renewIntervalMs: number;
  readonly #events: WorkerEvents;
  readonly #onLost: (job: ActiveJob) => void;
  readonly #onRenewed: (job: ActiveJob) => void;
  /** Whether the server has /api/fleet/heartbeat: undefined until its first answer; false also when the client has no such method. */
  #hasHeartbeat: boolean | undefined;
  /** The regular tick (every renew interval while a lease is held), and when it fires. */
  #tickTimer: ReturnType<typeof setTimeout> | null = null;
  #tickAt = 0;
  /** The urgent tick (leases flagged renewSoon), and when it fires. */
  #urgentTimer: ReturnType<typeof setTimeout> | null = null;
  #urgentAt = 0;
  /** The progress heartbeat planned (see PROGRESS_FLUSH_MS), and when the last one went. */
  #progressTimer: ReturnType<typeof setTimeout> | null = null;
  #progressSentAt = -Infinity;
  /** One timer for every lease's local end: the earliest (see #checkLeases). */
  #leaseTimer: ReturnType<typeof setTimeout> | null = null;
  #leaseTimerAt = Infinity;

  constructor(opts: LeaseUpkeepOptions) {
    this.#jobs = opts.jobs;
    this.#client = opts.client;
    this.#workerId = opts.workerId;
    this.#leaseSeconds = opts.leaseSeconds;
    this.#leaseMs = opts.leaseSeconds * 1000;
    this.#renewIntervalMs = opts.renewIntervalMs;
    this.#events = opts.events;
    this.#onLost = opts.onLost;
    this.#onRenewed = opts.onRenewed;
    this.#hasHeartbeat = typeof opts.client.heartbeat === "function" ? undefined : false;
  }

  /**
   * Keeps a job's lease, new or replaced by a fresh claim: renewed at the
   * next regular tick, at most one interval away; one flagged renewSoon (an
   * alreadyHeld claim did not extend the lease: its end is unknown) at once.
   */
  keepRenewing(job: ActiveJob): void {
    this.#ensureTicking();
    if (job.renewSoon) this.#renewSoon(0);
  }

  /** No lease is held any more: none to watch. */
  noneHeld(): void {
    this.#clearLeaseTimer();
  }

  #clearLeaseTimer(): void {
    if (this.#leaseTimer !== null) clearTimeout(this.#leaseTimer);
    this.#leaseTimer = null;
    this.#leaseTimerAt = Infinity;
  }

  /** Starts the regular tick, unless it runs. */
  #ensureTicking(): void {
    if (this.#tickTimer !== null) return;
    this.#tickAt = Date.now() + this.#renewIntervalMs;
    this.#tickTimer = setTimeout(() => this.#tick(), this.#renewIntervalMs);
  }

  #tick(): void {
    this.#tickTimer = null;
    this.#cancelUrgent();
    const held = [...this.#jobs].filter((job) => !isDropped(job));
    if (held.length === 0) return; // the next job held starts it again
    this.#ensureTicking();
    this.#renewLeases(held);
  }

  /** Renews the leases flagged renewSoon within `delayMs`, unless the regular tick comes first. */
  #renewSoon(delayMs: number): void {
    const at = Date.now() + delayMs;
    if (this.#tickTimer !== null && this.#tickAt <= at) return;
    if (this.#urgentTimer !== null) {
      if (this.#urgentAt <= at) return;
      clearTimeout(this.#urgentTimer);
    }
    this.#urgentAt = at;
    this.#urgentTimer = setTimeout(() => {
      this.#urgentTimer = null;
      this.#renewLeases([...this.#jobs].filter((job) => job.renewSoon));
    }, delayMs);
  }

  #cancelUrgent(): void {
    if (this.#urgentTimer !== null) clearTimeout(this.#urgentTimer);
    this.#urgentTimer = null;
  }

  /** Stops every timer (the Worker has stopped, with no job left). */
  stop(): void {
    this.#cancelUrgent();
    this.#clearLeaseTimer();
    if (this.#progressTimer !== null) clearTimeout(this.#progressTimer);
    this.#progressTimer = null;
    if (this.#tickTimer !== null) clearTimeout(this.#tickTimer);
    this.#tickTimer = null;
  }

  /**
   * Plans the progress heartbeat: at once, or PROGRESS_FLUSH_MS after the
   * previous one, unless one is planned or the regular tick comes first (it
   * carries the progress anyway).
   */
  planProgressFlush(): void {
    if (this.#progressTimer !== null) return;
    const now = Date.now();
    const at = Math.max(now, this.#progressSentAt + PROGRESS_FLUSH_MS);
    if (this.#tickTimer !== null && this.#tickAt <= at) return;
    // Even "at once" waits for the current task: progress recorded together goes together.
    this.#progressTimer = setTimeout(() => this.#flushProgress(), at - now);
  }

  /** Renews the leases whose job has progress not sent yet. One with a renew on the wire waits for its answer (see #renewAnswered). */
  #flushProgress(): void {
    this.#progressTimer = null;
    const due = [...this.#jobs].filter((job) => job.queue && job.progress !== null && job.renewing === null && !isDropped(job));
    if (due.length === 0) return;
    this.#progressSentAt = Date.now();
    this.#renewLeases(due);
  }

  /** Renews these leases (those still held with no renew on the wire): one heartbeat per 100, or one renew each. */
  #renewLeases(jobs: readonly ActiveJob[]): void {
    const sentAt = Date.now();
    const due: ActiveJob[] = [];
    for (const job of jobs) {
      if (isDropped(job) || job.renewing !== null) continue;
      // Its own timer normally says so first; a tick at the same instant may come before it.
      if (job.deadline <= sentAt) this.#loseLease(job, "lease_expired");
      else due.push(job);
    }
    if (this.#hasHeartbeat !== false) {
      for (let i = 0; i < due.length; i += MAX_BATCH_ITEMS) {
        const chunk = due.slice(i, i + MAX_BATCH_ITEMS);
        this.#track(chunk, this.#heartbeat(chunk, sentAt));
      }
    } else {
      for (const job of due) this.#track([job], this.#renew(job));
    }
  }

  /** Marks the jobs' renew as on the wire until `work` settles (which never rejects: an error is reported). */
  #track(jobs: readonly ActiveJob[], work: Promise<void>): void {
    const renewing = work.catch((err) => this.#events.report("error", { op: "renew", error: toError(err) }));
    for (const job of jobs) job.renewing = renewing;
    void renewing.then(() => {
      for (const job of jobs) if (job.renewing === renewing) job.renewing = null;
    });
  }

  /** One heartbeat for these leases (at most MAX_BATCH_ITEMS), sent at `sentAt`. */
  async #heartbeat(jobs: readonly ActiveJob[], sentAt: number): Promise<void> {
    const sent = jobs.map((job) => this.#renewal(job));
    const leases = sent.map(({ job, progress }): HeartbeatItem => {
      const item: HeartbeatItem = { jobId: job.id };
      if (job.leaseToken !== undefined) item.leaseToken = job.leaseToken;
      if (progress !== null) item.progress = progress.value;
      return item;
    });
    const earliest = Math.min(...jobs.map((job) => job.deadline));
    let answer: HeartbeatResponse;
    try {
      answer = await this.#waitAtMost("heartbeat", earliest - sentAt, (req) =>
        this.#client.heartbeat!(this.#workerId(), leases, { ...req, leaseSeconds: this.#leaseSeconds }));
    } catch (err) {
      // (A 404 to a call sent beside the first probe counts too: the server has never answered one.)
      if (this.#hasHeartbeat !== true && isMissingEndpoint(err)) {
        // A server from before the heartbeat: one renew per job from now on, these included.
        this.#hasHeartbeat = false;
        await Promise.all(jobs.map((job) => this.#renew(job)));
        return;
      }
      this.#renewLost(sent, "heartbeat", undefined, err);
      return;
    }
    this.#hasHeartbeat = true;
    sent.forEach((renewal, i) => {
      const result = answer.results[i];
      // (The client checks the answer's shape; a FleetApi of one's own may not.)
      if (result === undefined || result.jobId !== renewal.job.id) {
        this.#renewLost([renewal], "heartbeat", renewal.job.id, new Error(`heartbeat: no result for job ${renewal.job.id}`));
      } else {
        this.#renewAnswered(renewal, sentAt, result.renewed ? { job: result.job ?? null } : { reason: result.reason });
      }
    });
  }

  /** One renew of one lease (a server without the heartbeat). */
  async #renew(job: ActiveJob): Promise<void> {
    if (isDropped(job)) return;
    const sentAt = Date.now();
    const remaining = job.deadline - sentAt;
    if (remaining <= 0) return this.#loseLease(job, "lease_expired");
    const renewal = this.#renewal(job);
    // The latest progress rides on this renew (a server without the queue gets none).
    const progress = renewal.progress;
    let answer: RenewResponse;
    try {
      answer = await this.#waitAtMost("renew", remaining, (req) =>
        this.#client.renew(job.id, this.#workerId(), this.#leaseSeconds, job.leaseToken,
          progress ? { ...req, progress: progress.value } : req));
    } catch (err) {
      this.#renewLost([renewal], "renew", job.id, err);
      return;
    }
    this.#renewAnswered(renewal, sentAt, answer.renewed ? { job: answer.job } : { reason: answer.reason });
  }

  /** What a renew of this lease sends now: the latest progress not yet stored (a server without the queue gets none). */
  #renewal(job: ActiveJob): Renewal {
    job.renewSoon = false;
    return { job, generation: job.leaseGeneration, progress: job.queue ? job.progress : null };
  }

  /** The renew is no longer this job's concern: it was dropped, or a new claim (with a lease of its own) was adopted since. */
  #isStale(renewal: Renewal): boolean {
    return isDropped(renewal.job) || renewal.job.leaseGeneration !== renewal.generation;
  }

  /** A renew's answer: renewed (with the job as written, when the answer has it), or refused (and maybe why). */
  #renewAnswered(renewal: Renewal, sentAt: number, answer: { job: JobView | null } | { reason: RenewRefusal | undefined }): void {
    if (this.#isStale(renewal)) return;
    const { job, progress } = renewal;
    if ("reason" in answer) return this.#loseLease(job, answer.reason === "timed_out" ? "timed_out" : "renew_refused");
    const view = answer.job;
    // Stored; unless the handler has recorded newer progress meanwhile, nothing is left to send.
    if (progress !== null && job.progress === progress) job.progress = null;
    // Progress recorded while this renew was on the wire: it goes with the next progress heartbeat.
    else if (job.progress !== null && job.queue) this.planProgressFlush();
    job.deadline = leaseEnd(sentAt + this.#leaseMs, job.attempt);
    job.version = view !== null ? view.version : job.version === null ? null : job.version + 1;
    // (The lease timer fires at the earliest end it knew, and moves on to the next: see #checkLeases.)
    if (this.#events.wants("renewed")) {
      this.#events.report("renewed", {
        jobId: job.id, workerId: this.#workerId(), version: job.version, leaseExpiresAt: view?.lease_expires_at ?? null,
      });
    }
    this.#onRenewed(job);
  }

  /** No answer (see the top of this file): the deadlines stay, and these leases are renewed again soon. */
  #renewLost(sent: readonly Renewal[], op: string, jobId: string | undefined, err: unknown): void {
    const open = sent.filter((renewal) => !this.#isStale(renewal));
    if (open.length === 0) return;
    this.#events.report("error", jobId === undefined ? { op, error: toError(err) } : { op, jobId, error: toError(err) });
    for (const { job } of open) {
      job.renewSoon = true;
      job.version = null; // it may have been renewed (and its version bumped) all the same
    }
    this.#renewSoon(Math.min(this.#renewIntervalMs / 2, RENEW_RETRY_MAX_MS));
  }

  /**
   * Runs a renew or heartbeat, waiting for its answer at most min(renew
   * interval, `leftMs`), the client's own retry included (see the top of this file).
   */
  async #waitAtMost<T>(op: string, leftMs: number, call: (req: RequestOptions) => Promise<T>): Promise<T> {
    const waitMs = Math.max(1, Math.min(leftMs, this.#renewIntervalMs));
    const signal = AbortSignal.timeout(waitMs);
    try {
      return await call({ timeoutMs: waitMs, signal });
    } catch (err) {
      // The wait ran out, not a caller's cancel: say so.
      if (err instanceof FleetAbortError && signal.aborted) throw new FleetTimeoutError(op, waitMs, { cause: err });
      throw err;
    }
  }

  /**
   * A lease's local end is watched by one timer for all of them, set to the
   * earliest end known (not one timer per job, re-armed at each renew).
   */
  watch(job: ActiveJob): void {
    if (job.deadline < this.#leaseTimerAt) this.#armLeaseTimer(job.deadline);
  }

  #armLeaseTimer(at: number): void {
    if (this.#leaseTimer !== null) clearTimeout(this.#leaseTimer);
    this.#leaseTimerAt = at;
    this.#leaseTimer = setTimeout(() => this.#checkLeases(), Math.max(0, at - Date.now()));
  }

  /**
   * The lease timer: each lease whose local end has come, unrenewed, is lost
   * (lease_expired; a job whose handler has returned is left to its report,
   * which the server judges); the timer moves on to the earliest end left.
   * Renews only move ends later, so it fires at most once per such end.
   */
  #checkLeases(): void {
    this.#leaseTimer = null;
    this.#leaseTimerAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const job of [...this.#jobs]) {
      if (isDropped(job)) continue;
      if (job.deadline <= now) this.#loseLease(job, "lease_expired");
      else if (job.deadline < next) next = job.deadline;
    }
    if (next !== Infinity) this.#armLeaseTimer(next);
  }

  #loseLease(job: ActiveJob, reason: LeaseLostReason): void {
    if (job.lost) return;
    job.lost = true;
    disarmTimeout(job);
    this.#events.report("lease_lost", { jobId: job.id, workerId: this.#workerId(), reason });
    job.controller.abort(new LeaseLostError(job.id, reason));
    this.#onLost(job);
  }
}
