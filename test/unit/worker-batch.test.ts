// The Worker on a server with POST /api/fleet/heartbeat and /complete: one
// heartbeat per renew interval for every lease it holds, each item's answer
// that job's own (renewed:false aborts that job only); a heartbeat whose
// answer is lost keeps the deadlines and is sent again soon; finished jobs'
// releases coalesce into one complete (100 at most, after
// COMPLETE_FLUSH_DELAY_MS), a lost answer sent again with committed items
// read as the worker's own release; and a server (or a FleetApi) without them
// gets the per-job renew and release of before.
import { describe, expect, it, vi } from "vitest";
import { FleetHttpError, FleetNetworkError, FleetTimeoutError, PermanentJobError } from "../../src/client/errors";
import type { FleetApi } from "../../src/client/fleet-client";
import { COMPLETE_FLUSH_DELAY_MS, LeaseLostError, type WorkerOptions } from "../../src/client/worker";
import { MAX_ERROR_BYTES } from "../../src/lib/queue";
import { FakeFleet, settle, useFakeClock, wait } from "./support/fake-fleet";
import { named, startRecordedWorker } from "./support/recorded-worker";

useFakeClock();

const EVENTS = ["claimed", "renewed", "lease_lost", "released", "result_written", "failed", "retried", "error"] as const;

const startWorker = (fake: FleetApi, opts: Partial<WorkerOptions> & Pick<WorkerOptions, "handler">) => startRecordedWorker(fake, opts, EVENTS);

