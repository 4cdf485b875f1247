import { describe, expect, it } from "vitest";
import { formatPbDate } from "../../src/lib/lease";
import { JOB_EVENTS_KEEP_MS, JOB_EVENTS_RETENTION_BATCH } from "../../src/lib/job-events";
import { JOB_COUNTS_REPAIR, pruneCompletionsStatement } from "../../src/lib/job-counts";
import { deleteExpiredBatch, drainRetention, ensureJobCounts, enqueueDueSchedules, type RetentionTick } from "../../src/lib/maintenance";
import { RETENTION_BATCH, RETENTION_BUDGET_MS } from "../../src/lib/retention";
import { minuteStart, SCHEDULE_PAGES_PER_TICK, SCHEDULES_PER_TICK, scheduleUniqueKey } from "../../src/lib/schedules";
import type { StoredSchedule } from "./support/fake-pocketbase";
import { enqueued, memoryBatch, NOW, type MemoryBatch } from "./support/rows";

const MINUTE = 60_000;
const DAY = 86_400_000;

function schedule(name: string, fields: Partial<StoredSchedule> = {}): StoredSchedule {
  return {
    id: `s-${name}`, name, probe_key: `probe/${name}`, cron: "* * * * *", payload: "", priority: 0, max_attempts: 0,
    enabled: true, last_enqueued_for: "", queue: "", group_key: "", ...fields,
  };
}

const jobsOf = (batch: MemoryBatch) => [...batch.jobs.values()];

describe("enqueueDueSchedules", () => {
  it("enqueues one job per due schedule with the schedule's fields, due at the minute, and marks the schedule", () => {
    const batch = memoryBatch([], {
      schedules: [schedule("nightly", { payload: '{"report":"daily"}', priority: 5, max_attempts: 3, probe_key: "report" })],
    });
    const tick = enqueueDueSchedules(batch, NOW + 12_345);
    expect(tick.errors).toEqual([]);
    expect(tick.enqueued).toEqual([{ schedule: "nightly", jobId: batch.inserts[0]!.id, created: true }]);
    expect(batch.inserts[0]!.fields).toEqual({
      probe_key: "report", status: "pending", payload: { report: "daily" }, run_at: formatPbDate(minuteStart(NOW)),
      priority: 5, max_attempts: 3, unique_key: scheduleUniqueKey("nightly", NOW), enqueue_index: 0, queue: "default",
      group_key: "", timeout_seconds: 0, start_by: "",
    });
    expect(batch.schedules.get("s-nightly")!.last_enqueued_for).toBe(formatPbDate(minuteStart(NOW)));
  });

  it("enqueues into the schedule's queue and group (docs/flow-control.md), the default queue when its queue is empty", () => {
    const batch = memoryBatch([], {
      schedules: [schedule("a-grouped", { queue: "emails", group_key: "host-a" }), schedule("b-plain")],
    });
    expect(enqueueDueSchedules(batch, NOW).errors).toEqual([]);
    expect(batch.inserts.map((i) => [i.fields.probe_key, i.fields.queue, i.fields.group_key])).toEqual([
      ["probe/a-grouped", "emails", "host-a"], ["probe/b-plain", "default", ""],
    ]);
  });

  it("enqueues nothing on a second tick in the same minute, and again in the next due minute", () => {
    const batch = memoryBatch([], { schedules: [schedule("every-minute")] });
    enqueueDueSchedules(batch, NOW);
    expect(enqueueDueSchedules(batch, NOW + 59_999)).toEqual({ enqueued: [], errors: [] });
    expect(jobsOf(batch)).toHaveLength(1);
    const next = enqueueDueSchedules(batch, NOW + MINUTE);
    expect(next.enqueued).toMatchObject([{ schedule: "every-minute", created: true }]);
    expect(jobsOf(batch).map((j) => j.unique_key)).toEqual([
      scheduleUniqueKey("every-minute", NOW), scheduleUniqueKey("every-minute", NOW + MINUTE),
    ]);
  });

  it("is deduplicated by the minute's unique key even when the schedule's mark was lost (a second server)", () => {
    const batch = memoryBatch([], { schedules: [schedule("s")] });
    const first = enqueueDueSchedules(batch, NOW).enqueued[0]!;
    batch.tables.update("probe_schedules", "s-s", { last_enqueued_for: "" });
    expect(enqueueDueSchedules(batch, NOW + 1000).enqueued).toEqual([{ schedule: "s", jobId: first.jobId, created: false }]);
    expect(jobsOf(batch)).toHaveLength(1);
  });

  it("skips disabled schedules and those not due this minute, and reports an invalid one without stopping the others", () => {
    const batch = memoryBatch([], {
      schedules: [
        schedule("a-off", { enabled: false }),
        schedule("b-yearly", { cron: "@yearly" }),
        schedule("c-broken", { cron: "61 * * * *" }),
        schedule("d-bad-priority", { priority: 5000 }),
        schedule("e-ok"),
      ],
    });
    const tick = enqueueDueSchedules(batch, NOW);
    expect(tick.enqueued.map((e) => e.schedule)).toEqual(["e-ok"]);
    expect(tick.errors).toEqual([
      expect.stringMatching(/^probe_schedules "c-broken" \(id s-c-broken\): cron "61 \* \* \* \*" is not a valid cron expression/),
      expect.stringMatching(/^probe_schedules "d-bad-priority" \(id s-d-bad-priority\): priority 5000 /),
    ]);
    expect(batch.schedules.get("s-c-broken")!.last_enqueued_for).toBe("");
  });

  it("reads the schedules a page at a time, so every one past the first page runs too", () => {
    const count = SCHEDULES_PER_TICK * 2 + 7;
    const batch = memoryBatch([], { schedules: Array.from({ length: count }, (_, i) => schedule(`s${String(i).padStart(4, "0")}`)) });
    const tick = enqueueDueSchedules(batch, NOW);
    expect(tick.enqueued).toHaveLength(count);
    expect(new Set(tick.enqueued.map((e) => e.schedule)).size).toBe(count);
    expect(batch.calls.filter((c) => c.op === "queryAll")).toHaveLength(3);
  });

  const overBound = () => {
    const count = SCHEDULES_PER_TICK * SCHEDULE_PAGES_PER_TICK + 1;
    return memoryBatch([], { schedules: Array.from({ length: count }, (_, i) => schedule(`s${String(i).padStart(5, "0")}`)) });
  };

  it("reads at most SCHEDULE_PAGES_PER_TICK pages in one tick", () => {
    const batch = overBound();
    expect(enqueueDueSchedules(batch, NOW).enqueued).toHaveLength(SCHEDULES_PER_TICK * SCHEDULE_PAGES_PER_TICK);
    expect(batch.calls.filter((c) => c.op === "queryAll")).toHaveLength(SCHEDULE_PAGES_PER_TICK);
  });

  // Schedules marked for the minute drop out of the read, so a later tick of
  // the same minute reaches the ones past the bound.
  it("reaches the schedules past the bound in a later tick of the same minute", () => {
    const batch = overBound();
    enqueueDueSchedules(batch, NOW);
    expect(enqueueDueSchedules(batch, NOW + 1000).enqueued.map((e) => e.schedule)).toEqual(["s01000"]);
  });
});

