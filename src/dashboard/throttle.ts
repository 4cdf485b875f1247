/**
 * A refresh that runs at most once per `minGapMs` and never twice at once,
 * however often it is asked for: the first request after a quiet spell runs at
 * once (a lone change shows as fast as the server answers), requests during a
 * run or inside the gap fold into one run at the gap's end. A run that took
 * longer than the gap is followed by a pause as long as it took, so a slow
 * (loaded) server spends at most half its time on one page's reads of one part.
 */

export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class ThrottledRefresh {
  private running = false;
  private wanted = false;
  private lastStart = Number.NEGATIVE_INFINITY;
  private lastEnd = Number.NEGATIVE_INFINITY;
  private timer: unknown = null;
  private stopped = false;

  constructor(
    private readonly run: () => Promise<void>,
    private readonly minGapMs: number,
    private readonly timers: Timers = realTimers,
  ) {}

  request(): void {
    if (this.stopped) return;
    this.wanted = true;
    this.pump();
  }

  /** Ends it: no run starts after this (one already running finishes). */
  stop(): void {
    this.stopped = true;
    this.wanted = false;
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }

  private pump(): void {
    if (this.stopped || this.running || this.timer !== null || !this.wanted) return;
    const next = Math.max(this.lastStart + this.minGapMs, this.lastEnd + (this.lastEnd - this.lastStart));
    const wait = next - this.timers.now();
    if (wait > 0) {
      this.timer = this.timers.setTimeout(() => {
        this.timer = null;
        this.pump();
      }, wait);
      return;
    }
    this.wanted = false;
    this.running = true;
    this.lastStart = this.timers.now();
    // The run reports its own failures; a rejection must not stop later runs.
    this.run()
      .catch(() => undefined)
      .finally(() => {
        this.running = false;
        this.lastEnd = this.timers.now();
        this.pump();
      });
  }
}
