/**
 * Lease arithmetic. Times are epoch milliseconds; stored dates use PocketBase's
 * text layout `2006-01-02 15:04:05.000Z`.
 */

export const DEFAULT_LEASE_SECONDS = 30;
export const MIN_LEASE_SECONDS = 1;
export const MAX_LEASE_SECONDS = 3600;

/**
 * `leaseSeconds` comes from caller JSON. Only a number > 0 counts (NaN > 0 is
 * false); it is clamped to [1, 3600]: the floor stops a 1 ms lease that is
 * stealable before the answer lands, the cap stops a malformed caller parking a
 * row behind a lease the sweeper must wait out for days.
 */
export function clampLeaseSeconds(raw: unknown): number {
  if (typeof raw !== "number" || !(raw > 0)) return DEFAULT_LEASE_SECONDS;
  return Math.max(MIN_LEASE_SECONDS, Math.min(raw, MAX_LEASE_SECONDS));
}

/** PocketBase's stored text form of an instant (always UTC, millisecond precision). */
export function formatPbDate(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ");
}

const PB_DATE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;

/**
 * Reads a stored date without `Date.parse`, whose handling of the space form
 * changed inside the 0.22 line (NaN up to v0.22.21, a real time from v0.22.22):
 * the same text must mean the same instant on every 0.22.x. Anything that is not
 * a well-formed UTC date in PocketBase's layout (or ISO's `T` form) gives null.
 */
export function parsePbDate(text: string): number | null {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number, number, number, number, number, number,
  ];
  const ms = Number(((m[7] ?? "") + "000").slice(0, 3));
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  // Date.UTC rolls 2024-02-31 over into March; a calendar-invalid text is unreadable.
  const back = new Date(t);
  if (
    back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 ||
    back.getUTCDate() !== day || back.getUTCHours() !== hour ||
    back.getUTCMinutes() !== minute || back.getUTCSeconds() !== second
  ) {
    return null;
  }
  return t;
}

/**
 * A lease is live while its end is in the future. An empty or unreadable lease
 * counts as expired so that one bad row can never wedge the queue.
 */
export function isLeaseLive(leaseExpiresAt: string, nowMs: number): boolean {
  const end = parsePbDate(leaseExpiresAt);
  return end !== null && end > nowMs;
}
