/**
 * A finished job's report: its outcome turned into a release (and, on a
 * server without the queue, a result write), sent through the completion
 * queue, and the events that tell how it went.
 *
 * A finished job's release joins the completion queue (../completion-queue.ts),
 * which gathers releases into `complete` calls of at most MAX_BATCH_ITEMS
 * (100) items and MAX_BATCH_BODY_BYTES (4 MiB) of body: sent at the end of
 * the current turn when no call is on the wire (COMPLETE_FLUSH_DELAY_MS),
 * else as soon as the calls on the wire have answered (what finished
 * meanwhile goes together), when full, or at once for a release whose lease
 * is about to end. A call refused
 * as too large is split down to single items, and an item no `complete` can
 * carry goes as a plain release before it is given up. Each item's answer is
 * that job's, read as a single release answer (below).
 */
import { MAX_RESULT_BYTES } from "../../lib/queue.js";
import type { ReleaseTarget } from "../../lib/types.js";
import { CompletionQueue, type ReleaseAnswer } from "../completion-queue.js";
import { toError } from "../errors.js";
import type { FleetApi, ReleaseOptions } from "../fleet-client.js";
import { jsonSizeProblem } from "../json-bytes.js";
import { fitError } from "../queue-options.js";
import { retryReport } from "../report-retry.js";
import type { ActiveJob, Outcome } from "./active-job.js";
import type { ClaimRider } from "./claim-rides.js";
import type { WorkerEvents } from "./events.js";

export interface JobReportsOptions {
  /** The id the releases go under (a new JobReports is made once it is resolved, before any claim). */
  workerId: string;
  client: Pick<FleetApi, "complete" | "completeAndClaim" | "release" | "timeoutMs" | "writeResult">;
  /** Claims that ride on the complete calls (claim-rides.ts). */
  rider?: ClaimRider;
  /** How long a report step that fails transiently is tried again, ms (WorkerOptions.reportRetryMs). */
  reportRetryMs: number;
  events: WorkerEvents;
}

export class JobReports {
  readonly #workerId: string;
  readonly #client: JobReportsOptions["client"];
  readonly #reportRetryMs: number;
  readonly #events: WorkerEvents;
  /** Finished jobs' releases, gathered into `complete` calls. */
  readonly #completions: CompletionQueue;