describe("Worker heartbeat", () => {
  it("with 50 jobs held: exactly one heartbeat call per renew interval, carrying all 50 (those claimed since the last tick too)", async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 30; i++) fake.add();
    const start = Date.now();
    const { worker, events } = startWorker(fake, {
      concurrency: 50, pollInterval: 100, maxPollInterval: 100,
      handler: async (job, signal) => {
        job.progress({ at: "start" });
        await wait(3_500, signal);
        return "ok";
      },
    });
    await vi.advanceTimersByTimeAsync(400);
    for (let i = 0; i < 20; i++) fake.add(); // claimed by the next poll, before the first tick
    await vi.advanceTimersByTimeAsync(3_000);
    fake.pauseClaims = true;
    await settle(worker.stop(), vi);

    const heartbeats = fake.callsOf("heartbeat");
    // The first 30 handlers' progress goes at once (worker-progress-flush.test.ts); the next 20's would be
    // due at 1 000, with the tick, which carries it. Then one call per interval.
    const [progressCall, ...ticks] = heartbeats;
    expect(heartbeats.map((c) => Math.round((c.at - start) / 10) * 10)).toEqual([0, 1_000, 2_000, 3_000]);
    expect(heartbeats.map((c) => c.items!.length)).toEqual([30, 50, 50, 50]);
    expect(heartbeats.every((c) => c.leaseSeconds === 3 && c.workerId === "w1")).toBe(true);
    expect(new Set(ticks[0]!.items!.map((i) => i.jobId)).size).toBe(50);
    // Each job's claim token; progress rides on its job's first renew only.
    for (const item of progressCall!.items!) expect(item).toEqual({ jobId: item.jobId, leaseToken: fake.row(item.jobId).lease_token, progress: { at: "start" } });
    const later = new Set(progressCall!.items!.map((i) => i.jobId));
    for (const item of ticks[0]!.items!) {
      expect(item).toEqual({ jobId: item.jobId, leaseToken: fake.row(item.jobId).lease_token, ...(later.has(item.jobId) ? {} : { progress: { at: "start" } }) });
    }
    expect(ticks[1]!.items!.every((i) => !("progress" in i))).toBe(true);
    expect(fake.callsOf("renew")).toEqual([]);
    expect(named(events, "renewed")).toHaveLength(180);
    // Each renewed item carries the job as written: its version and lease end, as a renew's answer does.
    const renewedOf = (id: string) => named(events, "renewed").filter((e) => e.jobId === id).map((e) => [e.version, e.leaseExpiresAt]);
    expect(renewedOf("job1")).toEqual([2, 3, 4, 5].map((version) => [version, expect.stringMatching(/^2025-01-01 00:00:0\d\.000Z$/)]));
    expect(named(events, "released").every((e) => e.version === fake.row(e.jobId).version)).toBe(true);
    expect(named(events, "lease_lost")).toEqual([]);
    expect([...fake.rows.values()].every((r) => r.status === "done")).toBe(true);
  });

  it("a renewed:false item (a cancelled job) aborts that job's handler only; the others renew, finish and release", async () => {
    const fake = new FakeFleet();
    const ids = [fake.add().id, fake.add().id, fake.add().id];
    const aborted: Record<string, unknown> = {};
    const { worker, events } = startWorker(fake, {
      concurrency: 3,
      handler: async (job, signal) => {
        signal.addEventListener("abort", () => {
          aborted[job.id] = signal.reason;
        });
        await wait(2_500, signal);
        return `done ${job.id}`;
      },
    });
    await vi.advanceTimersByTimeAsync(1_500);
    await fake.cancel(ids[1]!);
    await vi.advanceTimersByTimeAsync(600); // the tick at 2 s
    expect(Object.keys(aborted)).toEqual([ids[1]]);
    expect(aborted[ids[1]!]).toBeInstanceOf(LeaseLostError);
    expect(named(events, "lease_lost")).toEqual([{ jobId: ids[1], workerId: "w1", reason: "renew_refused" }]);
    await settle(worker.stop(), vi);

    expect(fake.callsOf("heartbeat").map((c) => c.items!.length)).toEqual([3, 3]);
    expect(fake.row(ids[0]!).status).toBe("done");
    expect(fake.row(ids[1]!).status).toBe("cancelled");
    expect(fake.row(ids[2]!).status).toBe("done");
    expect(fake.callsOf("complete").map((c) => c.items!.map((i) => i.jobId))).toEqual([[ids[0], ids[2]]]);
    expect(fake.results.has(ids[1]!)).toBe(false);
  });

  it.each([
    ["not committed", false],
    ["committed", true],
  ] as const)("a heartbeat whose answer is lost (%s) keeps the deadlines, aborts nothing, and is sent again soon with the same progress", async (_what, commits) => {
    const fake = new FakeFleet();
    const ids = [fake.add().id, fake.add().id];
    const heartbeat = fake.heartbeat.bind(fake);
    const sent: Array<{ at: number; items: unknown[] }> = [];
    vi.spyOn(fake, "heartbeat").mockImplementation(async (...args) => {
      sent.push({ at: Date.now(), items: [...args[1]] });
      if (sent.length > 1) return heartbeat(...args);
      if (commits) await heartbeat(...args);
      throw new FleetTimeoutError("heartbeat", 1_000);
    });
    const start = Date.now();
    const { worker, events } = startWorker(fake, {
      concurrency: 2,
      handler: async (job, signal) => {
        job.progress({ job: job.id });
        await wait(3_800, signal); // past the claim's lease (3 s): only renews keep it
        return "ok";
      },
    });
    await vi.advanceTimersByTimeAsync(400);
    // The first (the progress heartbeat, at once) is lost: nothing moved, nothing aborted (the claim's lease runs to 3 s).
    expect(named(events, "renewed")).toEqual([]);
    expect(named(events, "lease_lost")).toEqual([]);
    expect(named(events, "error")).toMatchObject([{ op: "heartbeat" }]);
    await vi.advanceTimersByTimeAsync(3_800);
    await settle(worker.stop(), vi);

    // Sent again half an interval later (not at the next tick), then on the regular ticks.
    expect(sent.map((c) => Math.round((c.at - start) / 10) * 10)).toEqual([0, 500, 1_000, 2_000, 3_000]);
    expect(sent[1]!.items).toEqual(sent[0]!.items);
    expect(sent[1]!.items.map((i) => (i as { progress?: unknown }).progress)).toEqual([{ job: ids[0] }, { job: ids[1] }]);
    expect(named(events, "lease_lost")).toEqual([]);
    expect(ids.map((id) => fake.row(id).status)).toEqual(["done", "done"]);
    expect(ids.map((id) => fake.progressOf(id))).toEqual([{ job: ids[0] }, { job: ids[1] }]);
    // Whether the lost one wrote is not known to the worker; the release's answer says the version as written.
    expect(named(events, "released").map((e) => e.version)).toEqual(ids.map((id) => fake.row(id).version));
  });

  it("heartbeats that keep failing are retried every half interval until the lease's own end, then it is lost (lease_expired)", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    vi.spyOn(fake, "heartbeat").mockRejectedValue(new FleetNetworkError("heartbeat", "fetch failed (ECONNRESET)"));
    const start = Date.now();
    let abortedAt: number | null = null;
    const { worker, events } = startWorker(fake, {
      handler: async (_job, signal) => {
        await wait(60_000, signal).catch(() => {
          abortedAt = Date.now();
        });
      },
    });
    await vi.advanceTimersByTimeAsync(100);
    fake.pauseClaims = true; // or the freed slot would claim the expired job again
    await vi.advanceTimersByTimeAsync(3_000);
    await settle(worker.stop(), vi);
    expect(abortedAt! - start).toBe(3_000); // the claim's deadline, kept through every lost answer
    expect(vi.mocked(fake.heartbeat).mock.calls).toHaveLength(4); // 1 s, 1.5 s, 2 s, 2.5 s
    expect(named(events, "lease_lost")).toEqual([{ jobId: id, workerId: "w1", reason: "lease_expired" }]);
    expect(fake.releasesSent()).toEqual([]);
  });

  it("an alreadyHeld claim is renewed at once on its own; the next regular tick carries every lease", async () => {
    const fake = new FakeFleet();
    fake.add();
    fake.add();
    const third = fake.add();
    const claimNext = fake.claimNext.bind(fake);
    let polls = 0;
    vi.spyOn(fake, "claimNext").mockImplementation(async (o) => {
      if (++polls === 1) return claimNext({ ...o, limit: 2 });
      if (polls === 2) {
        await fake.claim(third.id, "w1", 3); // w1's own claim, whose answer it never saw
        const again = await fake.claim(third.id, "w1", 3);
        return again.claimed ? [again] : [];
      }
      return [];
    });
    const start = Date.now();
    const { worker } = startWorker(fake, {
      concurrency: 3, pollInterval: 300, maxPollInterval: 300,
      handler: (_job, signal) => wait(1_500, signal),
    });
    await vi.advanceTimersByTimeAsync(1_100);
    fake.pauseClaims = true;
    await settle(worker.stop(), vi);
    // The second poll comes at once after the first (which claimed two): the
    // alreadyHeld claim is renewed right away, alone, beside the fresh leases.
    const heartbeats = fake.callsOf("heartbeat");
    expect(heartbeats.map((c) => [c.at - start, c.items!.length])).toEqual([[0, 1], [1_000, 3]]);
    expect(heartbeats[0]!.items![0]).toMatchObject({ jobId: third.id });
  });

  it('stop({ mode: "abandon" }) sends no heartbeat afterwards', async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 3; i++) fake.add();
    const { worker } = startWorker(fake, { concurrency: 3, handler: (_job, signal) => wait(60_000, signal).catch(() => "stopped") });
    await vi.advanceTimersByTimeAsync(1_500);
    await worker.stop({ mode: "abandon" });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(fake.callsOf("heartbeat").map((c) => c.items!.length)).toEqual([3]);
    expect(fake.releasesSent()).toEqual([]);
  });
});

