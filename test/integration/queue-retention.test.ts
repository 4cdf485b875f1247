// Retention (docs/queue.md, "Periodic jobs and retention"): the maintenance tick
// deletes done/cancelled rows finished more than PB_FLEET_KEEP_DONE ago and
// failed rows finished more than PB_FLEET_KEEP_FAILED ago, in transactions of
// at most RETENTION_BATCH rows per class, repeated within one tick until
// nothing expired is left; 0 keeps forever, and an invalid value keeps its
// whole class and is reported. (retention-drains.test.ts: 200,000 rows.)
//
// Each case runs its own PocketBase (the settings are its environment). Its
// cron runs the same tick at every minute boundary, so the batch test does its
// work inside one minute, after that minute's cron tick.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RETENTION_BATCH } from "../../src/lib/retention";
import { listJobsByPrefix, patchJob, post, randomKey, type QueueJobRecord, type RequestOptions } from "./support/fleet-api";
import { sleep } from "./support/race";
import { startOwnServer, type OwnServer } from "./support/own-server";

const MINUTE_MS = 60_000;
const CRON_SETTLE_MS = 3_000;
const LONG_AGO = "2020-01-01 00:00:00.000Z";

/** POST /api/fleet/maintenance's answer (the parts these tests read). */
interface MaintenanceAnswer {
  schedules: { enqueued: unknown[]; errors: string[] } | null;
  retention: { deleted: { done: number; failed: number }; errors: string[]; batches: number; drained: boolean; rolledBack: boolean };
}

/** Rows of one family, made through the queue's endpoints. */
interface Family {
  prefix: string;
  done: string[];
  cancelled: string[];
  failed: string[];
  pending: string[];
  running: string[];
}

interface Counts {
  done?: number;
  cancelled?: number;
  failed?: number;
  pending?: number;
  running?: number;
}

const servers: OwnServer[] = [];

afterAll(async () => {
  await Promise.allSettled(servers.map((s) => s.stop()));
});

async function ownServer(env: Record<string, string>): Promise<RequestOptions> {
  const server = await startOwnServer({ env });
  servers.push(server);
  return { baseUrl: server.url, token: server.token };
}

