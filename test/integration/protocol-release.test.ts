// POST /api/fleet/release: terminal releases by the live holder, re-queues of
// expired leases (the sweeper's call), and every refusal reason.
import { describe, expect, it } from "vitest";
import { createJob, futureDate, getJob, pastDate, patchJob, post } from "./support/fleet-api";
import { expectRowChanged, expectStampedDuring, heldJob, release, timed, viewOf } from "./support/protocol";

describe("POST /api/fleet/release", () => {
  it.each(["done", "failed"] as const)(
    "%s by the holder on a live lease: finished_at stamped, consecutive_orphan_count reset, claimed_by kept, version + 1",
    async (target) => {
      const before = await heldJob("w1", {
        status: "running", version: 6, reclaim_count: 2, consecutive_orphan_count: 3, requeued_at: pastDate(120_000),
      });
      const { result: res, t0, t1 } = await timed(() => release(before.id, "w1", target));
      const after = await getJob(before.id);
      expect(res).toEqual({ status: 200, body: { released: true, job: viewOf(after) } });
      expectRowChanged(after, before, {
        status: target, version: 7, consecutive_orphan_count: 0, finished_at: after.finished_at,
      });
      expectStampedDuring(after.finished_at, t0, t1);
    },
  );

  it.each(["claimed", "running"])(
    "pending on an expired %s lease (the sweeper's re-queue): claimed_by cleared, counts + 1, requeued_at stamped, lease kept",
    async (status) => {
      const before = await heldJob("dead", {
        status, lease_expires_at: pastDate(), version: 3, reclaim_count: 1, consecutive_orphan_count: 1,
      });
      const { result: res, t0, t1 } = await timed(() => release(before.id, "dead", "pending"));
      const after = await getJob(before.id);
      expect(res).toEqual({ status: 200, body: { released: true, job: viewOf(after) } });
      expectRowChanged(after, before, {
        status: "pending", claimed_by: "", version: 4, reclaim_count: 2, consecutive_orphan_count: 2,
        requeued_at: after.requeued_at,
      });
      expect(after.lease_expires_at).toBe(before.lease_expires_at);
      expect(after.finished_at).toBe("");
      expectStampedDuring(after.requeued_at, t0, t1);
    },
  );

  it("pending on an empty lease counts as expired and re-queues", async () => {
    const before = await heldJob("w1", { lease_expires_at: "" });
    const res = await release(before.id, "w1", "pending");
    expect(res.body).toMatchObject({ released: true, job: { status: "pending", claimed_by: "", version: 2 } });
  });

  it.each([
    ["done with an expired lease", { lease_expires_at: pastDate() }, "w1", "done", "refused_not_holder"],
    ["failed with an expired lease", { status: "running", lease_expires_at: pastDate() }, "w1", "failed", "refused_not_holder"],
    ["done with an empty lease", { lease_expires_at: "" }, "w1", "done", "refused_not_holder"],
    ["pending while the lease is live", {}, "w1", "pending", "refused_lease_live"],
    ["pending on a live running lease", { status: "running" }, "w1", "pending", "refused_lease_live"],
    ["done of a done row by its holder", { status: "done" }, "w1", "done", "refused_terminal_same_holder"],
    ["failed of a done row by its holder", { status: "done", lease_expires_at: pastDate() }, "w1", "failed", "refused_terminal_same_holder"],
    ["pending of a failed row by its holder", { status: "failed" }, "w1", "pending", "refused_terminal_same_holder"],
    ["done by another worker on a live lease", {}, "w2", "done", "refused_not_holder"],
    ["pending by another worker on an expired lease", { lease_expires_at: pastDate() }, "w2", "pending", "refused_not_holder"],
    ["done of a done row by another worker", { status: "done" }, "w2", "done", "refused_not_holder"],
    ["done of a pending row", { status: "pending", claimed_by: "" }, "w1", "done", "refused_not_holder"],
    ["pending of a re-queued row by its old holder", { status: "pending", claimed_by: "", lease_expires_at: pastDate() }, "w1", "pending", "refused_not_holder"],
  ] as const)("refuses %s (%s) and changes nothing", async (_what, fields, worker, target, reason) => {
    const before = await heldJob("w1", { lease_expires_at: futureDate(), ...fields });
    const res = await release(before.id, worker, target);
    expect(res).toEqual({ status: 200, body: { released: false, reason } });
    expect(await getJob(before.id)).toEqual(before);
  });

  it("refuses an unknown job as refused_not_holder", async () => {
    expect(await release("doesnotexist123", "w1", "done")).toEqual({
      status: 200, body: { released: false, reason: "refused_not_holder" },
    });
  });

  it("bumps version by one on every successful transition of a job's life", async () => {
    const job = await createJob();
    const steps: [string, object][] = [
      ["/api/fleet/claim", { workerId: "w1", leaseSeconds: 60 }],
      ["/api/fleet/renew", { workerId: "w1", leaseSeconds: 60 }],
    ];
    let expected = 0;
    for (const [path, body] of steps) {
      const res = await post(path, { jobId: job.id, ...body });
      expected += 1;
      expect(res.body.job.version).toBe(expected);
    }
    // The holder dies: its lease lapses, the sweeper re-queues, another worker finishes.
    await patchJob(job.id, { lease_expires_at: pastDate() });
    expect((await release(job.id, "w1", "pending")).body.job.version).toBe(3);
    expect((await post("/api/fleet/claim", { jobId: job.id, workerId: "w2" })).body.job.version).toBe(4);
    expect((await release(job.id, "w2", "failed")).body.job.version).toBe(5);
    expect(await getJob(job.id)).toMatchObject({
      status: "failed", claimed_by: "w2", version: 5, reclaim_count: 1, consecutive_orphan_count: 0,
    });
  });
});
