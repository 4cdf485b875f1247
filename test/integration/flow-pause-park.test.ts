// Pausing and parking (docs/flow-control.md "Limits"), and claim by id's reasons
// ("Endpoints"): while a queue or a group is paused nothing of it is handed
// out (claim-next by queue, by prefix, claim by id), while its held jobs keep
// renewing, heartbeating and releasing; resuming hands out again. A park
// (parkSeconds, parkUntil) is a pause that ends by itself at its time. A claim
// by id that would win but flow control holds back answers
// { claimed: false, reason } with the first of start_by_passed, paused,
// concurrency_limit, rate_limit that applies (after the max-attempts dead
// letter, which answers as docs/queue.md says), and writes nothing; a job it would
// not win anyway answers as today, without a reason; an alreadyHeld re-claim
// is never refused.
import { describe, expect, it } from "vitest";
import { MAX_ATTEMPTS_ERROR } from "../../src/lib/queue";
import { parsePbDate } from "../../src/lib/lease";
import type { ClaimedJob } from "../../src/lib/types";
import {
  claimNext, createJob, enqueueOk, futureDate, getQueueJob, pastDate, post, randomKey, type QueueJobRecord,
} from "./support/fleet-api";
import { claim, renew, timed } from "./support/protocol";
import { sleep } from "./support/race";

const LEASE = 60;

async function setFlow(body: Record<string, unknown>): Promise<any> {
  const res = await post("/api/fleet/flow", body);
  expect(res.status, `${JSON.stringify(body)} -> ${JSON.stringify(res.body)}`).toBe(200);
  return res.body.flow;
}

