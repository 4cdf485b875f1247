/**
 * Lease texts for the one lease rule: the unit test holds isLeaseLive to
 * `live` at a fixed now, and the integration test stores each text in a real
 * row and holds SQLite's half of the rule (claim-next, sweep, stats) and the
 * handlers' JavaScript half to the same answer at the server's now.
 */
import { formatPbDate } from "../../src/lib/lease";

export interface LeaseText {
  name: string;
  text: string;
  live: boolean;
}

const HOUR = 3_600_000;

/** The table, with its relative entries measured from nowMs. */
export function leaseTexts(nowMs: number): LeaseText[] {
  return [
    { name: "an hour ahead", text: formatPbDate(nowMs + HOUR), live: true },
    { name: "an hour ago", text: formatPbDate(nowMs - HOUR), live: false },
    ...FIXED_LEASE_TEXTS,
  ];
}

/** Entries that mean the same at any now from 2025 to 2095. */
const FIXED_LEASE_TEXTS: readonly LeaseText[] = [
  { name: "empty (no lease)", text: "", live: false },
  { name: "garbage", text: "soon", live: false },
  { name: "far ahead", text: "9999-12-31 23:59:59.999Z", live: true },
  { name: "a leap day ahead", text: "2096-02-29 00:00:00.000Z", live: true },
  { name: "year 0000's leap day (past)", text: "0000-02-29 00:00:00.000Z", live: false },
  // Hand-edited forms PocketBase itself never stores: unreadable, so expired.
  { name: "ISO's T form, ahead", text: "2099-01-01T00:00:00Z", live: false },
  { name: "ISO's T form with millis, ahead", text: "2099-01-01T00:00:00.000Z", live: false },
  { name: "a date without a time, ahead", text: "2099-01-01", live: false },
  { name: "no fraction, ahead", text: "2099-01-01 00:00:00Z", live: false },
  { name: "one fractional digit, ahead", text: "2099-01-01 00:00:00.1Z", live: false },
  { name: "six fractional digits, ahead", text: "2099-01-01 00:00:00.123456Z", live: false },
  { name: "no zone, ahead", text: "2099-01-01 00:00:00.000", live: false },
  { name: "a +02:00 offset, ahead", text: "2099-01-01 00:00:00.000+02:00", live: false },
  { name: "a lower-case z, ahead", text: "2099-01-01 00:00:00.000z", live: false },
  { name: "a trailing space, ahead", text: "2099-01-01 00:00:00.000Z ", live: false },
  { name: "a leading space, ahead", text: " 2099-01-01 00:00:00.000Z", live: false },
  { name: "Feb 30, ahead", text: "2099-02-30 00:00:00.000Z", live: false },
  { name: "Feb 29 of a common year, ahead", text: "2099-02-29 00:00:00.000Z", live: false },
  { name: "Feb 29 of 2100 (not a leap year), ahead", text: "2100-02-29 00:00:00.000Z", live: false },
  { name: "Apr 31, ahead", text: "2099-04-31 00:00:00.000Z", live: false },
  { name: "month 13, ahead", text: "2099-13-01 00:00:00.000Z", live: false },
  { name: "month 00, ahead", text: "2099-00-10 00:00:00.000Z", live: false },
  { name: "day 00, ahead", text: "2099-05-00 00:00:00.000Z", live: false },
  { name: "hour 24, ahead", text: "2099-01-01 24:00:00.000Z", live: false },
  { name: "minute 60, ahead", text: "2099-01-01 12:60:00.000Z", live: false },
  { name: "a leap second, ahead", text: "2099-06-30 23:59:60.000Z", live: false },
  { name: "letters where digits go, ahead", text: "2O99-01-01 00:00:00.000Z", live: false },
  { name: "a year ago", text: "2025-06-01 00:00:00.000Z", live: false },
];
