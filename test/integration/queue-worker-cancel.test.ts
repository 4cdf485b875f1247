// Cancelling a job a Worker is running, against the real server (docs/queue.md):
// the cancel reaches the handler as its signal aborting at the holder's next
// renew (refused), and the Worker then writes nothing: no release, no result,
// no error. Progress the handler reported is stored by a successful renew, and
// not by the refused one. A cancelled job comes back through retry and the
// Worker runs it again; a cancelled pending job is never run. Each test works
// under its own probe_key prefix (files run in parallel against one server).
import { describe, expect, inject, it } from "vitest";
import type { FleetEvents } from "../../src/client/events";
import { FleetClient, Worker, type WorkerJob } from "../../src/client/index";
import { getQueueJob, randomKey, type QueueJobRecord } from "./support/fleet-api";
import { eventually } from "./support/eventually";

const client = new FleetClient({ url: inject("pbUrl"), email: inject("adminEmail"), password: inject("adminPassword") });

const LEASE_SECONDS = 3;
/** The Worker renews every leaseSeconds / 3 (its default renewEvery). */
const RENEW_INTERVAL_MS = (LEASE_SECONDS * 1000) / 3;
/** A renew's round trip and timer granularity on a loaded machine. */
const SLACK_MS = 800;
/**
 * How soon after the cancel the handler's signal must abort: by the next
 * renew, whose refusal is the reason asserted beside it (so the abort cannot
 * be the lease lapsing), with room for one renew held up on a loaded machine
 * (a CI run on 2026-12-07 saw 2,743 ms with every test file at once). A lapse
 * would come at the lease's end, and say lease_expired.
 */
