import { describe, expect, it } from "vitest";
import { cronMatchesMinute, cronScheduleError, parseCron, type CronSchedule } from "../../src/lib/cron";

// The cases follow PocketBase's tools/cron/schedule.go (NewSchedule, parseCronSegment).
describe("cronScheduleError: PocketBase's cron grammar", () => {
  it.each([
    "* * * * *", "*/5 * * * *", "0 * * * *", "0-59/15 0-23 1-31 1-12 0-6", "1,2,3,10-20/5 * * * *",
    "59 23 31 12 6", "0 0 1 1 *", "5/1 * * * *", "+5 * * * *",
    "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly",
  ])("takes %j", (expression) => {
    expect(cronScheduleError(expression)).toBeNull();
  });

  it.each<[string, string, RegExp]>([
    ["empty", "", /exactly 5 fields/],
    ["four fields", "* * * *", /exactly 5 fields/],
    ["six fields", "* * * * * *", /exactly 5 fields/],
    ["two spaces", "*  * * * *", /exactly 5 fields/],
    ["a tab", "*\t* * * *", /exactly 5 fields/],
    ["an unknown macro", "@every 5m", /exactly 5 fields/],
    ["OFF in capitals", "OFF", /exactly 5 fields/],
    ["minute 60", "60 * * * *", /^minute field "60": values must be numbers from 0 to 59$/],
    ["hour 24", "* 24 * * *", /^hour field/],
    ["day 0", "* * 0 * *", /^day of month field/],
    ["month 13", "* * * 13 *", /^month field/],
    ["weekday 7", "* * * * 7", /^day of week field/],
    ["a name", "* * * JAN *", /^month field/],
    ["a step of 0", "*/0 * * * *", /step must be a number from 1 to 59/],
    ["a step past the maximum", "*/60 * * * *", /step/],
    ["two steps", "*/2/3 * * * *", /step is written/],
    ["a step on a single value", "5/2 * * * *", /needs \* or a range/],
    ["a reversed range", "30-10 * * * *", /range must end/],
    ["a three-part range", "1-2-3 * * * *", /range is written/],
    ["an empty list item", "1,,2 * * * *", /values must be numbers/],
    ["a negative number", "-5 * * * *", /values must be numbers/],
    ["a fraction", "1.5 * * * *", /values must be numbers/],
    ["a question mark", "* * ? * *", /values must be numbers/],
    ["a macro with a space", "@daily ", /exactly 5 fields/],
    ["a macro in capitals", "@DAILY", /exactly 5 fields/],
    ["a day-of-week step past 6", "* * * * */7", /^day of week field "\*\/7": the step must be a number from 1 to 6$/],
  ])("refuses %s (%j)", (_name, expression, error) => {
    expect(cronScheduleError(expression)).toMatch(error);
  });
});

/** Milliseconds of a UTC instant; `second` lets a tick land late in its minute. */
function utc(year: number, month: number, day: number, hour: number, minute: number, second = 0): number {
  return Date.UTC(year, month - 1, day, hour, minute, second);
}

function schedule(expression: string): CronSchedule {
  const parsed = parseCron(expression);
  if (!parsed.ok) throw new Error(`${expression}: ${parsed.error}`);
  return parsed.schedule;
}

function sorted(values: ReadonlySet<number>): number[] {
  return [...values].sort((a, b) => a - b);
}

describe("parseCron: the values of each field", () => {
  it.each<[string, number[]]>([
    ["*/15 * * * *", [0, 15, 30, 45]],
    ["*/7 * * * *", [0, 7, 14, 21, 28, 35, 42, 49, 56]],
    ["5-20/5 * * * *", [5, 10, 15, 20]],
    ["5-21/5 * * * *", [5, 10, 15, 20]],
    ["1,2,10-12 * * * *", [1, 2, 10, 11, 12]],
    ["3,3,1-3 * * * *", [1, 2, 3]],
    ["05 * * * *", [5]],
    ["+5 * * * *", [5]],
    ["*/59 * * * *", [0, 59]],
  ])("%j minutes", (expression, minutes) => {
    expect(sorted(schedule(expression).minutes)).toEqual(minutes);
  });

  it("steps the day of month from 1 and the day of week from 0 (each field's minimum)", () => {
    const s = schedule("* * */10 * */3");
    expect(sorted(s.daysOfMonth)).toEqual([1, 11, 21, 31]);
    expect(sorted(s.daysOfWeek)).toEqual([0, 3, 6]);
  });

  it.each<[string, string]>([
    ["@yearly", "0 0 1 1 *"], ["@annually", "0 0 1 1 *"], ["@monthly", "0 0 1 * *"], ["@weekly", "0 0 * * 0"],
    ["@daily", "0 0 * * *"], ["@midnight", "0 0 * * *"], ["@hourly", "0 * * * *"],
  ])("%s is %j", (macro, expansion) => {
    expect(schedule(macro)).toEqual(schedule(expansion));
  });

  it("answers the validator's reason", () => {
    expect(parseCron("* * * * 7")).toEqual({ ok: false, error: cronScheduleError("* * * * 7") });
    expect(cronScheduleError("* * * * 7")).toMatch(/^day of week field "7": values must be numbers from 0 to 6$/);
  });
});

