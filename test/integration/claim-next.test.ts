// POST /api/fleet/claim-next: the oldest claimable jobs, atomically, scoped by prefix.
import { describe, expect, it } from "vitest";
import { createJob, enqueueOk, futureDate, getJob, pastDate, post, randomKey } from "./support/fleet-api";

function claimNext(body: unknown) {
  return post("/api/fleet/claim-next", body);
}

/** Jobs created one after another, so `created` orders them. */
async function createJobs(prefix: string, n: number, fields: Record<string, unknown> = {}) {
  const jobs = [];
  for (let i = 0; i < n; i++) jobs.push(await createJob({ probe_key: `${prefix}${i}`, ...fields }));
  return jobs;
}

describe("claim-next", () => {
  it.each([
    [{}, "workerId is required"],
    [{ workerId: "" }, "workerId is required"],
    [{ workerId: 5 }, "workerId must be a string"],
    [{ workerId: "w", limit: 0 }, "limit must be an integer from 1 to 100"],
    [{ workerId: "w", limit: 101 }, "limit must be an integer from 1 to 100"],
    [{ workerId: "w", limit: 1.5 }, "limit must be an integer from 1 to 100"],
    [{ workerId: "w", limit: "2" }, "limit must be an integer from 1 to 100"],
    [{ workerId: "w", probeKeyPrefix: 3 }, "probeKeyPrefix must be a string"],
  ])("%j is a 400: %s", async (body, error) => {
    expect(await claimNext(body)).toEqual({ status: 400, body: { error } });
  });

  it("claims the oldest claimable jobs first, up to limit, with the claim bookkeeping", async () => {
    const prefix = randomKey("cn") + "/";
    const jobs = await createJobs(prefix, 4);
    const res = await claimNext({ workerId: "w1", limit: 3, probeKeyPrefix: prefix, leaseSeconds: 120 });
    expect(res.status).toBe(200);
    expect(res.body.jobs.map((j: { job: { id: string } }) => j.job.id)).toEqual(jobs.slice(0, 3).map((j) => j.id));
    for (const { job, leaseToken } of res.body.jobs) {
      expect(job).toMatchObject({ status: "claimed", claimed_by: "w1", version: 1 });
      const row = await getJob(job.id);
      expect(row).toMatchObject({ status: "claimed", claimed_by: "w1", version: 1, lease_token: leaseToken, reclaim_count: 0 });
      expect(row.claimed_at).not.toBe("");
      expect(Date.parse(row.lease_expires_at) - Date.now()).toBeGreaterThan(100_000);
    }
    expect((await getJob(jobs[3]!.id)).status).toBe("pending");
  });

  it("answers every job with its members in one order (docs/protocol-decisions.md: a client builds one shape for them all)", async () => {
    const prefix = randomKey("cno") + "/";
    await createJobs(prefix, 20);
    const res = await claimNext({ workerId: "w", limit: 20, probeKeyPrefix: prefix });
    expect(res.body.jobs).toHaveLength(20);
    const orders = new Set(res.body.jobs.map((held: { job: object }) => Object.keys(held.job).join(",")));
    expect([...orders]).toHaveLength(1);
    expect(new Set(res.body.jobs.map((held: object) => Object.keys(held).join(",")))).toHaveLength(1);
    // Without a prefix (the set-based claim, as the Worker claims): a queue of this test's own.
    const queue = randomKey("cnoq");
    await enqueueOk(Array.from({ length: 20 }, (_, i) => ({ probeKey: `${queue}/${i}`, queue })));
    const byQueue = await claimNext({ workerId: "w", limit: 20, queue });
    expect(byQueue.body.jobs).toHaveLength(20);
    const queueOrders = new Set(byQueue.body.jobs.map((held: { job: object }) => Object.keys(held.job).join(",")));
    expect([...queueOrders]).toHaveLength(1);
  });

  it("still applies PocketBase's ?fields= picker to an answer", async () => {
    const prefix = randomKey("cnf") + "/";
    await createJobs(prefix, 2);
    const res = await post("/api/fleet/claim-next?fields=jobs.leaseToken", { workerId: "w", limit: 2, probeKeyPrefix: prefix });
    expect(res.status).toBe(200);
    expect(res.body.jobs).toHaveLength(2);
    for (const held of res.body.jobs) expect(Object.keys(held)).toEqual(["leaseToken"]);
  });

  it("default limit is 1, and an empty queue answers an empty list", async () => {
    const prefix = randomKey("cn1") + "/";
    await createJobs(prefix, 2);
    expect((await claimNext({ workerId: "w", probeKeyPrefix: prefix })).body.jobs).toHaveLength(1);
    expect((await claimNext({ workerId: "w", probeKeyPrefix: prefix })).body.jobs).toHaveLength(1);
    expect(await claimNext({ workerId: "w", probeKeyPrefix: prefix })).toEqual({ status: 200, body: { jobs: [] } });
  });

  it("steals expired leases (reclaim_count + 1, and an orphaning: consecutive_orphan_count + 1) and skips live, terminal and other-prefix rows", async () => {
    const prefix = randomKey("cns") + "/";
    const live = await createJob({ probe_key: prefix + "live", status: "running", claimed_by: "a", lease_expires_at: futureDate() });
    const expired = await createJob({ probe_key: prefix + "expired", status: "running", claimed_by: "a", lease_expires_at: pastDate(), version: 4 });
    const done = await createJob({ probe_key: prefix + "done", status: "done", claimed_by: "a" });
    await createJob({ probe_key: randomKey("other") });
    const res = await claimNext({ workerId: "b", limit: 10, probeKeyPrefix: prefix });
    expect(res.body.jobs.map((j: { job: { id: string } }) => j.job.id)).toEqual([expired.id]);
    expect(await getJob(expired.id)).toMatchObject({ claimed_by: "b", status: "claimed", version: 5, reclaim_count: 1, consecutive_orphan_count: 1 });
    expect(await getJob(live.id)).toMatchObject({ claimed_by: "a", status: "running" });
    expect((await getJob(done.id)).status).toBe("done");
  });

  it("matches the prefix literally: % and _ are plain characters, and case counts", async () => {
    const base = randomKey("cnl");
    const literal = await createJob({ probe_key: `${base}%_X` });
    const wildcardLookalike = await createJob({ probe_key: `${base}ab-X` });
    const caseLookalike = await createJob({ probe_key: `${base}%_x`.toUpperCase() });
    const res = await claimNext({ workerId: "w", limit: 10, probeKeyPrefix: `${base}%_X` });
    expect(res.body.jobs.map((j: { job: { id: string } }) => j.job.id)).toEqual([literal.id]);
    expect((await getJob(wildcardLookalike.id)).status).toBe("pending");
    expect((await getJob(caseLookalike.id)).status).toBe("pending");
  });
});
