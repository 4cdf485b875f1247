import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  clampLeaseSeconds,
  DEFAULT_LEASE_SECONDS,
  formatPbDate,
  isLeaseLive,
  MAX_LEASE_SECONDS,
  MIN_LEASE_SECONDS,
  parsePbDate,
} from "../../src/lib/lease";
import { NOW } from "./support/rows";

describe("clampLeaseSeconds: only a JSON number > 0 counts, clamped to [1, 3600]", () => {
  it("has the protocol's bounds", () => {
    expect([DEFAULT_LEASE_SECONDS, MIN_LEASE_SECONDS, MAX_LEASE_SECONDS]).toEqual([30, 1, 3600]);
  });

  it.each<[string, unknown, number]>([
    ["missing", undefined, 30],
    ["a numeric string", "120", 30],
    ["null", null, 30],
    ["zero", 0, 30],
    ["negative zero", -0, 30],
    ["a negative number", -5, 30],
    ["NaN", Number.NaN, 30],
    ["-Infinity", Number.NEGATIVE_INFINITY, 30],
    ["a boolean", true, 30],
    ["an object", { seconds: 10 }, 30],
    ["+Infinity (capped)", Number.POSITIVE_INFINITY, 3600],
    ["0.001 (floored to 1 s)", 0.001, 1],
    ["0.5 (floored to 1 s)", 0.5, 1],
    ["exactly 1", 1, 1],
    ["120", 120, 120],
    ["a fraction inside the range", 1.5, 1.5],
    ["exactly 3600", 3600, 3600],
    ["3601", 3601, 3600],
    ["1e9 (capped)", 1e9, 3600],
  ])("%s -> %d", (_name, raw, expected) => {
    expect(clampLeaseSeconds(raw)).toBe(expected);
  });
});

describe("parsePbDate", () => {
  const at = (ms: number) => Date.UTC(2024, 4, 6, 7, 8, 9, ms);

  it.each<[string, number]>([
    ["2024-05-06 07:08:09.123Z", at(123)], // PocketBase's stored form
    ["2024-05-06T07:08:09.123Z", at(123)], // ISO's T form
    ["2024-05-06 07:08:09Z", at(0)], // no fraction
    ["2024-05-06T07:08:09Z", at(0)],
    ["2024-05-06 07:08:09.1Z", at(100)],
    ["2024-05-06 07:08:09.12Z", at(120)],
    ["2024-05-06 07:08:09.1234Z", at(123)],
    ["2024-05-06 07:08:09.12345Z", at(123)],
    ["2024-05-06 07:08:09.123456Z", at(123)],
    ["2024-05-06 07:08:09.1234567Z", at(123)],
    ["2024-05-06 07:08:09.12345678Z", at(123)],
    ["2024-05-06 07:08:09.123456789Z", at(123)],
    ["2024-05-06 07:08:09.9999Z", at(999)], // truncated, never rounded up into the next second
    ["2024-02-29 00:00:00.000Z", Date.UTC(2024, 1, 29)], // leap day
    ["1970-01-01 00:00:00.000Z", 0],
    ["9999-12-31 23:59:59.999Z", Date.UTC(9999, 11, 31, 23, 59, 59, 999)],
  ])("reads %j", (text, expected) => {
    expect(parsePbDate(text)).toBe(expected);
  });

  it.each<[string, string]>([
    ["empty", ""],
    ["garbage", "not a date"],
    ["a date without a time", "2024-05-06"],
    ["ten fractional digits", "2024-05-06 07:08:09.1234567890Z"],
    ["a dot without digits", "2024-05-06 07:08:09.Z"],
    ["no zone", "2024-05-06 07:08:09.123"],
    ["a lower-case z", "2024-05-06 07:08:09.123z"],
    ["a +02:00 offset", "2024-05-06 07:08:09.123+02:00"],
    ["a -05:00 offset", "2024-05-06T07:08:09.123-05:00"],
    ["a +00:00 offset", "2024-05-06T07:08:09.123+00:00"],
    ["Z and an offset", "2024-05-06T07:08:09.123Z+01:00"],
    ["Feb 30", "2024-02-30 00:00:00.000Z"],
    ["Feb 29 of a common year", "2023-02-29 00:00:00.000Z"],
    ["Apr 31", "2024-04-31 00:00:00.000Z"],
    ["month 13", "2024-13-01 00:00:00.000Z"],
    ["month 00", "2024-00-10 00:00:00.000Z"],
    ["day 00", "2024-05-00 00:00:00.000Z"],
    ["hour 25", "2024-01-01 25:00:00.000Z"],
    ["hour 24", "2024-01-01 24:00:00.000Z"],
    ["minute 60", "2024-01-01 12:60:00.000Z"],
    ["second 60 (leap second)", "2024-06-30 23:59:60.000Z"],
    ["one-digit month and day", "2024-5-6 07:08:09.123Z"],
    ["two spaces", "2024-05-06  07:08:09.123Z"],
    ["a leading space", " 2024-05-06 07:08:09.123Z"],
    ["a trailing space", "2024-05-06 07:08:09.123Z "],
    ["a trailing newline", "2024-05-06 07:08:09.123Z\n"],
    ["another separator", "2024-05-06_07:08:09.123Z"],
    ["slashes", "2024/05/06 07:08:09.123Z"],
    ["an epoch number as text", "1715000000000"],
  ])("gives null for %s", (_name, text) => {
    expect(parsePbDate(text)).toBeNull();
  });
});

describe("formatPbDate", () => {
  it("writes PocketBase's stored form", () => {
    expect(formatPbDate(Date.UTC(2024, 4, 6, 7, 8, 9, 5))).toBe("2024-05-06 07:08:09.005Z");
    expect(formatPbDate(0)).toBe("1970-01-01 00:00:00.000Z");
  });

  it("round-trips through parsePbDate for every millisecond from 1970 to 9999", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }), (ms) => {
        const text = formatPbDate(ms);
        expect(text).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        expect(parsePbDate(text)).toBe(ms);
      }),
    );
  });

  it("sorts as text in time order (the SQL compares lease texts)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Date.UTC(9999, 0, 1) }),
        fc.integer({ min: 0, max: Date.UTC(9999, 0, 1) }),
        (a, b) => {
          expect(formatPbDate(a) < formatPbDate(b)).toBe(a < b);
        },
      ),
    );
  });
});

describe("isLeaseLive: live only while a readable end is in the future", () => {
  it.each<[string, string, boolean]>([
    ["empty (no lease)", "", false],
    ["unreadable", "soon", false],
    ["calendar-invalid", "2025-02-30 12:00:00.000Z", false],
    ["a future end with a non-UTC offset (unreadable)", "2099-01-01T00:00:00.000+02:00", false],
    ["1 ms in the future", formatPbDate(NOW + 1), true],
    ["an hour in the future", formatPbDate(NOW + 3_600_000), true],
    ["a future end in ISO's T form", new Date(NOW + 60_000).toISOString(), true],
    ["a future end without millis", "2025-01-15 12:00:01Z", true],
    ["ending exactly now", formatPbDate(NOW), false],
    ["1 ms in the past", formatPbDate(NOW - 1), false],
    ["a year in the past", "2024-01-15 12:00:00.000Z", false],
  ])("%s -> %s", (_name, lease, live) => {
    expect(isLeaseLive(lease, NOW)).toBe(live);
  });
});
