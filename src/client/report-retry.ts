/**
 * How a Worker keeps trying one step of a job's report (a release, a result
 * write) that fails transiently: with backoff, for up to `retryMs`.
 */
import { backoffDelay, sleep } from "./backoff.js";
import { isTransientError } from "./errors.js";

export const REPORT_BACKOFF = { initialMs: 200, maxMs: 2_000 };

/** The last failure of a step that was given up. */
export interface GaveUp {
  error: unknown;
}

/**
 * Runs `step`, retrying transient failures with backoff until `retryMs` has
 * passed. Safe for a Worker's report steps, which are idempotent for it: a
 * repeated terminal release is answered refused_terminal_same_holder, and a
 * result write writes the same value again. Each failure goes to `onError`.
 * Answers `{ value }`, or `{ gaveUp }` with the last error (already reported).
 */
export async function retryReport<T>(
  step: () => Promise<T>, retryMs: number, onError: (err: unknown) => void,
): Promise<{ value: T } | { gaveUp: GaveUp }> {
  const giveUpAt = Date.now() + retryMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return { value: await step() };
    } catch (err) {
      onError(err);
      if (!isTransientError(err) || Date.now() >= giveUpAt) return { gaveUp: { error: err } };
      await sleep(backoffDelay(attempt, REPORT_BACKOFF));
    }
  }
}