async function ok(path: string, body: unknown, on: RequestOptions): Promise<any> {
  const res = await post(path, body, on);
  expect(res.status, `${path} ${JSON.stringify(body)} -> ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

/** Runs `call` over items, `width` at a time. */
async function inBatches<T>(items: T[], width: number, call: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(call));
}

/**
 * Enqueues the family through POST /api/fleet/enqueue: first the jobs to be
 * held or finished, which claim-next then claims (in enqueue order), then the
 * ones that stay pending or are cancelled while pending. Held jobs are then
 * finished: release done / failed (with a result and error), cancel, or renew
 * (running).
 */
async function makeFamily(on: RequestOptions, counts: Counts): Promise<Family> {
  const prefix = randomKey("ret") + "/";
  const f: Family = { prefix, done: [], cancelled: [], failed: [], pending: [], running: [] };
  const cancelledPending = Math.floor((counts.cancelled ?? 0) / 2);
  const held: (keyof Counts)[] = [];
  for (const status of ["done", "cancelled", "failed", "running"] as const) {
    const n = (counts[status] ?? 0) - (status === "cancelled" ? cancelledPending : 0);
    for (let i = 0; i < n; i++) held.push(status);
  }
  let serial = 0;
  const enqueue = async (n: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < n; i += 1000) {
      const jobs = Array.from({ length: Math.min(1000, n - i) }, () => ({ probeKey: `${prefix}${String(serial++).padStart(5, "0")}` }));
      const answer = await ok("/api/fleet/enqueue", { jobs }, on);
      ids.push(...answer.jobs.map((j: { id: string }) => j.id));
    }
    return ids;
  };
  const heldIds = await enqueue(held.length);
  const worker = "ret-worker";
  const tokens = new Map<string, string>();
  while (tokens.size < held.length) {
    const limit = Math.min(100, held.length - tokens.size);
    const answer = await ok("/api/fleet/claim-next", { workerId: worker, probeKeyPrefix: prefix, leaseSeconds: 3600, limit }, on);
    expect(answer.jobs).toHaveLength(limit);
    for (const { job, leaseToken } of answer.jobs) tokens.set(job.id, leaseToken);
  }
  expect([...tokens.keys()].sort()).toEqual([...heldIds].sort());
  const idle = await enqueue((counts.pending ?? 0) + cancelledPending);
  f.pending.push(...idle.slice(0, counts.pending ?? 0));
  const toCancel = idle.slice(counts.pending ?? 0);

  await inBatches(held.map((status, i) => ({ status, id: heldIds[i]! })), 8, async ({ status, id }) => {
    const leaseToken = tokens.get(id)!;
    if (status === "done" || status === "failed") {
      const body = { jobId: id, workerId: worker, leaseToken, status, result: { status }, error: status === "failed" ? "boom" : null };
      expect(await ok("/api/fleet/release", body, on)).toMatchObject({ released: true, job: { status } });
      f[status].push(id);
    } else if (status === "cancelled") {
      expect(await ok("/api/fleet/cancel", { jobId: id }, on)).toMatchObject({ cancelled: true });
      f.cancelled.push(id);
    } else {
      expect(await ok("/api/fleet/renew", { jobId: id, workerId: worker, leaseToken, leaseSeconds: 3600 }, on)).toMatchObject({ renewed: true });
      f.running.push(id);
    }
  });
  await inBatches(toCancel, 8, async (id) => {
    expect(await ok("/api/fleet/cancel", { jobId: id }, on)).toMatchObject({ cancelled: true });
    f.cancelled.push(id);
  });
  return f;
}

async function rowsOf(on: RequestOptions, prefix: string): Promise<Map<string, QueueJobRecord>> {
  return new Map((await listJobsByPrefix(prefix, on)).map((r) => [r.id, r]));
}

async function maintenance(on: RequestOptions): Promise<MaintenanceAnswer> {
  return (await ok("/api/fleet/maintenance", {}, on)) as MaintenanceAnswer;
}

/** Sets finished_at long ago (set-up only): rows any real keep would have deleted. */
async function finishLongAgo(on: RequestOptions, ids: string[]): Promise<void> {
  await inBatches(ids, 8, async (id) => {
    await patchJob(id, { finished_at: LONG_AGO }, on);
  });
}

describe("retention of finished rows (maintenance tick)", () => {
  let batchServer: RequestOptions;
  let zeroServer: RequestOptions;
  let invalidServer: RequestOptions;

  beforeAll(async () => {
    [batchServer, zeroServer, invalidServer] = await Promise.all([
      ownServer({ PB_FLEET_KEEP_DONE: "2s", PB_FLEET_KEEP_FAILED: "1h" }),
      ownServer({ PB_FLEET_KEEP_DONE: "0", PB_FLEET_KEEP_FAILED: "0" }),
      ownServer({ PB_FLEET_KEEP_DONE: "7 days", PB_FLEET_KEEP_FAILED: "2s" }),
    ]);
  });

  it(`PB_FLEET_KEEP_DONE=2s: done/cancelled rows all go in one tick, ${RETENTION_BATCH} per transaction; failed (1h), pending and running rows stay`, async () => {
    const extra = 37;
    const counts = { done: RETENTION_BATCH + extra - 20, cancelled: 20, failed: 15, pending: 12, running: 9 };
    const doneClass = counts.done + counts.cancelled;
    // Everything below (about 5 s here) happens inside one minute, after its cron
    // tick (which runs this same retention); if not, totals are checked instead.
    const into = Date.now() % MINUTE_MS;
    if (into < CRON_SETTLE_MS) await sleep(CRON_SETTLE_MS - into);
    else if (into > 40_000) await sleep(MINUTE_MS - into + CRON_SETTLE_MS);
    const minute = Math.floor(Date.now() / MINUTE_MS);

    const f = await makeFamily(batchServer, counts);
    expect(f.done).toHaveLength(counts.done);
    expect(f.cancelled).toHaveLength(counts.cancelled);
    const before = await rowsOf(batchServer, f.prefix);
    expect(before.size).toBe(doneClass + counts.failed + counts.pending + counts.running);
    const kept = [...f.failed, ...f.pending, ...f.running].map((id) => before.get(id));

    await sleep(2_500); // past the 2 s keep
    const first = await maintenance(batchServer);
    const afterFirst = await rowsOf(batchServer, f.prefix);
    const second = await maintenance(batchServer);
    const afterSecond = await rowsOf(batchServer, f.prefix);
    const third = await maintenance(batchServer);
    for (const answer of [first, second, third]) expect(answer.retention).toMatchObject({ deleted: { failed: 0 }, errors: [] });
    if (Math.floor(Date.now() / MINUTE_MS) === minute) {
      // No cron tick in between: the deletes are exactly ours, all in the first tick,
      // in two transactions (a full batch, then the rest, which ends the drain).
      expect(first.retention).toMatchObject({ deleted: { done: doneClass }, batches: 2, drained: true, rolledBack: false });
      expect(afterFirst.size).toBe(before.size - doneClass);
      expect(second.retention).toMatchObject({ deleted: { done: 0 }, batches: 1, drained: true });
      expect(third.retention.deleted.done).toBe(0);
    } else {
      // A slow machine ran past the minute: the cron's tick took some too. Count totals.
      console.log(`[queue-retention] a cron tick ran during the batch test; ticks deleted ${[first, second, third].map((a) => a.retention.deleted.done)}`);
      expect(first.retention.deleted.done + second.retention.deleted.done + third.retention.deleted.done).toBeLessThanOrEqual(doneClass);
      expect(afterFirst.size).toBe(before.size - doneClass);
    }
    expect(extra).toBeGreaterThan(0); // the family is more than one batch
    // What is left is exactly the failed, pending and running rows, untouched.
    expect([...afterSecond.keys()].sort()).toEqual([...f.failed, ...f.pending, ...f.running].sort());
    expect([...f.failed, ...f.pending, ...f.running].map((id) => afterSecond.get(id))).toEqual(kept);
    // And the first tick took only done/cancelled rows.
    for (const id of [...f.failed, ...f.pending, ...f.running]) expect(afterFirst.has(id)).toBe(true);
  }, 120_000);

  it("PB_FLEET_KEEP_DONE=0 and PB_FLEET_KEEP_FAILED=0 keep every row forever", async () => {
    const f = await makeFamily(zeroServer, { done: 6, cancelled: 4, failed: 5, pending: 2, running: 2 });
    // Half of each finished class finished years ago: still kept.
    await finishLongAgo(zeroServer, [...f.done.slice(0, 3), ...f.cancelled.slice(0, 2), ...f.failed.slice(0, 3)]);
    const before = await rowsOf(zeroServer, f.prefix);
    await sleep(1_100);
    const answer = await maintenance(zeroServer);
    expect(answer.retention).toMatchObject({ deleted: { done: 0, failed: 0 }, errors: [] });
    expect(await rowsOf(zeroServer, f.prefix)).toEqual(before);
  });

  it('an invalid PB_FLEET_KEEP_DONE ("7 days") deletes no done/cancelled row and is named in errors; the other class still goes', async () => {
    const f = await makeFamily(invalidServer, { done: 6, cancelled: 4, failed: 5, pending: 2 });
    await finishLongAgo(invalidServer, [...f.done, ...f.cancelled]);
    const doneClass = [...f.done, ...f.cancelled];
    const before = await rowsOf(invalidServer, f.prefix);
    await sleep(2_500); // the failed rows are past their 2 s keep
    const answer = await maintenance(invalidServer);
    expect(answer.retention.rolledBack).toBe(false);
    expect(answer.retention.deleted.done).toBe(0);
    expect(answer.retention.errors).toHaveLength(1);
    expect(answer.retention.errors[0]).toContain("PB_FLEET_KEEP_DONE");
    expect(answer.retention.errors[0]).toContain("7 days");
    const after = await rowsOf(invalidServer, f.prefix);
    expect(doneClass.map((id) => after.get(id))).toEqual(doneClass.map((id) => before.get(id)));
    expect(f.pending.map((id) => after.get(id))).toEqual(f.pending.map((id) => before.get(id)));
    // The failed rows are gone (this tick's or, across a minute boundary, the cron's).
    for (const id of f.failed) expect(after.has(id)).toBe(false);
    expect(answer.retention.deleted.failed).toBeLessThanOrEqual(f.failed.length);
  });
});
