// claim-next hands jobs out in the queue's claim order (docs/queue.md): priority
// descending, then run_at, then the request order of one enqueue call, then
// created, then id; never a job before its run_at; and under 50 concurrent
// callers each job exactly once.
import { describe, expect, it } from "vitest";
import { formatPbDate, parsePbDate } from "../../src/lib/lease";
import type { ClaimedJob, EnqueueItem } from "../../src/lib/types";
import { claimNext, enqueueOk, getQueueJob, listJobsByPrefix, randomKey, type QueueJobRecord } from "./support/fleet-api";

const HOUR = 3_600_000;

/** A fixed set of past instants, each in several spellings: items of different calls share run_at values. */
const PAST_INSTANTS = [
  Date.UTC(2020, 0, 1, 0, 0, 0, 0),
  Date.UTC(2021, 5, 15, 12, 30, 0, 250),
  Date.UTC(2024, 1, 29, 23, 59, 59, 999),
];

function spell(ms: number, variant: number): string {
  const iso = new Date(ms).toISOString(); // 2020-01-01T00:00:00.000Z
  switch (variant % 4) {
    case 0: return iso;
    case 1: return formatPbDate(ms); // PocketBase's own form
    case 2: {
      // The same instant at +02:00.
      const local = new Date(ms + 2 * HOUR).toISOString().slice(0, 23);
      return `${local}+02:00`;
    }
    default: {
      const local = new Date(ms - (5 * HOUR + 30 * 60_000)).toISOString().slice(0, 23);
      return `${local}-05:30`;
    }
  }
}

/** Integer in [lo, hi]. */
function randInt(lo: number, hi: number): number {
  return lo + Math.floor(Math.random() * (hi - lo + 1));
}

interface Planned {
  item: EnqueueItem;
  /** Stored run_at for an explicit runAt; null when the server picks it (now, now + delay). */
  expectedRunAt: string | null;
  future: boolean;
}

function planItem(probeKey: string): Planned {
  const priority = randInt(-5, 5);
  const roll = Math.random();
  if (roll < 0.1) {
    const ms = Date.now() + randInt(2, 48) * HOUR + randInt(0, 999);
    return { item: { probeKey, priority, runAt: new Date(ms).toISOString() }, expectedRunAt: formatPbDate(ms), future: true };
  }
  if (roll < 0.2) return { item: { probeKey, priority, delaySeconds: randInt(7200, 172_800) }, expectedRunAt: null, future: true };
  if (roll < 0.45) {
    const ms = PAST_INSTANTS[randInt(0, PAST_INSTANTS.length - 1)]!;
    return { item: { probeKey, priority, runAt: spell(ms, randInt(0, 3)) }, expectedRunAt: formatPbDate(ms), future: false };
  }
  if (roll < 0.55) {
    const ms = Date.now() - randInt(1, 10_000_000);
    return { item: { probeKey, priority, runAt: new Date(ms).toISOString() }, expectedRunAt: formatPbDate(ms), future: false };
  }
  if (roll < 0.6) return { item: { probeKey, priority, delaySeconds: 0 }, expectedRunAt: null, future: false };
  return { item: { probeKey, priority }, expectedRunAt: null, future: false };
}

interface Enqueued {
  id: string;
  call: number;
  index: number;
  row: QueueJobRecord;
}

/**
 * The contract's order: priority desc, run_at asc, then for jobs of one call
 * their request order, and across calls `created`, then id.
 */
