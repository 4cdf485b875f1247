import { describe, expect, it } from "vitest";
import { formatPbDate } from "../../src/lib/lease";
import { MAX_MAX_ATTEMPTS, MAX_PAYLOAD_BYTES, MAX_PRIORITY, MIN_PRIORITY } from "../../src/lib/queue";
import {
  decideScheduleTick,
  enabledSchedulesQuery,
  minuteStart,
  type ScheduleDecision,
  type ScheduleRow,
  SCHEDULES_PER_TICK,
  scheduleUniqueKey,
} from "../../src/lib/schedules";

const T = Date.UTC(2025, 0, 31, 2, 0, 0); // 2025-01-31 02:00:00 UTC, a Friday
const AT_TICK = T + 1234; // PocketBase's ticker fires a little after the minute starts

function row(fields: Partial<ScheduleRow> = {}): ScheduleRow {
  return {
    id: "sch1",
    name: "nightly",
    probe_key: "probe-a",
    cron: "0 2 * * *",
    payload: { target: "db" },
    priority: 5,
    max_attempts: 3,
    enabled: true,
    last_enqueued_for: "",
    queue: "",
    group_key: "",
    ...fields,
  };
}

/** The decision's error when it is an invalid-row skip. */
function invalidError(decision: ScheduleDecision): string {
  if (decision.kind !== "skip" || decision.reason !== "invalid" || decision.error === undefined) {
    throw new Error(`not an invalid-row skip: ${JSON.stringify(decision)}`);
  }
  return decision.error;
}

describe("minuteStart and scheduleUniqueKey", () => {
  it("floors to the UTC minute", () => {
    expect(minuteStart(T)).toBe(T);
    expect(minuteStart(T + 59_999)).toBe(T);
    expect(minuteStart(T + 60_000)).toBe(T + 60_000);
    expect(minuteStart(T - 1)).toBe(T - 60_000);
  });

  it("names the schedule and the minute, to the minute", () => {
    expect(scheduleUniqueKey("nightly", T)).toBe("pb-fleet-schedule:nightly:2025-01-31T02:00Z");
    expect(scheduleUniqueKey("nightly", T + 59_999)).toBe("pb-fleet-schedule:nightly:2025-01-31T02:00Z");
    expect(scheduleUniqueKey("nightly", T + 60_000)).toBe("pb-fleet-schedule:nightly:2025-01-31T02:01Z");
  });

  it("keeps names with ':' apart", () => {
    expect(scheduleUniqueKey("a:2025-01-31T02:00Z", T)).not.toBe(scheduleUniqueKey("a", T));
  });
});

