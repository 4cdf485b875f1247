// A job whose worker always dies (claims it, then neither renews nor releases)
// is given up as failed after at most cap + 1 deliveries, whichever path
// reclaims it: claim-next's steals, the sweeper's re-queues, or both in turn.
// Claim by id keeps the reference's bookkeeping (a steal is no orphaning).
import { describe, expect, it } from "vitest";
import { createJob, get, getJob, post, randomKey } from "./support/fleet-api";

const LEASE_SECONDS = 1;
const waitOutLease = () => new Promise((r) => setTimeout(r, LEASE_SECONDS * 1000 + 150));

type Reclaim = "claim-next steal" | "sweeper re-queue";

/** Delivers the job to dying workers until it is terminal; returns how many deliveries it took. */
async function deliverUntilGivenUp(prefix: string, jobId: string, reclaimOn: (delivery: number) => Reclaim): Promise<number> {
  let deliveries = 0;
  for (let attempt = 0; attempt < 20; attempt++) {
    const next = await post("/api/fleet/claim-next", { workerId: `dying-${attempt}`, probeKeyPrefix: prefix, leaseSeconds: LEASE_SECONDS });
    expect(next.status).toBe(200);
    if (next.body.jobs.length === 0) break;
    expect(next.body.jobs[0].job.id).toBe(jobId);
    deliveries++;
    await waitOutLease(); // the worker died: its lease lapses
    if (reclaimOn(deliveries) === "sweeper re-queue") {
      expect((await post("/api/fleet/sweep", { probeKeyPrefix: prefix })).status).toBe(200);
    }
  }
  return deliveries;
}

describe("a poison job is given up instead of killing worker after worker", () => {
  it.each<[string, (delivery: number) => Reclaim]>([
    ["claim-next steals", () => "claim-next steal"],
    ["sweeper re-queues", () => "sweeper re-queue"],
    ["both, in turn", (delivery) => (delivery % 2 === 0 ? "sweeper re-queue" : "claim-next steal")],
  ])("reclaimed by %s: failed after at most cap + 1 deliveries, with the sweeper's give-up", async (_name, reclaimOn) => {
    const cap = (await get("/api/fleet/stats")).body.orphanCap as number;
    const prefix = randomKey("poison") + "/";
    const job = await createJob({ probe_key: prefix + "job" });
    const deliveries = await deliverUntilGivenUp(prefix, job.id, reclaimOn);
    if ((await getJob(job.id)).status !== "failed") {
      // The last dead lease may still be waiting for its reclaim: one more claim-next or sweep gives it up.
      await post("/api/fleet/claim-next", { workerId: "last", probeKeyPrefix: prefix });
    }
    const row = await getJob(job.id);
    expect(deliveries).toBe(cap + 1);
    expect(row).toMatchObject({ status: "failed", claimed_by: "pb-fleet-sweeper", lease_token: "", consecutive_orphan_count: cap });
    expect(row.result).toMatchObject({ reason: "orphan_cap" });
    // Given up for good: nobody gets it again.
    expect((await post("/api/fleet/claim-next", { workerId: "after", probeKeyPrefix: prefix })).body).toEqual({ jobs: [] });
  }, 60_000);

  it("claim by id keeps the reference's bookkeeping: a steal is not counted as an orphaning", async () => {
    const job = await createJob({ status: "running", claimed_by: "dead", lease_expires_at: "2020-01-01 00:00:00.000Z", consecutive_orphan_count: 2 });
    const stolen = await post("/api/fleet/claim", { jobId: job.id, workerId: "thief" });
    expect(stolen.body).toMatchObject({ claimed: true });
    expect(await getJob(job.id)).toMatchObject({ reclaim_count: 1, consecutive_orphan_count: 2 });
  });
});
