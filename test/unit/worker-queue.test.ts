// The Worker on a server with the queue (docs/queue.md; its claim answers carry
// `attempts`): the handler's context (payload, attempt, maxAttempts, signal,
// progress), one release carrying the outcome (done with the result, retry with
// the error, failed for a PermanentJobError), progress riding on the renews (its timing: worker-progress-flush.test.ts),
// and a cancel aborting the handler within one renew interval. Also what stays
// as before on a server without the queue. On a server with heartbeat and
// complete the renews and the release are items of those calls:
// fake.renewsSent() and fake.releasesSent() list them per job either way.
import { describe, expect, it, vi } from "vitest";
import { FleetTimeoutError, PermanentJobError } from "../../src/client/errors";
import type { FleetEvents } from "../../src/client/events";
import { LeaseLostError, Worker, type WorkerJob, type WorkerOptions } from "../../src/client/worker";
import { MAX_PROGRESS_BYTES, MAX_RESULT_BYTES } from "../../src/lib/queue";
import { FakeFleet, settle, useFakeClock, wait } from "./support/fake-fleet";

useFakeClock();

const EVENTS = ["claimed", "renewed", "lease_lost", "released", "result_written", "failed", "retried", "error"] as const;

function startWorker(fake: FakeFleet, opts: Partial<WorkerOptions> & Pick<WorkerOptions, "handler">) {
  const events: Array<[keyof FleetEvents, any]> = [];
  const worker = new Worker(fake, { workerId: "w1", leaseSeconds: 30, pollInterval: 60_000, ...opts });
  for (const name of EVENTS) worker.on(name, (e: unknown) => events.push([name, e]));
  worker.start();
  return { worker, events };
}

/** Runs one worker over the fake for `runMs`, then stops it; answers its events. */
async function runWorker(fake: FakeFleet, opts: Partial<WorkerOptions> & Pick<WorkerOptions, "handler">, runMs = 1_000) {
  const { worker, events } = startWorker(fake, opts);
  await vi.advanceTimersByTimeAsync(runMs);
  await settle(worker.stop(), vi);
  return events;
}

