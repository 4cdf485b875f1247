import { describe, expect, it } from "vitest";
import {
  DEFAULT_KEEP_DONE,
  DEFAULT_KEEP_FAILED,
  DEFAULT_ORPHAN_CAP,
  DEFAULT_SWEEP_SCHEDULE,
  decodeSweeperState,
  encodeSweeperState,
  invalidScheduleError,
  KEEP_DONE_ENV,
  KEEP_FAILED_ENV,
  ORPHAN_CAP_ENV,
  orphanCap,
  SWEEP_BATCH,
  SWEEP_SCHEDULE_ENV,
  SWEEP_OFF,
  maintenanceSetting,
  sweeperNotScheduled,
  sweeperScheduled,
  sweepSchedule,
} from "../../src/lib/config";

/** PocketBase's $os.getenv: "" for an unset variable. */
function env(values: Record<string, string>): (name: string) => string {
  return (name) => values[name] ?? "";
}

describe("config names and defaults", () => {
  it("reads PB_FLEET_SWEEP_CRON and PB_FLEET_MAX_ORPHANS", () => {
    expect(SWEEP_SCHEDULE_ENV).toBe("PB_FLEET_SWEEP_CRON");
    expect(ORPHAN_CAP_ENV).toBe("PB_FLEET_MAX_ORPHANS");
    expect(DEFAULT_SWEEP_SCHEDULE).toBe("* * * * *");
    expect(DEFAULT_ORPHAN_CAP).toBe(5);
    expect(SWEEP_BATCH).toBe(500);
  });

  it("reads PB_FLEET_KEEP_DONE (default 7d) and PB_FLEET_KEEP_FAILED (default 30d)", () => {
    expect(KEEP_DONE_ENV).toBe("PB_FLEET_KEEP_DONE");
    expect(KEEP_FAILED_ENV).toBe("PB_FLEET_KEEP_FAILED");
    expect(DEFAULT_KEEP_DONE).toBe("7d");
    expect(DEFAULT_KEEP_FAILED).toBe("30d");
  });
});

describe("sweep schedule", () => {
  it.each<[string, string | undefined, string]>([
    ["unset", undefined, "* * * * *"],
    ["empty", "", "* * * * *"],
    ["blank", "   ", "* * * * *"],
    ["off", "off", SWEEP_OFF],
    ["off, padded", "  off\n", SWEEP_OFF],
    ["a schedule", "*/5 * * * *", "*/5 * * * *"],
    ["a padded schedule", "  0 * * * *  ", "0 * * * *"],
    ["OFF in capitals (not the off switch: an invalid schedule)", "OFF", "OFF"],
  ])("%s", (_name, value, schedule) => {
    expect(sweepSchedule(env(value === undefined ? {} : { PB_FLEET_SWEEP_CRON: value }))).toBe(schedule);
  });
});

describe("the maintenance tick's cron switch (PB_FLEET_MAINTENANCE_CRON)", () => {
  it.each<[string, string | undefined, "on" | "off"]>([
    ["unset", undefined, "on"],
    ["blank", "  ", "on"],
    ["off", "off", "off"],
    ["off, padded", " off\n", "off"],
  ])("%s", (_name, value, setting) => {
    expect(maintenanceSetting(env(value === undefined ? {} : { PB_FLEET_MAINTENANCE_CRON: value }))).toBe(setting);
  });

  it.each(["OFF", "*/5 * * * *", "no"])("refuses %j with a sentence naming the variable and both allowed settings", (value) => {
    const setting = maintenanceSetting(env({ PB_FLEET_MAINTENANCE_CRON: value }));
    expect(setting).toEqual({ error: `PB_FLEET_MAINTENANCE_CRON is ${JSON.stringify(value)}: leave it unset (every minute) or set it to "off"` });
  });
});

describe("the sweeper's recorded state (what /api/fleet/stats reports)", () => {
  it.each([
    ["scheduled", sweeperScheduled("*/5 * * * *")],
    ["off", sweeperNotScheduled(SWEEP_OFF)],
    ["an invalid schedule", sweeperNotScheduled("nope", invalidScheduleError("nope", "it must be ..."))],
  ])("round-trips through the app store's text (%s)", (_name, state) => {
    expect(decodeSweeperState(encodeSweeperState(state), "x")).toEqual(state);
  });

  it("names the variable, the value and the cause when the schedule is invalid", () => {
    expect(invalidScheduleError("61 * * * *", "minute out of range")).toBe(
      'PB_FLEET_SWEEP_CRON="61 * * * *" is not a valid 5-field cron expression (or "off"), ' +
        "so the server sweeper is not running: minute out of range",
    );
  });

  it.each<[string, unknown]>([
    ["nothing recorded (PocketBase's store answers null)", null],
    ["not JSON", "{"],
    ["JSON of another shape", JSON.stringify({ schedule: "* * * * *" })],
    ["a Go map instead of text", { scheduled: true, schedule: "* * * * *" }],
  ])("says the sweeper is not running when %s", (_name, stored) => {
    expect(decodeSweeperState(stored, "*/2 * * * *")).toEqual({
      scheduled: false,
      schedule: "*/2 * * * *",
      error: "the pb-fleet hooks did not register the sweeper: see PocketBase's log",
    });
  });
});

describe("orphanCap", () => {
  it.each<[string, string | undefined, number]>([
    ["unset", undefined, 5],
    ["empty", "", 5],
    ["3", "3", 3],
    ["1", "1", 1],
    ["padded", " 7 ", 7],
    ["0", "0", 5],
    ["negative", "-2", 5],
    ["a fraction", "2.5", 5],
    ["not a number", "many", 5],
    ["a number with a unit", "3x", 5],
  ])("%s -> %d", (_name, value, cap) => {
    expect(orphanCap(env(value === undefined ? {} : { PB_FLEET_MAX_ORPHANS: value }))).toBe(cap);
  });

  it("reads only its own variable", () => {
    expect(orphanCap(env({ PB_FLEET_SWEEP_CRON: "3" }))).toBe(5);
  });
});