  constructor(opts: JobReportsOptions) {
    this.#workerId = opts.workerId;
    this.#client = opts.client;
    this.#reportRetryMs = opts.reportRetryMs;
    this.#events = opts.events;
    this.#completions = new CompletionQueue({
      workerId: opts.workerId, client: opts.client, reportRetryMs: opts.reportRetryMs,
      onError: (event) => opts.events.report("error", event),
      ...(opts.rider !== undefined ? { rider: opts.rider } : {}),
    });
  }

  /** Sends the releases waiting for company at once (the Worker's stop(): no more jobs will be claimed to join them). */
  flush(): void {
    this.#completions.flush();
  }

  /**
   * A server with the queue: one release carries the outcome, written in its
   * transaction (so a result cannot be lost between two writes). Done with the
   * handler's value as the result; a failure as `retry` with its message, or
   * `failed` for a PermanentJobError (or a result that cannot be stored: not
   * JSON, or larger than MAX_RESULT_BYTES, which running again would not cure).
   * An error message longer than the server takes (MAX_ERROR_BYTES) is cut to
   * fit: refused, it would fail the whole release, and in a `complete` the
   * other jobs' releases with it.
   */
  async report(job: ActiveJob, outcome: Outcome): Promise<void> {
    if (!job.queue) {
      // No retry there: a failure, as before the queue.
      return this.#reportTwoSteps(job, outcome.status === "retry" ? { status: "failed", error: outcome.error, permanent: false } : outcome);
    }
    let status: ReleaseTarget;
    let fields: ReleaseOptions;
    if (outcome.status === "done") {
      const problem = outcome.result === undefined ? null : jsonSizeProblem(outcome.result, MAX_RESULT_BYTES);
      status = problem === null ? "done" : "failed";
      fields = problem === null ? { result: outcome.result } : { error: `the handler's result must be ${problem}` };
    } else if (outcome.status === "retry") {
      status = "retry";
      fields = { error: fitError(outcome.error) };
      if (outcome.rateLimitedFor !== undefined) fields.rateLimitedFor = outcome.rateLimitedFor;
    } else {
      // A job without an attempt cap (max_attempts 0: a row made the old way,
      // through the record API) fails as before the queue: retried without a
      // cap, a handler that always throws would run forever.
      status = outcome.permanent || job.view.maxAttempts === 0 ? "failed" : "retry";
      fields = { error: fitError(outcome.error) };
    }
    const release = await this.#release(job, status, fields);
    // A repeat of a committed retry (its first answer lost) finds the job
    // pending under no one: refused_not_holder, told apart from a lost lease
    // by nothing; either way there is nothing more to write.
    if (release === null || !this.#reportReleased(job, status, release.value)) return;
    const answer = release.value;
    const error = fields.error ?? "";
    if (status === "failed") {
      this.#events.report("failed", { jobId: job.id, workerId: this.#workerId, error });
    } else if (status === "retry") {
      // Back to pending, or (the attempts used up) dead-lettered: failed. A
      // repeat answered refused_terminal_same_holder found it terminal under
      // this worker, which only its own retry can have done.
      const deadLettered = !answer.released || answer.job.status === "failed";
      if (deadLettered) {
        this.#events.report("failed", { jobId: job.id, workerId: this.#workerId, error, deadLettered: true });
      } else {
        this.#events.report("retried", {
          jobId: job.id, workerId: this.#workerId, error, attempt: job.view.attempt, maxAttempts: job.view.maxAttempts,
          ...(fields.rateLimitedFor !== undefined ? { rateLimitedFor: fields.rateLimitedFor } : {}),
        });
      }
    }
  }

  /**
   * Reports a release's answer: `released` when it committed, or when it was
   * refused as the repeat of this worker's own committed release
   * (refused_terminal_same_holder); `lease_lost` otherwise. True when it counts as released.
   */
  #reportReleased(job: ActiveJob, status: ReleaseTarget, answer: ReleaseAnswer): boolean {
    if (!answer.released && answer.reason !== "refused_terminal_same_holder") {
      this.#events.report("lease_lost", { jobId: job.id, workerId: this.#workerId, reason: answer.reason });
      return false;
    }
    if (this.#events.wants("released")) {
      this.#events.report("released", {
        jobId: job.id,
        workerId: this.#workerId,
        status,
        version: answer.released ? answer.job.version : null,
        committed: answer.released ? "released" : "refused_terminal_same_holder",
      });
    }
    return true;
  }

  /**
   * A server without the queue: release first (the compare-and-set), and write
   * the result (`{ error }` for a failure) only when that release committed.
   */
  async #reportTwoSteps(job: ActiveJob, outcome: Exclude<Outcome, { status: "retry" }>): Promise<void> {
    const release = await this.#release(job, outcome.status, undefined);
    // Refused: someone else holds the job now (or it lapsed), and its result is theirs to write.
    if (release === null || !this.#reportReleased(job, outcome.status, release.value)) return;
    // Cut like a release's error: a stack trace of megabytes would fail the write, and leave the job without its result.
    const error = outcome.status === "failed" ? fitError(outcome.error) : "";
    const result = outcome.status === "done" ? outcome.result : { error };
    const written = await this.#persist("writeResult", job.id, () => this.#client.writeResult(job.id, result));
    if (written === null) return;
    this.#events.report("result_written", { jobId: job.id, workerId: this.#workerId, status: outcome.status });
    if (outcome.status === "failed") this.#events.report("failed", { jobId: job.id, workerId: this.#workerId, error });
  }

  /** A job's release, through the completion queue (see completion-queue.ts). null: gave up (reported). */
  #release(job: ActiveJob, status: ReleaseTarget, fields: ReleaseOptions | undefined): Promise<{ value: ReleaseAnswer } | null> {
    return this.#completions.release({ jobId: job.id, leaseToken: job.leaseToken, status, fields, deadline: job.deadline });
  }

  /** Runs a report step with retryReport's retries (see there). null = gave up (reported). */
  async #persist<T>(op: string, jobId: string, step: () => Promise<T>): Promise<{ value: T } | null> {
    const sent = await retryReport(step, this.#reportRetryMs, (err) => this.#events.report("error", { op, jobId, error: toError(err) }));
    return "value" in sent ? sent : null;
  }
}
