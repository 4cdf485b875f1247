import { describe, expect, it } from "vitest";
import { cronScheduleError } from "../../src/lib/cron";

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
  ])("refuses %s (%j)", (_name, expression, error) => {
    expect(cronScheduleError(expression)).toMatch(error);
  });
});
