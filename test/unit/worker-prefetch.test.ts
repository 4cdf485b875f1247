// The Worker's claim-ahead buffer (WorkerOptions.prefetch): claimed jobs
// waiting for a free slot hold their leases through the same heartbeat as the
// running ones, are dropped unrun when a lease is lost (or their timeout comes
// first), stay within `prefetch` (and within what the slots will start soon),
// and are run by a "finish" stop, handed back by a "release" stop and walked
// away from by an "abandon" stop.
import { describe, expect, it, vi } from "vitest";
import { FleetNetworkError } from "../../src/client/errors";
import type { FleetApi } from "../../src/client/fleet-client";
import { Worker, type WorkerOptions } from "../../src/client/worker";
import { FakeFleet, settle, useFakeClock, wait } from "./support/fake-fleet";
import { named, startRecordedWorker } from "./support/recorded-worker";

useFakeClock();

const EVENTS = ["claimed", "renewed", "lease_lost", "released", "failed", "retried", "error"] as const;

const startWorker = (fake: FleetApi, opts: Partial<WorkerOptions> & Pick<WorkerOptions, "handler">) => startRecordedWorker(fake, opts, EVENTS);

/**
 * A handler whose first job returns at once (so the Worker knows its handlers
 * are fast and claims ahead), and whose second blocks until `unblock()`: the
 * jobs claimed meanwhile wait in the buffer. `ran` lists the jobs whose
 * handler ran, in order.
 */
function blockingHandler() {
  const ran: string[] = [];
  let unblock!: () => void;
  const gate = new Promise<void>((resolve) => (unblock = resolve));
  const handler = async (job: { id: string }, signal: AbortSignal) => {
    ran.push(job.id);
    if (ran.length === 2) {
      await Promise.race([gate, new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)))]);
    }
    return `ran ${job.id}`;
  };
  return { ran, handler, unblock: () => unblock() };
}

/** Jobs w1 holds now (claimed or running under its name). */
const heldBy = (fake: FakeFleet, workerId = "w1") =>
  [...fake.rows.values()].filter((r) => (r.status === "claimed" || r.status === "running") && r.claimed_by === workerId).map((r) => r.id);

