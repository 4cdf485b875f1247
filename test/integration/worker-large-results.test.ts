// Issue 18's batch against the real server: 40 jobs, each returning a result
// just under MAX_RESULT_BYTES as JSON, finish together in one Worker of
// concurrency 40. Before, their releases went as one `complete` of about
// 40 MiB, past what PocketBase reads (413 on 0.23+, a 400 on 0.22), and every
// result was lost. Cut at MAX_BATCH_BODY_BYTES, every result is stored, each
// handler ran exactly once, and every job is done. Own probe_key prefix (files
// run in parallel against one server).
import { describe, expect, inject, it } from "vitest";
import type { FleetEvents } from "../../src/client/events";
import { FleetClient, Worker } from "../../src/client/index";
import { MAX_RESULT_BYTES, jsonByteLength } from "../../src/lib/queue";
import { eventually } from "./support/eventually";
import { randomKey } from "./support/fleet-api";

const JOBS = 40;
const client = new FleetClient({
  url: inject("pbUrl"), email: inject("adminEmail"), password: inject("adminPassword"),
});

/** A result of exactly MAX_RESULT_BYTES as JSON, naming its job. */
function bigResult(jobId: string): { jobId: string; blob: string } {
  return { jobId, blob: "r".repeat(MAX_RESULT_BYTES - jsonByteLength({ jobId, blob: "" })) };
}

describe("Worker with 40 results of about 1 MiB finishing together", () => {
  it("stores every result, runs each handler exactly once, and leaves every job done", async () => {
    const prefix = randomKey("wlr") + "/";
    const enqueued = await client.enqueueMany(Array.from({ length: JOBS }, (_, i) => ({ probeKey: `${prefix}${i}`, payload: { i } })));
    const ids = new Set(enqueued.map((j) => j.id));
    expect(ids.size).toBe(JOBS);

    // The handlers wait for each other, so that all 40 results are ready at once.
    const runs = new Map<string, number>();
    let allStarted!: () => void;
    const started = new Promise<void>((resolve) => (allStarted = resolve));
    const worker = new Worker(client, {
      workerId: randomKey("wlr-worker"), concurrency: JOBS, leaseSeconds: 60, pollInterval: 50, maxPollInterval: 200,
      probeKeyPrefix: prefix,
      handler: async (job) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        if (runs.size === JOBS) allStarted();
        await started;
        return bigResult(job.id);
      },
    });
    const errors: Array<FleetEvents["error"][0]> = [];
    const released: string[] = [];
    const lost: string[] = [];
    worker.on("error", (e) => errors.push(e));
    worker.on("released", (e) => released.push(e.jobId));
    worker.on("lease_lost", (e) => lost.push(e.jobId));
    worker.start();
    try {
      await eventually(async () => expect(released.length).toBe(JOBS), 90_000, 100);
    } finally {
      await worker.stop();
    }

    expect(errors.map((e) => `${e.op}: ${e.error.message}`)).toEqual([]);
    expect(lost).toEqual([]);
    expect(new Set(released)).toEqual(ids);
    expect([...runs.keys()].sort()).toEqual([...ids].sort());
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    for (const id of ids) {
      const row = await client.getJob(id);
      const result = row.result as { jobId: string; blob: string };
      expect([row.status, row.attempts, result.jobId, result.blob.length]).toEqual(["done", 1, id, bigResult(id).blob.length]);
    }
  }, 150_000);
});
