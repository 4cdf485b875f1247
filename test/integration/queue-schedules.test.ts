// Periodic jobs (docs/queue.md, "Periodic jobs and retention"): each probe_schedules
// row due this minute is enqueued once per minute, whoever runs the tick: two
// POST /api/fleet/maintenance calls, two PocketBase processes on one pb_data
// (one after the other and at once), or PocketBase's own cron
// (pb-fleet-maintenance). Disabled and not-due rows enqueue nothing; a bad row is
// reported and does not stop the others.
//
// Schedules are global (no probe_key prefix scopes a tick), so this file runs
// its own PocketBase. Its cron also runs the tick at each minute boundary: the
// checks count jobs per minute (from each job's run_at and unique_key), which
// holds whoever ticked, and tests that must stay inside one minute wait for
// room in it first.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { logTail } from "../../scripts/pocketbase/server.mjs";
import { formatPbDate, parsePbDate } from "../../src/lib/lease";
import { listJobsByPrefix, post, randomKey, type ApiResponse, type QueueJobRecord, type RequestOptions } from "./support/fleet-api";
import { sleep } from "./support/race";
import { startOwnServer, type OwnServer } from "./support/own-server";

const SCHEDULES = "/api/collections/probe_schedules/records";
const MINUTE_MS = 60_000;
/** PocketBase's cron fires in the first second of a minute; a busy machine may run the tick a little later. */
const CRON_SETTLE_MS = 3_000;

interface ScheduleFields {
  name: string;
  probe_key: string;
  cron: string;
  payload?: unknown;
  priority?: number;
  max_attempts?: number;
  enabled: boolean;
  /** Flow control (docs/flow-control.md): "" or absent is the default queue and no group. */
  queue?: string;
  group_key?: string;
}
type ScheduleRecord = ScheduleFields & { id: string; created: string; last_enqueued_for: string };

interface EnqueuedEntry {
  schedule: string;
  jobId: string;
  created: boolean;
}
interface MaintenanceAnswer {
  /** null: the counts' transaction rolled back. */
  countsRepaired: boolean | null;
  /** null: the lease index's transaction rolled back. */
  leaseIndexRepaired: boolean | null;
  schedules: { enqueued: EnqueuedEntry[]; errors: string[] } | null;
  retention: { deleted: { done: number; failed: number }; errors: string[]; rolledBack: boolean };
  /** Flow control's upkeep (docs/flow-control.md); null: its transaction rolled back. */
  flow: { notStarted: number; claims: number; parks: number } | null;
}

/** Whether some part of a tick rolled back (a 503 says which). */
function partRolledBack(body: MaintenanceAnswer): boolean {
  return body.countsRepaired === null || body.leaseIndexRepaired === null || body.schedules === null || body.retention.rolledBack || body.flow === null;
}
/** One maintenance call and when it was in flight (local clock; the server's is the same machine's). */
interface Tick {
  sent: number;
  recv: number;
  res: ApiResponse;
  body: MaintenanceAnswer;
}

let server: OwnServer;
let opts: RequestOptions;
/** Every schedule made here, disabled after each test so later ticks do not keep enqueueing it. */
const made: { id: string; opts: RequestOptions }[] = [];

beforeAll(async () => {
  server = await startOwnServer();
  opts = { baseUrl: server.url, token: server.token };
});

afterAll(async () => {
  await server?.stop();
});

async function createSchedule(fields: ScheduleFields): Promise<ScheduleRecord> {
  const res = await post(SCHEDULES, fields, opts);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  made.push({ id: res.body.id, opts });
  return res.body as ScheduleRecord;
}

async function disableSchedules(): Promise<void> {
  for (const { id, opts: o } of made.splice(0)) {
    const res = await fetch(`${o.baseUrl}${SCHEDULES}/${id}`, {
      method: "PATCH",
      headers: { Authorization: o.token!, "Content-Type": "application/json" },
      body: JSON.stringify({ enabled: false }),
    });
    expect(res.status).toBe(200);
  }
}

/**
 * One POST /api/fleet/maintenance: a full tick (200, both parts), or, with
 * mayRollBack, a tick a part of which lost to another process's transaction:
 * 503 { error } with the part that rolled back null (docs/queue.md). Never a 500.
 */
async function tick(on: RequestOptions = opts, { mayRollBack = false } = {}): Promise<Tick> {
  const sent = Date.now();
  const res = await post("/api/fleet/maintenance", {}, on);
  const recv = Date.now();
  const body = res.body as MaintenanceAnswer;
  if (mayRollBack && res.status === 503) {
    expect(typeof res.body?.error, JSON.stringify(res.body)).toBe("string");
    expect(partRolledBack(body), JSON.stringify(body)).toBe(true);
    return { sent, recv, res, body };
  }
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(partRolledBack(body), JSON.stringify(body)).toBe(false);
  return { sent, recv, res, body };
}

