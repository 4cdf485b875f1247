/** Exponential backoff with jitter, and a sleep that can be cut short. */

export interface BackoffOptions {
  /** First delay, ms. */
  initialMs: number;
  /** Upper bound of any delay, ms. */
  maxMs: number;
  /** Growth per attempt (default 2). */
  factor?: number;
  /** Random source in [0, 1) (tests pass a fixed one). */
  random?: () => number;
}

/**
 * Delay before retry number `attempt` (0-based): initial * factor^attempt,
 * capped, then "equal jitter" (between half and all of it) so that a fleet that
 * failed together does not retry in lock-step, yet never retries at once.
 */
export function backoffDelay(attempt: number, opts: BackoffOptions): number {
  const factor = opts.factor ?? 2;
  const random = opts.random ?? Math.random;
  const base = Math.min(opts.maxMs, opts.initialMs * Math.pow(factor, Math.max(0, attempt)));
  return Math.round(base / 2 + random() * (base / 2));
}

/** Node's longest timer: a longer delay fires after 1 ms instead (and would turn a long pause into a spin). */
const MAX_TIMER_MS = 2_147_483_647;

/** Resolves after `ms` (at most about 24.8 days), or as soon as `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.min(ms, MAX_TIMER_MS));
    signal?.addEventListener("abort", done, { once: true });
  });
}