const ABORT_WITHIN_MS = 2 * RENEW_INTERVAL_MS + SLACK_MS + 500;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** `promise`, or a failure naming `what` when it has not settled after `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer!: ReturnType<typeof setTimeout>;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Every event of `names` the worker emits, in order, as [name, payload]. */
function record(worker: Worker<any, any>, names: (keyof FleetEvents)[]): [string, any][] {
  const seen: [string, any][] = [];
  for (const name of names) worker.on(name, (e: any) => seen.push([name, e]));
  return seen;
}

/** One handler run the test can watch: when it started, its job, when its signal aborted and why. */
interface Run {
  job: WorkerJob<unknown>;
  startedAt: number;
  aborted: Promise<{ at: number; reason: unknown }>;
}

/**
 * A Worker (lease 3 s, so a renew about every second) whose handler reports
 * progress { step: 1 } at once and then does what `body` says (run `index`
 * is 0 for the first run): wait for its signal and then return or throw, or
 * anything else. Runs land in `runs`; `nextRun()` resolves with the next one to start.
 */
function cancellableWorker(prefix: string, body: (run: Run, signal: AbortSignal, index: number) => Promise<unknown>) {
  const runs: Run[] = [];
  let waiting: ((run: Run) => void) | null = null;
  const worker = new Worker(client, {
    workerId: randomKey("qwc-worker"), leaseSeconds: LEASE_SECONDS, pollInterval: 50, maxPollInterval: 200, probeKeyPrefix: prefix,
    handler: async (job, signal) => {
      const aborted = new Promise<{ at: number; reason: unknown }>((resolve) =>
        signal.addEventListener("abort", () => resolve({ at: Date.now(), reason: signal.reason }), { once: true }));
      const run: Run = { job, startedAt: Date.now(), aborted };
      const index = runs.push(run) - 1;
      waiting?.(run);
      waiting = null;
      job.progress({ step: 1, of: 3 });
      return body(run, signal, index);
    },
  });
  const nextRun = () => new Promise<Run>((resolve) => (waiting = resolve));
  return { worker, runs, nextRun };
}

/** Waits until a renew has stored the handler's first progress report; answers the row then. */
function progressStored(id: string): Promise<QueueJobRecord> {
  return eventually(async () => {
    const row = await getQueueJob(id);
    expect(row.progress).toEqual({ step: 1, of: 3 });
    return row;
  }, 10_000);
}

describe("cancelling a job a Worker is running", () => {
  it("aborts the handler's signal within one renew interval, and the Worker writes nothing after (a value returned is not released)", async () => {
    const prefix = randomKey("qwc-run") + "/";
    const job = await client.enqueue(`${prefix}job`, { maxAttempts: 3, payload: { slow: true } });
    const { worker, nextRun } = cancellableWorker(prefix, async (run) => {
      await run.aborted;
      return { late: "a result the worker must not write" };
    });
    const events = record(worker, ["released", "lease_lost", "result_written", "failed", "retried"]);
    const started = nextRun();
    worker.start();
    try {
      const run = await within(started, 10_000, "the handler starting");
      expect(run.job).toMatchObject({ id: job.id, attempt: 1, maxAttempts: 3, payload: { slow: true } });

      // The progress reported at the start was carried by a renew (about a second after the claim).
      const before = await progressStored(job.id);
      expect(["claimed", "running"]).toContain(before.status);
      expect(before).toMatchObject({ claimed_by: worker.workerId, attempts: 1, result: null, last_error: "" });
      // Newer progress, recorded now: the next renew (refused, after the cancel) must not store it.
      run.job.progress({ step: 2, of: 3 });

      const cancelAt = Date.now();
      const answer = await client.cancel(job.id);
      expect(answer).toMatchObject({ cancelled: true, job: { id: job.id, status: "cancelled" } });
      const cancelled = await getQueueJob(job.id);
      expect(cancelled).toMatchObject({ status: "cancelled", claimed_by: worker.workerId, result: null, last_error: "" });
      expect(cancelled.finished_at).not.toBe("");

      const { at, reason } = await within(run.aborted, 5_000, "the handler's signal aborting after the cancel");
      console.log(`[queue-worker-cancel] signal aborted ${at - cancelAt} ms after the cancel was sent`);
      expect(at - cancelAt, "abort after the cancel (ms)").toBeLessThanOrEqual(ABORT_WITHIN_MS);
      expect(reason).toMatchObject({ name: "LeaseLostError", reason: "renew_refused" });

      // "finish": waits until the handler has returned and the worker has done whatever it does about it.
      await worker.stop();
      await sleep(300);
      const after = await getQueueJob(job.id);
      // Nothing at all was written after the cancel: same version, status, result, error, progress.
      expect(after).toEqual(cancelled);
      // The progress recorded just before the cancel rode on the refused renew: not stored.
      expect(after.progress).not.toEqual({ step: 2, of: 3 });
      expect(events.map(([n, e]) => [n, e.reason ?? e.status])).toEqual([["lease_lost", "renew_refused"]]);
    } finally {
      await worker.stop();
    }
  });

  it("a handler that throws once aborted sends no retry release either; retry() then brings the job back and the Worker completes it", async () => {
    const prefix = randomKey("qwc-retry") + "/";
    const job = await client.enqueue(`${prefix}job`, { maxAttempts: 3 });
    const { worker, runs, nextRun } = cancellableWorker(prefix, async (run, signal, index) => {
      if (index > 0) return { secondRun: true, attempt: run.job.attempt };
      await run.aborted;
      throw signal.reason; // an error like any other: were it released, it would be a `retry` with its message
    });
    const events = record(worker, ["released", "lease_lost", "result_written", "failed", "retried"]);
    const firstRun = nextRun();
    worker.start();
    try {
      const run = await within(firstRun, 10_000, "the handler starting");
      await progressStored(job.id);
      const cancelAt = Date.now();
      expect(await client.cancel(job.id)).toMatchObject({ cancelled: true });
      const cancelled = await getQueueJob(job.id);
      const { at, reason } = await within(run.aborted, 5_000, "the handler's signal aborting after the cancel");
      expect(at - cancelAt, "abort after the cancel (ms)").toBeLessThanOrEqual(ABORT_WITHIN_MS);
      expect(reason).toMatchObject({ name: "LeaseLostError", reason: "renew_refused" });
      // Let the handler's rejection, and anything the worker might send after it, happen.
      await eventually(async () => expect(worker.inFlight).toBe(0), 5_000);
      await sleep(300);
      expect(await getQueueJob(job.id)).toEqual(cancelled);
      expect(cancelled).toMatchObject({ status: "cancelled", last_error: "", result: null, attempts: 1 });
      expect(events.map(([n, e]) => [n, e.reason ?? e.status])).toEqual([["lease_lost", "renew_refused"]]);
      expect(runs).toHaveLength(1);

      // Back to pending with attempts 0; the Worker, still polling, claims it again as attempt 1 and completes it.
      const secondRun = nextRun();
      expect(await client.retry(job.id)).toMatchObject({ retried: true, job: { id: job.id, status: "pending" } });
      const again = await within(secondRun, 10_000, "the handler starting again after retry()");
      expect(again.job).toMatchObject({ id: job.id, attempt: 1, maxAttempts: 3 });
      const done = await eventually(async () => {
        const row = await getQueueJob(job.id);
        expect(row.status).toBe("done");
        return row;
      });
      expect(done).toMatchObject({
        status: "done", claimed_by: worker.workerId, attempts: 1, result: { secondRun: true, attempt: 1 }, dead_lettered_at: "",
      });
      await eventually(async () => expect(events).toHaveLength(2));
      expect(events[1]).toEqual(["released", { jobId: job.id, workerId: worker.workerId, status: "done", version: done.version, committed: "released" }]);
      expect(runs).toHaveLength(2);
    } finally {
      await worker.stop();
    }
  });

  it("a job cancelled while pending (not yet due) is never run", async () => {
    const prefix = randomKey("qwc-pending") + "/";
    const job = await client.enqueue(`${prefix}job`, { maxAttempts: 3, delaySeconds: 1 });
    expect(await client.cancel(job.id)).toMatchObject({ cancelled: true, job: { id: job.id, status: "cancelled" } });
    const { worker, runs } = cancellableWorker(prefix, async () => "never run");
    worker.start();
    try {
      await sleep(2_500); // well past its due time
      expect(runs).toHaveLength(0);
      expect(await getQueueJob(job.id)).toMatchObject({ status: "cancelled", attempts: 0, claimed_by: "" });
    } finally {
      await worker.stop();
    }
  });
});
