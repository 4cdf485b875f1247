/** Reading a Worker's options and its claim answers. */
import { MAX_RATE_LIMITED_FOR_SECONDS } from "../../lib/flow-limits.js";
import { isOwnWorkerId } from "../../lib/identity.js";
import { MAX_CLAIM_QUEUES, isQueueName } from "../../lib/queue-names.js";
import type { ClaimedJobView } from "../fleet-client.js";
import { QUEUE_NAME_RULE, describe } from "../queue-options.js";
import type { JobHandler, WorkerOptions } from "./api.js";

/**
 * The workerId a worker identity claims under: the server takes only its
 * record id, or the id and `/` and anything; a configured id of that form is
 * kept, any other is put after `${id}/`.
 */
export function identityWorkerId(identityId: string, configured: string): string {
  return isOwnWorkerId(identityId, configured) ? configured : `${identityId}/${configured}`;
}

/** Whether a claim answer comes from a server with the queue: its job view carries `attempts`. */
export function isQueueClaim(job: ClaimedJobView): boolean {
  return typeof job.attempts === "number";
}

/** The JobContext fields a claim answer gives (see JobContext for a server without the queue). */
export function claimContext(job: ClaimedJobView): { payload: any; attempt: number; maxAttempts: number; lastProgress: unknown } {
  return {
    payload: job.payload ?? null,
    attempt: typeof job.attempts === "number" && job.attempts > 0 ? job.attempts : 1,
    maxAttempts: typeof job.max_attempts === "number" ? job.max_attempts : 0,
    lastProgress: job.progress ?? null,
  };
}

/**
 * WorkerOptions' `handler` or `handlers`, checked (TypeError naming them):
 * exactly one; `handlers` 1 to MAX_CLAIM_QUEUES queue names, each a
 * function, and no `queue` beside it.
 */
export function handlerOption<R, P>(opts: WorkerOptions<R, P>): JobHandler<R, P> | Map<string, JobHandler<R, P>> {
  const { handler, handlers } = opts;
  if (handler !== undefined && handlers !== undefined) {
    throw new TypeError("Worker: give `handler` (one for every job) or `handlers` (one per queue), not both");
  }
  if (handlers === undefined) {
    if (typeof handler !== "function") {
      throw new TypeError("Worker: `handler` must be a function (job, signal) => Promise<result> " +
        `(got ${describe(handler)}), or give \`handlers\`: { [queue]: handler }`);
    }
    return handler;
  }
  if (opts.queue !== undefined) {
    throw new TypeError("Worker: give `queue` or `handlers`, not both: with `handlers` the Worker claims from the queues they are named by");
  }
  if (typeof handlers !== "object" || handlers === null || Array.isArray(handlers)) {
    throw new TypeError(`Worker: \`handlers\` must be an object { [queue]: handler } (got ${describe(handlers)})`);
  }
  const entries = Object.entries(handlers);
  if (entries.length === 0 || entries.length > MAX_CLAIM_QUEUES) {
    throw new TypeError(`Worker: \`handlers\` must name 1 to ${MAX_CLAIM_QUEUES} queues (claim-next takes that many; got ${entries.length})`);
  }
  for (const [queue, fn] of entries) {
    if (!isQueueName(queue)) throw new TypeError(`Worker: \`handlers\`: ${JSON.stringify(queue)} is not ${QUEUE_NAME_RULE}`);
    if (typeof fn !== "function") {
      throw new TypeError(`Worker: \`handlers.${queue}\` must be a function (job, signal) => Promise<result> (got ${describe(fn)})`);
    }
  }
  return new Map(entries);
}

/** A RateLimitedError's wait as a release takes it: whole seconds, 1 to MAX_RATE_LIMITED_FOR_SECONDS. */
export function rateLimitedFor(retryAfterSeconds: number): number {
  return Math.min(MAX_RATE_LIMITED_FOR_SECONDS, Math.max(1, Math.ceil(retryAfterSeconds)));
}