function claimOrder(a: Enqueued, b: Enqueued): number {
  if (a.row.priority !== b.row.priority) return b.row.priority - a.row.priority;
  if (a.row.run_at !== b.row.run_at) return a.row.run_at < b.row.run_at ? -1 : 1;
  if (a.call === b.call) return a.index - b.index;
  if (a.row.created !== b.row.created) return a.row.created < b.row.created ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** What the contract does not say: enqueue_index compared across calls too (for the failure message). */
function indexBeforeCreated(a: Enqueued, b: Enqueued): number {
  if (a.row.priority !== b.row.priority) return b.row.priority - a.row.priority;
  if (a.row.run_at !== b.row.run_at) return a.row.run_at < b.row.run_at ? -1 : 1;
  if (a.index !== b.index) return a.index - b.index;
  if (a.row.created !== b.row.created) return a.row.created < b.row.created ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function describeJob(j: Enqueued | undefined): string {
  if (j === undefined) return "nothing";
  return `${j.row.probe_key} (call ${j.call} item ${j.index}, priority ${j.row.priority}, run_at ${j.row.run_at}, created ${j.row.created}, id ${j.id})`;
}

/** Sequential claim-next calls of `limit` until the prefix answers nothing; each job with the time its answer arrived. */
async function drain(prefix: string, workerId: string): Promise<{ job: ClaimedJob["job"]; answeredAt: number }[]> {
  const out: { job: ClaimedJob["job"]; answeredAt: number }[] = [];
  for (let calls = 0; calls < 1000; calls++) {
    const res = await claimNext({ workerId, limit: 100, probeKeyPrefix: prefix, leaseSeconds: 600 });
    const answeredAt = Date.now();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const jobs = (res.body as { jobs: ClaimedJob[] }).jobs;
    if (jobs.length === 0) return out;
    for (const { job } of jobs) out.push({ job, answeredAt });
  }
  throw new Error("claim-next never ran dry");
}

describe("claim-next order over enqueued jobs", () => {
  it("10,000 jobs in 10 calls with mixed priorities and due times come out in the contract's order, none before its run_at", async () => {
    const prefix = randomKey("qorder") + "/";
    const plans: Planned[][] = [];
    const enqueued: Enqueued[] = [];
    const callWindows: { t0: number; t1: number }[] = [];
    for (let call = 0; call < 10; call++) {
      const plan = Array.from({ length: 1000 }, (_, i) => planItem(`${prefix}${call}-${String(i).padStart(4, "0")}`));
      plans.push(plan);
      const t0 = Date.now();
      const answer = await enqueueOk(plan.map((p) => p.item));
      callWindows.push({ t0, t1: Date.now() });
      expect(answer).toHaveLength(1000);
      answer.forEach((a, i) => {
        expect(a).toMatchObject({ probeKey: plan[i]!.item.probeKey, created: true });
        enqueued.push({ id: a.id, call, index: i, row: undefined as unknown as QueueJobRecord });
      });
    }
    expect(new Set(enqueued.map((e) => e.id)).size).toBe(10_000);

    // The rows as stored: run_at (and created) are what the order is made of.
    const rows = new Map((await listJobsByPrefix(prefix)).map((r) => [r.id, r]));
    expect(rows.size).toBe(10_000);
    for (const e of enqueued) {
      const row = rows.get(e.id)!;
      const plan = plans[e.call]![e.index]!;
      e.row = row;
      expect(row).toMatchObject({ probe_key: plan.item.probeKey, status: "pending", priority: plan.item.priority, enqueue_index: e.index, attempts: 0, max_attempts: 25 });
      if (plan.expectedRunAt !== null) {
        expect(row.run_at, `${row.probe_key} runAt ${plan.item.runAt}`).toBe(plan.expectedRunAt);
      } else {
        // now (+ delaySeconds), stamped while its call was in flight.
        const at = parsePbDate(row.run_at)!;
        const offset = (plan.item.delaySeconds ?? 0) * 1000;
        expect(at).toBeGreaterThanOrEqual(callWindows[e.call]!.t0 + offset - 5);
        expect(at).toBeLessThanOrEqual(callWindows[e.call]!.t1 + offset + 5);
      }
    }
    // Within a call, created never goes back in request order (the rows are inserted one after another).
    for (let k = 1; k < enqueued.length; k++) {
      const [a, b] = [enqueued[k - 1]!, enqueued[k]!];
      if (a.call === b.call) expect(b.row.created >= a.row.created, `${b.row.probe_key} created before ${a.row.probe_key}`).toBe(true);
    }
    // The model's premise: the calls ran one after another, so every row of a call was created after the previous call's.
    for (let call = 1; call < 10; call++) {
      const prevMax = enqueued.filter((e) => e.call === call - 1).reduce((m, e) => (e.row.created > m ? e.row.created : m), "");
      const min = enqueued.filter((e) => e.call === call).reduce((m, e) => (e.row.created < m ? e.row.created : m), "~");
      expect(min >= prevMax, `call ${call} created from ${min}, call ${call - 1} up to ${prevMax}`).toBe(true);
    }

    const start = Date.now();
    const future = enqueued.filter((e) => parsePbDate(e.row.run_at)! > start);
    const due = enqueued.filter((e) => parsePbDate(e.row.run_at)! <= start);
    expect(future.length).toBeGreaterThan(1000); // ~20%
    expect(future.length).toBeLessThan(3000);
    // Cross-call ties on run_at exist (the fixed past instants), so enqueue order vs created is exercised.
    const model = due.slice().sort(claimOrder);

    const claimed = await drain(prefix, "order-drainer");
    for (const { job, answeredAt } of claimed) {
      expect(parsePbDate(job.run_at)!, `${job.probe_key} handed out before its run_at ${job.run_at}`).toBeLessThanOrEqual(answeredAt);
    }
    const claimedIds = claimed.map((c) => c.job.id);
    expect(new Set(claimedIds).size).toBe(claimedIds.length);
    const byId = new Map(enqueued.map((e) => [e.id, e]));
    const firstDiff = model.findIndex((m, i) => claimedIds[i] !== m.id);
    // On a mismatch, say whether the server used enqueue_index across calls (before created).
    const indexFirst = due.slice().sort(indexBeforeCreated).map((e) => e.id);
    const indexFirstMatches = indexFirst.length === claimedIds.length && indexFirst.every((id, i) => claimedIds[i] === id);
    expect(
      firstDiff,
      firstDiff === -1 ? "" : `position ${firstDiff}: expected ${describeJob(model[firstDiff])}, got ${describeJob(byId.get(claimedIds[firstDiff]!))}; ` +
        `the whole sequence ${indexFirstMatches ? "matches" : "does not match either"} the order priority, run_at, enqueue_index, created, id`,
    ).toBe(-1);
    expect(claimedIds).toHaveLength(model.length);
    // The answers carry the queue's fields.
    expect(claimed[0]!.job).toMatchObject({ status: "claimed", claimed_by: "order-drainer", attempts: 1, max_attempts: 25, payload: null });

    // The future jobs were never handed out and are still pending.
    for (const e of future.filter((_, i) => i % 100 === 0)) {
      expect(await getQueueJob(e.id)).toMatchObject({ status: "pending", attempts: 0, version: 0 });
    }
  }, 600_000);

  it("across enqueue calls with equal priority and run_at, the earlier call's jobs come first (created before enqueue_index)", async () => {
    const prefix = randomKey("qorder-x") + "/";
    const runAt = "2020-06-01T00:00:00Z";
    const first = await enqueueOk([0, 1, 2].map((i) => ({ probeKey: `${prefix}a${i}`, runAt })));
    const second = await enqueueOk([0, 1, 2].map((i) => ({ probeKey: `${prefix}b${i}`, runAt })));
    const res = await claimNext({ workerId: "x", limit: 10, probeKeyPrefix: prefix });
    expect(res.status).toBe(200);
    const keys = (res.body.jobs as ClaimedJob[]).map((j) => j.job.probe_key);
    // docs/queue.md: "jobs of one enqueue call in request order, then created": a1, a2 were created before b0.
    expect(keys).toEqual([...first, ...second].map((j) => j.probeKey));
  });

  it("50 concurrent claim-next callers over 2,000 due jobs: each handed out once, all handed out", async () => {
    const prefix = randomKey("qorder-c") + "/";
    const ids: string[] = [];
    for (let call = 0; call < 2; call++) {
      const answer = await enqueueOk(Array.from({ length: 1000 }, (_, i) => ({
        probeKey: `${prefix}${call}-${i}`,
        priority: randInt(-5, 5),
        ...(i % 3 === 0 ? { runAt: spell(PAST_INSTANTS[i % PAST_INSTANTS.length]!, i) } : {}),
      })));
      ids.push(...answer.map((a) => a.id));
    }
    const handedOut = new Map<string, string>();
    const duplicates: string[] = [];
    await Promise.all(Array.from({ length: 50 }, async (_, w) => {
      const workerId = `qc-${w}`;
      for (let calls = 0; calls < 1000; calls++) {
        const res = await claimNext({ workerId, limit: 10, probeKeyPrefix: prefix });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const jobs = res.body.jobs as ClaimedJob[];
        if (jobs.length === 0) return;
        for (const { job } of jobs) {
          if (handedOut.has(job.id)) duplicates.push(job.id);
          handedOut.set(job.id, workerId);
        }
      }
    }));
    expect(duplicates).toEqual([]);
    expect(handedOut.size).toBe(2000);
    expect(new Set(handedOut.keys())).toEqual(new Set(ids));
    for (const id of ids.filter((_, i) => i % 200 === 0)) {
      expect(await getQueueJob(id)).toMatchObject({ status: "claimed", claimed_by: handedOut.get(id), version: 1, attempts: 1 });
    }
    expect((await claimNext({ workerId: "late", limit: 100, probeKeyPrefix: prefix })).body).toEqual({ jobs: [] });
  }, 300_000);
});