describe("Worker claim-ahead buffer", () => {
  it("buffered jobs are renewed by the same heartbeat as the running one, so their leases outlive a long wait, and run once a slot frees", async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 4; i++) fake.add();
    const { ran, handler, unblock } = blockingHandler();
    const { worker, events } = startWorker(fake, { concurrency: 1, prefetch: 2, handler });
    await vi.advanceTimersByTimeAsync(100);
    // job1 ran at once; job2 runs (blocked); job3 and job4 wait in the buffer.
    expect(ran).toEqual(["job1", "job2"]);
    expect(worker.buffered).toBe(2);
    expect(worker.inFlight).toBe(1);
    expect(heldBy(fake).sort()).toEqual(["job2", "job3", "job4"]);

    await vi.advanceTimersByTimeAsync(10_000); // more than three leases of 3 s
    const heartbeats = fake.callsOf("heartbeat");
    expect(heartbeats.length).toBeGreaterThanOrEqual(9);
    for (const call of heartbeats) expect(call.items!.map((i) => i.jobId).sort()).toEqual(["job2", "job3", "job4"]);
    expect(named(events, "renewed").filter((e) => e.jobId === "job4").length).toBe(heartbeats.length);
    expect(named(events, "lease_lost")).toEqual([]);
    expect(ran).toEqual(["job1", "job2"]); // still waiting, leases live
    expect(heldBy(fake).sort()).toEqual(["job2", "job3", "job4"]);

    unblock();
    await settle(worker.stop(), vi);
    expect(ran).toEqual(["job1", "job2", "job3", "job4"]);
    expect([...fake.rows.values()].map((r) => [r.status, r.attempts])).toEqual(Array(4).fill(["done", 1]));
    expect(named(events, "lease_lost")).toEqual([]);
  });

  it("a buffered job whose renew is refused (cancelled, or taken) is dropped and never run; the others go on", async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 4; i++) fake.add();
    const { ran, handler, unblock } = blockingHandler();
    const { worker, events } = startWorker(fake, { concurrency: 1, prefetch: 2, handler });
    await vi.advanceTimersByTimeAsync(100);
    expect(worker.buffered).toBe(2);
    await fake.cancel("job3");
    Object.assign(fake.row("job4"), { claimed_by: "thief", lease_token: "theirs" });
    await vi.advanceTimersByTimeAsync(1_000); // the tick
    expect(named(events, "lease_lost")).toEqual([
      { jobId: "job3", workerId: "w1", reason: "renew_refused" },
      { jobId: "job4", workerId: "w1", reason: "renew_refused" },
    ]);
    expect(worker.buffered).toBe(0);

    fake.pauseClaims = true;
    unblock();
    await settle(worker.stop(), vi);
    expect(ran).toEqual(["job1", "job2"]);
    expect(fake.releasesSent().map((r) => r.jobId)).toEqual(["job1", "job2"]);
    expect(fake.row("job3").status).toBe("cancelled");
    expect(fake.row("job4").claimed_by).toBe("thief");
  });

  it("a buffered job whose lease runs out while heartbeats fail is dropped at its lease's end and never run", async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 3; i++) fake.add();
    const { ran, handler } = blockingHandler();
    const { worker, events } = startWorker(fake, { concurrency: 1, prefetch: 1, handler });
    await vi.advanceTimersByTimeAsync(100);
    expect(worker.buffered).toBe(1);
    const claimedAt = Date.now() - 100;
    vi.spyOn(fake, "heartbeat").mockRejectedValue(new FleetNetworkError("heartbeat", "fetch failed (ECONNRESET)"));
    fake.pauseClaims = true;
    await vi.advanceTimersByTimeAsync(3_000);
    const lost = named(events, "lease_lost");
    expect(lost.map((e) => [e.jobId, e.reason]).sort()).toEqual([["job2", "lease_expired"], ["job3", "lease_expired"]]);
    expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(3_000);
    expect(worker.buffered).toBe(0);
    await settle(worker.stop(), vi);
    expect(ran).toEqual(["job1", "job2"]);
    expect(fake.releasesSent().map((r) => r.jobId)).toEqual(["job1"]);
  });

  it("a buffered job is not started once its timeout is due: it is released retry with the timeout's error, unrun", async () => {
    const fake = new FakeFleet();
    fake.add();
    fake.add();
    const { id } = fake.add({ timeout_seconds: 2, max_attempts: 5 });
    const { ran, handler, unblock } = blockingHandler();
    const { worker, events } = startWorker(fake, { concurrency: 1, prefetch: 1, leaseSeconds: 30, handler });
    await vi.advanceTimersByTimeAsync(100);
    expect(worker.buffered).toBe(1);
    await vi.advanceTimersByTimeAsync(1_850); // its deadline (claim + 2 s) less min(2 s, 0.2 s)
    expect(named(events, "retried")).toMatchObject([{ jobId: id, error: "timed out after 2 s", attempt: 1 }]);
    expect(fake.row(id)).toMatchObject({ status: "pending", last_error: "timed out after 2 s" });
    expect(worker.buffered).toBe(0);
    fake.pauseClaims = true;
    unblock();
    await settle(worker.stop(), vi);
    expect(ran).not.toContain(id);
  });

  it("holds at most `prefetch` jobs beside its running handlers, and claims at most concurrency + prefetch", async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 60; i++) fake.add();
    const limits: number[] = [];
    const claimNext = fake.claimNext.bind(fake);
    vi.spyOn(fake, "claimNext").mockImplementation((o) => {
      limits.push(o.limit ?? 1);
      return claimNext(o);
    });
    let peakHeld = 0;
    let peakBuffered = 0;
    let running = 0;
    let peakRunning = 0;
    // Held and not run yet, or running: not those whose handler has returned (their report is under way).
    const returned = new Set<string>();
    const notReturned = () => heldBy(fake).filter((id) => !returned.has(id)).length;
    const { worker } = startWorker(fake, {
      concurrency: 4, prefetch: 3, leaseSeconds: 30, pollInterval: 10, maxPollInterval: 10,
      handler: async (job, signal) => {
        peakRunning = Math.max(peakRunning, ++running);
        peakHeld = Math.max(peakHeld, notReturned());
        peakBuffered = Math.max(peakBuffered, worker.buffered);
        await wait(20, signal);
        running--;
        returned.add(job.id);
        return "ok";
      },
    });
    await vi.advanceTimersByTimeAsync(2_000);
    await settle(worker.stop(), vi);
    expect([...fake.rows.values()].every((r) => r.status === "done" && r.attempts === 1)).toBe(true);
    expect(peakRunning).toBe(4);
    expect(peakBuffered).toBe(3);
    expect(peakHeld).toBeLessThanOrEqual(4 + 3);
    expect(Math.max(...limits)).toBeLessThanOrEqual(4);
    // It did claim ahead: some claims came while every slot was busy.
    expect(peakHeld).toBeGreaterThan(4);
  });

  it("claims nothing ahead for handlers that outlast the horizon (CLAIM_AHEAD_HORIZON_MS), nor before a first handler has returned", async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 6; i++) fake.add();
    let peakHeld = 0;
    const returned = new Set<string>();
    const notReturned = () => heldBy(fake).filter((id) => !returned.has(id)).length;
    const { worker } = startWorker(fake, {
      concurrency: 2, leaseSeconds: 30, pollInterval: 100, maxPollInterval: 100,
      handler: async (job, signal) => {
        peakHeld = Math.max(peakHeld, notReturned());
        await wait(1_500, signal); // 2 slots x 500 ms / 1 500 ms: less than one job ahead
        peakHeld = Math.max(peakHeld, notReturned());
        returned.add(job.id);
        return "ok";
      },
    });
    await vi.advanceTimersByTimeAsync(5_000);
    await settle(worker.stop(), vi);
    expect(peakHeld).toBe(2);
    expect([...fake.rows.values()].every((r) => r.status === "done")).toBe(true);
  });

  it("claims ahead only what starts soon when something else holds the slots back (reports waiting for a slow server)", async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 12; i++) fake.add();
    const complete = fake.complete.bind(fake);
    vi.spyOn(fake, "complete").mockImplementation(async (...args) => {
      await wait(2_000);
      return complete(...args);
    });
    const claimedAt = new Map<string, number>();
    const waited: number[] = [];
    const { worker, events } = startWorker(fake, {
      concurrency: 1, leaseSeconds: 30, pollInterval: 10, maxPollInterval: 10,
      handler: async (job) => {
        waited.push(Date.now() - claimedAt.get(job.id)!);
        return "ok"; // at once: the handlers' pace alone would say "claim ahead"
      },
    });
    worker.on("claimed", (e) => claimedAt.set(e.jobId, Date.now()));
    await vi.advanceTimersByTimeAsync(30_000);
    await settle(worker.stop(), vi);
    expect([...fake.rows.values()].every((r) => r.status === "done")).toBe(true);
    expect(named(events, "lease_lost")).toEqual([]);
    // A job or two wait in the buffer while the pace is learnt; from then on none waits.
    expect(waited.slice(5).every((ms) => ms < 100)).toBe(true);
    expect(waited.filter((ms) => ms >= 1_000).length).toBeLessThanOrEqual(3);
  });

  it("prefetch 0: no buffer, and a slot stays taken until its report is answered (as before the buffer)", async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 6; i++) fake.add();
    const complete = fake.complete.bind(fake);
    vi.spyOn(fake, "complete").mockImplementation(async (...args) => {
      await wait(300);
      return complete(...args);
    });
    const starts: number[] = [];
    const start = Date.now();
    let peakHeld = 0;
    const { worker } = startWorker(fake, {
      concurrency: 1, prefetch: 0, leaseSeconds: 30, pollInterval: 10, maxPollInterval: 10,
      handler: async () => {
        starts.push(Date.now() - start);
        peakHeld = Math.max(peakHeld, heldBy(fake).length);
        return "ok";
      },
    });
    await vi.advanceTimersByTimeAsync(3_000);
    await settle(worker.stop(), vi);
    expect(peakHeld).toBe(1);
    // Each next job only once the previous one's complete (300 ms) has answered.
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(300);
    expect([...fake.rows.values()].every((r) => r.status === "done")).toBe(true);
  });

  it("with the buffer, a slot is free once its handler returns: the next job runs while the report is on the wire (at most `concurrency` such reports)", async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 6; i++) fake.add();
    const complete = fake.complete.bind(fake);
    const answeredAt: number[] = [];
    vi.spyOn(fake, "complete").mockImplementation(async (...args) => {
      await wait(300);
      answeredAt.push(Date.now());
      return complete(...args);
    });
    let running = 0;
    let peakRunning = 0;
    const starts: number[] = [];
    const { worker } = startWorker(fake, {
      concurrency: 1, prefetch: 1, leaseSeconds: 30, pollInterval: 10, maxPollInterval: 10,
      handler: async (_job, signal) => {
        starts.push(Date.now());
        peakRunning = Math.max(peakRunning, ++running);
        await wait(50, signal);
        running--;
        return "ok";
      },
    });
    await vi.advanceTimersByTimeAsync(3_000);
    await settle(worker.stop(), vi);
    expect(peakRunning).toBe(1);
    // job2 ran while job1's complete (300 ms) was on the wire; job3 waited for that answer (one report behind one handler).
    expect(starts[1]!).toBeLessThan(answeredAt[0]!);
    expect(starts[2]!).toBeGreaterThanOrEqual(answeredAt[0]!);
    expect([...fake.rows.values()].every((r) => r.status === "done" && r.attempts === 1)).toBe(true);
  });

  it.each([[-1], [1.5], [Number.NaN], ["2"]])("refuses prefetch %s with a TypeError naming it", (prefetch) => {
    expect(() => new Worker(new FakeFleet(), { workerId: "w1", handler: async () => null, prefetch: prefetch as number })).toThrow(
      /Worker: `prefetch` must be an integer >= 0/,
    );
  });
});

