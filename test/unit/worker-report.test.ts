// How a Worker reports a finished job on a server without the queue (its claim
// answers carry no `attempts`): release first (the compare-and-set), and write
// the result only when that release committed: released:true, or
// refused_terminal_same_holder (its own earlier release whose answer was lost).
// Any other refusal means someone else holds the job: nothing is written.
// (worker-queue.test.ts has the one-release report of a server with the queue;
// on a server with POST /api/fleet/complete that release is an item of it,
// which fake.releasesSent() lists per job, and worker-batch.test.ts has what is
// particular to it.)
import { describe, expect, it, vi } from "vitest";
import { FleetHttpError, FleetTimeoutError } from "../../src/client/errors";
import type { FleetEvents } from "../../src/client/events";
import { Worker, type WorkerOptions } from "../../src/client/worker";
import { FakeFleet, pbDateIn, settle, useFakeClock } from "./support/fake-fleet";

useFakeClock();

/** Runs one worker over the fake until it has nothing left, recording its events. */
async function runWorker(fake: FakeFleet, opts: Partial<WorkerOptions> & Pick<WorkerOptions, "handler">, runMs = 1_000) {
  const events: Array<[keyof FleetEvents, unknown]> = [];
  const worker = new Worker(fake, { workerId: "w1", leaseSeconds: 30, pollInterval: 60_000, ...opts });
  for (const name of ["claimed", "renewed", "lease_lost", "released", "result_written", "failed", "error"] as const) {
    worker.on(name, (e: unknown) => events.push([name, e]));
  }
  worker.start();
  await vi.advanceTimersByTimeAsync(runMs);
  await settle(worker.stop(), vi);
  return events;
}

/** A fake server from before the queue: the two-step report. */
function legacyFleet(): FakeFleet {
  const fake = new FakeFleet();
  fake.queue = false;
  return fake;
}

