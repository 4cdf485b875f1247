// docs/flow-control.md "Limits": exact under races. 40 concurrent claim-next callers drain
// 2,000 jobs of one queue (concurrency 25) in 20 groups (concurrency 3 each),
// each caller holding what it won for a random short time and then finishing
// it (POST /api/fleet/complete, or /release done). Proved two ways:
//   - while it runs: after every claim-next answer, the jobs this process
//     knows to be held (won, and not yet sent for release) never exceed 3 in a
//     group or 25 in the queue. That count is a lower bound of what the server
//     holds at that instant (a claim answered has committed; a release not yet
//     sent has not), so it can only be over a limit if the server was;
//   - afterwards, from the rows: every job claimed once and done, held over
//     [claimed_at, min(finished_at, lease_expires_at)) (the lease rule: held
//     while the lease is live), and no instant has more than 3 held in a group
//     or 25 in the queue; and the limits were reached (queue peak 25, group
//     peak 3 for nearly every group), so the fleet was held back by the
//     limits, not merely slow.
// The jobs are enqueued in runs of 10 of one group, so the front of the claim
// order is always a few groups' jobs: groups sit at their limit and claim-next
// must skip their jobs for the next group's (the held-back path under load).
import { prng } from "../../scripts/bench/queue.mjs";
import { describe, expect, it } from "vitest";
import { parsePbDate } from "../../src/lib/lease";
import type { EnqueueItem } from "../../src/lib/types";
import { claimNext, enqueueOk, get, listJobsByPrefix, post, randomKey } from "./support/fleet-api";
import { sleep } from "./support/race";

const JOBS = 2000;
const GROUPS = 20;
const GROUP_LIMIT = 3;
const QUEUE_LIMIT = 25;
const CALLERS = 40;
/** The lease each claim asks for: far longer than a hold, even on a loaded CI machine where a complete can wait seconds for the writer (checked: every release succeeds). */
const LEASE_SECONDS = 30;
const MAX_HOLD_MS = 120;
/** Jobs of one group in a row, in enqueue (so claim) order. */
const RUN = 10;
const DEADLINE_MS = 100_000;
const SEED = Number(process.env["PB_FLEET_FLOW_SEED"] ?? Date.now() % 1_000_000);

interface Won {
  id: string;
  group: string;
  token: string;
}

/** The greatest number of intervals [start, end) over one instant, per key (ends before starts at a tie). */
function peaks(intervals: { key: string; start: number; end: number }[]): Map<string, number> {
  const events: { t: number; d: number; key: string }[] = [];
  for (const iv of intervals) {
    events.push({ t: iv.start, d: +1, key: iv.key });
    events.push({ t: iv.end, d: -1, key: iv.key });
  }
  events.sort((a, b) => a.t - b.t || a.d - b.d);
  const now = new Map<string, number>();
  const peak = new Map<string, number>();
  for (const e of events) {
    const n = (now.get(e.key) ?? 0) + e.d;
    now.set(e.key, n);
    if (n > (peak.get(e.key) ?? 0)) peak.set(e.key, n);
  }
  return peak;
}