describe("Worker stop with jobs in the claim-ahead buffer", () => {
  it('"finish" runs them (claimed already: their attempt is counted), then resolves; nothing is left held', async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 5; i++) fake.add();
    const { ran, handler, unblock } = blockingHandler();
    const { worker, events } = startWorker(fake, { concurrency: 1, prefetch: 3, handler });
    await vi.advanceTimersByTimeAsync(100);
    expect(worker.buffered).toBe(3);
    const claimsAtStop = fake.callsOf("claimNext").length;
    const stopped = worker.stop();
    await vi.advanceTimersByTimeAsync(500);
    unblock();
    await settle(stopped, vi);
    expect(fake.callsOf("claimNext")).toHaveLength(claimsAtStop);
    expect(ran).toEqual(["job1", "job2", "job3", "job4", "job5"]);
    expect([...fake.rows.values()].map((r) => [r.status, r.attempts])).toEqual(Array(5).fill(["done", 1]));
    expect(named(events, "lease_lost")).toEqual([]);
    expect(worker.inFlight + worker.buffered).toBe(0);
  });

  it('"release" never runs them: each is handed back to pending (its lease shortened to 1 s, then released pending)', async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 4; i++) fake.add();
    const { ran, handler } = blockingHandler();
    const { worker } = startWorker(fake, { concurrency: 1, prefetch: 2, leaseSeconds: 30, handler });
    await vi.advanceTimersByTimeAsync(100);
    expect(worker.buffered).toBe(2);
    const stopAt = Date.now();
    await settle(worker.stop({ mode: "release" }), vi);
    expect(ran).toEqual(["job1", "job2"]);
    expect(fake.callsOf("renew").map((c) => [c.jobId, c.leaseSeconds, c.at - stopAt]).sort()).toEqual([
      ["job2", 1, 0], ["job3", 1, 0], ["job4", 1, 0],
    ]);
    for (const id of ["job2", "job3", "job4"]) expect(fake.row(id)).toMatchObject({ status: "pending", claimed_by: "" });
    expect(fake.callsOf("release").filter((c) => c.status === "pending").map((c) => c.jobId).sort()).toEqual(["job2", "job3", "job4"]);
    expect(fake.row("job1").status).toBe("done");
  });

  it('"abandon" never runs them and writes nothing for them: their leases lapse as after a crash', async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 4; i++) fake.add();
    const { ran, handler } = blockingHandler();
    const { worker } = startWorker(fake, { concurrency: 1, prefetch: 2, handler });
    await vi.advanceTimersByTimeAsync(100);
    expect(worker.buffered).toBe(2);
    const callsAtStop = fake.calls.length;
    await worker.stop({ mode: "abandon" });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(ran).toEqual(["job1", "job2"]);
    expect(fake.calls.slice(callsAtStop).filter((c) => c.op !== "claimNext")).toEqual([]);
    for (const id of ["job3", "job4"]) expect(fake.row(id)).toMatchObject({ status: "claimed", claimed_by: "w1" });
    expect(worker.inFlight + worker.buffered).toBe(0);
  });
});
