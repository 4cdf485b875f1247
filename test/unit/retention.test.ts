import { describe, expect, it } from "vitest";
import { formatPbDate } from "../../src/lib/lease";
import {
  deleteExpiredQuery,
  expiredIdsQuery,
  keepSetting,
  parseKeepDuration,
  eventsKeep,
  RETENTION_BATCH,
  RETENTION_CLASSES,
  type RetentionClass,
  retentionCutoff,
} from "../../src/lib/retention";
import { JOB_STATUSES } from "../../src/lib/types";

function env(values: Record<string, string>): (name: string) => string {
  return (name) => values[name] ?? "";
}

const DAY = 86_400_000;
const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);

describe("parseKeepDuration", () => {
  it.each<[string, number]>([
    ["0", 0], ["0d", 0], ["90s", 90_000], ["30m", 1_800_000], ["12h", 43_200_000], ["7d", 7 * DAY],
    ["30d", 30 * DAY], ["007d", 7 * DAY], ["1s", 1000],
  ])("%j -> %d ms", (text, ms) => {
    expect(parseKeepDuration(text)).toBe(ms);
  });

  it.each([
    "", "7", "d", "7 d", "7D", "7days", "1.5h", "-1d", "+1d", "1w", "1d2h", " 7d", "7d ", "0x10s", "1e3s",
    "7d\n", "999999999999999999d",
  ])("refuses %j", (text) => {
    expect(parseKeepDuration(text)).toBeNull();
  });
});

describe("keepSetting", () => {
  it("defaults: done and cancelled 7 days, failed 30 days", () => {
    expect(keepSetting(env({}), "done")).toEqual({ retentionClass: "done", keepMs: 7 * DAY });
    expect(keepSetting(env({}), "failed")).toEqual({ retentionClass: "failed", keepMs: 30 * DAY });
    expect(keepSetting(env({ PB_FLEET_KEEP_DONE: "  " }), "done")).toEqual({ retentionClass: "done", keepMs: 7 * DAY });
  });

  it("reads each class's own variable, trimmed", () => {
    const getenv = env({ PB_FLEET_KEEP_DONE: " 2h ", PB_FLEET_KEEP_FAILED: "90d" });
    expect(keepSetting(getenv, "done").keepMs).toBe(2 * 3_600_000);
    expect(keepSetting(getenv, "failed").keepMs).toBe(90 * DAY);
  });

  it.each(["0", "0d", "0s"])("%j keeps forever", (value) => {
    expect(keepSetting(env({ PB_FLEET_KEEP_FAILED: value }), "failed")).toEqual({ retentionClass: "failed", keepMs: null });
  });

  it("keeps the whole class on an invalid value, and says why naming the variable and an example", () => {
    const setting = keepSetting(env({ PB_FLEET_KEEP_DONE: "7 days" }), "done");
    expect(setting.keepMs).toBeNull();
    expect(setting.error).toBe(
      'PB_FLEET_KEEP_DONE="7 days" is not a duration such as 7d, 12h, 30m, 90s or 0 (keep forever), ' +
        "so no done or cancelled rows are deleted",
    );
    expect(retentionCutoff(NOW, setting.keepMs)).toBeNull();
  });

  it("an invalid value of one class leaves the other class as configured", () => {
    const getenv = env({ PB_FLEET_KEEP_FAILED: "-1d", PB_FLEET_KEEP_DONE: "1d" });
    expect(keepSetting(getenv, "failed")).toMatchObject({ keepMs: null, error: expect.stringMatching(/^PB_FLEET_KEEP_FAILED="-1d" .* no failed rows are deleted$/) });
    expect(keepSetting(getenv, "done")).toEqual({ retentionClass: "done", keepMs: DAY });
  });
});

