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
import { leaseTexts } from "../support/lease-texts";

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
    ["2024-02-29 00:00:00.000Z", Date.UTC(2024, 1, 29)], // leap day
    ["1970-01-01 00:00:00.000Z", 0],
    ["0099-01-01 00:00:00.000Z", -59042995200000], // year 99, not 1999 (Date.UTC's reading of two-digit years)
    ["9999-12-31 23:59:59.999Z", Date.UTC(9999, 11, 31, 23, 59, 59, 999)],
  ])("reads %j", (text, expected) => {
    expect(parsePbDate(text)).toBe(expected);
  });

  it.each<[string, string]>([
    ["empty", ""],
    ["garbage", "not a date"],
    ["a date without a time", "2024-05-06"],
    ["ten fractional digits", "2024-05-06 07:08:09.1234567890Z"],
    ["ISO's T form (PocketBase never stores it)", "2024-05-06T07:08:09.123Z"],
    ["no fraction", "2024-05-06 07:08:09Z"],
    ["one fractional digit", "2024-05-06 07:08:09.1Z"],
    ["four fractional digits", "2024-05-06 07:08:09.1234Z"],
    ["nine fractional digits", "2024-05-06 07:08:09.123456789Z"],
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

describe("isLeaseLive: live only while a readable end is in the future (the one rule SQLite applies too)", () => {
  const now = Date.UTC(2026, 11, 1, 12, 0, 0, 0);

  it.each(leaseTexts(now).map((t) => [t.name, t.text, t.live] as const))("%s (%j) -> live %s", (_name, text, live) => {
    expect(isLeaseLive(text, now)).toBe(live);
  });

  it.each<[string, number, boolean]>([
    ["1 ms ahead", 1, true],
    ["ending exactly now", 0, false],
    ["1 ms ago", -1, false],
  ])("%s -> live %s", (_name, offsetMs, live) => {
    expect(isLeaseLive(formatPbDate(now + offsetMs), now)).toBe(live);
  });

  it("agrees with comparing readable texts as time, for any instant and lease", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Date.UTC(9999, 0, 1) }),
        fc.integer({ min: 0, max: Date.UTC(9999, 0, 1) }),
        (nowMs, endMs) => {
          expect(isLeaseLive(formatPbDate(endMs), nowMs)).toBe(endMs > nowMs);
        },
      ),
    );
  });
});