describe("decideScheduleTick", () => {
  it("enqueues a due schedule for the minute, with every field from the row", () => {
    expect(decideScheduleTick(row(), AT_TICK)).toEqual({
      kind: "enqueue",
      item: {
        probeKey: "probe-a",
        // An empty queue column: the default queue (docs/flow-control.md); no group, and a schedule sets no timeout or start_by.
        queue: "default",
        groupKey: "",
        timeoutSeconds: 0,
        startBy: "",
        payload: { target: "db" },
        priority: 5,
        maxAttempts: 3,
        uniqueKey: "pb-fleet-schedule:nightly:2025-01-31T02:00Z",
        runAt: "2025-01-31 02:00:00.000Z",
      },
      patch: { last_enqueued_for: "2025-01-31 02:00:00.000Z" },
    });
  });

  it("enqueues into the row's queue and group (docs/flow-control.md)", () => {
    expect(decideScheduleTick(row({ queue: "emails", group_key: "host-a.example" }), AT_TICK)).toMatchObject({
      kind: "enqueue",
      item: { queue: "emails", groupKey: "host-a.example", timeoutSeconds: 0, startBy: "" },
    });
  });

  it("enqueues once per minute: the second tick of the same minute reads the first one's patch and skips", () => {
    const first = decideScheduleTick(row(), AT_TICK);
    if (first.kind !== "enqueue") throw new Error("expected an enqueue");
    const after = row(first.patch);
    expect(decideScheduleTick(after, AT_TICK + 30_000)).toEqual({ kind: "skip", reason: "already_enqueued" });
    expect(decideScheduleTick(after, T + 59_999)).toEqual({ kind: "skip", reason: "already_enqueued" });
  });

  it("enqueues again for a later due minute", () => {
    const everyMinute = row({ cron: "* * * * *", last_enqueued_for: formatPbDate(T) });
    const next = decideScheduleTick(everyMinute, T + 60_000);
    expect(next).toMatchObject({
      kind: "enqueue",
      item: { uniqueKey: "pb-fleet-schedule:nightly:2025-01-31T02:01Z", runAt: "2025-01-31 02:01:00.000Z" },
      patch: { last_enqueued_for: "2025-01-31 02:01:00.000Z" },
    });
  });

  it("enqueues when the last enqueue was for an earlier minute, even a millisecond earlier", () => {
    const last = formatPbDate(T - 1);
    expect(decideScheduleTick(row({ last_enqueued_for: last }), AT_TICK).kind).toBe("enqueue");
  });

  it("takes a last_enqueued_for in the future (a server whose clock runs ahead) as done", () => {
    const ahead = formatPbDate(T + 5 * 60_000);
    expect(decideScheduleTick(row({ last_enqueued_for: ahead }), AT_TICK)).toEqual({ kind: "skip", reason: "already_enqueued" });
  });

  it("takes an unreadable last_enqueued_for as never, and the patch overwrites it", () => {
    const decision = decideScheduleTick(row({ last_enqueued_for: "yesterday" }), AT_TICK);
    expect(decision).toMatchObject({ kind: "enqueue", patch: { last_enqueued_for: "2025-01-31 02:00:00.000Z" } });
  });

  it("skips a schedule not due this minute", () => {
    expect(decideScheduleTick(row(), T + 60_000)).toEqual({ kind: "skip", reason: "not_due" });
    expect(decideScheduleTick(row({ cron: "0 2 * * 1" }), AT_TICK)).toEqual({ kind: "skip", reason: "not_due" });
  });

  it("skips a disabled schedule, whatever else is wrong with it", () => {
    expect(decideScheduleTick(row({ enabled: false }), AT_TICK)).toEqual({ kind: "skip", reason: "disabled" });
    expect(decideScheduleTick(row({ enabled: false, cron: "nope", priority: 1e9 }), AT_TICK)).toEqual({
      kind: "skip",
      reason: "disabled",
    });
  });

  it("refuses an invalid cron expression on every tick, with a sentence naming the row", () => {
    const error = invalidError(decideScheduleTick(row({ cron: "* * * * 7" }), AT_TICK));
    expect(error).toBe(
      'probe_schedules "nightly" (id sch1): cron "* * * * 7" is not a valid cron expression: ' +
        'day of week field "7": values must be numbers from 0 to 6; nothing enqueued',
    );
    expect(invalidError(decideScheduleTick(row({ cron: "" }), T + 17 * 60_000))).toMatch(/exactly 5 fields/);
  });

  it.each<[string, Partial<ScheduleRow>, RegExp]>([
    ["a priority above the maximum", { priority: MAX_PRIORITY + 1 }, /priority 1001 is not an integer from -1000 to 1000/],
    ["a priority below the minimum", { priority: MIN_PRIORITY - 1 }, /priority -1001/],
    ["a fractional priority", { priority: 1.5 }, /priority 1.5/],
    ["max_attempts above the maximum", { max_attempts: MAX_MAX_ATTEMPTS + 1 }, /max_attempts 1001 is not an integer from 0 \(no cap\) to 1000/],
    ["negative max_attempts", { max_attempts: -1 }, /max_attempts -1/],
    ["an empty probe_key", { probe_key: "" }, /probe_key is empty/],
    ["an empty name", { name: "" }, /name is empty/],
    ["an oversized payload", { payload: "x".repeat(MAX_PAYLOAD_BYTES) }, /payload is 1048578 bytes of JSON, more than 1048576/],
    ["a queue that is not a queue name", { queue: "no spaces" }, /queue "no spaces" is not a queue name/],
    ["a group with a control character", { group_key: "host\u0007" }, /group_key is not a group name/],
    ["a group longer than 200 code points", { group_key: "g".repeat(201) }, /group_key is not a group name/],
  ])("refuses %s when due, and enqueues nothing", (_name, fields, error) => {
    expect(invalidError(decideScheduleTick(row(fields), AT_TICK))).toMatch(error);
  });

  it("does not report a bad field on minutes the schedule is not due", () => {
    expect(decideScheduleTick(row({ priority: 5000 }), T + 60_000)).toEqual({ kind: "skip", reason: "not_due" });
  });

  it("takes the limits themselves", () => {
    const edges = row({ priority: MIN_PRIORITY, max_attempts: MAX_MAX_ATTEMPTS, payload: "x".repeat(MAX_PAYLOAD_BYTES - 2) });
    expect(decideScheduleTick(edges, AT_TICK).kind).toBe("enqueue");
    expect(decideScheduleTick(row({ priority: MAX_PRIORITY, max_attempts: 0 }), AT_TICK)).toMatchObject({
      kind: "enqueue",
      item: { priority: MAX_PRIORITY, maxAttempts: 0 },
    });
  });

  it("sends an empty json field as null", () => {
    expect(decideScheduleTick(row({ payload: null }), AT_TICK)).toMatchObject({ item: { payload: null } });
    expect(decideScheduleTick(row({ payload: undefined }), AT_TICK)).toMatchObject({ item: { payload: null } });
  });

  it("judges the minute in UTC with PocketBase's grammar (day of month AND day of week)", () => {
    // 2025-01-31 is a Friday: "31st and Monday" is not due, "31st and Friday" is.
    expect(decideScheduleTick(row({ cron: "0 2 31 * 1" }), AT_TICK)).toEqual({ kind: "skip", reason: "not_due" });
    expect(decideScheduleTick(row({ cron: "0 2 31 * 5" }), AT_TICK).kind).toBe("enqueue");
  });
});

describe("enabledSchedulesQuery", () => {
  it("lists enabled schedules not yet marked for the minute, by name, a bounded page at a time, values bound", () => {
    expect(SCHEDULES_PER_TICK).toBe(100);
    const minute = Date.UTC(2026, 11, 1, 9, 30);
    const first = enabledSchedulesQuery(minute + 42_000);
    expect(first.sql).toContain("COALESCE(queue, '') AS queue, COALESCE(group_key, '') AS group_key ");
    expect(first.sql).toContain("FROM probe_schedules WHERE enabled = TRUE AND name > {:after} " +
      "AND COALESCE(last_enqueued_for, '') < {:minute} ORDER BY name LIMIT {:limit}");
    expect(first.params).toEqual({ after: "", limit: 100, minute: "2026-12-01 09:30:00.000Z" });
    const next = enabledSchedulesQuery(minute, 10, "it's");
    expect(next.params).toEqual({ after: "it's", limit: 10, minute: "2026-12-01 09:30:00.000Z" });
    expect(next.sql).not.toContain("it's");
  });
});
