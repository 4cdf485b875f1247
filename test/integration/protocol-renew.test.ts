// POST /api/fleet/renew: only the holder, only on a live lease; promotes claimed to running.
import { describe, expect, it } from "vitest";
import { createJob, futureDate, getJob, pastDate } from "./support/fleet-api";
import { claim, expectRowChanged, expectStampedDuring, heldJob, renew, timed, viewOf } from "./support/protocol";

describe("POST /api/fleet/renew", () => {
  it("lets the holder renew: claimed becomes running, a new lease, version + 1, nothing else changes", async () => {
    const job = await createJob({ reclaim_count: 1 });
    expect((await claim(job.id, "w1", { leaseSeconds: 5 })).body).toMatchObject({ claimed: true });
    const before = await getJob(job.id);

    const { result: res, t0, t1 } = await timed(() => renew(job.id, "w1", { leaseSeconds: 120 }));
    const after = await getJob(job.id);
    expect(res).toEqual({ status: 200, body: { renewed: true, job: viewOf(after) } });
    expectRowChanged(after, before, { status: "running", version: before.version + 1, lease_expires_at: after.lease_expires_at });
    expectStampedDuring(after.lease_expires_at, t0, t1, 120_000);

    // A running row renews again and stays running.
    const again = await renew(job.id, "w1", { leaseSeconds: 60 });
    const last = await getJob(job.id);
    expect(again).toEqual({ status: 200, body: { renewed: true, job: viewOf(last) } });
    expect(last).toMatchObject({ status: "running", version: before.version + 2 });
  });

  it.each([
    ["another worker on a live lease", { claimed_by: "w1" }, "w2"],
    ["the holder after its lease expired", { claimed_by: "w1", lease_expires_at: pastDate() }, "w1"],
    ["the holder of a running row after expiry", { status: "running", claimed_by: "w1", lease_expires_at: pastDate(1) }, "w1"],
    ["the holder when the lease is empty", { claimed_by: "w1", lease_expires_at: "" }, "w1"],
    ["a pending row, even naming the caller with a live lease", { status: "pending", claimed_by: "w1" }, "w1"],
    ["a re-queued pending row", { status: "pending", claimed_by: "", lease_expires_at: pastDate() }, "w1"],
    ["a done row of the caller", { status: "done", claimed_by: "w1" }, "w1"],
    ["a failed row of the caller", { status: "failed", claimed_by: "w1" }, "w1"],
  ] as const)("refuses %s and changes nothing", async (_what, fields, worker) => {
    const before = await heldJob("w1", { lease_expires_at: futureDate(), ...fields });
    const res = await renew(before.id, worker, { leaseSeconds: 60 });
    expect(res).toEqual({ status: 200, body: { renewed: false } });
    expect(await getJob(before.id)).toEqual(before);
  });

  it("answers {renewed:false} for an unknown job", async () => {
    expect(await renew("doesnotexist123", "w1")).toEqual({ status: 200, body: { renewed: false } });
  });
});
