// start_by (docs/flow-control.md "Fields on probe_jobs", "start_by"): enqueue's
// startWithinSeconds stores start_by = run_at + N. A never-started job past
// its start_by is never handed out (claim-next skips it; claim by id answers
// reason start_by_passed, before paused / concurrency_limit / rate_limit, and
// writes nothing); the maintenance tick fails it (failed, finished_at,
// last_error "not started by <start_by in PocketBase's layout>", no
// dead_lettered_at). A job that started once is not affected later (a
// rate-limited release, which gives its attempt back, included); POST
// /api/fleet/retry clears start_by.
//
// On a server of its own: every server runs the maintenance tick each minute,
// and other files call POST /api/fleet/maintenance on the shared one; either
// would fail these jobs before the test looks. The tests also keep clear of
// the minute's tick (clearOfTick).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatPbDate, parsePbDate } from "../../src/lib/lease";
import type { ClaimedJob, EnqueueItem } from "../../src/lib/types";
import {
  claimNext, createJob, enqueue, enqueueOk, get, getQueueJob, pastDate, post, randomKey, type QueueJobRecord, type RequestOptions,
} from "./support/fleet-api";
import { startOwnServer, type OwnServer } from "./support/own-server";
import { claim, timed } from "./support/protocol";
import { sleep } from "./support/race";

const PB_DATE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const LEASE = 60;

let server: OwnServer;
let opts: RequestOptions;

beforeAll(async () => {
  server = await startOwnServer();
  opts = { baseUrl: server.url, token: server.token };
});
afterAll(async () => {
  await server?.stop();
});

const row = (id: string) => getQueueJob(id, opts);
const enqueueJobs = (items: EnqueueItem[]) => enqueueOk(items, opts);
const claimById = (id: string, workerId: string, extra: object = {}) => claim(id, workerId, { leaseSeconds: LEASE, ...extra }, opts);
const maintenance = () => post("/api/fleet/maintenance", {}, opts);
async function cancel(id: string): Promise<void> {
  expect((await post("/api/fleet/cancel", { jobId: id }, opts)).body).toMatchObject({ cancelled: true });
}

async function claimNextIds(body: Record<string, unknown>): Promise<string[]> {
  const res = await claimNext({ leaseSeconds: LEASE, limit: 10, ...body }, opts);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.jobs.map((j: ClaimedJob) => j.job.id);
}

async function setFlow(body: Record<string, unknown>): Promise<void> {
  const res = await post("/api/fleet/flow", body, opts);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** Waits, if need be, so that the next `ms` do not hold the server's minute tick (its cron fires at each minute's start). */
async function clearOfTick(ms: number): Promise<void> {
  const into = Date.now() % 60_000;
  if (into < 500) await sleep(500 - into);
  else if (into + ms > 59_500) await sleep(60_000 - into + 500);
}

async function sleepPast(pbDate: string, extraMs = 30): Promise<void> {
  await sleep(parsePbDate(pbDate)! - Date.now() + extraMs);
}

describe("startWithinSeconds", () => {
  it("stores start_by = run_at + N (now, a delay, a runAt); without it start_by is empty; bad values are a 400", async () => {
    const prefix = randomKey("fsb-set") + "/";
    const runAt = new Date(Date.now() + 3_600_000).toISOString();
    const [now, delayed, at, none] = await enqueueJobs([
      { probeKey: `${prefix}now`, startWithinSeconds: 1 },
      { probeKey: `${prefix}delayed`, delaySeconds: 30, startWithinSeconds: 5 },
      { probeKey: `${prefix}at`, runAt, startWithinSeconds: 2_592_000 },
      { probeKey: `${prefix}none` },
    ]);
    for (const [job, n] of [[now!, 1], [delayed!, 5], [at!, 2_592_000]] as const) {
      const r = await row(job.id);
      expect(r.start_by, r.probe_key).toMatch(PB_DATE);
      expect(r.start_by, r.probe_key).toBe(formatPbDate(parsePbDate(r.run_at)! + n * 1000));
    }
    expect((await row(at!.id)).run_at).toBe(formatPbDate(Date.parse(runAt)));
    expect((await row(none!.id)).start_by).toBe("");

    for (const bad of [0, -1, 2_592_001, 1.5, "5", true]) {
      const res = await enqueue([{ probeKey: `${prefix}bad`, startWithinSeconds: bad }], opts);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body).toEqual({ error: expect.stringMatching(/startWithinSeconds/) });
    }
    const res = await get(`/api/collections/probe_jobs/records?filter=${encodeURIComponent(`probe_key = '${prefix}bad'`)}`, opts);
    expect(res.body.totalItems).toBe(0);
    // out of the later tests' ticks, whose counts are this server's
    for (const job of [now!, delayed!, at!, none!]) await cancel(job.id);
  });
});