async function claimIds(body: Record<string, unknown>): Promise<string[]> {
  const res = await claimNext({ leaseSeconds: LEASE, limit: 10, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.jobs.map((j: ClaimedJob) => j.job.id);
}

async function claimOne(body: Record<string, unknown>): Promise<ClaimedJob> {
  const res = await claimNext({ leaseSeconds: LEASE, limit: 1, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.jobs).toHaveLength(1);
  return res.body.jobs[0];
}

/** A claim by id that flow control refuses: exactly { claimed: false, reason }, and the row as it was. */
async function expectRefused(id: string, reason: string, workerId = "by-id"): Promise<void> {
  const before = await getQueueJob(id);
  const res = await claim(id, workerId, { leaseSeconds: LEASE });
  expect(res, `claim of ${before.probe_key}`).toEqual({ status: 200, body: { claimed: false, reason } });
  expect(await getQueueJob(id), `${before.probe_key} after a refused claim`).toEqual(before);
}

/** A claim by id it would not win anyway: exactly { claimed: false } (no reason), and the row as it was. */
async function expectNotWon(id: string): Promise<void> {
  const before = await getQueueJob(id);
  const res = await claim(id, "by-id", { leaseSeconds: LEASE });
  expect(res, `claim of ${before.probe_key}`).toEqual({ status: 200, body: { claimed: false } });
  expect(await getQueueJob(id)).toEqual(before);
}

function heartbeat(workerId: string, leases: { jobId: string; leaseToken?: string }[]) {
  return post("/api/fleet/heartbeat", { workerId, leaseSeconds: LEASE, leases });
}

describe("pausing a queue", () => {
  it("hands out nothing of it while paused (by queue, by prefix, by id); its held jobs renew and release; resume hands out again", async () => {
    const queue = randomKey("fpq");
    const prefix = `${queue}/`;
    const [h1, h2, j1, j2] = await enqueueOk(["h1", "h2", "j1", "j2"].map((k) => ({ probeKey: `${prefix}${k}`, queue })));
    const held1 = await claimOne({ workerId: "w1", queue });
    const held2 = await claimOne({ workerId: "w2", queue });
    expect([held1.job.id, held2.job.id]).toEqual([h1!.id, h2!.id]);

    expect(await setFlow({ queue, paused: true })).toMatchObject({ queue, paused: true });
    expect(await claimIds({ workerId: "w3", queue })).toEqual([]);
    expect(await claimIds({ workerId: "w3", queue: [queue, randomKey("fpq-other")] })).toEqual([]);
    expect(await claimIds({ workerId: "w3", probeKeyPrefix: prefix })).toEqual([]);
    await expectRefused(j1!.id, "paused");

    // held jobs keep running: renew, heartbeat, release done, release retry
    const renewed = await renew(h1!.id, "w1", { leaseSeconds: LEASE, leaseToken: held1.leaseToken });
    expect(renewed.body).toMatchObject({ renewed: true, job: { id: h1!.id, status: "running" } });
    const beat = await heartbeat("w2", [{ jobId: h2!.id, leaseToken: held2.leaseToken }]);
    expect(beat.body).toMatchObject({ results: [{ jobId: h2!.id, renewed: true }] });
    const done = await post("/api/fleet/release", { jobId: h1!.id, workerId: "w1", status: "done", leaseToken: held1.leaseToken, result: { ok: 1 } });
    expect(done.body).toMatchObject({ released: true, job: { status: "done" } });
    const retried = await post("/api/fleet/release", { jobId: h2!.id, workerId: "w2", status: "retry", leaseToken: held2.leaseToken, error: "again" });
    expect(retried.body).toMatchObject({ released: true, job: { status: "pending" } });
    expect(await getQueueJob(h1!.id)).toMatchObject({ status: "done", result: { ok: 1 } });
    // still nothing handed out, the retried job neither once it is due
    await sleep(1_400);
    expect(await claimIds({ workerId: "w3", queue })).toEqual([]);
    await expectRefused(h2!.id, "paused");

    expect(await setFlow({ queue, paused: false })).toMatchObject({ paused: false });
    expect((await claimIds({ workerId: "w4", queue })).sort()).toEqual([h2!.id, j1!.id, j2!.id].sort());
  });

  it("a queue paused does not stop another queue's claims", async () => {
    const a = randomKey("fpq-a");
    const b = randomKey("fpq-b");
    const prefix = `${a}/`;
    const [ja, jb] = await enqueueOk([{ probeKey: `${prefix}a`, queue: a, priority: 9 }, { probeKey: `${prefix}b`, queue: b }]);
    await setFlow({ queue: a, paused: true });
    expect(await claimIds({ workerId: "w", probeKeyPrefix: prefix })).toEqual([jb!.id]);
    await setFlow({ queue: a, paused: null });
    expect(await claimIds({ workerId: "w", queue: a })).toEqual([ja!.id]);
  });
});

describe("pausing a group", () => {
  it("holds back the group's jobs in every queue, not the others; its held jobs renew and release; resume hands them out", async () => {
    const queue = randomKey("fpg");
    const other = `${queue}-2`;
    const group = `${queue}.host`;
    const prefix = `${queue}/`;
    const [g1, g2, g3, o1] = await enqueueOk([
      { probeKey: `${prefix}g1`, queue, group, priority: 5 },
      { probeKey: `${prefix}g2`, queue, group, priority: 5 },
      { probeKey: `${prefix}g3`, queue: other, group, priority: 5 },
      { probeKey: `${prefix}o1`, queue, group: `${group}-other` },
    ]);
    const held = await claimOne({ workerId: "w1", queue });
    expect(held.job.id).toBe(g1!.id);

    await setFlow({ group, paused: true });
    // the group's jobs sort first, yet the other group's job is handed out
    expect(await claimIds({ workerId: "w2", probeKeyPrefix: prefix })).toEqual([o1!.id]);
    expect(await claimIds({ workerId: "w2", queue: [queue, other] })).toEqual([]);
    await expectRefused(g2!.id, "paused");
    await expectRefused(g3!.id, "paused");

    expect((await renew(g1!.id, "w1", { leaseSeconds: LEASE })).body).toMatchObject({ renewed: true });
    expect((await heartbeat("w1", [{ jobId: g1!.id }])).body).toMatchObject({ results: [{ jobId: g1!.id, renewed: true }] });
    const complete = await post("/api/fleet/complete", { workerId: "w1", releases: [{ jobId: g1!.id, status: "done", leaseToken: held.leaseToken }] });
    expect(complete.body).toMatchObject({ results: [{ jobId: g1!.id, released: true }] });

    await setFlow({ group, paused: false });
    expect((await claimIds({ workerId: "w3", probeKeyPrefix: prefix })).sort()).toEqual([g2!.id, g3!.id].sort());
  });
});

/** claim-next, polled every 50 ms until it hands out something (or withinMs has passed). */
async function firstClaimAt(body: Record<string, unknown>, withinMs: number): Promise<{ ids: string[] }> {
  const until = Date.now() + withinMs;
  for (;;) {
    const ids = await claimIds(body);
    if (ids.length > 0 || Date.now() > until) return { ids };
    await sleep(50);
  }
}

describe("parking", () => {
  it("parkSeconds (3 s): the queue behaves as paused until then, and by itself is not after", async () => {
    const queue = randomKey("fpk");
    const [job] = await enqueueOk([{ probeKey: `${queue}/a`, queue }]);
    const { result: parked, t1 } = await timed(() => setFlow({ queue, parkSeconds: 3 }));
    const until = parsePbDate(parked.parkedUntil)!;
    expect(until).toBeGreaterThanOrEqual(t1 + 3_000 - 600);
    expect(await claimIds({ workerId: "w", queue })).toEqual([]);
    await expectRefused(job!.id, "paused");

    const { ids } = await firstClaimAt({ workerId: "w", queue }, 5_000);
    expect(ids).toEqual([job!.id]);
    // claimed not before the park's end, and soon after it (claim-next polled every 50 ms)
    const claimedAt = parsePbDate((await getQueueJob(job!.id)).claimed_at)!;
    expect(claimedAt).toBeGreaterThanOrEqual(until);
    expect(claimedAt).toBeLessThan(until + 1_500);
  });

  it("parkUntil: a group parked until a given time (with an offset) behaves as paused until then", async () => {
    const queue = randomKey("fpu");
    const group = `${queue}-g`;
    const [job, free] = await enqueueOk([{ probeKey: `${queue}/a`, queue, group, priority: 1 }, { probeKey: `${queue}/b`, queue }]);
    const untilMs = Math.ceil((Date.now() + 2_000) / 1000) * 1000 + 1_000;
    // the same instant written at +05:30
    const local = new Date(untilMs + 5.5 * 3600_000).toISOString().replace(/\.\d{3}Z$/, "+05:30");
    const parked = await setFlow({ group, parkUntil: local });
    expect(parsePbDate(parked.parkedUntil)).toBe(untilMs);
    expect(await claimIds({ workerId: "w", queue })).toEqual([free!.id]);
    await expectRefused(job!.id, "paused");

    const { ids } = await firstClaimAt({ workerId: "w", queue }, 6_000);
    expect(ids).toEqual([job!.id]);
    const claimedAt = parsePbDate((await getQueueJob(job!.id)).claimed_at)!;
    expect(claimedAt).toBeGreaterThanOrEqual(untilMs);
    expect(claimedAt).toBeLessThan(untilMs + 1_500);
  });

  it("parkSeconds 0 and parkUntil null lift a park at once", async () => {
    const queue = randomKey("fpl");
    const [a, b] = await enqueueOk([{ probeKey: `${queue}/a`, queue }, { probeKey: `${queue}/b`, queue }]);
    await setFlow({ queue, parkSeconds: 600 });
    expect(await claimIds({ workerId: "w", queue, limit: 1 })).toEqual([]);
    await setFlow({ queue, parkSeconds: 0 });
    expect(await claimIds({ workerId: "w", queue, limit: 1 })).toEqual([a!.id]);
    await setFlow({ queue, parkUntil: new Date(Date.now() + 600_000).toISOString() });
    await expectRefused(b!.id, "paused");
    await setFlow({ queue, parkUntil: null });
    expect((await claim(b!.id, "w", { leaseSeconds: LEASE })).body).toMatchObject({ claimed: true });
  });
});

describe("claim by id under flow control", () => {
  it("answers the first reason that applies, in docs/flow-control.md's order, and writes nothing", async () => {
    const queue = randomKey("fpr");
    const prefix = `${queue}/`;
    await setFlow({ queue, concurrency: 1, rateLimit: { limit: 1, periodSeconds: 60 } });
    const [h, x] = await enqueueOk([{ probeKey: `${prefix}h`, queue }, { probeKey: `${prefix}x`, queue }]);
    const held = await claim(h!.id, "holder", { leaseSeconds: LEASE });
    expect(held.body).toMatchObject({ claimed: true });

    // concurrency full and the rate window full: concurrency_limit first
    // (start_by_passed, which comes before all of these, is flow-start-by.test.ts's: it needs a server whose tick is its own)
    await expectRefused(x!.id, "concurrency_limit");
    // held no more: the rate limit is what is left
    const done = await post("/api/fleet/release", { jobId: h!.id, workerId: "holder", status: "done", leaseToken: held.body.leaseToken });
    expect(done.body).toMatchObject({ released: true });
    await expectRefused(x!.id, "rate_limit");
    // paused before the limits (the rate window still holds h's claim)
    await setFlow({ queue, paused: true });
    await expectRefused(x!.id, "paused");

    // the max-attempts dead letter comes first of all: no reason, and it is written (docs/queue.md)
    const spent = await createJob({ probe_key: `${prefix}spent`, queue, attempts: 1, max_attempts: 1, start_by: pastDate(1_000) } as any);
    const { result: res } = await timed(() => claim(spent.id, "by-id", { leaseSeconds: LEASE }));
    expect(res.body).toEqual({ claimed: false });
    const row = await getQueueJob(spent.id);
    expect(row).toMatchObject({ status: "failed", last_error: MAX_ATTEMPTS_ERROR, attempts: 1, version: spent.version + 1 });
    expect(row.dead_lettered_at).not.toBe("");

    // none of them was claimed by any of this
    for (const id of [x!.id]) expect(await getQueueJob(id)).toMatchObject({ status: "pending", attempts: 0, claimed_by: "" });
  });

  it("orders the reasons across the job's queue and group: paused (either) before concurrency (either) before rate (either)", async () => {
    const queue = randomKey("fprg");
    const group = `${queue}-g`;
    const prefix = `${queue}/`;
    // queue: a rate limit of 1; group: a concurrency of 1
    await setFlow({ queue, rateLimit: { limit: 1, periodSeconds: 60 } });
    await setFlow({ group, concurrency: 1 });
    const [h, y] = await enqueueOk([{ probeKey: `${prefix}h`, queue, group }, { probeKey: `${prefix}y`, queue, group }]);
    expect((await claim(h!.id, "holder", { leaseSeconds: LEASE })).body).toMatchObject({ claimed: true });
    // the group's concurrency before the queue's rate limit
    await expectRefused(y!.id, "concurrency_limit");
    // the group paused before the group's concurrency and the queue's rate limit
    await setFlow({ group, paused: true });
    await expectRefused(y!.id, "paused");
    // the group parked (not paused) likewise
    await setFlow({ group, paused: false, parkSeconds: 60 });
    await expectRefused(y!.id, "paused");
    // the queue paused, the group not stopped
    await setFlow({ group, parkSeconds: 0 });
    await setFlow({ queue, paused: true });
    await expectRefused(y!.id, "paused");
    // only the rate limit left
    await setFlow({ queue, paused: false });
    await setFlow({ group, concurrency: null });
    await expectRefused(y!.id, "rate_limit");
    await setFlow({ queue, rateLimit: null });
    expect((await claim(y!.id, "finally", { leaseSeconds: LEASE })).body).toMatchObject({ claimed: true });
  });

  it("a job it would not win anyway answers { claimed: false } without a reason, paused or at a limit", async () => {
    const queue = randomKey("fpn");
    const prefix = `${queue}/`;
    await setFlow({ queue, concurrency: 1, rateLimit: { limit: 1, periodSeconds: 60 } });
    const [h, future] = await enqueueOk([{ probeKey: `${prefix}h`, queue }, { probeKey: `${prefix}future`, queue, delaySeconds: 3600 }]);
    expect((await claim(h!.id, "holder", { leaseSeconds: LEASE })).body).toMatchObject({ claimed: true });
    const other = await createJob({ probe_key: `${prefix}other`, queue, status: "running", claimed_by: "someone", lease_expires_at: futureDate() } as any);
    const done = await createJob({ probe_key: `${prefix}done`, queue, status: "done", claimed_by: "someone" } as any);
    const failed = await createJob({ probe_key: `${prefix}failed`, queue, status: "failed", claimed_by: "" } as any);
    const cancelled = await createJob({ probe_key: `${prefix}cancelled`, queue, status: "cancelled" } as any);
    const notDue = [future!.id, other.id, done.id, failed.id, cancelled.id];
    // at both limits
    for (const id of notDue) await expectNotWon(id);
    // and paused
    await setFlow({ queue, paused: true });
    for (const id of notDue) await expectNotWon(id);
  });

  it("an alreadyHeld re-claim is never refused by flow control (paused, parked, at its concurrency and its rate limit)", async () => {
    const queue = randomKey("fpa");
    const group = `${queue}-g`;
    await setFlow({ queue, concurrency: 1, rateLimit: { limit: 1, periodSeconds: 60 } });
    await setFlow({ group, concurrency: 1, rateLimit: { limit: 1, periodSeconds: 60 } });
    const [job] = await enqueueOk([{ probeKey: `${queue}/a`, queue, group }]);
    const won = await claim(job!.id, "holder", { leaseSeconds: LEASE });
    expect(won.body).toMatchObject({ claimed: true });
    const before = await getQueueJob(job!.id);
    const again = async () => {
      const res = await claim(job!.id, "holder", { leaseSeconds: 5 });
      expect(res.body).toEqual({ claimed: true, alreadyHeld: true, job: won.body.job, leaseToken: won.body.leaseToken });
      expect(await getQueueJob(job!.id)).toEqual(before as QueueJobRecord);
    };
    await again();
    await setFlow({ queue, paused: true });
    await again();
    await setFlow({ group, paused: true, parkSeconds: 60 });
    await again();
    await setFlow({ queue, paused: false, parkSeconds: 60 });
    await again();
  });
});