describe("deleteExpiredBatch", () => {
  const finished = (id: string, status: string, agoMs: number) =>
    ({ ...enqueued({ id, status }), claimed_at: "", requeued_at: "", result: "", finished_at: agoMs < 0 ? "" : formatPbDate(NOW - agoMs) });
  const env = (values: Record<string, string>) => (name: string) => values[name] ?? "";

  function seeded(): MemoryBatch {
    return memoryBatch([
      finished("done-8d", "done", 8 * DAY),
      finished("done-6d", "done", 6 * DAY),
      finished("cancelled-8d", "cancelled", 8 * DAY),
      finished("failed-8d", "failed", 8 * DAY),
      finished("failed-31d", "failed", 31 * DAY),
      finished("done-unfinished", "done", -1),
      finished("pending-old", "pending", 90 * DAY),
      finished("running-old", "running", 90 * DAY),
    ]);
  }

  it("deletes done and cancelled rows after 7 days and failed ones after 30, by default", () => {
    const batch = seeded();
    expect(deleteExpiredBatch(batch, NOW, env({}))).toEqual({ deleted: { done: 2, failed: 1 }, events: 0, errors: [] });
    expect([...batch.jobs.keys()]).toEqual(["done-6d", "failed-8d", "done-unfinished", "pending-old", "running-old"]);
  });

  it("follows PB_FLEET_KEEP_DONE and PB_FLEET_KEEP_FAILED", () => {
    const batch = seeded();
    expect(deleteExpiredBatch(batch, NOW, env({ PB_FLEET_KEEP_DONE: "5d", PB_FLEET_KEEP_FAILED: "1d" })))
      .toEqual({ deleted: { done: 3, failed: 2 }, events: 0, errors: [] });
    expect([...batch.jobs.keys()]).toEqual(["done-unfinished", "pending-old", "running-old"]);
  });

  it("keeps a class forever at 0, and keeps it (saying why) on a value it cannot read", () => {
    const batch = seeded();
    const tick = deleteExpiredBatch(batch, NOW, env({ PB_FLEET_KEEP_DONE: "0", PB_FLEET_KEEP_FAILED: "7 d" }));
    expect(tick.deleted).toEqual({ done: 0, failed: 0 });
    expect(tick.errors).toEqual([expect.stringContaining('PB_FLEET_KEEP_FAILED="7 d"')]);
    expect(batch.jobs.size).toBe(8);
    // Only the probe_job_events statement ran.
    expect(batch.calls.filter((c) => c.op === "execute")).toHaveLength(1);
  });

  it("deletes at most a batch per class per tick; the next tick takes the rest", () => {
    const rows = Array.from({ length: RETENTION_BATCH + 20 }, (_, i) => finished(`d${i}`, "done", 10 * DAY));
    const batch = memoryBatch(rows);
    expect(deleteExpiredBatch(batch, NOW, env({})).deleted.done).toBe(RETENTION_BATCH);
    expect(deleteExpiredBatch(batch, NOW, env({})).deleted.done).toBe(20);
    expect(deleteExpiredBatch(batch, NOW, env({})).deleted.done).toBe(0);
  });

  it("deletes probe_job_events records older than their keep time, a bounded batch per tick", () => {
    const event = (id: string, agoMs: number) => ({ id, source: "claim-next", changes: "[]", created: formatPbDate(NOW - agoMs), updated: "" });
    const old = Array.from({ length: JOB_EVENTS_RETENTION_BATCH + 3 }, (_, i) => event(`old${i}`, JOB_EVENTS_KEEP_MS + 1000 + i));
    const batch = memoryBatch([], { events: [...old, event("recent", JOB_EVENTS_KEEP_MS - 1000)] });
    expect(deleteExpiredBatch(batch, NOW, env({})).events).toBe(JOB_EVENTS_RETENTION_BATCH);
    expect(deleteExpiredBatch(batch, NOW, env({})).events).toBe(3);
    expect([...batch.events.keys()]).toEqual(["recent"]);
  });
});