/** The jobs of one probe_key (each test gives its schedules keys of their own). */
async function jobsOf(probeKey: string): Promise<QueueJobRecord[]> {
  return (await listJobsByPrefix(probeKey, opts)).filter((r) => r.probe_key === probeKey);
}

function minuteStart(ms: number): number {
  return Math.floor(ms / MINUTE_MS) * MINUTE_MS;
}

/** `pb-fleet-schedule:<name>:<YYYY-MM-DDTHH:MMZ>` of the minute starting at minuteMs. */
function uniqueKeyFor(name: string, minuteMs: number): string {
  return `pb-fleet-schedule:${name}:${new Date(minuteMs).toISOString().slice(0, 16)}Z`;
}

/**
 * Waits, when needed, until the current minute has at least `needMs` left and
 * its cron tick is past, so that what follows happens in one minute with no
 * cron tick in between.
 */
async function roomInMinute(needMs: number): Promise<void> {
  const into = Date.now() % MINUTE_MS;
  if (into >= CRON_SETTLE_MS && MINUTE_MS - into >= needMs) return;
  const wait = into < CRON_SETTLE_MS ? CRON_SETTLE_MS - into : MINUTE_MS - into + CRON_SETTLE_MS;
  await sleep(wait);
}

function inOneMinute(t: Tick): boolean {
  return minuteStart(t.sent) === minuteStart(t.recv);
}

/** The entries of a tick's answer for one schedule. */
function entriesOf(t: Tick, name: string): EnqueuedEntry[] {
  return (t.body.schedules?.enqueued ?? []).filter((e) => e.schedule === name);
}

function errorsNaming(t: Tick, name: string): string[] {
  return (t.body.schedules?.errors ?? []).filter((e) => e.includes(name));
}

/**
 * The schedule's jobs: one per minute at most, each due at its minute's start
 * with that minute's unique_key and the schedule's fields, none for a minute
 * before the schedule existed or after the last tick, and one for every minute
 * a tick ran wholly inside. Returns the jobs by minute.
 */
async function expectOncePerMinute(schedule: ScheduleRecord, ticks: Tick[]): Promise<Map<number, QueueJobRecord>> {
  const rows = await jobsOf(schedule.probe_key);
  const byMinute = new Map<number, QueueJobRecord>();
  for (const row of rows) {
    const runAt = parsePbDate(row.run_at);
    expect(runAt, row.run_at).not.toBeNull();
    const minute = minuteStart(runAt!);
    expect(row.run_at).toBe(formatPbDate(minute));
    expect(byMinute.has(minute), `two jobs for ${row.run_at}: ${JSON.stringify(rows)}`).toBe(false);
    byMinute.set(minute, row);
    expect(row).toMatchObject({
      status: "pending",
      unique_key: uniqueKeyFor(schedule.name, minute),
      priority: schedule.priority ?? 0,
      max_attempts: schedule.max_attempts ?? 0,
      attempts: 0,
    });
    expect(row.payload).toEqual(schedule.payload ?? null);
    expect(minute).toBeGreaterThanOrEqual(minuteStart(parsePbDate(schedule.created)!));
    expect(minute).toBeLessThanOrEqual(minuteStart(Math.max(...ticks.map((t) => t.recv))));
  }
  for (const t of ticks) {
    if (inOneMinute(t)) expect([...byMinute.keys()]).toContain(minuteStart(t.sent));
    // Whatever a tick reports enqueued for this schedule is that minute's job.
    for (const entry of entriesOf(t, schedule.name)) {
      expect(rows.map((r) => r.id)).toContain(entry.jobId);
    }
  }
  return byMinute;
}

/**
 * Within one minute with no cron tick in it, the job of that minute was made by
 * exactly one of `ticks` (reported with created: true) unless PocketBase's cron
 * made it before them (its `created` is before the first tick was sent).
 */
function expectMadeByOneTick(schedule: ScheduleRecord, job: QueueJobRecord, ticks: Tick[]): void {
  const created = ticks.flatMap((t) => entriesOf(t, schedule.name)).filter((e) => e.created);
  const firstSent = Math.min(...ticks.map((t) => t.sent));
  if (parsePbDate(job.created)! >= firstSent) {
    expect(created).toEqual([{ schedule: schedule.name, jobId: job.id, created: true }]);
  } else {
    expect(created).toEqual([]);
  }
}

