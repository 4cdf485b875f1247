/**
 * Lease arithmetic, and the one rule that says whether a lease is live: the
 * handlers apply it in JavaScript (isLeaseLive) and claim-next, the sweeper and
 * stats apply it in SQL (LIVE_LEASE_SQL). Both say the same of every text.
 * Times are epoch milliseconds; stored dates use PocketBase's text layout
 * `2006-01-02 15:04:05.000Z`.
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

/** PocketBase's layout, digit for digit: the only form PocketBase itself stores. */
const PB_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;

/**
 * Reads a stored date without `Date.parse`, whose handling of the space form
 * changed inside the 0.22 line (NaN up to v0.22.21, a real time from v0.22.22):
 * the same text must mean the same instant on every version. Anything that is
 * not a calendar-valid date in PocketBase's exact layout gives null: the `T`
 * form, other fraction lengths, offsets, Feb 30, hour 24, a leap second.
 */
export function parsePbDate(text: string): number | null {
  const m = PB_DATE.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, ms] = m.slice(1, 8).map(Number) as [
    number, number, number, number, number, number, number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}

/** Proleptic Gregorian, as SQLite's date functions count. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * A lease is live while its end is in the future. An empty or unreadable lease
 * counts as expired so that one bad row can never wedge the queue. Readable
 * texts share one fixed-width layout, so comparing them as text compares them
 * as time: exactly what LIVE_LEASE_SQL does.
 */
export function isLeaseLive(leaseExpiresAt: string, nowMs: number): boolean {
  return parsePbDate(leaseExpiresAt) !== null && leaseExpiresAt > formatPbDate(nowMs);
}

/** PB_DATE's layout as a SQLite GLOB. */
const PB_DATE_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'";

/**
 * A lease text PocketBase's layout can read: the layout checked with GLOB, the
 * calendar by a round trip through SQLite's date arithmetic (the `+0 seconds`
 * modifier normalises Feb 30 or hour 24, so the text does not come back).
 */
const READABLE_LEASE_SQL = `lease_expires_at GLOB ${PB_DATE_GLOB} AND ` +
  "strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19)";

/**
 * isLeaseLive in SQLite, against the bound `{:now}` (formatPbDate of the
 * current time), for claim-next, sweep and stats: readable and after now;
 * COALESCE makes a NULL unreadable.
 */
export const LIVE_LEASE_SQL = `COALESCE(${READABLE_LEASE_SQL} AND lease_expires_at > {:now}, 0)`;

/**
 * A lease text no clock makes live (LIVE_LEASE_SQL's readability, negated):
 * fixed (no parameter, no 'now'), so a partial index can hold the held rows it
 * is true for (queries.ts UNREADABLE_LEASE_INDEX).
 */
export const UNREADABLE_LEASE_SQL = `NOT COALESCE(${READABLE_LEASE_SQL}, 0)`;

/**
 * The lease column as the handlers must read it. PocketBase's record loading
 * rewrites any date it can parse into its own layout (`2099-01-01T00:00:00Z`
 * would come back live), so the adapter selects this in place of the column:
 * a text not in the layout reads as "". A text in the layout but not a
 * calendar instant (Feb 30, hour 24) fails PocketBase's own parse and reads as
 * "" too. So the handlers judge exactly what LIVE_LEASE_SQL judges. Kept short:
 * it is part of every handler's query, which SQLite compiles per request.
 */
export const LEASE_AS_JUDGED_SQL =
  `(CASE WHEN lease_expires_at GLOB ${PB_DATE_GLOB} THEN lease_expires_at ELSE '' END) AS lease_expires_at`;

/**
 * parsePbDate in SQLite: epoch ms of a text in PocketBase's exact layout and
 * a calendar instant (the checks of LIVE_LEASE_SQL), NULL for anything else.
 */
export function pbDateMsSql(column: string): string {
  return `(CASE WHEN ${column} GLOB ${PB_DATE_GLOB} AND strftime('%Y-%m-%d %H:%M:%S', substr(${column}, 1, 19), '+0 seconds') = ` +
    `substr(${column}, 1, 19) THEN CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER) * 1000 + ` +
    `CAST(substr(${column}, 21, 3) AS INTEGER) END)`;
}

/**
 * formatPbDate in SQLite, of an expression in epoch ms: truncated to the
 * millisecond as a JavaScript Date truncates (SQLite's date arithmetic works
 * in whole milliseconds, so the text is exact).
 */
export function formatPbDateSql(ms: string): string {
  return `(strftime('%Y-%m-%d %H:%M:%f', CAST(${ms} AS INTEGER) / 1000.0, 'unixepoch') || 'Z')`;
}
