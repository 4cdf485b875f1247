// docs/flow-control.md "Limits": a scope that allows nothing never blocks another;
// claim-next skips its jobs and goes on in claim order (no head-of-line
// blocking). Here hundreds of due jobs that sort BEFORE the other work
// (higher priority, and older) belong to scopes that allow nothing: a paused
// queue, a group at its concurrency limit, a parked group, a group at its
// rate limit, and (second test) more such scopes than one call has query
// rounds. One claim-next call, for any queue (the run's probe-key prefix
// only) or for the list of the run's queues, still returns every other job
// in the same call, in claim order, and claims none of the held-back ones
// (their rows are unchanged).
import { describe, expect, it } from "vitest";
import type { EnqueueItem } from "../../src/lib/types";
import { claimNext, enqueueOk, listJobsByPrefix, post, randomKey, type QueueJobRecord } from "./support/fleet-api";

async function setFlow(body: Record<string, unknown>): Promise<void> {
  const res = await post("/api/fleet/flow", body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function enqueueAll(items: EnqueueItem[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < items.length; i += 1000) ids.push(...(await enqueueOk(items.slice(i, i + 1000))).map((j) => j.id));
  return ids;
}

/** Claims one job by id (to fill a group's concurrency, or its rate window). */
async function claimById(jobId: string, workerId: string): Promise<void> {
  const res = await post("/api/fleet/claim", { jobId, workerId, leaseSeconds: 600 });
  expect(res.body, JSON.stringify(res.body)).toMatchObject({ claimed: true });
}

interface Scene {
  prefix: string;
  queues: string[];
  /** The jobs nothing holds back, in claim order. */
  others: string[];
  /** Due jobs that sort before them, all held back. */
  heldBack: Set<string>;
  rowsBefore: QueueJobRecord[];
}

/**
 * A paused queue P (200 due jobs, priority 50), a group G at its concurrency
 * (2 held, 200 due, priority 40, in Q), a parked group H (100 due, priority
 * 30, in Q), a group K at its rate limit (one claim in the hour, 100 due,
 * priority 20, in R); and the others: 9 jobs of Q and R, some of a group
 * with room, priorities -1 to -9 (so the answer's order can be checked).
 */
async function scene(): Promise<Scene> {
  const base = randomKey("fh");
  const prefix = `${base}/`;
  const [P, Q, R] = ["p", "q", "r"].map((s) => `${base}-${s}`) as [string, string, string];
  const [G, H, K, F] = ["g", "h", "k", "f"].map((s) => `${base}-${s}`) as [string, string, string, string];
  await setFlow({ queue: P, paused: true });
  await setFlow({ group: G, concurrency: 2 });
  await setFlow({ group: H, parkSeconds: 600 });
  await setFlow({ group: K, rateLimit: { limit: 1, periodSeconds: 3600 } });
  await setFlow({ group: F, concurrency: 50 });
  let n = 0;
  const key = () => `${prefix}${String(n++).padStart(4, "0")}`;
  // G's concurrency and K's rate window are filled first, by claims of their own (older) jobs.
  const [g1, g2, k1] = await enqueueAll([
    { probeKey: key(), queue: Q, group: G, priority: 40 },
    { probeKey: key(), queue: Q, group: G, priority: 40 },
    { probeKey: key(), queue: R, group: K, priority: 20 },
  ]);
  await claimById(g1!, "holder-1");
  await claimById(g2!, "holder-2");
  await claimById(k1!, "holder-3");
  const others: EnqueueItem[] = [];
  for (let i = 1; i <= 9; i++) {
    others.push({ probeKey: key(), queue: i % 2 === 0 ? Q : R, group: i % 3 === 0 ? F : undefined, priority: -i });
  }
  const otherIds = await enqueueAll(others);
  const held: EnqueueItem[] = [];
  for (let i = 0; i < 200; i++) held.push({ probeKey: key(), queue: P, priority: 50, runAt: "2020-01-01T00:00:00Z" });
  for (let i = 0; i < 200; i++) held.push({ probeKey: key(), queue: Q, group: G, priority: 40, runAt: "2020-01-01T00:00:00Z" });
  for (let i = 0; i < 100; i++) held.push({ probeKey: key(), queue: Q, group: H, priority: 30, runAt: "2020-01-01T00:00:00Z" });
  for (let i = 0; i < 100; i++) held.push({ probeKey: key(), queue: R, group: K, priority: 20, runAt: "2020-01-01T00:00:00Z" });
  const heldIds = await enqueueAll(held);
  return { prefix, queues: [P, Q, R], others: otherIds, heldBack: new Set(heldIds), rowsBefore: await listJobsByPrefix(prefix) };
}

/** One call gets exactly the others, in claim order; the held-back rows are as they were. */
async function expectOthersOnly(s: Scene, body: Record<string, unknown>): Promise<void> {
  const res = await claimNext({ workerId: "hol-worker", leaseSeconds: 60, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const got = (res.body.jobs as { job: { id: string } }[]).map((j) => j.job.id);
  expect(got.filter((id) => s.heldBack.has(id)), "held-back jobs handed out").toEqual([]);
  expect(got, "the other jobs, all of them, in claim order, in this one call").toEqual(s.others);
  const after = new Map((await listJobsByPrefix(s.prefix)).map((r) => [r.id, r]));
  for (const row of s.rowsBefore) {
    if (s.heldBack.has(row.id)) expect(after.get(row.id), `held-back ${row.id}`).toEqual(row);
  }
}

describe("flow control never blocks the head of the line", () => {
  it("claim-next for any queue (prefix only): every other job in one call, none of the 600 held-back ones before them", async () => {
    const s = await scene();
    await expectOthersOnly(s, { probeKeyPrefix: s.prefix, limit: 20 });
  });

  it("claim-next for the list of queues: the same", async () => {
    const s = await scene();
    await expectOthersOnly(s, { probeKeyPrefix: s.prefix, queue: s.queues, limit: 20 });
    // And without the prefix: the run's queues are its own.
    const t = await scene();
    await expectOthersOnly(t, { queue: t.queues, limit: 20 });
  });

  it("more scopes that allow nothing than a call has query rounds (12 groups at their limit, 6 paused queues), all sorting first: still the others", async () => {
    const base = randomKey("fh");
    const prefix = `${base}/`;
    const work = `${base}-work`;
    let n = 0;
    const key = () => `${prefix}${String(n++).padStart(4, "0")}`;
    const groups = Array.from({ length: 12 }, (_, i) => `${base}-g${i}`);
    const paused = Array.from({ length: 6 }, (_, i) => `${base}-p${i}`);
    for (const group of groups) await setFlow({ group, concurrency: 1 });
    for (const queue of paused) await setFlow({ queue, paused: true });
    // Each group's first job is held: the group is at its limit.
    const firsts = await enqueueAll(groups.map((group) => ({ probeKey: key(), queue: work, group, priority: 0, runAt: "2020-01-01T00:00:00Z" })));
    for (const [i, id] of firsts.entries()) await claimById(id, `holder-${i}`);
    const others = await enqueueAll(Array.from({ length: 4 }, (_, i) => ({ probeKey: key(), queue: work, priority: -1 - i })));
    // Then each scope's due jobs, each scope at its own priority level, all above the others.
    const held: EnqueueItem[] = [];
    groups.forEach((group, g) => {
      for (let i = 0; i < 10; i++) held.push({ probeKey: key(), queue: work, group, priority: 100 - g, runAt: "2020-01-01T00:00:00Z" });
    });
    paused.forEach((queue, q) => {
      for (let i = 0; i < 10; i++) held.push({ probeKey: key(), queue, priority: 200 - q, runAt: "2020-01-01T00:00:00Z" });
    });
    const heldIds = await enqueueAll(held);
    const s: Scene = { prefix, queues: [work, ...paused], others, heldBack: new Set(heldIds), rowsBefore: await listJobsByPrefix(prefix) };
    await expectOthersOnly(s, { probeKeyPrefix: prefix, limit: 4 });
  });
});
