// The Worker on the queue path against the real server (docs/queue.md): a handler
// that throws is run again after the server's backoff until the job's
// max_attempts is used, then the job is dead-lettered with the last error;
// FleetClient.retry brings it back and the Worker runs it again. The handler
// gets the payload exactly as enqueued, and a PermanentJobError fails the job
// at once. Each test works under its own probe_key prefix (files run in
// parallel against one server).
import { describe, expect, inject, it } from "vitest";
import type { FleetEvents } from "../../src/client/events";
import { FleetClient, PermanentJobError, Worker, type WorkerJob } from "../../src/client/index";
import { getQueueJob, randomKey } from "./support/fleet-api";
import { eventually } from "./support/eventually";

const client = new FleetClient({ url: inject("pbUrl"), email: inject("adminEmail"), password: inject("adminPassword") });

/** A worker scoped to `prefix` that polls often, so handler start times follow the server's due times closely. */
function workerFor<R, P>(prefix: string, handler: (job: WorkerJob<P>, signal: AbortSignal) => Promise<R>): Worker<R, P> {
  return new Worker<R, P>(client, {
    workerId: randomKey("qwr-worker"), leaseSeconds: 10, pollInterval: 50, maxPollInterval: 100, probeKeyPrefix: prefix, handler,
  });
}

/** Every event of `names` the worker emits, in order, as [name, payload]. */
function record(worker: Worker<any, any>, names: (keyof FleetEvents)[]): [string, any][] {
  const seen: [string, any][] = [];
  for (const name of names) worker.on(name, (e: any) => seen.push([name, e]));
  return seen;
}