describe("Worker on a server with the queue", () => {
  it("hands the handler the payload, its attempt and the cap, the signal and progress(), on the job it already had", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add({ payload: JSON.stringify({ url: "https://example.test", depth: 2 }), max_attempts: 3 });
    const seen: Array<{ job: WorkerJob; signal: AbortSignal }> = [];
    await runWorker(fake, {
      handler: async (job, signal) => {
        seen.push({ job, signal });
        return null;
      },
    });
    expect(seen).toHaveLength(1);
    const { job, signal } = seen[0]!;
    expect(job).toMatchObject({
      id, probe_key: `key-${id}`, workerId: "w1", alreadyHeld: false,
      payload: { url: "https://example.test", depth: 2 }, attempt: 1, maxAttempts: 3, lastProgress: null,
    });
    expect(job.signal).toBe(signal);
    expect(typeof job.progress).toBe("function");
  });

  it("a job without a payload gets null; a job of the record API has no cap (maxAttempts 0)", async () => {
    const fake = new FakeFleet();
    fake.add();
    const seen: WorkerJob[] = [];
    await runWorker(fake, { handler: async (job) => void seen.push(job) });
    expect(seen[0]).toMatchObject({ payload: null, attempt: 1, maxAttempts: 0 });
  });

  // (Was one test of release: on a server with `complete` the release is one of its items. Its answer has no job:
  // the worker counts the version, the claim's + 1.)
  it.each([["complete"], ["release"]] as const)("success: ONE release carries the result (done), and no result write follows (%s)", async (op) => {
    const fake = new FakeFleet();
    fake.batchCalls = op === "complete";
    const { id } = fake.add();
    const events = await runWorker(fake, { handler: async () => ({ answer: 42 }) });
    expect(fake.releasesSent()).toEqual([
      expect.objectContaining({ op, jobId: id, status: "done", result: { answer: 42 }, leaseToken: fake.row(id).lease_token }),
    ]);
    expect(fake.callsOf("writeResult")).toEqual([]);
    expect(fake.results.get(id)).toEqual({ answer: 42 });
    expect(fake.row(id)).toMatchObject({ status: "done", claimed_by: "w1" });
    expect(events.map(([name]) => name)).toEqual(["claimed", "released"]);
    expect(events[1]![1]).toEqual({ jobId: id, workerId: "w1", status: "done", version: 2, committed: "released" });
    expect(fake.row(id).version).toBe(2);
  });

  // (Was one test of release; worker-batch.test.ts has the same for 30 jobs in one complete.)
  it.each([["complete"], ["release"]] as const)("a release that committed but whose answer was lost is answered refused_terminal_same_holder: reported, nothing more sent (%s)", async (op) => {
    const fake = new FakeFleet();
    fake.batchCalls = op === "complete";
    const { id } = fake.add();
    const real = op === "complete" ? fake.complete.bind(fake) : fake.release.bind(fake);
    vi.spyOn(fake, op).mockImplementationOnce(async (...args: unknown[]) => {
      await (real as (...a: unknown[]) => Promise<unknown>)(...args);
      throw new FleetTimeoutError(op, 10_000);
    });
    const events = await runWorker(fake, { handler: async () => "measured" });
    expect(vi.mocked(fake[op]).mock.calls).toHaveLength(2);
    expect(fake.callsOf("writeResult")).toEqual([]);
    expect(fake.results.get(id)).toBe("measured");
    expect(events.map(([name]) => name)).toEqual(["claimed", "error", "released"]);
    expect(events[2]![1]).toMatchObject({ status: "done", committed: "refused_terminal_same_holder", version: null });
  });

  it("a thrown error releases retry with its message: the job goes back to pending after the backoff, and runs again as attempt 2", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add({ max_attempts: 5 });
    const attempts: number[] = [];
    const { worker, events } = startWorker(fake, {
      pollInterval: 100, maxPollInterval: 100,
      handler: async (job) => {
        attempts.push(job.attempt);
        if (job.attempt === 1) throw new Error("probe timed out");
        return "second time lucky";
      },
    });
    await vi.advanceTimersByTimeAsync(50);
    expect(fake.releasesSent()).toEqual([
      expect.objectContaining({ jobId: id, status: "retry", error: "probe timed out" }),
    ]);
    expect(fake.releasesSent()[0]).not.toHaveProperty("result");
    expect(fake.row(id)).toMatchObject({ status: "pending", claimed_by: "", last_error: "probe timed out", attempts: 1 });
    expect(fake.row(id).run_at > fake.row(id).created).toBe(true); // not due before its backoff
    await vi.advanceTimersByTimeAsync(3_000);
    await settle(worker.stop(), vi);

    expect(attempts).toEqual([1, 2]);
    expect(fake.row(id)).toMatchObject({ status: "done", attempts: 2 });
    expect(fake.results.get(id)).toBe("second time lucky");
    expect(fake.callsOf("writeResult")).toEqual([]);
    const retried = events.filter(([name]) => name === "retried").map(([, e]) => e);
    expect(retried).toEqual([{ jobId: id, workerId: "w1", error: "probe timed out", attempt: 1, maxAttempts: 5 }]);
    expect(events.some(([name]) => name === "failed")).toBe(false);
  });

  it("a throw in a job with no attempt cap (max_attempts 0, a record API row) releases failed: it would otherwise retry forever", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const events = await runWorker(fake, { handler: async () => { throw new Error("no cap here"); } });
    expect(fake.releasesSent()).toEqual([
      expect.objectContaining({ jobId: id, status: "failed", error: "no cap here" }),
    ]);
    expect(fake.row(id)).toMatchObject({ status: "failed", last_error: "no cap here", attempts: 1 });
    expect(events.some(([name]) => name === "retried")).toBe(false);
  });

  it("a throw on the last attempt is dead-lettered by the server: reported as failed, deadLettered", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add({ max_attempts: 1 });
    const events = await runWorker(fake, {
      handler: async () => {
        throw new Error("still broken");
      },
    });
    expect(fake.releasesSent()).toEqual([expect.objectContaining({ status: "retry", error: "still broken" })]);
    expect(fake.row(id).status).toBe("failed");
    expect(fake.row(id).dead_lettered_at).not.toBe("");
    expect(fake.row(id).last_error).toBe("still broken");
    expect(events.map(([name]) => name)).toEqual(["claimed", "released", "failed"]);
    expect(events[2]![1]).toEqual({ jobId: id, workerId: "w1", error: "still broken", deadLettered: true });
  });

  it("a PermanentJobError releases failed with its message, whatever attempts are left", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add({ max_attempts: 25 });
    const events = await runWorker(fake, {
      handler: async () => {
        throw new PermanentJobError("no such host");
      },
    });
    expect(fake.releasesSent()).toEqual([expect.objectContaining({ jobId: id, status: "failed", error: "no such host" })]);
    expect(fake.callsOf("writeResult")).toEqual([]);
    expect(fake.row(id)).toMatchObject({ status: "failed", last_error: "no such host", dead_lettered_at: "" });
    expect(events.map(([name]) => name)).toEqual(["claimed", "released", "failed"]);
    expect(events[2]![1]).toEqual({ jobId: id, workerId: "w1", error: "no such host" });
  });

  it("an error named PermanentJobError (another copy of the class) counts as permanent too", async () => {
    const fake = new FakeFleet();
    fake.add();
    await runWorker(fake, {
      handler: async () => {
        throw Object.assign(new Error("bad input"), { name: "PermanentJobError" });
      },
    });
    expect(fake.releasesSent()).toEqual([expect.objectContaining({ status: "failed", error: "bad input" })]);
  });

  it("a result the server could not store (larger than MAX_RESULT_BYTES) releases failed saying so", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    await runWorker(fake, { handler: async () => "x".repeat(MAX_RESULT_BYTES) });
    const [release] = fake.releasesSent();
    expect(release).toMatchObject({ status: "failed" });
    expect(release!.error).toContain(`at most ${MAX_RESULT_BYTES} bytes`);
    expect(release).not.toHaveProperty("result");
    expect(fake.row(id).status).toBe("failed");
  });

  it("progress that is too large (or not JSON) throws a TypeError in the handler, and nothing is recorded", async () => {
    const fake = new FakeFleet();
    fake.add();
    const thrown: unknown[] = [];
    await runWorker(fake, {
      leaseSeconds: 3,
      handler: async (job, signal) => {
        for (const value of ["x".repeat(MAX_PROGRESS_BYTES), 10n, undefined]) {
          try {
            job.progress(value);
          } catch (err) {
            thrown.push(err);
          }
        }
        await wait(1_500, signal);
      },
    }, 2_000);
    expect(thrown).toHaveLength(3);
    expect(thrown.every((e) => e instanceof TypeError)).toBe(true);
    expect((thrown[0] as Error).message).toContain(`at most ${MAX_PROGRESS_BYTES} bytes`);
    expect(fake.renewsSent().map((c) => c.progress)).toEqual([undefined]);
  });

  it("a cancel aborts the handler's signal at the next renew (within one renew interval), and nothing is released or written", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const start = Date.now();
    let abortedAt: number | null = null;
    let reason: unknown = null;
    const { worker, events } = startWorker(fake, {
      leaseSeconds: 3, // a renew every second
      handler: async (job, signal) => {
        signal.addEventListener("abort", () => {
          abortedAt = Date.now();
          reason = signal.reason;
        });
        job.progress({ half: true });
        await wait(60_000); // ignores the signal: what it returns must not be written either
        return "too late";
      },
    });
    await vi.advanceTimersByTimeAsync(1_500);
    expect(await fake.cancel(id)).toMatchObject({ cancelled: true, job: { status: "cancelled" } });
    const cancelledAt = Date.now();
    await vi.advanceTimersByTimeAsync(1_000);

    expect(abortedAt).not.toBeNull();
    expect(abortedAt! - cancelledAt).toBeLessThanOrEqual(1_000);
    expect(abortedAt! - start).toBe(2_000);
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect(reason).toMatchObject({ reason: "renew_refused" });
    expect((reason as Error).message).toContain("cancelled");
    expect(events.filter(([name]) => name === "lease_lost").map(([, e]) => e)).toEqual([
      { jobId: id, workerId: "w1", reason: "renew_refused" },
    ]);
    await vi.advanceTimersByTimeAsync(60_000);
    await settle(worker.stop(), vi);
    expect(fake.releasesSent()).toEqual([]);
    expect(fake.callsOf("writeResult")).toEqual([]);
    expect(fake.row(id).status).toBe("cancelled");
    expect(fake.results.has(id)).toBe(false);
  });
});

