/** How the page writes numbers, durations and rates. Pure: unit-tested. */

const COUNT = new Intl.NumberFormat("en-US");

export function formatCount(n: number): string {
  return COUNT.format(n);
}

/** "42 s", "3 min 05 s", "2 h 07 min", "3 d 4 h": two units at most, whole seconds. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, "0")} s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h ${String(m % 60).padStart(2, "0")} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** Jobs per second with one decimal below 100 ("0.4/s", "12.5/s", "230/s"). */
export function formatRate(perSecond: number): string {
  return perSecond >= 100 ? `${Math.round(perSecond)}/s` : `${perSecond.toFixed(1)}/s`;
}

/** The time of day of an instant, as the reader's clock shows it ("14:03:07"). */
export function formatClock(epochMs: number): string {
  return new Date(epochMs).toLocaleTimeString("en-GB", { hour12: false });
}

/** At most `max` characters, with an ellipsis when cut (the full text goes in a title). */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * The server's clock as this page estimates it: lease countdowns and the
 * in-flight/expired split compare leases with the server's time, not the
 * reader's (which may be minutes off). Each answer that carries the server's
 * time (taken as it answered, after its own work) updates the offset; the
 * answer's way back is taken as a quarter of the round trip, at most 50 ms.
 */
export class ServerClock {
  private offsetMs = 0;
  private known = false;

  constructor(private readonly localNow: () => number = () => Date.now()) {}

  observe(serverNowMs: number, sentAtMs: number, receivedAtMs: number): void {
    const offset = serverNowMs - (receivedAtMs - Math.min(50, (receivedAtMs - sentAtMs) / 4));
    // Smooth repeated readings, but let a first reading (or a jump of minutes, a server moved or restarted with another clock) win at once.
    this.offsetMs = !this.known || Math.abs(offset - this.offsetMs) > 60_000 ? offset : this.offsetMs * 0.8 + offset * 0.2;
    this.known = true;
  }

  now(): number {
    return this.localNow() + this.offsetMs;
  }
}

/**
 * A key or worker id cut after each separator (`/ : . _ - @ = & ? #` and
 * spaces), where the page puts a line-break opportunity (<wbr>): a long key
 * wraps between its parts, not in the middle of one.
 */
export function breakSegments(text: string): string[] {
  return text.match(/[^/:._\-@=&?#\s]*(?:[/:._\-@=&?#\s]+|$)/g)?.filter((part) => part !== "") ?? [text];
}

/** "812 B", "4.2 kB", "1.3 MB" (powers of 1000, as the server's byte limits are written). */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