describe("flow control's limits are exact under races", () => {
  it(`${CALLERS} callers, ${JOBS} jobs in ${GROUPS} groups: never more than ${GROUP_LIMIT} held per group or ${QUEUE_LIMIT} in the queue, and both reached`, async () => {
    // Seeded (mulberry32), so a failing run can be replayed: the seed is in the error.
    const random = prng(SEED);
    const queue = randomKey("fx");
    const prefix = `${queue}/`;
    const groups = Array.from({ length: GROUPS }, (_, g) => `${queue}-g${g}`);
    const context = `seed ${SEED} (PB_FLEET_FLOW_SEED), queue ${queue}`;

    const setQueue = await post("/api/fleet/flow", { queue, concurrency: QUEUE_LIMIT });
    expect(setQueue.status, JSON.stringify(setQueue.body)).toBe(200);
    expect(setQueue.body.flow).toEqual({ queue, paused: false, concurrency: QUEUE_LIMIT, rateLimit: null, parkedUntil: null });
    for (const group of groups) {
      const res = await post("/api/fleet/flow", { group, concurrency: GROUP_LIMIT });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.flow).toMatchObject({ group, concurrency: GROUP_LIMIT });
    }

    const items: EnqueueItem[] = [];
    for (let i = 0; i < JOBS; i++) {
      const group = groups[Math.floor(i / RUN) % GROUPS]!;
      items.push({ probeKey: `${prefix}${String(i).padStart(5, "0")}`, queue, group });
    }
    const groupOf = new Map<string, string>();
    for (let i = 0; i < JOBS; i += 1000) {
      const answers = await enqueueOk(items.slice(i, i + 1000));
      answers.forEach((a, k) => groupOf.set(a.id, items[i + k]!.group as string));
    }
    expect(groupOf.size).toBe(JOBS);

    // What this process knows to be held: won (answer received), not yet sent for release.
    const heldInGroup = new Map<string, number>(groups.map((g) => [g, 0]));
    let heldInQueue = 0;
    const sampledPeak = { queue: 0, group: new Map<string, number>() };
    const overLimit: string[] = [];
    const wonBy = new Map<string, string>();
    const twice: string[] = [];
    const refusedReleases: string[] = [];
    let finished = 0;
    let calls = 0;
    let emptyCalls = 0;
    const started = Date.now();

    const finish = async (workerId: string, won: Won[]) => {
      // Out of the count before the release is sent: the server may release it any moment from now.
      for (const w of won) heldInGroup.set(w.group, heldInGroup.get(w.group)! - 1);
      heldInQueue -= won.length;
      if (random() < 0.5) {
        const res = await post("/api/fleet/complete", {
          workerId,
          releases: won.map((w) => ({ jobId: w.id, leaseToken: w.token, status: "done" })),
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        for (const r of res.body.results as { jobId: string; released: boolean; reason?: string }[]) {
          if (!r.released) refusedReleases.push(`${r.jobId}: ${r.reason}`);
        }
      } else {
        await Promise.all(won.map(async (w) => {
          const res = await post("/api/fleet/release", { jobId: w.id, workerId, leaseToken: w.token, status: "done" });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          if (res.body.released !== true) refusedReleases.push(`${w.id}: ${res.body.reason}`);
        }));
      }
      finished += won.length;
    };

    // The server's own figure of the queue's held jobs, read now and then while the fleet runs.
    let serverHeldPeak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const res = await get(`/api/fleet/flow?queue=${encodeURIComponent(queue)}`);
        expect(res.status).toBe(200);
        const entry = (res.body.queues as { name: string; held: number }[]).find((q) => q.name === queue);
        if (entry !== undefined) {
          serverHeldPeak = Math.max(serverHeldPeak, entry.held);
          if (entry.held > QUEUE_LIMIT) overLimit.push(`GET /api/fleet/flow: queue held ${entry.held}`);
        }
        await sleep(100);
      }
    })();

    await Promise.all(Array.from({ length: CALLERS }, async (_, c) => {
      const workerId = `${queue}-w${c}`;
      while (finished < JOBS && Date.now() - started < DEADLINE_MS) {
        const limit = 1 + Math.floor(random() * 4);
        const res = await claimNext({ workerId, limit, queue, leaseSeconds: LEASE_SECONDS });
        calls++;
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const got = res.body.jobs as { job: { id: string; queue: string; group_key: string; status: string; claimed_by: string }; leaseToken: string }[];
        expect(got.length).toBeLessThanOrEqual(limit);
        const won: Won[] = [];
        for (const { job, leaseToken } of got) {
          expect(job).toMatchObject({ queue, status: "claimed", claimed_by: workerId, group_key: groupOf.get(job.id) });
          if (wonBy.has(job.id)) twice.push(job.id);
          wonBy.set(job.id, workerId);
          won.push({ id: job.id, group: job.group_key, token: leaseToken });
          heldInGroup.set(job.group_key, heldInGroup.get(job.group_key)! + 1);
          heldInQueue++;
        }
        // The sample after this call.
        if (heldInQueue > QUEUE_LIMIT) overLimit.push(`after call ${calls}: ${heldInQueue} held in the queue`);
        sampledPeak.queue = Math.max(sampledPeak.queue, heldInQueue);
        for (const [g, n] of heldInGroup) {
          if (n > GROUP_LIMIT) overLimit.push(`after call ${calls}: ${n} held in ${g}`);
          sampledPeak.group.set(g, Math.max(sampledPeak.group.get(g) ?? 0, n));
        }
        if (won.length === 0) {
          emptyCalls++;
          await sleep(5 + random() * 15);
          continue;
        }
        await sleep(random() * MAX_HOLD_MS);
        await finish(workerId, won);
      }
    }));
    sampling = false;
    await sampler;
    const seconds = (Date.now() - started) / 1000;
    const groupPeaks = [...sampledPeak.group.values()];
    console.log(
      `[flow-limits-exact] ${context}: ${finished} jobs in ${seconds.toFixed(1)} s, ${calls} claim-next calls (${emptyCalls} empty); ` +
        `sampled peaks: queue ${sampledPeak.queue}, groups ${JSON.stringify(groupPeaks)}; server's held peak ${serverHeldPeak}`,
    );

    expect(overLimit, context).toEqual([]);
    expect(twice, `${context}: jobs handed out twice`).toEqual([]);
    expect(refusedReleases, `${context}: releases refused (a lease lapsed?)`).toEqual([]);
    expect(finished, `${context}: every job finished before the deadline`).toBe(JOBS);

    // The rows: each job claimed once, by the worker told it won, and done; its held interval from its times.
    const rows = await listJobsByPrefix(prefix);
    expect(rows).toHaveLength(JOBS);
    const intervals: { key: string; start: number; end: number }[] = [];
    for (const row of rows) {
      const r = row as typeof row & { queue: string; group_key: string; claimed_at: string };
      expect(r, r.id).toMatchObject({ status: "done", attempts: 1, reclaim_count: 0, queue, group_key: groupOf.get(r.id), claimed_by: wonBy.get(r.id) });
      const start = parsePbDate(r.claimed_at);
      const finishedAt = parsePbDate(r.finished_at);
      const leaseEnd = parsePbDate(r.lease_expires_at);
      expect(start, `${r.id} claimed_at ${r.claimed_at}`).not.toBeNull();
      expect(finishedAt, `${r.id} finished_at ${r.finished_at}`).not.toBeNull();
      expect(leaseEnd, `${r.id} lease_expires_at ${r.lease_expires_at}`).not.toBeNull();
      expect(finishedAt!, r.id).toBeGreaterThanOrEqual(start!);
      const end = Math.min(finishedAt!, leaseEnd!);
      intervals.push({ key: `group ${r.group_key}`, start: start!, end });
      intervals.push({ key: "queue", start: start!, end });
    }
    const rowPeaks = peaks(intervals);
    const queuePeak = rowPeaks.get("queue") ?? 0;
    const perGroup = groups.map((g) => rowPeaks.get(`group ${g}`) ?? 0);
    console.log(`[flow-limits-exact] peaks from the rows: queue ${queuePeak}, groups ${JSON.stringify(perGroup)}`);
    expect(queuePeak, `${context}: most jobs held at one instant in the queue (rows)`).toBeLessThanOrEqual(QUEUE_LIMIT);
    for (const [g, peak] of perGroup.entries()) {
      expect(peak, `${context}: most jobs held at one instant in ${groups[g]} (rows)`).toBeLessThanOrEqual(GROUP_LIMIT);
    }
    // Reached: the queue held its 25 at some instant, and (nearly) every group its 3.
    expect(queuePeak, `${context}: the queue reached its limit`).toBe(QUEUE_LIMIT);
    expect(perGroup.filter((p) => p === GROUP_LIMIT).length, `${context}: groups that reached their limit`).toBeGreaterThanOrEqual(GROUPS - 2);
  }, 150_000);
});
