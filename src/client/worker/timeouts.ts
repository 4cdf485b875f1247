/**
 * Attempt timeouts. A job claimed with a deadline (docs/flow-control.md
 * "Timeouts": its winning claim + timeout_seconds) loses its lease there: the
 * server clamps every lease to it, refuses a release after it, and retries
 * the job itself (the sweep, or the next claim). The Worker does not wait for
 * that: at deadline − min(2 s, timeout / 10) it aborts the handler's signal
 * with a JobTimeoutError and releases the job `retry` with that error,
 * through the completion queue like any report, while the lease is still
 * live, so the job is retried now rather than once a sweep finds it. Should
 * that release be refused (the lease is gone already), nothing more is
 * written: the server's own timeout retries the job. The handler's later
 * result or error is ignored; its slot is free once it has returned, as after
 * a lost lease (a handler that ignores its signal keeps its slot).
 *
 * The deadline on the local clock comes from the claim's answer, not from
 * reading the server's date on this machine's clock (see attemptDeadline).
 */
import { disarmTimeout, isDropped, timeoutMargin, type ActiveJob, type Outcome } from "./active-job.js";
import { JobTimeoutError } from "./api.js";

export interface AttemptTimeoutsOptions {
  /** A job's report (the Worker's JobReports): here its `retry` release with the timeout's error. */
  report: (job: ActiveJob, outcome: Outcome) => Promise<void>;
  /** Takes a buffered job out unrun, to be wound down at once. */
  unbuffer: (job: ActiveJob) => void;
}

export class AttemptTimeouts {
  readonly #report: AttemptTimeoutsOptions["report"];
  readonly #unbuffer: AttemptTimeoutsOptions["unbuffer"];

  constructor(opts: AttemptTimeoutsOptions) {
    this.#report = opts.report;
    this.#unbuffer = opts.unbuffer;
  }

  /** (Re)arms the job's timeout for its current attempt; none when the attempt has no deadline. */
  arm(job: ActiveJob): void {
    disarmTimeout(job);
    if (job.attempt === null) return;
    job.timeoutTimer = setTimeout(() => {
      job.timeoutTimer = null;
      this.#timeOut(job);
    }, Math.max(0, job.attempt.at - timeoutMargin(job.attempt) - Date.now()));
  }

  #timeOut(job: ActiveJob): void {
    // Finished, lost, or being handed back or walked away from: nothing to time out.
    if (isDropped(job) || job.stopMode !== null || job.attempt === null) return;
    const error = new JobTimeoutError(job.id, job.attempt.seconds);
    disarmTimeout(job);
    job.timedOut = this.#report(job, { status: "retry", error: error.message });
    job.controller.abort(error);
    // Timed out while buffered: released as the server's own timeout would retry it, never run.
    if (!job.started) this.#unbuffer(job);
  }
}