describe("retentionCutoff", () => {
  it("is now minus the keep, in PocketBase's date text", () => {
    expect(retentionCutoff(NOW, 7 * DAY)).toBe("2025-06-08 12:00:00.000Z");
    expect(retentionCutoff(NOW, 90_000)).toBe(formatPbDate(NOW - 90_000));
  });

  it.each<[string, number | null]>([
    ["forever", null], ["zero", 0], ["negative", -DAY], ["NaN", Number.NaN], ["before 1970", NOW + 1], ["infinite", Infinity],
  ])("deletes nothing when the keep is %s", (_name, keepMs) => {
    expect(retentionCutoff(NOW, keepMs)).toBeNull();
  });
});

const NON_TERMINAL = JOB_STATUSES.filter((s) => s !== "done" && s !== "failed" && s !== "cancelled");

describe("the delete queries", () => {
  const cutoff = "2025-06-08 12:00:00.000Z";

  it("selects at most a batch of done and cancelled rows finished before the cutoff", () => {
    expect(RETENTION_BATCH).toBe(200);
    expect(expiredIdsQuery("done", cutoff, RETENTION_BATCH)).toEqual({
      sql: "SELECT id FROM probe_jobs WHERE status IN ('done', 'cancelled') AND finished_at != '' " +
        "AND finished_at < {:cutoff} LIMIT {:limit}",
      params: { cutoff, limit: 200 },
    });
  });

  it("selects failed rows alone for the failed class", () => {
    expect(expiredIdsQuery("failed", cutoff, 10)).toEqual({
      sql: "SELECT id FROM probe_jobs WHERE status IN ('failed') AND finished_at != '' " +
        "AND finished_at < {:cutoff} LIMIT {:limit}",
      params: { cutoff, limit: 10 },
    });
  });

  it("deletes by those ids in one statement, with the same bound values", () => {
    const ids = expiredIdsQuery("failed", cutoff, 10);
    expect(deleteExpiredQuery("failed", cutoff, 10)).toEqual({
      sql: `DELETE FROM probe_jobs WHERE id IN (${ids.sql})`,
      params: { cutoff, limit: 10 },
    });
  });

  it.each(RETENTION_CLASSES)("never names a non-terminal status (%s)", (retentionClass) => {
    const { sql } = deleteExpiredQuery(retentionClass, cutoff, 1);
    expect(NON_TERMINAL).toEqual(["pending", "claimed", "running"]);
    for (const status of NON_TERMINAL) expect(sql).not.toContain(status);
    expect(sql).not.toContain(cutoff); // bound, not spliced
  });

  it.each(["pending", "claimed", "running", "toString", "__proto__", ""])("refuses a class %j at run time", (name) => {
    expect(() => deleteExpiredQuery(name as RetentionClass, cutoff, 1)).toThrow(/not a retention class/);
    expect(() => expiredIdsQuery(name as RetentionClass, cutoff, 1)).toThrow(/not a retention class/);
  });

  it.each([-1, 1.5, Number.NaN])("refuses a batch size %d (a negative LIMIT is no limit in SQLite)", (limit) => {
    expect(() => deleteExpiredQuery("done", cutoff, limit)).toThrow(/not a batch size/);
  });
});

describe("eventsKeep (PB_FLEET_KEEP_EVENTS)", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name] ?? "";
  it("defaults to 15 minutes, reads the keep syntax, and keeps forever at 0", () => {
    expect(eventsKeep(env({}))).toEqual({ keepMs: 15 * 60_000 });
    expect(eventsKeep(env({ PB_FLEET_KEEP_EVENTS: "2m" }))).toEqual({ keepMs: 120_000 });
    expect(eventsKeep(env({ PB_FLEET_KEEP_EVENTS: "0" }))).toEqual({ keepMs: null });
  });
  it("falls back to the default on a value it cannot read, and says so", () => {
    const keep = eventsKeep(env({ PB_FLEET_KEEP_EVENTS: "2 minutes" }));
    expect(keep.keepMs).toBe(15 * 60_000);
    expect(keep.error).toContain("PB_FLEET_KEEP_EVENTS");
  });
});