describe("Worker completions", () => {
  it(`the releases of 30 handlers finishing together go out in 1 complete call, ${COMPLETE_FLUSH_DELAY_MS} ms later`, async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 30; i++) fake.add({ max_attempts: 3 });
    const start = Date.now();
    const { worker, events } = startWorker(fake, {
      concurrency: 30, leaseSeconds: 30,
      handler: async (job, signal) => {
        await wait(500, signal);
        const n = Number(job.id.replace("job", ""));
        if (n % 10 === 1) throw new PermanentJobError(`bad ${job.id}`);
        if (n % 10 === 2) throw new Error(`flaky ${job.id}`);
        return { n };
      },
    });
    await vi.advanceTimersByTimeAsync(600);
    await settle(worker.stop(), vi);

    const completes = fake.callsOf("complete");
    expect(completes.map((c) => [c.at - start, c.items!.length])).toEqual([[500 + COMPLETE_FLUSH_DELAY_MS, 30]]);
    expect(fake.callsOf("release")).toEqual([]);
    // Each item's answer is that job's, as a release answer was.
    expect(named(events, "released")).toHaveLength(30);
    expect(named(events, "released").every((e) => e.committed === "released" && e.version === 2)).toBe(true);
    expect(fake.row("job3").version).toBe(2);
    expect(named(events, "failed").map((e) => e.jobId).sort()).toEqual(["job1", "job11", "job21"]);
    expect(named(events, "retried").map((e) => e.jobId).sort()).toEqual(["job12", "job2", "job22"]);
    expect(fake.row("job3")).toMatchObject({ status: "done" });
    expect(fake.results.get("job3")).toEqual({ n: 3 });
    expect(fake.row("job1")).toMatchObject({ status: "failed", last_error: "bad job1" });
    expect(fake.row("job2")).toMatchObject({ status: "pending", last_error: "flaky job2" });
  });

  it("250 finishing together go out in 3 complete calls: 100 and 100 at once, the last 50 after the delay", async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 250; i++) fake.add();
    const limits: number[] = [];
    const claimNext = fake.claimNext.bind(fake);
    vi.spyOn(fake, "claimNext").mockImplementation((o) => {
      limits.push(o.limit ?? 1);
      return claimNext(o);
    });
    const start = Date.now();
    const { worker, events } = startWorker(fake, {
      concurrency: 250, leaseSeconds: 30, handler: (_job, signal) => wait(1_000, signal).then(() => "ok"),
    });
    await vi.advanceTimersByTimeAsync(1_100);
    await settle(worker.stop(), vi);

    expect(fake.callsOf("complete").map((c) => [c.at - start, c.items!.length])).toEqual([
      [1_000, 100], [1_000, 100], [1_000 + COMPLETE_FLUSH_DELAY_MS, 50],
    ]);
    expect(named(events, "released")).toHaveLength(250);
    expect([...fake.rows.values()].every((r) => r.status === "done")).toBe(true);
    // The server's claim-next takes at most 100 a call: 250 free slots are three polls.
    expect(limits.slice(0, 3)).toEqual([100, 100, 50]);
  });

  it("a complete whose answer is lost is sent again; its committed items read refused_terminal_same_holder and count as released", async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 30; i++) fake.add();
    const complete = fake.complete.bind(fake);
    vi.spyOn(fake, "complete").mockImplementationOnce(async (...args) => {
      await complete(...args);
      throw new FleetTimeoutError("complete", 10_000);
    });
    const { worker, events } = startWorker(fake, {
      concurrency: 30, leaseSeconds: 30, handler: async (job) => ({ id: job.id }),
    });
    await vi.advanceTimersByTimeAsync(3_000);
    await settle(worker.stop(), vi);

    expect(vi.mocked(fake.complete).mock.calls.map(([, items]) => items.length)).toEqual([30, 30]);
    expect(named(events, "error")).toMatchObject([{ op: "complete" }]);
    const released = named(events, "released");
    expect(released).toHaveLength(30);
    expect(released.every((e) => e.committed === "refused_terminal_same_holder" && e.status === "done")).toBe(true);
    expect(named(events, "lease_lost")).toEqual([]);
    expect(fake.callsOf("writeResult")).toEqual([]);
    expect([...fake.rows.values()].every((r) => r.status === "done" && fake.results.get(r.id)?.constructor === Object)).toBe(true);
  });

  it("an item refused because the lease was lost is that job's lease_lost; the others are released", async () => {
    const fake = new FakeFleet();
    const ids = [fake.add().id, fake.add().id, fake.add().id];
    const { worker, events } = startWorker(fake, {
      concurrency: 3, leaseSeconds: 30,
      handler: async (job) => {
        if (job.id === ids[1]) fake.row(job.id).claimed_by = "thief";
        return "ok";
      },
    });
    await vi.advanceTimersByTimeAsync(100);
    await settle(worker.stop(), vi);
    expect(fake.callsOf("complete")).toHaveLength(1);
    expect(named(events, "lease_lost")).toEqual([{ jobId: ids[1], workerId: "w1", reason: "refused_not_holder" }]);
    expect(named(events, "released").map((e) => e.jobId)).toEqual([ids[0], ids[2]]);
  });

  it("a complete refused as malformed (400) sends each release on its own, so one bad item cannot fail the others", async () => {
    const fake = new FakeFleet();
    const ids = [fake.add().id, fake.add().id];
    vi.spyOn(fake, "complete").mockRejectedValueOnce(new FleetHttpError("complete", 400, "releases[1]: something", {}));
    const { worker, events } = startWorker(fake, { concurrency: 2, leaseSeconds: 30, handler: async () => "ok" });
    await vi.advanceTimersByTimeAsync(100);
    await settle(worker.stop(), vi);
    expect(fake.callsOf("release").map((c) => c.jobId)).toEqual(ids);
    expect(named(events, "released")).toHaveLength(2);
    expect(ids.map((id) => fake.row(id).status)).toEqual(["done", "done"]);
  });

  it("an error message longer than the server takes is cut to MAX_ERROR_BYTES (else it would fail the whole complete)", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const other = fake.add();
    await settle(startWorker(fake, {
      concurrency: 2, leaseSeconds: 30,
      handler: async (job) => {
        if (job.id === id) throw new PermanentJobError("é".repeat(MAX_ERROR_BYTES));
        return "ok";
      },
    }).worker.stop(), vi);
    expect(fake.callsOf("complete")).toHaveLength(1);
    const error = fake.row(id).last_error;
    expect(fake.row(id).status).toBe("failed");
    expect(error.endsWith(" [truncated]")).toBe(true);
    expect(Buffer.byteLength(error)).toBeLessThanOrEqual(MAX_ERROR_BYTES);
    expect(Buffer.byteLength(error)).toBeGreaterThan(MAX_ERROR_BYTES - 20);
    expect(fake.row(other.id).status).toBe("done");
  });

  it("stop() sends the releases waiting in the queue at once", async () => {
    const fake = new FakeFleet();
    fake.add();
    const start = Date.now();
    const { worker } = startWorker(fake, { leaseSeconds: 30, handler: (_job, signal) => wait(200, signal) });
    await vi.advanceTimersByTimeAsync(200);
    await worker.stop(); // no fake time passes: the release must not wait for its delay
    expect(fake.releasesSent().map((c) => c.at - start)).toEqual([200]);
  });
});

