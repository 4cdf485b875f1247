// The server-side sweeper: POST /api/fleet/sweep on the shared server (scoped to
// this file's prefix, so other tests' rows are never touched), and the cronAdd
// schedule on a PocketBase of its own.
import { afterAll, describe, expect, it } from "vitest";
import { createJob, futureDate, get, getJob, pastDate, post, randomKey } from "./support/fleet-api";
import { startOwnServer, type OwnServer } from "./support/own-server";

function sweep(probeKeyPrefix: string) {
  return post("/api/fleet/sweep", { probeKeyPrefix });
}

describe("POST /api/fleet/sweep", () => {
  it("re-queues expired leases with the bookkeeping of a pending release, and leaves the rest alone", async () => {
    const prefix = randomKey("sw") + "/";
    const lapsed = await createJob({
      probe_key: prefix + "lapsed", status: "running", claimed_by: "dead", lease_expires_at: pastDate(),
      version: 3, reclaim_count: 2, consecutive_orphan_count: 1, lease_token: "tok",
    });
    const live = await createJob({ probe_key: prefix + "live", status: "claimed", claimed_by: "alive", lease_expires_at: futureDate() });
    const pending = await createJob({ probe_key: prefix + "pending" });
    const done = await createJob({ probe_key: prefix + "done", status: "done", claimed_by: "x", lease_expires_at: pastDate() });
    const untouched = await Promise.all([live, pending, done].map((j) => getJob(j.id)));

    expect(await sweep(prefix)).toEqual({
      status: 200,
      body: { requeued: 1, gaveUp: 0, timedOut: 0, jobs: [{ id: lapsed.id, outcome: "requeued", claimedBy: "dead", consecutiveOrphanCount: 2 }] },
    });
    const row = await getJob(lapsed.id);
    expect(row).toMatchObject({
      status: "pending", claimed_by: "", lease_token: "", version: 4, reclaim_count: 3,
      consecutive_orphan_count: 2, lease_expires_at: lapsed.lease_expires_at, finished_at: "",
    });
    expect(row.requeued_at).not.toBe("");
    expect(await Promise.all([live, pending, done].map((j) => getJob(j.id)))).toEqual(untouched);
    expect(await sweep(prefix)).toEqual({ status: 200, body: { requeued: 0, gaveUp: 0, timedOut: 0, jobs: [] } });
  });

  it("gives a job up as failed once its consecutive orphans reach the cap", async () => {
    const cap = (await get("/api/fleet/stats")).body.orphanCap as number;
    const prefix = randomKey("cap") + "/";
    const below = await createJob({ probe_key: prefix + "below", status: "running", claimed_by: "d", lease_expires_at: pastDate(), consecutive_orphan_count: cap - 1 });
    const atCap = await createJob({ probe_key: prefix + "at", status: "claimed", claimed_by: "d", lease_expires_at: pastDate(), consecutive_orphan_count: cap, version: 9 });
    expect(await sweep(prefix)).toMatchObject({
      status: 200,
      body: { requeued: 1, gaveUp: 1, timedOut: 0, jobs: expect.arrayContaining([expect.objectContaining({ id: atCap.id, outcome: "gave_up" })]) },
    });
    expect(await getJob(below.id)).toMatchObject({ status: "pending", consecutive_orphan_count: cap });
    const failed = await getJob(atCap.id);
    expect(failed).toMatchObject({ status: "failed", claimed_by: "pb-fleet-sweeper", lease_token: "", version: 10, consecutive_orphan_count: cap });
    expect(failed.finished_at).not.toBe("");
    expect(failed.result).toMatchObject({ reason: "orphan_cap", lastHolder: "d" });
    // The last holder's late release is not its own committed release: it must not go on to write a result.
    const late = await post("/api/fleet/release", { jobId: atCap.id, workerId: "d", status: "done" });
    expect(late).toEqual({ status: 200, body: { released: false, reason: "refused_not_holder" } });
  });

  it("rejects a non-string prefix with a 400 and needs an admin", async () => {
    expect(await post("/api/fleet/sweep", { probeKeyPrefix: ["a"] })).toEqual({
      status: 400, body: { error: "probeKeyPrefix must be a string" },
    });
    expect((await post("/api/fleet/sweep", {}, { token: null })).status).toBe(401);
  });
});

describe("cron sweeper (PB_FLEET_SWEEP_CRON)", () => {
  let server: OwnServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it("re-queues an expired lease on its own within a minute", async () => {
    server = await startOwnServer({ env: { PB_FLEET_SWEEP_CRON: "* * * * *" } });
    const opts = { baseUrl: server.url, token: server.token };
    const job = await createJob({ status: "running", claimed_by: "dead", lease_expires_at: pastDate() }, opts);
    const deadline = Date.now() + 75_000; // the schedule fires on the next minute boundary
    let row = await getJob(job.id, opts);
    while (row.status !== "pending" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000));
      row = await getJob(job.id, opts);
    }
    expect(row).toMatchObject({ status: "pending", claimed_by: "", reclaim_count: 1, consecutive_orphan_count: 1 });
  }, 120_000);
});
