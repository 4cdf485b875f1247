// Worker life cycle: concurrency bound, polling backoff when idle or when the
// server is away, and the three stop modes (finish, release, abandon).
import { describe, expect, it, vi } from "vitest";
import { backoffDelay } from "../../src/client/backoff";
import { FleetNetworkError } from "../../src/client/errors";
import { Worker, WorkerStoppingError } from "../../src/client/worker";
import { FakeFleet, settle, useFakeClock, wait } from "./support/fake-fleet";


useFakeClock();

describe("backoffDelay", () => {
  it("doubles from the initial delay, is capped, and jitters between half and all of it", () => {
    const opts = { initialMs: 100, maxMs: 1_000 };
    expect([0, 1, 2, 3, 4, 10].map((n) => backoffDelay(n, { ...opts, random: () => 0.999999 }))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect([0, 1, 2, 3, 4, 10].map((n) => backoffDelay(n, { ...opts, random: () => 0 }))).toEqual([50, 100, 200, 400, 500, 500]);
  });
});

describe("Worker life cycle", () => {
  it("never runs more handlers than its concurrency and asks claimNext only for free slots", async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 5; i++) fake.add();
    let running = 0;
    let peak = 0;
    const limits: number[] = [];
    const claimNext = fake.claimNext.bind(fake);
    vi.spyOn(fake, "claimNext").mockImplementation((opts) => {
      limits.push(opts.limit ?? 1);
      return claimNext(opts);
    });
    const worker = new Worker(fake, {
      workerId: "w", concurrency: 2, leaseSeconds: 30, pollInterval: 50,
      handler: async (_job, signal) => {
        peak = Math.max(peak, ++running);
        await wait(100, signal);
        running--;
      },
    }).start();
    await vi.advanceTimersByTimeAsync(1_000);
    await settle(worker.stop(), vi);
    expect(peak).toBe(2);
    expect([...fake.rows.values()].every((r) => r.status === "done")).toBe(true);
    expect(Math.max(...limits)).toBe(2);
    expect(limits).toContain(1);
  });

  it("backs off exponentially (capped) while there is nothing to claim", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.999999);
    const fake = new FakeFleet();
    const start = Date.now();
    const worker = new Worker(fake, { workerId: "w", pollInterval: 100, maxPollInterval: 800, handler: async () => null }).start();
    await vi.advanceTimersByTimeAsync(3_200);
    await worker.stop();
    expect(fake.callsOf("claimNext").map((c) => c.at - start)).toEqual([0, 100, 300, 700, 1_500, 2_300, 3_100]);
  });

  it("survives claimNext failures (server away): reports them, backs off, and resumes when it is back", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.999999);
    const fake = new FakeFleet();
    const { id } = fake.add();
    vi.spyOn(fake, "claimNext")
      .mockRejectedValueOnce(new FleetNetworkError("claimNext", "fetch failed (ECONNREFUSED)"))
      .mockRejectedValueOnce(new FleetNetworkError("claimNext", "fetch failed (ECONNREFUSED)"));
    const errors: string[] = [];
    const worker = new Worker(fake, { workerId: "w", pollInterval: 100, handler: async () => "ok" });
    worker.on("error", (e) => errors.push(`${e.op}: ${e.error.message}`));
    worker.start();
    await vi.advanceTimersByTimeAsync(400);
    await settle(worker.stop(), vi);
    expect(errors).toEqual(["claimNext: claimNext: fetch failed (ECONNREFUSED)", "claimNext: claimNext: fetch failed (ECONNREFUSED)"]);
    expect(fake.results.get(id)).toBe("ok");
  });

  it('stop({ mode: "finish" }) claims nothing more and lets running handlers finish and report', async () => {
    const fake = new FakeFleet();
    const first = fake.add();
    const worker = new Worker(fake, {
      workerId: "w", pollInterval: 50,
      handler: async (_job, signal) => {
        await wait(2_000, signal);
        return "finished";
      },
    }).start();
    await vi.advanceTimersByTimeAsync(10);
    const second = fake.add();
    const stopped = worker.stop({ mode: "finish" });
    await settle(stopped, vi);
    expect(fake.results.get(first.id)).toBe("finished");
    expect(fake.row(first.id).status).toBe("done");
    expect(fake.row(second.id).status).toBe("pending");
    expect(worker.inFlight).toBe(0);
  });

  it('stop({ mode: "abandon" }) aborts handlers and walks away: no renew, no release, no result', async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    let reason: unknown;
    const worker = new Worker(fake, {
      workerId: "w", leaseSeconds: 3, pollInterval: 50,
      handler: async (_job, signal) => {
        await wait(60_000, signal).catch((e) => {
          reason = e;
        });
        return "partial";
      },
    }).start();
    await vi.advanceTimersByTimeAsync(1_500);
    await worker.stop({ mode: "abandon" });
    const renewsAtStop = fake.callsOf("renew").length;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(reason).toBeInstanceOf(WorkerStoppingError);
    expect(fake.callsOf("renew")).toHaveLength(renewsAtStop);
    expect(fake.callsOf("release")).toEqual([]);
    expect(fake.results.has(id)).toBe(false);
    expect(fake.row(id)).toMatchObject({ status: "running", claimed_by: "w" });
  });

  it('stop({ mode: "release" }) shortens the lease to 1 s, waits it out and hands the job back to pending', async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const worker = new Worker(fake, {
      workerId: "w", leaseSeconds: 30, pollInterval: 50,
      handler: async (_job, signal) => {
        await wait(60_000, signal);
        return "never";
      },
    }).start();
    await vi.advanceTimersByTimeAsync(100);
    const token = fake.row(id).lease_token;
    const stopAt = Date.now();
    await settle(worker.stop({ mode: "release" }), vi);
    expect(fake.callsOf("renew")).toMatchObject([{ leaseSeconds: 1, leaseToken: token, at: stopAt }]);
    const [release] = fake.callsOf("release");
    expect(release).toMatchObject({ status: "pending", leaseToken: token });
    expect(release!.at - stopAt).toBeGreaterThanOrEqual(1_000);
    expect(fake.row(id)).toMatchObject({ status: "pending", claimed_by: "" });
    expect(fake.results.has(id)).toBe(false);
  });
});