describe("Worker retries on a real server", () => {
  it("a handler that always throws: 3 runs (attempt 1, 2, 3) with growing gaps, dead-lettered with the last error; retry() revives it and the Worker completes it", async () => {
    const prefix = randomKey("qwr-retry") + "/";
    const payload = { probe: "always-throws", n: 3 };
    const job = await client.enqueue(`${prefix}job`, { maxAttempts: 3, payload });
    expect(job.created).toBe(true);

    const runs: { attempt: number; maxAttempts: number; at: number; payload: unknown }[] = [];
    let succeed = false;
    const worker = workerFor<{ ok: true; attempt: number }, typeof payload>(prefix, async (j) => {
      runs.push({ attempt: j.attempt, maxAttempts: j.maxAttempts, at: Date.now(), payload: j.payload });
      if (!succeed) throw new Error(`run ${runs.length} failed`);
      return { ok: true, attempt: j.attempt };
    });
    const events = record(worker, ["retried", "failed", "released", "lease_lost", "result_written"]);
    worker.start();
    try {
      // Backoffs of about 1 s and 2 s (each up to 25% more), plus polls.
      const dead = await eventually(async () => {
        const row = await getQueueJob(job.id);
        expect(row.status).toBe("failed");
        return row;
      }, 30_000);
      expect(dead).toMatchObject({
        status: "failed", attempts: 3, max_attempts: 3, last_error: "run 3 failed", claimed_by: "", result: null, progress: null,
      });
      expect(dead.dead_lettered_at).not.toBe("");
      expect(dead.finished_at).not.toBe("");

      expect(runs.map((r) => [r.attempt, r.maxAttempts])).toEqual([[1, 3], [2, 3], [3, 3]]);
      for (const r of runs) expect(r.payload).toStrictEqual(payload);
      const gaps = [runs[1]!.at - runs[0]!.at, runs[2]!.at - runs[1]!.at];
      expect(gaps[0], `gaps ${gaps}`).toBeGreaterThanOrEqual(1_000);
      expect(gaps[1], `gaps ${gaps}`).toBeGreaterThanOrEqual(2_000);
      expect(gaps[1], `gaps ${gaps}`).toBeGreaterThan(gaps[0]!);
      // Each failure was one `retry` release: two back to pending, the third dead-lettered.
      await eventually(async () => expect(events.filter(([n]) => n === "failed")).toHaveLength(1));
      expect(events.filter(([n]) => n === "released").map(([, e]) => [e.status, e.committed])).toEqual([
        ["retry", "released"], ["retry", "released"], ["retry", "released"],
      ]);
      expect(events.filter(([n]) => n === "retried").map(([, e]) => [e.attempt, e.maxAttempts, e.error])).toEqual([
        [1, 3, "run 1 failed"], [2, 3, "run 2 failed"],
      ]);
      expect(events.filter(([n]) => n === "failed").map(([, e]) => e)).toEqual([
        { jobId: job.id, workerId: worker.workerId, error: "run 3 failed", deadLettered: true },
      ]);
      expect(events.filter(([n]) => n === "lease_lost" || n === "result_written")).toEqual([]);

      // A dead letter is not handed out again: the running Worker leaves it alone.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(runs).toHaveLength(3);
      expect(await getQueueJob(job.id)).toMatchObject({ status: "failed", version: dead.version });

      succeed = true;
      const retried = await client.retry(job.id);
      expect(retried).toMatchObject({ retried: true, job: { id: job.id, status: "pending" } });
      const revived = await getQueueJob(job.id);
      // Claimed straight away by the polling Worker, or still pending: either way attempts restarted from 0.
      if (revived.status === "pending") {
        expect(revived).toMatchObject({ attempts: 0, dead_lettered_at: "", finished_at: "", last_error: "run 3 failed" });
      }

      const done = await eventually(async () => {
        const row = await getQueueJob(job.id);
        expect(row.status).toBe("done");
        return row;
      });
      expect(done).toMatchObject({
        status: "done", attempts: 1, max_attempts: 3, claimed_by: worker.workerId, dead_lettered_at: "",
        result: { ok: true, attempt: 1 },
      });
      expect(done.finished_at).not.toBe("");
      expect(runs.map((r) => r.attempt)).toEqual([1, 2, 3, 1]);
      // The row can be read before the release's answer reaches the worker.
      await eventually(async () => expect(events.filter(([n]) => n === "released")).toHaveLength(4));
      expect(events.filter(([n]) => n === "released").at(-1)![1]).toMatchObject({ status: "done", committed: "released", version: done.version });
    } finally {
      await worker.stop();
    }
  });

  it("the handler receives the payload exactly as enqueued (and null when there is none)", async () => {
    const prefix = randomKey("qwr-payload") + "/";
    const payload = {
      text: "héllo \u2603 \ud83d\ude80 \"quoted\" \\ back\nslash",
      int: 42, negative: -7, float: 3.25, big: 9_007_199_254_740_991, zero: 0,
      yes: true, no: false, nothing: null,
      list: [1, "two", { three: [3] }, [], {}],
      nested: { a: { b: { c: { d: ["deep"] } } } },
      "key with spaces": "ok", "": "empty key",
    };
    const withPayload = await client.enqueue(`${prefix}with`, { payload, maxAttempts: 3 });
    const scalar = await client.enqueue(`${prefix}scalar`, { payload: "just a string", maxAttempts: 3 });
    const without = await client.enqueue(`${prefix}without`, { maxAttempts: 3 });

    const seen = new Map<string, unknown>();
    const worker = workerFor<string, unknown>(prefix, async (j) => {
      seen.set(j.id, j.payload);
      return j.probe_key;
    }).start();
    try {
      await eventually(async () => {
        for (const { id } of [withPayload, scalar, without]) expect((await getQueueJob(id)).status).toBe("done");
      });
    } finally {
      await worker.stop();
    }
    expect(seen.get(withPayload.id)).toStrictEqual(payload);
    expect(seen.get(scalar.id)).toBe("just a string");
    expect(seen.get(without.id)).toBeNull();
    // The row still holds it as enqueued.
    expect((await getQueueJob(withPayload.id)).payload).toStrictEqual(payload);
  });

  it("a PermanentJobError fails the job at once: one run, failed with its message, no retry and no dead letter", async () => {
    const prefix = randomKey("qwr-perm") + "/";
    const job = await client.enqueue(`${prefix}job`, { maxAttempts: 3, payload: { fatal: true } });
    let runs = 0;
    const worker = workerFor<never, unknown>(prefix, async () => {
      runs++;
      throw new PermanentJobError("the probe target does not exist");
    });
    const events = record(worker, ["retried", "failed", "released"]);
    worker.start();
    try {
      const row = await eventually(async () => {
        const r = await getQueueJob(job.id);
        expect(r.status).toBe("failed");
        return r;
      });
      expect(row).toMatchObject({
        status: "failed", attempts: 1, max_attempts: 3, claimed_by: worker.workerId,
        last_error: "the probe target does not exist", dead_lettered_at: "", result: null,
      });
      // Well past the first backoff (>= 1 s): no second run.
      await new Promise((r) => setTimeout(r, 2_000));
      expect(runs).toBe(1);
      expect(await getQueueJob(job.id)).toMatchObject({ status: "failed", version: row.version });
    } finally {
      await worker.stop();
    }
    expect(events.map(([n, e]) => [n, e.status ?? e.error])).toEqual([
      ["released", "failed"], ["failed", "the probe target does not exist"],
    ]);
  });
});