describe("Worker on a server without the queue", () => {
  function legacyFleet(): FakeFleet {
    const fake = new FakeFleet();
    fake.queue = false;
    return fake;
  }

  it("the handler gets payload null, attempt 1, maxAttempts 0; progress is recorded but never sent", async () => {
    const fake = legacyFleet();
    const { id } = fake.add();
    const seen: WorkerJob[] = [];
    await runWorker(fake, {
      leaseSeconds: 3,
      handler: async (job, signal) => {
        seen.push(job);
        job.progress({ step: 1 });
        await wait(1_500, signal);
        return "ok";
      },
    }, 2_000);
    expect(seen[0]).toMatchObject({ payload: null, attempt: 1, maxAttempts: 0 });
    expect(fake.renewsSent()).toHaveLength(1);
    expect(fake.renewsSent()[0]).not.toHaveProperty("progress");
    expect(fake.releasesSent()).toEqual([expect.objectContaining({ jobId: id, status: "done" })]);
    expect(fake.releasesSent()[0]).not.toHaveProperty("result");
    expect(fake.callsOf("writeResult")).toEqual([expect.objectContaining({ jobId: id, result: "ok" })]);
  });

  it("a PermanentJobError, like any error, releases failed and then writes { error }: no retry", async () => {
    const fake = legacyFleet();
    const { id } = fake.add();
    const events = await runWorker(fake, {
      handler: async () => {
        throw new PermanentJobError("bad input");
      },
    });
    expect(fake.releasesSent()).toEqual([expect.objectContaining({ status: "failed" })]);
    expect(fake.results.get(id)).toEqual({ error: "bad input" });
    expect(events.map(([name]) => name)).toEqual(["claimed", "released", "result_written", "failed"]);
  });
});
