/** Running a job's handler: which one (the one handler, or its queue's), and what its return or throw means. */
import { DEFAULT_QUEUE } from "../../lib/queue-names.js";
import { isPermanentJobError, isRateLimitedError, toError } from "../errors.js";
import type { ActiveJob, Outcome } from "./active-job.js";
import type { JobHandler, WorkerJob } from "./api.js";
import { rateLimitedFor } from "./options.js";

/** The one handler, or the handlers by queue name (see WorkerOptions.handlers). */
export type Handlers<R, P> = JobHandler<R, P> | ReadonlyMap<string, JobHandler<R, P>>;

/** Runs the job's handler to its outcome: done with its value, or its error (a retry for a RateLimitedError). Never rejects. */
export async function runHandler<R, P>(handlers: Handlers<R, P>, job: ActiveJob): Promise<Outcome> {
  try {
    const handler = handlerOf(handlers, job.view);
    return { status: "done", result: await handler(job.view as WorkerJob<P>, job.controller.signal) };
  } catch (err) {
    // (String(): a thrown object's `message` need not be a string.)
    const error = String(toError(err).message);
    if (isRateLimitedError(err)) return { status: "retry", error, rateLimitedFor: rateLimitedFor(err.retryAfterSeconds) };
    return { status: "failed", error, permanent: isPermanentJobError(err) };
  }
}

/**
 * The handler of a job: the one handler, or its queue's. A job of a queue
 * with no handler (a server that ignored claim-next's `queue`) fails as if
 * its handler had thrown: retried, so a Worker with that queue runs it.
 */
function handlerOf<R, P>(handlers: Handlers<R, P>, job: WorkerJob<any>): JobHandler<R, P> {
  if (!(handlers instanceof Map)) return handlers as JobHandler<R, P>;
  const queue = typeof job.queue === "string" && job.queue !== "" ? job.queue : DEFAULT_QUEUE;
  const handler = handlers.get(queue);
  if (handler === undefined) {
    throw new Error(`Worker: no handler for queue ${JSON.stringify(queue)} (this worker has handlers for ${[...handlers.keys()].join(", ")})`);
  }
  return handler;
}