describe("a never-started job past its start_by", () => {
  it("is never handed out: claim-next skips it, claim by id answers start_by_passed and writes nothing; the tick fails it", async () => {
    await clearOfTick(3_000);
    const queue = randomKey("fsb");
    const prefix = `${queue}/`;
    const [late, other, later] = await enqueueJobs([
      { probeKey: `${prefix}late`, queue, startWithinSeconds: 1, priority: 9 },
      { probeKey: `${prefix}other`, queue },
      { probeKey: `${prefix}later`, queue, startWithinSeconds: 600, priority: 9 },
    ]);
    const before = await row(late!.id);
    await sleepPast(before.start_by);

    // claim by id: the reason, nothing written
    expect((await claimById(late!.id, "w")).body).toEqual({ claimed: false, reason: "start_by_passed" });
    expect(await row(late!.id)).toEqual(before);
    // claim-next skips it (it sorts first), by prefix and by queue; the one not yet past its start_by is handed out
    expect(await claimNextIds({ workerId: "w", probeKeyPrefix: prefix, limit: 1 })).toEqual([later!.id]);
    expect(await claimNextIds({ workerId: "w", queue })).toEqual([other!.id]);
    expect(await claimNextIds({ workerId: "w", probeKeyPrefix: prefix })).toEqual([]);
    expect(await row(late!.id)).toEqual(before);
    // GET /api/fleet/flow does not count it as due
    const flow = await get(`/api/fleet/flow?queue=${queue}`, opts);
    expect(flow.body.queues).toMatchObject([{ name: queue, due: 0, held: 2 }]);

    const { result: tick, t0, t1 } = await timed(maintenance);
    expect(tick.status, JSON.stringify(tick.body)).toBe(200);
    expect(tick.body.flow.notStarted).toBe(1);
    const failed = await row(late!.id);
    expect(failed).toMatchObject({
      status: "failed", last_error: `not started by ${before.start_by}`, dead_lettered_at: "", attempts: 0, claimed_by: "",
      start_by: before.start_by, version: before.version + 1,
    });
    expect(failed.last_error).toMatch(/^not started by \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const finished = parsePbDate(failed.finished_at)!;
    expect(finished).toBeGreaterThanOrEqual(t0 - 2);
    expect(finished).toBeLessThanOrEqual(t1 + 2);
    // and a failed job stays failed: a second tick has nothing to do
    expect((await maintenance()).body.flow.notStarted).toBe(0);
    expect(await row(late!.id)).toEqual(failed);
    expect((await claimById(late!.id, "w")).body).toEqual({ claimed: false });
  });

  it("start_by_passed comes before paused, concurrency_limit and rate_limit", async () => {
    await clearOfTick(4_000);
    const queue = randomKey("fsb-ord");
    const group = `${queue}-g`;
    const prefix = `${queue}/`;
    await setFlow({ queue, concurrency: 1, rateLimit: { limit: 1, periodSeconds: 60 } });
    const [h, x] = await enqueueJobs([{ probeKey: `${prefix}h`, queue, group }, { probeKey: `${prefix}x`, queue, group }]);
    const late = await createJob({ probe_key: `${prefix}late`, queue, group_key: group, start_by: pastDate(1_000), attempts: 0 } as any, opts);
    const before = await row(late.id);
    expect((await claimById(h!.id, "holder")).body).toMatchObject({ claimed: true });
    const check = async (reasonOfOther: string) => {
      expect((await claimById(x!.id, "w")).body).toEqual({ claimed: false, reason: reasonOfOther });
      expect((await claimById(late.id, "w")).body).toEqual({ claimed: false, reason: "start_by_passed" });
      expect(await row(late.id)).toEqual(before);
    };
    await check("concurrency_limit");
    await setFlow({ group, paused: true });
    await check("paused");
    await setFlow({ group, paused: false, parkSeconds: 60 });
    await setFlow({ queue, paused: true });
    await check("paused");
    await setFlow({ queue, paused: false, concurrency: null });
    await setFlow({ group, parkSeconds: 0 });
    await check("rate_limit");
    await cancel(late.id);
  });
});

describe("a job that has started is not held to its start_by", () => {
  it("retried after its first attempt: past start_by it is handed out, and the tick leaves it", async () => {
    await clearOfTick(5_000);
    const prefix = randomKey("fsb-once") + "/";
    const [job] = await enqueueJobs([{ probeKey: `${prefix}a`, startWithinSeconds: 2, maxAttempts: 5 }]);
    const won = await claimById(job!.id, "w1");
    expect(won.body).toMatchObject({ claimed: true });
    const rel = await post("/api/fleet/release", { jobId: job!.id, workerId: "w1", status: "retry", leaseToken: won.body.leaseToken, error: "e" }, opts);
    expect(rel.body).toMatchObject({ released: true, job: { status: "pending" } });
    const pending = await row(job!.id);
    expect(pending.attempts).toBe(1);
    await sleepPast(pending.start_by > pending.run_at ? pending.start_by : pending.run_at);

    expect((await maintenance()).body.flow.notStarted).toBe(0);
    expect(await row(job!.id)).toMatchObject({ status: "pending", attempts: 1 });
    expect(await claimNextIds({ workerId: "w2", probeKeyPrefix: prefix })).toEqual([job!.id]);
    expect(await row(job!.id)).toMatchObject({ status: "claimed", attempts: 2, claimed_by: "w2" });
  });

  it("rate-limited after its first start (the attempt given back): still not failed, still handed out", async () => {
    await clearOfTick(5_000);
    const queue = randomKey("fsb-rl");
    const prefix = `${queue}/`;
    const [job] = await enqueueJobs([{ probeKey: `${prefix}a`, queue, startWithinSeconds: 2 }]);
    const won = await claimById(job!.id, "w1");
    expect(won.body).toMatchObject({ claimed: true });
    const rel = await post("/api/fleet/release",
      { jobId: job!.id, workerId: "w1", status: "retry", leaseToken: won.body.leaseToken, rateLimitedFor: 1, error: "429" }, opts);
    expect(rel.body).toMatchObject({ released: true, job: { status: "pending" } });
    const pending = await row(job!.id);
    await sleepPast(pending.start_by > pending.run_at ? pending.start_by : pending.run_at, 100);

    const tick = await maintenance();
    expect(await row(job!.id), "the tick must not fail a job that has started").toMatchObject({ status: "pending", last_error: "429" });
    expect(tick.body.flow.notStarted).toBe(0);
    expect(await claimNextIds({ workerId: "w2", queue })).toEqual([job!.id]);
  });
});

describe("POST /api/fleet/retry", () => {
  it("clears start_by: a job failed for it comes back claimable at once, and so does a cancelled one", async () => {
    await clearOfTick(3_000);
    const prefix = randomKey("fsb-retry") + "/";
    const [late, cancelled] = await enqueueJobs([
      { probeKey: `${prefix}late`, startWithinSeconds: 1 },
      { probeKey: `${prefix}cancelled`, startWithinSeconds: 1 },
    ]);
    expect((await post("/api/fleet/cancel", { jobId: cancelled!.id }, opts)).body).toMatchObject({ cancelled: true });
    await sleepPast((await row(late!.id)).start_by);
    expect((await maintenance()).body.flow.notStarted).toBe(1);
    expect(await row(late!.id)).toMatchObject({ status: "failed" });

    for (const id of [late!.id, cancelled!.id]) {
      const before: QueueJobRecord = await row(id);
      expect(before.start_by).not.toBe("");
      const res = await post("/api/fleet/retry", { jobId: id }, opts);
      expect(res.body).toMatchObject({ retried: true, job: { id, status: "pending", attempts: 0 } });
      expect(await row(id)).toMatchObject({ status: "pending", start_by: "", attempts: 0, finished_at: "" });
    }
    expect((await maintenance()).body.flow.notStarted).toBe(0);
    expect((await claimNextIds({ workerId: "w", probeKeyPrefix: prefix })).sort()).toEqual([late!.id, cancelled!.id].sort());
  });
});
