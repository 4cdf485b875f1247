import { describe, expect, it } from "vitest";
import {
  DEFAULT_ORPHAN_CAP,
  DEFAULT_SWEEP_SCHEDULE,
  isSweepOff,
  ORPHAN_CAP_ENV,
  orphanCap,
  SWEEP_BATCH,
  SWEEP_SCHEDULE_ENV,
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
});

describe("sweep schedule", () => {
  it.each<[string, string | undefined, string, boolean]>([
    ["unset", undefined, "* * * * *", false],
    ["empty", "", "* * * * *", false],
    ["blank", "   ", "* * * * *", false],
    ["off (a schedule is still registered; each tick does nothing)", "off", "* * * * *", true],
    ["off, padded", "  off\n", "* * * * *", true],
    ["a schedule", "*/5 * * * *", "*/5 * * * *", false],
    ["a padded schedule", "  0 * * * *  ", "0 * * * *", false],
    ["OFF in capitals (not the off switch)", "OFF", "OFF", false],
  ])("%s", (_name, value, schedule, off) => {
    const getenv = env(value === undefined ? {} : { PB_FLEET_SWEEP_CRON: value });
    expect(sweepSchedule(getenv)).toBe(schedule);
    expect(isSweepOff(getenv)).toBe(off);
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