describe("periodic jobs from probe_schedules (POST /api/fleet/maintenance)", () => {
  afterEach(disableSchedules);

  it("enqueues a due schedule once per minute across two ticks", async () => {
    await roomInMinute(15_000);
    const key = randomKey("sched-two-ticks");
    const schedule = await createSchedule({
      name: key, probe_key: key, cron: "* * * * *", payload: { from: "schedule", n: [1, 2] }, priority: 7, max_attempts: 3, enabled: true,
    });
    const first = await tick();
    const second = await tick();
    const byMinute = await expectOncePerMinute(schedule, [first, second]);
    expect(inOneMinute({ ...first, recv: second.recv }), "both ticks ran in one minute").toBe(true);
    expect(byMinute.size).toBe(1);
    const [job] = [...byMinute.values()];
    expectMadeByOneTick(schedule, job!, [first, second]);
    // The second tick found the minute done: it enqueued nothing for this schedule.
    expect(entriesOf(second, schedule.name)).toEqual([]);
    expect(errorsNaming(first, schedule.name).concat(errorsNaming(second, schedule.name))).toEqual([]);
    // The compare-and-set mark is the minute.
    const row = await fetch(`${server.url}${SCHEDULES}/${schedule.id}`, { headers: { Authorization: server.token } }).then((r) => r.json());
    expect(row.last_enqueued_for).toBe(job!.run_at);
  });

  it("a schedule's queue and group_key are its jobs' (docs/flow-control.md); without them, the default queue and no group", async () => {
    await roomInMinute(15_000);
    const key = randomKey("sched-flow");
    const queue = randomKey("sched-q").replace(/[^A-Za-z0-9_.:-]/g, "-");
    await createSchedule({ name: `${key}-a`, probe_key: `${key}-a`, cron: "* * * * *", enabled: true, queue, group_key: "host:example.com" });
    await createSchedule({ name: `${key}-b`, probe_key: `${key}-b`, cron: "* * * * *", enabled: true });
    const t = await tick();
    expect(errorsNaming(t, `${key}-a`).concat(errorsNaming(t, `${key}-b`))).toEqual([]);
    const [a] = await jobsOf(`${key}-a`);
    const [b] = await jobsOf(`${key}-b`);
    expect(a).toMatchObject({ queue, group_key: "host:example.com" });
    expect(b).toMatchObject({ queue: "default", group_key: "" });
  });

  it("a schedule with a queue that is not a queue name is reported and enqueues nothing", async () => {
    const key = randomKey("sched-bad-queue");
    const schedule = await createSchedule({ name: key, probe_key: key, cron: "* * * * *", enabled: true, queue: "no spaces allowed" });
    const t = await tick();
    expect(await jobsOf(key)).toEqual([]);
    expect(errorsNaming(t, schedule.name).join(" ")).toMatch(/queue "no spaces allowed" is not a queue name/);
  });

  it("a disabled schedule enqueues nothing", async () => {
    const key = randomKey("sched-disabled");
    const schedule = await createSchedule({ name: key, probe_key: key, cron: "* * * * *", enabled: false });
    const ticks = [await tick(), await tick()];
    expect(await jobsOf(key)).toEqual([]);
    for (const t of ticks) {
      expect(entriesOf(t, schedule.name)).toEqual([]);
      expect(errorsNaming(t, schedule.name)).toEqual([]);
    }
  });

  it("a schedule whose cron does not match this minute enqueues nothing", async () => {
    const key = randomKey("sched-not-due");
    // Half an hour away from now (UTC minutes): no tick of this test can match it.
    const minute = (new Date().getUTCMinutes() + 30) % 60;
    const schedule = await createSchedule({ name: key, probe_key: key, cron: `${minute} * * * *`, enabled: true });
    const ticks = [await tick(), await tick()];
    expect(await jobsOf(key)).toEqual([]);
    for (const t of ticks) {
      expect(entriesOf(t, schedule.name)).toEqual([]);
      expect(errorsNaming(t, schedule.name)).toEqual([]);
    }
  });

  it("a bad row (invalid cron) is reported in errors and does not stop the others", async () => {
    await roomInMinute(15_000);
    const base = randomKey("sched-bad");
    // Rows are read by name: the bad ones come first.
    const bad = await createSchedule({ name: `${base}-a-bad`, probe_key: `${base}-a`, cron: "61 * * * *", enabled: true });
    const garbage = await createSchedule({ name: `${base}-b-garbage`, probe_key: `${base}-b`, cron: "every minute", enabled: true });
    const good = await createSchedule({ name: `${base}-c-good`, probe_key: `${base}-c`, cron: "* * * * *", enabled: true });
    const t = await tick();
    expect(t.body.schedules).not.toBeNull();
    for (const row of [bad, garbage]) {
      const errors = errorsNaming(t, row.name);
      expect(errors, JSON.stringify(t.body.schedules!.errors)).toHaveLength(1);
      expect(errors[0]).toContain(JSON.stringify(row.cron));
      expect(entriesOf(t, row.name)).toEqual([]);
      expect(await jobsOf(row.probe_key)).toEqual([]);
    }
    const byMinute = await expectOncePerMinute(good, [t]);
    expect(byMinute.size).toBe(1);
    expectMadeByOneTick(good, [...byMinute.values()][0]!, [t]);
    expect(errorsNaming(t, good.name)).toEqual([]);
    // A bad cron is reported on every tick (when it would be due cannot be known).
    expect(errorsNaming(await tick(), bad.name)).toHaveLength(1);
  });

  describe("two PocketBase processes on one pb_data", () => {
    let second: OwnServer | undefined;
    afterAll(async () => {
      await second?.stop();
    });

    it("enqueue once per minute whether the ticks come one after the other or at once", async () => {
      second = await startOwnServer({ sameDataAs: server });
      const secondOpts = { baseUrl: second.url, token: second.token };
      await roomInMinute(20_000);

      const seqKey = randomKey("sched-two-servers-seq");
      const seq = await createSchedule({ name: seqKey, probe_key: seqKey, cron: "* * * * *", enabled: true });
      const seqTicks = [await tick(opts), await tick(secondOpts), await tick(opts), await tick(secondOpts)];
      const seqJobs = await expectOncePerMinute(seq, seqTicks);
      expect(seqJobs.size).toBe(1);
      expectMadeByOneTick(seq, [...seqJobs.values()][0]!, seqTicks);

      const burstKey = randomKey("sched-two-servers-burst");
      const burst = await createSchedule({ name: burstKey, probe_key: burstKey, cron: "* * * * *", enabled: true });
      // At once: a schedules transaction that read before another process's
      // commit cannot write after it (SQLite's SQLITE_BUSY_SNAPSHOT, 517, across
      // processes) and rolls back: that call enqueues nothing, and the minute
      // still gets its one job from the call that won.
      const burstTicks = await Promise.all([opts, secondOpts, opts, secondOpts, opts, secondOpts].map((o) => tick(o, { mayRollBack: true })));
      const burstJobs = await expectOncePerMinute(burst, burstTicks);
      expect(inOneMinute({ ...seqTicks[0]!, recv: Math.max(...burstTicks.map((t) => t.recv)) }), "all ticks ran in one minute").toBe(true);
      expect(burstJobs.size).toBe(1);
      expectMadeByOneTick(burst, [...burstJobs.values()][0]!, burstTicks);
      expect(burstTicks.some((t) => t.body.schedules !== null), "some tick of the burst committed").toBe(true);
      const rolledBack = burstTicks.filter((t) => t.res.status !== 200 || partRolledBack(t.body));
      if (rolledBack.length > 0) {
        console.log(`[queue-schedules] ${rolledBack.length} of ${burstTicks.length} concurrent ticks on two processes rolled back: ` +
          `${JSON.stringify(rolledBack.map((t) => [t.res.status, t.res.body]))}\n--- ${server.logFile}:\n${logTail(server.logFile, 5)}`);
      }
    });
  });

  it("PocketBase's cron runs the tick on its own (pb-fleet-maintenance)", async () => {
    const key = randomKey("sched-cron");
    const schedule = await createSchedule({ name: key, probe_key: key, cron: "* * * * *", payload: "by-cron", enabled: true });
    const started = Date.now();
    // Nothing calls maintenance here: only the cron can enqueue it, at a minute boundary. Two
    // boundaries are waited for: a tick whose transaction lost its turn on a loaded server is
    // retried by the next one (the tests of this file call maintenance themselves meanwhile,
    // which would enqueue it too: the other tests of the suite do not).
    let rows: QueueJobRecord[] = [];
    while (rows.length === 0 && Date.now() - started < 130_000) {
      await sleep(500);
      rows = await jobsOf(key);
    }
    expect(rows, "no job within 130 s").toHaveLength(1);
    const [job] = rows as [QueueJobRecord];
    const minute = parsePbDate(job.run_at)!;
    expect(job).toMatchObject({ status: "pending", unique_key: uniqueKeyFor(schedule.name, minute), run_at: formatPbDate(minuteStart(minute)) });
    expect(job.payload).toBe("by-cron");
    expect(minute).toBeGreaterThanOrEqual(minuteStart(parsePbDate(schedule.created)!));
    expect(parsePbDate(job.created)!).toBeGreaterThanOrEqual(minute);
  }, 150_000);
});
