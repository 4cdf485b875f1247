// POST /api/fleet/complete with `claimNext` (issue 21, docs/protocol-decisions.md
// "Batches"): the releases first, then in the same transaction a claim as
// claim-next would make for the call's workerId, answered as `jobs` beside
// the results. A job of a group at its concurrency limit is claimable by the
// very call that releases the group's held job. A bad claimNext is a 400 and
// a queue a worker identity may not take a 403, and neither releases
// anything; without claimNext the answer is what it always was. The client's
// completeAndClaim reads the same answer.
import { describe, expect, inject, it } from "vitest";
import { FleetClient } from "../../src/client/fleet-client";
import { parsePbDate } from "../../src/lib/lease";
import { claimNext, enqueueOk, getQueueJob, post, randomKey } from "./support/fleet-api";
import { expectStampedDuring, timed } from "./support/protocol";
import { createWorkerIdentity } from "./support/worker-identities";

interface Claimed {
  job: { id: string; probe_key: string; status: string; claimed_by: string; attempts: number; lease_expires_at: string };
  leaseToken: string;
}

/** `n` jobs in a fresh queue, priorities n..1 (so claim order is enqueue order). */
async function freshQueue(n: number, extra: object = {}) {
  const queue = randomKey("cq").replace(/[^\w.:-]/g, "-");
  const jobs = await enqueueOk(Array.from({ length: n }, (_, i) => ({ probeKey: `${queue}/j${i}`, queue, priority: n - i, ...extra })));
  return { queue, ids: jobs.map((j) => j.id) };
}

