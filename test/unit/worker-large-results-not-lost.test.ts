// Issue 18's batch: 40 jobs each returning a result just under
// MAX_RESULT_BYTES finish together in one Worker. Against a server that reads
// at most MAX_REQUEST_BODY_BYTES (answering 413 beyond, as 0.23+ and pb-fleet
// do, or 400 "workerId is required", as 0.22 does), no result is lost: every
// job is done with its own result, each handler ran once, nothing was refused
// and nothing reported an error.
import { describe, expect, it, vi } from "vitest";
import type { FleetEvents } from "../../src/client/events";
import { Worker } from "../../src/client/worker";
import { MAX_REQUEST_BODY_BYTES, MAX_RESULT_BYTES } from "../../src/lib/queue";
import { settle, useFakeClock, wait } from "./support/fake-fleet";
import { resultOf, SizeLimitedFleet } from "./support/size-limited-fleet";

useFakeClock();

describe("40 results of about 1 MiB finishing together", () => {
  it.each(["413", "0.22"] as const)("are all stored, each handler run once (a server answering %s to a body too large)", async (answer) => {
    const fake = new SizeLimitedFleet({ complete: MAX_REQUEST_BODY_BYTES, release: MAX_REQUEST_BODY_BYTES, answer });
    for (let i = 0; i < 40; i++) fake.add({ max_attempts: 25 });
    const runs = new Map<string, number>();
    const errors: Array<FleetEvents["error"][0]> = [];
    const lost: string[] = [];
    const worker = new Worker(fake, {
      workerId: "w1", concurrency: 40, leaseSeconds: 30, pollInterval: 100, maxPollInterval: 100,
      handler: async (job, signal) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        await wait(1_000, signal);
        return resultOf(job.id, MAX_RESULT_BYTES);
      },
    });
    worker.on("error", (e) => errors.push(e));
    worker.on("lease_lost", (e) => lost.push(e.jobId));
    worker.start();
    // Past two leases: a release that was lost would have let its job be claimed and run again by now.
    await vi.advanceTimersByTimeAsync(65_000);
    await settle(worker.stop(), vi);

    expect(fake.bodies.filter((b) => b.refused)).toEqual([]);
    expect(errors).toEqual([]);
    expect(lost).toEqual([]);
    expect(runs.size).toBe(40);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    for (const row of fake.rows.values()) {
      const result = fake.results.get(row.id) as ReturnType<typeof resultOf>;
      expect([row.status, result.jobId, result.blob.length]).toEqual(["done", row.id, resultOf(row.id, MAX_RESULT_BYTES).blob.length]);
    }
  }, 30_000);
});
