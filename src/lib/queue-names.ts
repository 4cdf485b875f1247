/**
 * Named queues (docs/flow-control.md "Fields on probe_jobs"): the name rule and the
 * default queue. Its own module, free of anything else: the dashboard and
 * the CLI's copy read it without the rest of the queue's limits.
 */

/** The queue of a job enqueued without one, and of a row whose `queue` is "". */
export const DEFAULT_QUEUE = "default";
/** A queue's name. */
export const QUEUE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
/** claim-next's `queue`: a name or an array of 1 to this many. */
export const MAX_CLAIM_QUEUES = 16;

/** A row's queue as stored: "" (a row written around enqueue) is the default queue. */
export function storedQueueName(stored: string): string {
  return stored === "" ? DEFAULT_QUEUE : stored;
}

export function isQueueName(value: unknown): value is string {
  return typeof value === "string" && QUEUE_NAME_PATTERN.test(value);
}
