// POST /api/fleet/claim: who wins, what the answer says, and what is stored.
import { describe, expect, it } from "vitest";
import { createJob, futureDate, getJob, pastDate, randomKey } from "./support/fleet-api";
import {
  claim,
  expectRowChanged,
  expectStampedDuring,
  heldJob,
  timed,
  viewOf,
  withoutLeaseToken,
} from "./support/protocol";

describe("POST /api/fleet/claim", () => {
  it("wins a pending job: claimed by the caller, version + 1, attempts + 1, claimed_at stamped, reclaim_count unchanged", async () => {
    const before = await createJob({ reclaim_count: 2, consecutive_orphan_count: 1, version: 4 });
    const { result: res, t0, t1 } = await timed(() => claim(before.id, "w1", { leaseSeconds: 60 }));
    const after = await getJob(before.id);

    expect(res.status).toBe(200);
    expect(withoutLeaseToken(res.body)).toEqual({ claimed: true, job: viewOf(after) });
    expectRowChanged(after, before, {
      status: "claimed",
      claimed_by: "w1",
      version: 5,
      attempts: 1, // docs/queue.md: every winning claim is an attempt
      lease_expires_at: after.lease_expires_at,
      claimed_at: after.claimed_at,
    });
    expectStampedDuring(after.claimed_at, t0, t1);
    expectStampedDuring(after.lease_expires_at, t0, t1, 60_000);
  });

  it.each(["claimed", "running"])(
    "steals an expired %s lease: reclaim_count + 1, claimed_at re-stamped, consecutive_orphan_count not bumped",
    async (status) => {
      const before = await createJob({
        status, claimed_by: "dead", lease_expires_at: pastDate(), claimed_at: pastDate(3_600_000),
        version: 7, reclaim_count: 1, consecutive_orphan_count: 2,
      });
      const { result: res, t0, t1 } = await timed(() => claim(before.id, "w2"));
      const after = await getJob(before.id);

      expect(res.status).toBe(200);
      expect(withoutLeaseToken(res.body)).toEqual({ claimed: true, job: viewOf(after) });
      expectRowChanged(after, before, {
        status: "claimed",
        claimed_by: "w2",
        version: 8,
        attempts: 1,
        reclaim_count: 2,
        lease_expires_at: after.lease_expires_at,
        claimed_at: after.claimed_at,
      });
      expectStampedDuring(after.claimed_at, t0, t1);
      expectStampedDuring(after.lease_expires_at, t0, t1, 30_000); // no leaseSeconds: 30 s
    },
  );

  it("answers alreadyHeld to the holder on a live lease, without extending the lease or writing anything", async () => {
    const job = await createJob();
    const first = await claim(job.id, "w1", { leaseSeconds: 60 });
    expect(first.body).toMatchObject({ claimed: true });
    const before = await getJob(job.id);

    const retry = await claim(job.id, "w1", { leaseSeconds: 3600 });
    expect(retry.status).toBe(200);
    expect(withoutLeaseToken(retry.body)).toEqual({ claimed: true, alreadyHeld: true, job: viewOf(before) });
    expect(await getJob(job.id)).toEqual(before);
  });

  it("answers alreadyHeld on a running row too", async () => {
    const before = await heldJob("w1", { status: "running", version: 3 });
    const res = await claim(before.id, "w1");
    expect(withoutLeaseToken(res.body)).toEqual({ claimed: true, alreadyHeld: true, job: viewOf(before) });
    expect(await getJob(before.id)).toEqual(before);
  });

  it.each(["claimed", "running"])("refuses another worker while a %s lease is live", async (status) => {
    const before = await heldJob("w1", { status });
    const res = await claim(before.id, "w2");
    expect(res).toEqual({ status: 200, body: { claimed: false } });
    expect(await getJob(before.id)).toEqual(before);
  });

  it.each([
    ["done", "an expired lease", pastDate],
    ["failed", "an expired lease", pastDate],
    ["done", "a live lease", futureDate],
    ["failed", "a live lease", futureDate],
    ["done", "no lease", () => ""],
  ] as const)("never claims a %s row with %s, not even for its last holder", async (status, _what, lease) => {
    const before = await createJob({ status, claimed_by: "w1", lease_expires_at: lease(), version: 2 });
    for (const worker of ["w1", "w2"]) {
      const res = await claim(before.id, worker);
      expect(res).toEqual({ status: 200, body: { claimed: false } });
    }
    expect(await getJob(before.id)).toEqual(before);
  });

  it("treats an empty lease on a claimed row as expired: another worker steals it", async () => {
    const before = await createJob({ status: "claimed", claimed_by: "w1", lease_expires_at: "", version: 1 });
    const res = await claim(before.id, "w2", { leaseSeconds: 60 });
    const after = await getJob(before.id);
    expect(withoutLeaseToken(res.body)).toEqual({ claimed: true, job: viewOf(after) });
    expect(after).toMatchObject({ status: "claimed", claimed_by: "w2", version: 2, reclaim_count: 1 });
  });

  it("answers {claimed:false} for an unknown job", async () => {
    const res = await claim("doesnotexist123", "w1");
    expect(res).toEqual({ status: 200, body: { claimed: false } });
    const alsoUnknown = await claim(randomKey("no such id"), "w1");
    expect(alsoUnknown).toEqual({ status: 200, body: { claimed: false } });
  });
});
