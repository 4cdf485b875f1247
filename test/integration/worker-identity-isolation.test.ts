// A worker identity works on its own jobs only (issue 19, src/lib/identity.ts):
// it cannot act as another identity's holder, even with that one's lease
// token, and an identity restricted to some queues never gets a job of
// another queue, however many of its Workers race for them.
import { beforeAll, describe, expect, it } from "vitest";
import { randomKey, enqueueOk, getQueueJob, post, listJobsByPrefix } from "./support/fleet-api";
import { createWorkerIdentity, type WorkerIdentity } from "./support/worker-identities";

let a: WorkerIdentity;
let b: WorkerIdentity;

beforeAll(async () => {
  [a, b] = await Promise.all([createWorkerIdentity(), createWorkerIdentity()]);
});

/** A job B holds through claim-next under its own identity, with B's lease token. */
async function heldByB(): Promise<{ jobId: string; leaseToken: string; workerId: string }> {
  const prefix = randomKey("isolation") + "/";
  await enqueueOk([{ probeKey: `${prefix}job` }]);
  const workerId = `${b.id}/host-1`;
  const res = await post("/api/fleet/claim-next", { workerId, probeKeyPrefix: prefix }, { token: b.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const won = res.body.jobs[0];
  return { jobId: won.job.id, leaseToken: won.leaseToken, workerId };
}

describe("worker A against a job worker B holds", () => {
  const attempts = (job: { jobId: string; leaseToken: string; workerId: string }, token: string | undefined) => {
    const fenced = token === undefined ? {} : { leaseToken: token };
    return [
      ["/api/fleet/renew", { jobId: job.jobId, workerId: job.workerId, ...fenced }],
      ["/api/fleet/release", { jobId: job.jobId, workerId: job.workerId, status: "done", ...fenced }],
      ["/api/fleet/heartbeat", { workerId: job.workerId, leases: [{ jobId: job.jobId, ...fenced }] }],
      ["/api/fleet/complete", { workerId: job.workerId, releases: [{ jobId: job.jobId, status: "done", ...fenced }] }],
      ["/api/fleet/claim", { jobId: job.jobId, workerId: job.workerId }],
    ] as const;
  };

  it.each([["without B's lease token", false], ["with B's lease token", true]])("is refused %s (403, nothing written)", async (_what, withToken) => {
    const job = await heldByB();
    const before = await getQueueJob(job.jobId);
    for (const [path, body] of attempts(job, withToken ? job.leaseToken : undefined)) {
      const res = await post(path, body, { token: a.token });
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(403);
      expect(res.body.error).toContain(a.id);
    }
    // And under its own name it is not the holder: refused as any other worker is.
    const own = await post("/api/fleet/release", { jobId: job.jobId, workerId: a.id, status: "done", leaseToken: job.leaseToken }, { token: a.token });
    expect(own.body).toEqual({ released: false, reason: "refused_not_holder" });
    expect(await getQueueJob(job.jobId)).toEqual(before);
    // B itself still can.
    const done = await post("/api/fleet/complete", { workerId: job.workerId, releases: [{ jobId: job.jobId, status: "done", leaseToken: job.leaseToken }] }, { token: b.token });
    expect(done.body.results[0]).toMatchObject({ jobId: job.jobId, released: true });
  });

  it("an id that only starts with A's id (no slash) is not A's", async () => {
    const res = await post("/api/fleet/claim-next", { workerId: `${a.id}x`, probeKeyPrefix: randomKey("nothing") + "/" }, { token: a.token });
    expect(res.status).toBe(403);
  });
});

describe("an identity restricted to queue x", () => {
  it("never receives a job of queue y from claim-next under 20 concurrent callers, and drains x", async () => {
    const x = await createWorkerIdentity({ queues: ["x"] });
    const prefix = randomKey("queues") + "/";
    const items = [];
    // y's jobs sort first (higher priority): a filter applied after the claim would hand them out.
    for (let i = 0; i < 60; i++) items.push({ probeKey: `${prefix}y-${i}`, queue: "y", priority: 5 });
    for (let i = 0; i < 60; i++) items.push({ probeKey: `${prefix}x-${i}`, queue: "x" });
    await enqueueOk(items);
    const received: { queue: string; probe_key: string }[] = [];
    await Promise.all(Array.from({ length: 20 }, async (_, caller) => {
      for (let round = 0; round < 6; round++) {
        const res = await post("/api/fleet/claim-next", { workerId: `${x.id}/caller-${caller}`, probeKeyPrefix: prefix, limit: 3 }, { token: x.token });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        for (const won of res.body.jobs) received.push(won.job);
      }
    }));
    expect(received.filter((job) => job.queue !== "x")).toEqual([]);
    expect(new Set(received.map((job) => job.probe_key)).size).toBe(60);
    const rows = await listJobsByPrefix(prefix);
    expect(rows.filter((row) => row.probe_key.includes("/y-") && row.status !== "pending")).toEqual([]);
    // Asking for y outright is a 403; by id, a y job is refused with its reason.
    const askY = await post("/api/fleet/claim-next", { workerId: x.id, queue: "y", probeKeyPrefix: prefix }, { token: x.token });
    expect(askY.status).toBe(403);
    const yJob = rows.find((row) => row.probe_key.includes("/y-"))!;
    const byId = await post("/api/fleet/claim", { jobId: yJob.id, workerId: x.id }, { token: x.token });
    expect(byId.body).toEqual({ claimed: false, reason: "queue_not_allowed" });
    expect(await getQueueJob(yJob.id)).toEqual(yJob);
    // An admin (or an unrestricted identity) still gets y.
    const admin = await post("/api/fleet/claim-next", { workerId: "w-admin", queue: "y", probeKeyPrefix: prefix, limit: 100 });
    expect(admin.body.jobs).toHaveLength(60);
  });
});

describe("an identity restricted to queue x, enqueueing", () => {
  it("cannot learn or take a live job of queue y through a uniqueKey, nor take a schedule's key; in x, dedupe works as for anyone", async () => {
    const x = await createWorkerIdentity({ queues: ["x"], canEnqueue: true });
    const key = randomKey("shared-key");
    const [yJob] = await enqueueOk([{ probeKey: randomKey("y-job"), queue: "y", uniqueKey: key }]);
    const prefix = randomKey("x-enqueue") + "/";
    const across = await post("/api/fleet/enqueue", { jobs: [{ probeKey: `${prefix}a`, queue: "x" }, { probeKey: `${prefix}b`, queue: "x", uniqueKey: key }] }, { token: x.token });
    expect(across.status, JSON.stringify(across.body)).toBe(403);
    expect(JSON.stringify(across.body)).not.toContain(yJob!.id);
    expect(await listJobsByPrefix(prefix)).toEqual([]);
    const schedule = await post("/api/fleet/enqueue", { jobs: [{ probeKey: `${prefix}s`, queue: "x", uniqueKey: "pb-fleet-schedule:nightly:2030-01-01T00:00Z" }] }, { token: x.token });
    expect(schedule.status).toBe(403);
    // Its own queue's keys dedupe as they do for an admin.
    const own = randomKey("own-key");
    const first = await post("/api/fleet/enqueue", { jobs: [{ probeKey: `${prefix}c`, queue: "x", uniqueKey: own }] }, { token: x.token });
    const again = await post("/api/fleet/enqueue", { jobs: [{ probeKey: `${prefix}d`, queue: "x", uniqueKey: own }] }, { token: x.token });
    expect(again.body.jobs[0]).toEqual({ id: first.body.jobs[0].id, probeKey: `${prefix}d`, created: false });
  });
});