describe("drainRetention", () => {
  const full = (): RetentionTick => ({ deleted: { done: RETENTION_BATCH, failed: 0 }, events: 0, errors: ["bad setting"] });
  const short = (): RetentionTick => ({ deleted: { done: 7, failed: 3 }, events: 5, errors: ["bad setting"] });

  it("repeats batches until one comes back short, summing them, and says each setting error once", () => {
    const ticks = [full(), full(), { ...full(), deleted: { done: 0, failed: RETENTION_BATCH } }, short()];
    const drain = drainRetention(() => ticks.shift() ?? null, () => 0, 1000);
    expect(drain).toEqual({
      deleted: { done: 2 * RETENTION_BATCH + 7, failed: RETENTION_BATCH + 3 }, events: 5, errors: ["bad setting"],
      batches: 4, drained: true, rolledBack: false,
    });
    expect(ticks).toHaveLength(0);
  });

  it("goes on while a batch of events alone is full", () => {
    const ticks: RetentionTick[] = [{ deleted: { done: 0, failed: 0 }, events: JOB_EVENTS_RETENTION_BATCH, errors: [] }, short()];
    expect(drainRetention(() => ticks.shift() ?? null, () => 0, 1000)).toMatchObject({ batches: 2, drained: true, events: JOB_EVENTS_RETENTION_BATCH + 5 });
  });

  it("stops when the time budget is spent, even with more to delete (the next tick goes on)", () => {
    let clock = 0;
    let batches = 0;
    const drain = drainRetention(() => {
      batches++;
      clock += 400; // each batch takes 400 ms
      return full();
    }, () => clock, 1000);
    // Started at 0: after 400 and 800 ms it goes on; at 1200 ms the budget is spent.
    expect(batches).toBe(3);
    expect(drain).toMatchObject({ batches: 3, drained: false, rolledBack: false, deleted: { done: 3 * RETENTION_BATCH } });
  });

  it("stops at a rolled-back batch, keeping what the earlier ones did", () => {
    const ticks: (RetentionTick | null)[] = [full(), null, short()];
    expect(drainRetention(() => ticks.shift() ?? null, () => 0, 1000))
      .toMatchObject({ batches: 1, drained: false, rolledBack: true, deleted: { done: RETENTION_BATCH } });
  });

  it("has a budget well inside the minute between ticks", () => {
    expect(RETENTION_BUDGET_MS).toBeGreaterThan(0);
    expect(RETENTION_BUDGET_MS).toBeLessThanOrEqual(MINUTE / 2);
  });
});

describe("ensureJobCounts", () => {
  it("does nothing while the triggers are in place, and runs the whole repair in order when they are not", () => {
    const executed: string[] = [];
    const batchWith = (ready: number) => ({
      ...memoryBatch([]),
      queryOne: <T extends object>(_q: unknown, _shape: T) => ({ ready }) as unknown as T,
      execute: (statement: { sql: string }) => {
        executed.push(statement.sql);
        return 0;
      },
    });
    const prune = pruneCompletionsStatement(NOW).sql;
    expect(ensureJobCounts(batchWith(1), NOW)).toBe(false);
    expect(executed).toEqual([prune]);
    executed.length = 0;
    expect(ensureJobCounts(batchWith(0), NOW)).toBe(true);
    expect(executed).toEqual([...JOB_COUNTS_REPAIR, prune]);
    // Drop first (a half-present set), then create, then recount from the rows.
    expect(executed[0]).toMatch(/^DROP TRIGGER IF EXISTS/);
    expect(executed.at(-2)).toMatch(/^INSERT INTO probe_job_completions .* FROM probe_jobs .* GROUP BY s$/);
  });
});
