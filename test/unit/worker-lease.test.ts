// Worker lease upkeep: renews on schedule while the handler runs, and the moment
// the lease is lost (renew refused, or it runs out unrenewed) the handler is
// aborted and nothing is released or written. On a server with the heartbeat
// the renews are items of the worker's heartbeat (fake.renewsSent() lists them
// per job either way); worker-batch.test.ts has what is particular to it.
import { describe, expect, it, vi } from "vitest";
import { FleetNetworkError } from "../../src/client/errors";
import type { LeaseLostEvent } from "../../src/client/events";
import { COMPLETE_FLUSH_DELAY_MS, LeaseLostError, Worker, type WorkerJob } from "../../src/client/worker";
import { FakeFleet, pbDateIn, useFakeClock, wait } from "./support/fake-fleet";


useFakeClock();

describe("Worker lease upkeep", () => {
  it("renews every renewEvery x lease while the handler runs, with the claim's token, then releases and writes", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const start = Date.now();
    const worker = new Worker(fake, {
      workerId: "w1", leaseSeconds: 3, pollInterval: 10_000,
      handler: async (_job, signal) => {
        await wait(3_500, signal);
        return { ok: true };
      },
    }).start();

    await vi.advanceTimersByTimeAsync(3_600);
    await worker.stop();

    const renews = fake.renewsSent();
    expect(renews.map((c) => c.at - start)).toEqual([1_000, 2_000, 3_000]);
    const token = fake.row(id).lease_token;
    expect(token).not.toBe("");
    expect(renews.every((c) => c.leaseToken === token && c.leaseSeconds === 3)).toBe(true);
    // The release waits COMPLETE_FLUSH_DELAY_MS in the completion queue for others to share its call.
    expect(fake.releasesSent()).toMatchObject([{ jobId: id, status: "done", leaseToken: token, at: start + 3_500 + COMPLETE_FLUSH_DELAY_MS }]);
    expect(fake.row(id)).toMatchObject({ status: "done", claimed_by: "w1" });
    expect(fake.results.get(id)).toEqual({ ok: true });
  });

  it("a custom renewEvery moves the schedule", async () => {
    const fake = new FakeFleet();
    fake.add();
    const start = Date.now();
    const worker = new Worker(fake, {
      workerId: "w1", leaseSeconds: 10, renewEvery: 0.5, pollInterval: 60_000,
      handler: (_job, signal) => wait(16_000, signal),
    }).start();
    await vi.advanceTimersByTimeAsync(16_000);
    await worker.stop();
    expect(fake.renewsSent().map((c) => c.at - start)).toEqual([5_000, 10_000, 15_000]);
  });

  it("aborts the handler when a renew answers renewed:false, and neither releases nor writes", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    let seen: { aborted: boolean; reason: unknown } | null = null;
    const lost: LeaseLostEvent[] = [];
    const worker = new Worker(fake, {
      workerId: "w1", leaseSeconds: 3, pollInterval: 60_000,
      handler: async (_job, signal) => {
        try {
          await wait(10_000, signal);
        } finally {
          seen = { aborted: signal.aborted, reason: signal.reason };
        }
        return "never";
      },
    });
    worker.on("lease_lost", (e) => lost.push(e));
    worker.start();
    await vi.advanceTimersByTimeAsync(500);
    // Another holder took the job (as after a steal): the next renew is refused.
    Object.assign(fake.row(id), { claimed_by: "thief", lease_token: "theirs", lease_expires_at: pbDateIn(60_000) });
    await vi.advanceTimersByTimeAsync(600);

    expect(seen).toMatchObject({ aborted: true });
    expect(seen!.reason).toBeInstanceOf(LeaseLostError);
    expect(lost).toEqual([{ jobId: id, workerId: "w1", reason: "renew_refused" }]);
    await worker.stop();
    expect(fake.releasesSent()).toEqual([]);
    expect(fake.callsOf("writeResult")).toEqual([]);
    expect(fake.row(id).claimed_by).toBe("thief");
  });

  it("writes nothing even when the handler ignores the signal and returns after the lease was lost", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const worker = new Worker(fake, {
      workerId: "w1", leaseSeconds: 3, pollInterval: 60_000,
      handler: async () => {
        await wait(5_000);
        return "stale result";
      },
    }).start();
    await vi.advanceTimersByTimeAsync(100);
    Object.assign(fake.row(id), { claimed_by: "thief", lease_expires_at: pbDateIn(60_000) });
    await vi.advanceTimersByTimeAsync(6_000);
    await worker.stop();
    expect(fake.renewsSent()).toHaveLength(1);
    expect(fake.releasesSent()).toEqual([]);
    expect(fake.results.has(id)).toBe(false);
  });

  // (Was one test, with renew failing: on a server with the heartbeat it is the heartbeat that fails.)
  it.each([
    ["heartbeat", true],
    ["renew", false],
  ] as const)("declares the lease lost when it runs out while renews cannot reach the server (%s)", async (op, batchCalls) => {
    const fake = new FakeFleet();
    fake.batchCalls = batchCalls;
    const { id } = fake.add();
    vi.spyOn(fake, op).mockRejectedValue(new FleetNetworkError(op, "fetch failed (ECONNREFUSED)"));
    const start = Date.now();
    let abortedAt: number | null = null;
    const lost: LeaseLostEvent[] = [];
    const errors: string[] = [];
    const worker = new Worker(fake, {
      workerId: "w1", leaseSeconds: 3, pollInterval: 60_000,
      handler: async (_job, signal) => {
        await wait(60_000, signal).catch(() => {
          abortedAt = Date.now();
        });
      },
    });
    worker.on("lease_lost", (e) => lost.push(e));
    worker.on("error", (e) => errors.push(e.op));
    worker.start();
    await vi.advanceTimersByTimeAsync(100);
    fake.pauseClaims = true;
    await vi.advanceTimersByTimeAsync(3_000);
    await worker.stop();

    expect(abortedAt! - start).toBe(3_000);
    expect(lost).toEqual([{ jobId: id, workerId: "w1", reason: "lease_expired" }]);
    // Failed renews are retried sooner than the normal schedule (every half
    // interval here), until the lease ends.
    expect(vi.mocked(fake[op]).mock.calls).toHaveLength(4);
    expect(errors).toEqual([op, op, op, op]);
    expect(fake.releasesSent()).toEqual([]);
    expect(fake.callsOf("writeResult")).toEqual([]);
  });

  it("renews at once after an alreadyHeld claim, whose lease was not extended", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    await fake.claim(id, "w1", 3);
    const seen: WorkerJob[] = [];
    vi.spyOn(fake, "claimNext").mockImplementationOnce(async (o) => {
      const again = await fake.claim(id, o.workerId, o.leaseSeconds);
      return again.claimed ? [again] : [];
    }).mockResolvedValue([]);
    const start = Date.now();
    const worker = new Worker(fake, {
      workerId: "w1", leaseSeconds: 3, pollInterval: 60_000,
      handler: async (job, signal) => {
        seen.push(job);
        await wait(500, signal);
      },
    }).start();
    await vi.advanceTimersByTimeAsync(600);
    await worker.stop();
    expect(seen[0]).toMatchObject({ id, alreadyHeld: true, workerId: "w1" });
    expect(fake.renewsSent().map((c) => c.at - start)).toEqual([0]);
    expect(fake.row(id).status).toBe("done");
  });
});