describe("Worker reporting", () => {
  it("releases done before writing the handler's value as the result", async () => {
    const fake = legacyFleet();
    const { id } = fake.add();
    const events = await runWorker(fake, { handler: async () => ({ answer: 42 }) });
    const order = fake.calls.filter((c) => c.op === "release" || c.op === "writeResult").map((c) => c.op);
    expect(order).toEqual(["release", "writeResult"]);
    expect(fake.results.get(id)).toEqual({ answer: 42 });
    expect(fake.row(id)).toMatchObject({ status: "done", claimed_by: "w1", version: 2 });
    expect(events.map(([name]) => name)).toEqual(["claimed", "released", "result_written"]);
    expect(events[1]![1]).toEqual({ jobId: id, workerId: "w1", status: "done", version: 2, committed: "released" });
  });

  it("a listener or logger that throws cannot stop the release and the result write: it becomes a warning", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    const worker = new Worker(fake, {
      workerId: "w1", leaseSeconds: 30, pollInterval: 60_000,
      handler: async () => "ok",
      logger: () => {
        throw new Error("logger down");
      },
    });
    worker.on("released", () => {
      throw new Error("listener bug");
    });
    worker.start();
    await vi.advanceTimersByTimeAsync(1_000);
    await settle(worker.stop(), vi);
    expect(fake.row(id)).toMatchObject({ status: "done" });
    expect(fake.results.get(id)).toBe("ok");
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("logger down"));
  });

  it("a throwing handler releases failed and writes { error: message }", async () => {
    const fake = legacyFleet();
    const { id } = fake.add();
    const events = await runWorker(fake, {
      handler: async () => {
        throw new Error("probe timed out");
      },
    });
    expect(fake.row(id).status).toBe("failed");
    expect(fake.results.get(id)).toEqual({ error: "probe timed out" });
    expect(events.map(([name]) => name)).toEqual(["claimed", "released", "result_written", "failed"]);
    expect(events[3]![1]).toEqual({ jobId: id, workerId: "w1", error: "probe timed out" });
  });

  it("treats refused_terminal_same_holder as its own committed release and still writes the result", async () => {
    const fake = legacyFleet();
    const { id } = fake.add();
    // The release commits but its answer is lost; the retry is told the row is
    // already terminal under this worker.
    const realRelease = fake.release.bind(fake);
    vi.spyOn(fake, "release").mockImplementationOnce(async (...args) => {
      await realRelease(...args);
      throw new FleetTimeoutError("release", 10_000);
    });
    const events = await runWorker(fake, { handler: async () => "measured" });

    expect(vi.mocked(fake.release).mock.calls).toHaveLength(2);
    expect(await realRelease(id, "w1", "done", fake.row(id).lease_token)).toEqual({
      released: false, reason: "refused_terminal_same_holder",
    });
    expect(fake.results.get(id)).toBe("measured");
    const released = events.find(([name]) => name === "released")![1];
    expect(released).toMatchObject({ jobId: id, status: "done", version: null, committed: "refused_terminal_same_holder" });
    expect(events.map(([name]) => name)).toEqual(["claimed", "error", "released", "result_written"]);
  });

  it.each([
    ["refused_not_holder", { claimed_by: "thief" }],
    ["refused_stale_token", { lease_token: "a-later-claim" }],
  ] as const)("a release answered %s is a lost lease: nothing is written", async (reason, change) => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const events = await runWorker(fake, {
      handler: async () => {
        // Someone else's claim lands while the handler runs (before any renew).
        Object.assign(fake.row(id), change, { lease_expires_at: pbDateIn(60_000) });
        return "stale";
      },
    });
    expect(fake.releasesSent()).toHaveLength(1);
    expect(fake.callsOf("writeResult")).toEqual([]);
    expect(fake.results.has(id)).toBe(false);
    expect(events.map(([name]) => name)).toEqual(["claimed", "lease_lost"]);
    expect(events[1]![1]).toEqual({ jobId: id, workerId: "w1", reason });
  });

  // (Each was one test of release: on a server with `complete` it is the complete call that fails.)
  it.each([["complete"], ["release"]] as const)("keeps retrying a release that fails transiently, then reports (%s)", async (op) => {
    const fake = new FakeFleet();
    fake.batchCalls = op === "complete";
    const { id } = fake.add();
    vi.spyOn(fake, op)
      .mockRejectedValueOnce(new FleetHttpError(op, 503, "unavailable", {}))
      .mockRejectedValueOnce(new FleetTimeoutError(op, 1_000));
    const events = await runWorker(fake, { handler: async () => "ok" }, 5_000);
    expect(vi.mocked(fake[op]).mock.calls).toHaveLength(3);
    expect(fake.results.get(id)).toBe("ok");
    expect(events.filter(([n]) => n === "error").map(([, e]) => (e as { op: string }).op)).toEqual([op, op]);
  });

  it.each([["complete"], ["release"]] as const)("does not retry a release answered 400 (a bug, not a blip), and writes nothing (%s)", async (op) => {
    const fake = new FakeFleet();
    fake.batchCalls = op === "complete";
    const { id } = fake.add();
    const refused = (name: string) => new FleetHttpError(name, 400, "status must be done|failed|pending", {});
    vi.spyOn(fake, "release").mockRejectedValue(refused("release"));
    if (op === "complete") vi.spyOn(fake, "complete").mockRejectedValue(refused("complete"));
    const events = await runWorker(fake, { handler: async () => "ok" }, 5_000);
    expect(vi.mocked(fake[op]).mock.calls).toHaveLength(1);
    // A complete of one release refused as malformed gets one last chance as a plain release (not a retry of the same call).
    if (op === "complete") expect(vi.mocked(fake.release).mock.calls).toHaveLength(1);
    expect(fake.results.has(id)).toBe(false);
    const error = events.find(([n]) => n === "error")![1] as { op: string; error: Error };
    expect(error.op).toBe(op);
    expect(error.error).toBeInstanceOf(FleetHttpError);
  });

  it("retries the result write after a committed release until it lands", async () => {
    const fake = legacyFleet();
    const { id } = fake.add();
    vi.spyOn(fake, "writeResult").mockRejectedValueOnce(new FleetTimeoutError("writeResult", 1_000));
    const events = await runWorker(fake, { handler: async () => "ok" }, 5_000);
    expect(vi.mocked(fake.writeResult).mock.calls).toHaveLength(2);
    expect(fake.results.get(id)).toBe("ok");
    expect(events.map(([n]) => n)).toEqual(["claimed", "released", "error", "result_written"]);
  });
});