// Weekdays by hand: 2023-12-31 Sunday, 2024-01-01 Monday, 2024-01-06 Saturday,
// 2024-01-13 Saturday, 2024-02-29 Thursday, 2024-09-13 Friday, 2024-09-20 Friday.
describe("cronMatchesMinute: Schedule.IsDue in UTC", () => {
  it.each<[string, string, number, boolean]>([
    ["every minute", "* * * * *", utc(2024, 5, 17, 13, 37), true],
    ["a step, on it", "*/15 * * * *", utc(2024, 1, 1, 10, 45), true],
    ["a step, off it", "*/15 * * * *", utc(2024, 1, 1, 10, 50), false],
    ["*/7 does not carry into the next hour (56, then 0)", "*/7 * * * *", utc(2024, 1, 1, 11, 0), true],
    ["*/7 at minute 59", "*/7 * * * *", utc(2024, 1, 1, 10, 59), false],
    ["a stepped range, inside", "5-20/5 * * * *", utc(2024, 1, 1, 0, 20), true],
    ["a stepped range, after it", "5-20/5 * * * *", utc(2024, 1, 1, 0, 25), false],
    ["a stepped range, off the step", "5-20/5 * * * *", utc(2024, 1, 1, 0, 7), false],
    ["a list's range", "1,2,10-12 * * * *", utc(2024, 1, 1, 0, 11), true],
    ["between a list's items", "1,2,10-12 * * * *", utc(2024, 1, 1, 0, 3), false],
    ["office hours, Monday 09:00", "0 9-17 * * 1-5", utc(2024, 1, 1, 9, 0), true],
    ["office hours, Monday 17:00", "0 9-17 * * 1-5", utc(2024, 1, 1, 17, 0), true],
    ["office hours, Monday 18:00", "0 9-17 * * 1-5", utc(2024, 1, 1, 18, 0), false],
    ["office hours, Saturday 09:00", "0 9-17 * * 1-5", utc(2024, 1, 6, 9, 0), false],
    ["day of week 0 is Sunday", "0 0 * * 0", utc(2023, 12, 31, 0, 0), true],
    ["day of week 0 on a Monday", "0 0 * * 0", utc(2024, 1, 1, 0, 0), false],
    ["day 13 AND Friday: Friday the 13th", "0 0 13 * 5", utc(2024, 9, 13, 0, 0), true],
    ["day 13 AND Friday: Saturday the 13th (Vixie cron would run)", "0 0 13 * 5", utc(2024, 1, 13, 0, 0), false],
    ["day 13 AND Friday: Friday the 20th (Vixie cron would run)", "0 0 13 * 5", utc(2024, 9, 20, 0, 0), false],
    ["Feb 29 in a leap year", "0 0 29 2 *", utc(2024, 2, 29, 0, 0), true],
    ["Feb 29's schedule on Mar 1 of a common year", "0 0 29 2 *", utc(2023, 3, 1, 0, 0), false],
    ["day 31 in January", "0 0 31 * *", utc(2024, 1, 31, 0, 0), true],
    ["day 31's schedule on Apr 30", "0 0 31 * *", utc(2024, 4, 30, 0, 0), false],
    ["the year's last minute", "59 23 31 12 *", utc(2024, 12, 31, 23, 59), true],
    ["the next year's first minute", "59 23 31 12 *", utc(2025, 1, 1, 0, 0), false],
    ["month 12 in November", "* * * 12 *", utc(2024, 11, 30, 23, 59), false],
    ["late in the minute (59.999 s)", "30 14 * * *", utc(2024, 3, 10, 14, 30, 59) + 999, true],
    ["the next minute's first millisecond", "30 14 * * *", utc(2024, 3, 10, 14, 31), false],
    ["@hourly on the hour", "@hourly", utc(2024, 1, 1, 10, 0), true],
    ["@hourly a minute past", "@hourly", utc(2024, 1, 1, 10, 1), false],
    ["@daily at 00:00", "@daily", utc(2024, 7, 4, 0, 0), true],
    ["@daily at 01:00", "@daily", utc(2024, 7, 4, 1, 0), false],
    ["@weekly on Sunday 00:00", "@weekly", utc(2023, 12, 31, 0, 0), true],
    ["@weekly on Monday 00:00", "@weekly", utc(2024, 1, 1, 0, 0), false],
    ["@monthly on the 1st", "@monthly", utc(2024, 3, 1, 0, 0), true],
    ["@monthly on the 2nd", "@monthly", utc(2024, 3, 2, 0, 0), false],
    ["@yearly on Jan 1", "@yearly", utc(2025, 1, 1, 0, 0), true],
    ["@yearly on Feb 1", "@yearly", utc(2025, 2, 1, 0, 0), false],
  ])("%s", (_name, expression, epochMs, due) => {
    expect(cronMatchesMinute(schedule(expression), epochMs)).toBe(due);
  });

  it("reads the instant in UTC, not the machine's zone", () => {
    // 23:30 UTC on Sunday is already Monday east of UTC and still Sunday 23:30 in UTC.
    const sundayLate = utc(2023, 12, 31, 23, 30);
    expect(cronMatchesMinute(schedule("30 23 * * 0"), sundayLate)).toBe(true);
    expect(cronMatchesMinute(schedule("30 * * * 1"), sundayLate)).toBe(false);
  });
});