describe("Worker without the batch calls", () => {
  it("a server without them (404, probed once each) gets one renew per job per interval and one release per job, as before", async () => {
    const fake = new FakeFleet();
    fake.batchCalls = false;
    const ids = [fake.add().id, fake.add().id, fake.add().id];
    const start = Date.now();
    const { worker, events } = startWorker(fake, {
      concurrency: 3, handler: (_job, signal) => wait(2_500, signal).then(() => "ok"),
    });
    await vi.advanceTimersByTimeAsync(2_600);
    await settle(worker.stop(), vi);

    expect(fake.callsOf("heartbeat").map((c) => [c.at - start, c.notFound])).toEqual([[1_000, true]]);
    expect(fake.callsOf("complete").map((c) => c.notFound)).toEqual([true]);
    expect(fake.callsOf("renew").map((c) => c.at - start)).toEqual([1_000, 1_000, 1_000, 2_000, 2_000, 2_000]);
    expect(fake.callsOf("release").map((c) => c.jobId).sort()).toEqual([...ids].sort());
    expect(named(events, "error")).toEqual([]); // a probe's 404 is an answer, not an error
    expect(named(events, "renewed")[0]).toMatchObject({ version: expect.any(Number), leaseExpiresAt: expect.any(String) });
    expect(named(events, "released")).toHaveLength(3);
    expect(ids.map((id) => fake.row(id).status)).toEqual(["done", "done", "done"]);
  });

  it("a FleetApi without heartbeat and complete gets per-job calls, without probing", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const api: FleetApi = {
      claimNext: (opts) => fake.claimNext(opts),
      claim: (jobId, workerId, leaseSeconds) => fake.claim(jobId, workerId, leaseSeconds),
      renew: (jobId, workerId, leaseSeconds, token, req) => fake.renew(jobId, workerId, leaseSeconds, token, req),
      release: (jobId, workerId, status, token, req) => fake.release(jobId, workerId, status, token, req),
      writeResult: (jobId, result) => fake.writeResult(jobId, result),
      listExpiredLeases: (opts) => fake.listExpiredLeases(opts),
      sweep: (opts) => fake.sweep(opts),
    };
    const { worker } = startWorker(api, { handler: (_job, signal) => wait(1_500, signal).then(() => "ok") });
    await vi.advanceTimersByTimeAsync(1_600);
    await settle(worker.stop(), vi);
    expect(fake.callsOf("heartbeat")).toEqual([]);
    expect(fake.callsOf("complete")).toEqual([]);
    expect(fake.callsOf("renew")).toHaveLength(1);
    expect(fake.callsOf("release")).toMatchObject([{ jobId: id, status: "done", result: "ok" }]);
  });
});

describe("Worker probing for the batch calls", () => {
  it("calls sent side by side before the first answer (250 releases: 3 completes) all fall back on their 404s, and every job is released", async () => {
    const fake = new FakeFleet();
    fake.batchCalls = false;
    for (let i = 0; i < 250; i++) fake.add();
    const complete = fake.complete.bind(fake);
    vi.spyOn(fake, "complete").mockImplementation(async (...args) => {
      await wait(5); // the first 404 arrives after the second call has gone
      return complete(...args);
    });
    const { worker, events } = startWorker(fake, {
      concurrency: 250, leaseSeconds: 30, handler: (_job, signal) => wait(1_000, signal).then(() => "ok"),
    });
    await vi.advanceTimersByTimeAsync(1_100);
    await settle(worker.stop(), vi);
    expect(fake.callsOf("complete").map((c) => c.notFound)).toEqual([true, true]); // the third batch knew by then
    expect(fake.callsOf("release")).toHaveLength(250);
    expect(named(events, "error")).toEqual([]);
    expect([...fake.rows.values()].every((r) => r.status === "done")).toBe(true);
  });
});