async function claimOne(queue: string, workerId: string, token?: string): Promise<Claimed> {
  const res = await claimNext({ workerId, queue, leaseSeconds: 30 }, token === undefined ? undefined : { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.jobs).toHaveLength(1);
  return res.body.jobs[0];
}

describe("complete with claimNext", () => {
  it("releases, then claims the next jobs in claim order for the same holder, in one call", async () => {
    const { queue, ids } = await freshQueue(4);
    const first = await claimOne(queue, "cw");
    expect(first.job.id).toBe(ids[0]);
    const { result: res, t0, t1 } = await timed(() => post("/api/fleet/complete", {
      workerId: "cw",
      releases: [{ jobId: first.job.id, leaseToken: first.leaseToken, status: "done", result: { n: 1 } }],
      claimNext: { queue, limit: 2, leaseSeconds: 45 },
    }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["jobs", "results"]);
    expect(res.body.results).toEqual([{ jobId: first.job.id, released: true, job: expect.objectContaining({ id: first.job.id, status: "done" }) }]);
    const jobs = res.body.jobs as Claimed[];
    expect(jobs.map((j) => j.job.id)).toEqual([ids[1], ids[2]]);
    for (const j of jobs) {
      expect(j.job).toMatchObject({ status: "claimed", claimed_by: "cw", attempts: 1 });
      expect(j.leaseToken).toMatch(/^\S{16,}$/);
      const row = await getQueueJob(j.job.id);
      expect(row).toMatchObject({ status: "claimed", claimed_by: "cw", lease_token: j.leaseToken, attempts: 1 });
      expectStampedDuring(row.claimed_at, t0, t1);
      // The lease asked for: 45 s from the transaction's instant.
      const leaseMs = parsePbDate(row.lease_expires_at)! - parsePbDate(row.claimed_at)!;
      expect(leaseMs).toBe(45_000);
    }
    expect(await getQueueJob(first.job.id)).toMatchObject({ status: "done", result: { n: 1 } });
    expect((await getQueueJob(ids[3]!)).status).toBe("pending");
  });

  it("without claimNext the answer is complete's own, and claimNext finding nothing answers jobs: []", async () => {
    const { queue } = await freshQueue(2);
    const a = await claimOne(queue, "cw2");
    const plain = await post("/api/fleet/complete", { workerId: "cw2", releases: [{ jobId: a.job.id, leaseToken: a.leaseToken, status: "done" }] });
    expect(Object.keys(plain.body)).toEqual(["results"]);
    const b = await claimOne(queue, "cw2");
    const empty = await post("/api/fleet/complete", {
      workerId: "cw2", releases: [{ jobId: b.job.id, leaseToken: b.leaseToken, status: "done" }], claimNext: { queue },
    });
    expect(empty.status).toBe(200);
    expect(empty.body.jobs).toEqual([]);
    expect(empty.body.results[0]).toMatchObject({ released: true });
  });

  it("a group at its concurrency limit: the call that releases the group's held job claims the group's next one", async () => {
    const group = randomKey("cg").replace(/[^\w.:-]/g, "-");
    const setGroup = await post("/api/fleet/flow", { group, concurrency: 1 });
    expect(setGroup.status, JSON.stringify(setGroup.body)).toBe(200);
    const { queue, ids } = await freshQueue(3, { group });
    const first = await claimOne(queue, "cw3");
    // The group holds its one: nothing more now.
    expect((await claimNext({ workerId: "cw3", queue, limit: 5 })).body.jobs).toEqual([]);
    const res = await post("/api/fleet/complete", {
      workerId: "cw3", releases: [{ jobId: first.job.id, leaseToken: first.leaseToken, status: "done" }], claimNext: { queue, limit: 5 },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.jobs.map((j: Claimed) => j.job.id)).toEqual([ids[1]]);
  });

  it("a bad claimNext is a 400 saying what is wrong, and nothing is released", async () => {
    const { queue } = await freshQueue(2);
    const held = await claimOne(queue, "cw4");
    const before = await getQueueJob(held.job.id);
    const cases: [unknown, RegExp][] = [
      [5, /^claimNext must be an object/],
      [[{ limit: 1 }], /^claimNext must be an object/],
      [{ workerId: "cw4" }, /^claimNext takes the call's workerId/],
      [{ limit: 0 }, /^claimNext: limit must be an integer from 1 to 100$/],
      [{ limit: 101 }, /^claimNext: limit must be an integer from 1 to 100$/],
      [{ queue: "no spaces allowed" }, /^claimNext: queue must be/],
      [{ probeKeyPrefix: 7 }, /^claimNext: /],
    ];
    for (const [claim, message] of cases) {
      const res = await post("/api/fleet/complete", {
        workerId: "cw4", releases: [{ jobId: held.job.id, leaseToken: held.leaseToken, status: "done" }], claimNext: claim,
      });
      expect(res.status, JSON.stringify(claim)).toBe(400);
      expect(res.body.error, JSON.stringify(claim)).toMatch(message);
    }
    expect(await getQueueJob(held.job.id)).toEqual(before);
  });

  it("a worker identity: claimNext of a queue it may not take is a 403 that releases nothing; without a queue it claims only its own", async () => {
    const { queue, ids } = await freshQueue(3);
    const other = await freshQueue(3);
    const identity = await createWorkerIdentity({ queues: [queue] });
    const workerId = `${identity.id}/w`;
    const held = await claimOne(queue, workerId, identity.token);
    const release = [{ jobId: held.job.id, leaseToken: held.leaseToken, status: "done" }];
    const refused = await post("/api/fleet/complete", { workerId, releases: release, claimNext: { queue: other.queue } }, { token: identity.token });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain(other.queue);
    expect((await getQueueJob(held.job.id)).status).toBe("claimed");
    const res = await post("/api/fleet/complete", { workerId, releases: release, claimNext: { limit: 100 } }, { token: identity.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.jobs.map((j: Claimed) => j.job.id).sort()).toEqual([ids[1], ids[2]].sort());
    for (const id of other.ids) expect((await getQueueJob(id)).status).toBe("pending");
  });

  it("FleetClient.completeAndClaim: the results and the claimed jobs as claimNext answers them", async () => {
    const { queue, ids } = await freshQueue(3);
    const client = new FleetClient({ url: inject("pbUrl"), email: inject("adminEmail"), password: inject("adminPassword") });
    const [held] = await client.claimNext({ workerId: "cw5", queue, leaseSeconds: 30 });
    const answer = await client.completeAndClaim("cw5", [{ jobId: held!.job.id, leaseToken: held!.leaseToken, status: "done", result: 7 }], {
      queue, limit: 1, leaseSeconds: 30,
    });
    expect(answer.results).toEqual([expect.objectContaining({ jobId: ids[0], released: true })]);
    expect(answer.jobs).toEqual([{ job: expect.objectContaining({ id: ids[1], status: "claimed", claimed_by: "cw5" }), leaseToken: expect.any(String), alreadyHeld: false }]);
    expect((await getQueueJob(ids[1]!)).lease_token).toBe(answer.jobs![0]!.leaseToken);
  });
});
