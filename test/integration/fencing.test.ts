// leaseToken fencing: a stale copy of a worker (same worker id, older claim)
// can neither renew nor release a job that has been claimed again since.
import { describe, expect, it } from "vitest";
import { createJob, getJob, pastDate, patchJob, post } from "./support/fleet-api";

async function claim(jobId: string, workerId: string) {
  const res = await post("/api/fleet/claim", { jobId, workerId, leaseSeconds: 60 });
  expect(res.status).toBe(200);
  return res.body;
}

describe("leaseToken fencing", () => {
  it("a winning claim returns a fresh token and stores it; alreadyHeld repeats it", async () => {
    const job = await createJob();
    const first = await claim(job.id, "w1");
    expect(first.claimed).toBe(true);
    expect(first.leaseToken).toMatch(/^[A-Za-z0-9]{24}$/);
    expect((await getJob(job.id)).lease_token).toBe(first.leaseToken);

    const retry = await claim(job.id, "w1");
    expect(retry).toMatchObject({ claimed: true, alreadyHeld: true, leaseToken: first.leaseToken });
  });

  it("renew and release with the current token succeed; without a token they behave as the reference", async () => {
    const job = await createJob();
    const { leaseToken } = await claim(job.id, "w1");
    const renewed = await post("/api/fleet/renew", { jobId: job.id, workerId: "w1", leaseToken });
    expect(renewed.body).toMatchObject({ renewed: true, job: { status: "running", version: 2 } });
    const unfenced = await post("/api/fleet/renew", { jobId: job.id, workerId: "w1" });
    expect(unfenced.body).toMatchObject({ renewed: true, job: { version: 3 } });
    const released = await post("/api/fleet/release", { jobId: job.id, workerId: "w1", status: "done", leaseToken });
    expect(released.body).toMatchObject({ released: true, job: { status: "done", version: 4 } });
  });

  it("a stale copy under the same worker id is refused after the job was claimed again", async () => {
    const job = await createJob();
    const stale = await claim(job.id, "w1");
    await patchJob(job.id, { lease_expires_at: pastDate() }); // w1's first copy stalls past its lease
    const fresh = await claim(job.id, "w1"); // w1 restarted: a steal from itself, new token
    expect(fresh).toMatchObject({ claimed: true });
    expect(fresh.alreadyHeld).toBeUndefined();
    expect(fresh.leaseToken).not.toBe(stale.leaseToken);
    const before = await getJob(job.id);

    const renew = await post("/api/fleet/renew", { jobId: job.id, workerId: "w1", leaseToken: stale.leaseToken });
    expect(renew).toEqual({ status: 200, body: { renewed: false } });
    const release = await post("/api/fleet/release", {
      jobId: job.id, workerId: "w1", status: "done", leaseToken: stale.leaseToken,
    });
    expect(release).toEqual({ status: 200, body: { released: false, reason: "refused_stale_token" } });
    expect(await getJob(job.id)).toEqual(before);

    const done = await post("/api/fleet/release", {
      jobId: job.id, workerId: "w1", status: "done", leaseToken: fresh.leaseToken,
    });
    expect(done.body).toMatchObject({ released: true });
    // After the terminal release: the owner's retry is "its own commit", the stale copy's is not.
    const ownRetry = await post("/api/fleet/release", {
      jobId: job.id, workerId: "w1", status: "done", leaseToken: fresh.leaseToken,
    });
    expect(ownRetry.body).toEqual({ released: false, reason: "refused_terminal_same_holder" });
    const staleRetry = await post("/api/fleet/release", {
      jobId: job.id, workerId: "w1", status: "done", leaseToken: stale.leaseToken,
    });
    expect(staleRetry.body).toEqual({ released: false, reason: "refused_stale_token" });
  });

  it("a re-queue clears the token, so the old holder's token cannot act on the next claim", async () => {
    const job = await createJob();
    const old = await claim(job.id, "w1");
    await patchJob(job.id, { lease_expires_at: pastDate() });
    const requeue = await post("/api/fleet/release", { jobId: job.id, workerId: "w1", status: "pending" });
    expect(requeue.body).toMatchObject({ released: true, job: { status: "pending", claimed_by: "" } });
    expect((await getJob(job.id)).lease_token).toBe("");
    await claim(job.id, "w1");
    const renew = await post("/api/fleet/renew", { jobId: job.id, workerId: "w1", leaseToken: old.leaseToken });
    expect(renew.body).toEqual({ renewed: false });
  });

  it.each([
    ["an empty string", ""],
    ["a number", 7],
    ["null", null],
    ["an object", { t: 1 }],
  ])("a leaseToken that is %s is a 400 on renew and release, and changes nothing", async (_what, leaseToken) => {
    const job = await createJob();
    await claim(job.id, "w1");
    const before = await getJob(job.id);
    for (const [path, extra] of [["/api/fleet/renew", {}], ["/api/fleet/release", { status: "done" }]] as const) {
      const res = await post(path, { jobId: job.id, workerId: "w1", leaseToken, ...extra });
      expect(res).toEqual({ status: 400, body: { error: "leaseToken must be a non-empty string when given" } });
    }
    expect(await getJob(job.id)).toEqual(before);
  });

  it("claim ignores a leaseToken field, as the reference does", async () => {
    const job = await createJob();
    const res = await post("/api/fleet/claim", { jobId: job.id, workerId: "w1", leaseToken: 7 });
    expect(res.status).toBe(200);
    expect(res.body.claimed).toBe(true);
  });
});
