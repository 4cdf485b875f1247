// The conformance scenarios (docs/client-conformance.md), the same for every
// client: each test enqueues jobs whose payloads tell the client's conformance
// worker what to do, runs one or two worker processes, and checks the rows
// through the admin API and what the workers printed. Each runs in a queue of
// its own with an identity that may take only that queue, so they run side by
// side on one server.
import { describe, expect, inject, test, type TestContext } from "vitest";
import { enqueueOk, get, getQueueJob, post, randomKey, type QueueJobRecord } from "../integration/support/fleet-api";
import { createWorkerIdentity, type WorkerIdentity } from "../integration/support/worker-identities";
import type { ClientName, ConformanceClient } from "./support/clients";
import { startLossyProxy, type LossyProxy } from "./support/lossy-proxy";
import { WorkerProcess, type WorkerSettings } from "./support/worker-process";

/** The payloads of docs/client-conformance.md. */
type Op =
  | { op: "echo"; value?: unknown }
  | { op: "fail"; message: string; untilAttempt?: number }
  | { op: "permanent"; message: string }
  | { op: "sleep"; ms: number; value?: unknown }
  | { op: "wait_signal"; ms?: number }
  | { op: "crash"; untilAttempt?: number; value?: unknown }
  | { op: "progress"; progress: unknown; ms?: number; value?: unknown }
  | { op: "rate_limited"; retryAfterSeconds: number; value?: unknown };

interface JobSpec {
  payload: Op;
  maxAttempts?: number;
  timeoutSeconds?: number;
}

interface Lane {
  queue: string;
  identity: WorkerIdentity;
  /** Enqueued into this lane's queue (as the admin); the ids in order. */
  enqueue(jobs: JobSpec[]): Promise<string[]>;
  /** A worker process of the client on this lane's queue. */
  worker(settings?: Partial<WorkerSettings>): WorkerProcess;
  rows(): Promise<QueueJobRecord[]>;
  /** A lossy proxy in front of the server (closed when the test ends). */
  proxy(drops: Record<string, number>): Promise<LossyProxy>;
}

const JOBS = "/api/collections/probe_jobs/records";
const SETTLE_MS = 60_000;

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = SETTLE_MS, explain: () => string = () => ""): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${timeoutMs} ms; last: ${JSON.stringify(value)}\n${explain()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const echoOf = (value: unknown, attempt: number) => ({ echo: value ?? null, attempt });

export function conformanceSuite(name: ClientName): void {
  function client(): ConformanceClient {
    const clients = inject("conformanceClients");
    const found = clients[name];
    if (!found) throw new Error(`the ${name} client was not built in this run (PB_FLEET_CONFORMANCE_CLIENTS=${process.env.PB_FLEET_CONFORMANCE_CLIENTS}); its scenarios cannot pass without it.`);
    return found;
  }

  /** A test's own queue, identity and workers; its workers are killed (and its proxy closed) when the test ends. */
  async function lane(scenario: string, ctx: TestContext): Promise<Lane> {
    const started: WorkerProcess[] = [];
    const proxies: LossyProxy[] = [];
    ctx.onTestFinished(async () => {
      for (const w of started) w.kill();
      for (const p of proxies) await p.close();
    });
    const queue = `conf-${name}-${scenario}-${randomKey("q").replace(/[^a-z0-9]/gi, "").slice(-8)}`;
    const identity = await createWorkerIdentity({ queues: [queue] });
    let suffixes = 0;
    return {
      queue,
      identity,
      async enqueue(jobs) {
        const answer = await enqueueOk(
          jobs.map((job, i) => ({
            probeKey: `${queue}/${i}`,
            queue,
            payload: job.payload,
            ...(job.maxAttempts !== undefined ? { maxAttempts: job.maxAttempts } : {}),
            ...(job.timeoutSeconds !== undefined ? { timeoutSeconds: job.timeoutSeconds } : {}),
          })),
        );
        return answer.map((j) => j.id);
      },
      worker(settings = {}) {
        const w = new WorkerProcess(client(), {
          url: inject("pbUrl"),
          identity: identity.name,
          password: identity.password,
          suffix: `${name}-${scenario}-${++suffixes}`,
          queue,
          ...settings,
        });
        started.push(w);
        return w;
      },
      async proxy(drops) {
        const p = await startLossyProxy(inject("pbUrl"), drops);
        proxies.push(p);
        return p;
      },
      async rows() {
        const filter = encodeURIComponent(`queue = '${queue}'`);
        const res = await get(`${JOBS}?filter=${filter}&perPage=500&skipTotal=1`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return res.body.items as QueueJobRecord[];
      },
    };
  }

  const settled = (rows: QueueJobRecord[], count: number) =>
    rows.length === count && rows.every((r) => r.status === "done" || r.status === "failed" || r.status === "cancelled");

  describe.concurrent(`the ${name} client's Worker`, () => {
    test("drains a queue exactly once across two processes", async (ctx) => {
      const l = await lane("drain", ctx);
      // Both signed in and polling before the jobs come, so that both race for them (and a process that
      // got no job still stops as the contract says, not killed by a SIGTERM before its start-up ended).
      const a = l.worker();
      const b = l.worker();
      await Promise.all([a.waitFor("ready", { timeoutMs: 60_000 }), b.waitFor("ready", { timeoutMs: 60_000 })]);
      const ids = await l.enqueue(Array.from({ length: 60 }, (_, i) => ({ payload: { op: "echo", value: { n: i } } })));
      const rows = await until("every job done", () => l.rows(), (r) => settled(r, 60), SETTLE_MS, () => a.describe() + b.describe());
      for (const row of rows) {
        const n = ids.indexOf(row.id);
        expect(row.status, row.id).toBe("done");
        expect(row.attempts).toBe(1);
        expect(row.result).toEqual(echoOf({ n }, 1));
      }
      for (const id of ids) expect([...a.eventsOf("start", id), ...b.eventsOf("start", id)], id).toHaveLength(1);
      expect(await a.stop(), a.describe()).toEqual({ code: 0, signal: null });
      expect(await b.stop(), b.describe()).toEqual({ code: 0, signal: null });
      expect(a.eventsOf("stopped")).toHaveLength(1);
    });

    test("retries a raised error, dead-letters at the cap, fails a permanent error at once", async (ctx) => {
      const l = await lane("retry", ctx);
      const [flaky, doomed, permanent] = await l.enqueue([
        { payload: { op: "fail", message: "flaky", untilAttempt: 2 }, maxAttempts: 5 },
        { payload: { op: "fail", message: "always broken" }, maxAttempts: 2 },
        { payload: { op: "permanent", message: "gone for good" }, maxAttempts: 5 },
      ]);
      const w = l.worker();
      await until("all three settled", () => l.rows(), (r) => settled(r, 3), SETTLE_MS, () => w.describe());
      const f = await getQueueJob(flaky!);
      expect([f.status, f.attempts, f.result]).toEqual(["done", 2, echoOf(undefined, 2)]);
      const d = await getQueueJob(doomed!);
      expect([d.status, d.attempts, d.last_error]).toEqual(["failed", 2, "always broken"]);
      expect(d.dead_lettered_at).not.toBe("");
      const p = await getQueueJob(permanent!);
      expect([p.status, p.attempts, p.last_error]).toEqual(["failed", 1, "gone for good"]);
      expect(w.eventsOf("start", permanent)).toHaveLength(1);
      expect(await w.stop(), w.describe()).toEqual({ code: 0, signal: null });
    });

    test("a job whose worker crashed is finished by another once the lease lapses", async (ctx) => {
      const l = await lane("crash", ctx);
      const [id] = await l.enqueue([{ payload: { op: "crash", untilAttempt: 2, value: "survived" }, maxAttempts: 5 }]);
      const first = l.worker({ leaseSeconds: 2 });
      await first.waitFor("crash", { jobId: id });
      expect(await first.exited, first.describe()).toEqual({ code: 17, signal: null });
      const held = await getQueueJob(id!);
      expect(["claimed", "running"]).toContain(held.status);
      const second = l.worker({ leaseSeconds: 2 });
      const row = await until("the job done", () => getQueueJob(id!), (r) => r.status === "done", SETTLE_MS, () => second.describe());
      expect([row.attempts, row.result]).toEqual([2, echoOf("survived", 2)]);
      expect(second.eventsOf("start", id).map((e) => e.attempt)).toEqual([2]);
      expect(await second.stop(), second.describe()).toEqual({ code: 0, signal: null });
    });

    test("answers lost on the way back lose no result and run nothing twice", async (ctx) => {
      const l = await lane("lost", ctx);
      const proxy = await l.proxy({ "/api/fleet/complete": 2, "/api/fleet/heartbeat": 1 });
      const specs: JobSpec[] = [
        ...Array.from({ length: 4 }, (_, i): JobSpec => ({ payload: { op: "sleep", ms: 1500, value: `slow-${i}` } })),
        ...Array.from({ length: 16 }, (_, i): JobSpec => ({ payload: { op: "echo", value: `fast-${i}` } })),
      ];
      const ids = await l.enqueue(specs);
      const w = l.worker({ url: proxy.url, leaseSeconds: 3 });
      const rows = await until("every job done", () => l.rows(), (r) => settled(r, ids.length), SETTLE_MS, () => w.describe());
      expect(proxy.dropped.get("/api/fleet/complete"), "complete answers dropped").toBe(2);
      expect(proxy.dropped.get("/api/fleet/heartbeat"), "heartbeat answers dropped").toBe(1);
      for (const row of rows) {
        const i = ids.indexOf(row.id);
        const spec = specs[i]!.payload as { value: unknown };
        expect([row.status, row.attempts, row.result], row.id).toEqual(["done", 1, echoOf(spec.value, 1)]);
        expect(w.eventsOf("start", row.id), row.id).toHaveLength(1);
      }
      expect(await w.stop(), w.describe()).toEqual({ code: 0, signal: null });
    });

    test("a job cancelled while it runs has its handler signalled and stays cancelled", async (ctx) => {
      const l = await lane("cancel", ctx);
      const [id] = await l.enqueue([{ payload: { op: "wait_signal", ms: 30_000 } }]);
      const w = l.worker({ leaseSeconds: 3 });
      await w.waitFor("start", { jobId: id });
      const cancel = await post("/api/fleet/cancel", { jobId: id });
      expect(cancel.body).toMatchObject({ cancelled: true });
      await w.waitFor("signal", { jobId: id, timeoutMs: 10_000 });
      const [next] = await l.enqueue([{ payload: { op: "echo", value: "after" } }]);
      await until("the next job done", () => getQueueJob(next!), (r) => r.status === "done", SETTLE_MS, () => w.describe());
      const row = await getQueueJob(id!);
      expect([row.status, row.result]).toEqual(["cancelled", null]);
      expect(await w.stop(), w.describe()).toEqual({ code: 0, signal: null });
    });

    test("a job past its timeout has its handler signalled and is given up with a timeout error", async (ctx) => {
      const l = await lane("timeout", ctx);
      const [id] = await l.enqueue([{ payload: { op: "wait_signal", ms: 30_000 }, timeoutSeconds: 2, maxAttempts: 1 }]);
      const w = l.worker({ leaseSeconds: 10 });
      const [start] = await w.waitFor("start", { jobId: id });
      const [signal] = await w.waitFor("signal", { jobId: id, timeoutMs: 15_000 });
      // Signalled at the deadline less a margin (docs/client-conformance.md), not before.
      expect(signal!.at - start!.at).toBeGreaterThanOrEqual(1_000);
      const row = await until("the job given up", () => getQueueJob(id!), (r) => r.status === "failed", SETTLE_MS, () => w.describe());
      expect(row.last_error).toMatch(/timed out/);
      expect(row.attempts).toBe(1);
      expect(await w.stop(), w.describe()).toEqual({ code: 0, signal: null });
    });

    test("progress reported by a running handler is on the row before the job ends", async (ctx) => {
      const l = await lane("progress", ctx);
      const progress = { step: "halfway", n: 7 };
      const [id] = await l.enqueue([{ payload: { op: "progress", progress, ms: 4_000, value: "p" } }]);
      const w = l.worker({ leaseSeconds: 3 });
      const seen = await until("the progress stored", () => getQueueJob(id!), (r) => r.progress !== null || r.status === "done", 15_000, () => w.describe());
      expect(seen.status).not.toBe("done");
      expect(seen.progress).toEqual(progress);
      const row = await until("the job done", () => getQueueJob(id!), (r) => r.status === "done", SETTLE_MS, () => w.describe());
      expect(row.result).toEqual(echoOf("p", 1));
      expect(await w.stop(), w.describe()).toEqual({ code: 0, signal: null });
    });

    test("a rate-limited handler parks its job for the time it asked, then finishes it", async (ctx) => {
      const l = await lane("ratelimit", ctx);
      const [id] = await l.enqueue([{ payload: { op: "rate_limited", retryAfterSeconds: 2, value: "later" }, maxAttempts: 1 }]);
      const w = l.worker();
      const row = await until("the job done", () => getQueueJob(id!), (r) => r.status === "done" || r.status === "failed", SETTLE_MS, () => w.describe());
      // Waiting out a rate limit gives its attempt back (docs/flow-control.md), so one allowed attempt is enough.
      expect([row.status, row.attempts, row.result]).toEqual(["done", 1, echoOf("later", 1)]);
      const starts = w.eventsOf("start", id);
      expect(starts.map((s) => s.attempt)).toEqual([1, 1]);
      expect(starts[1]!.at - starts[0]!.at).toBeGreaterThanOrEqual(1_800);
      expect(await w.stop(), w.describe()).toEqual({ code: 0, signal: null });
    });

    test("SIGTERM lets running jobs finish and claims nothing more", async (ctx) => {
      const l = await lane("stop", ctx);
      const running = await l.enqueue(Array.from({ length: 3 }, (_, i): JobSpec => ({ payload: { op: "sleep", ms: 1_500, value: i } })));
      const w = l.worker({ concurrency: 3, leaseSeconds: 3 });
      await w.waitFor("start", { count: 3 });
      const exit = w.stop();
      const later = await l.enqueue(Array.from({ length: 3 }, (): JobSpec => ({ payload: { op: "echo" } })));
      expect(await exit, w.describe()).toEqual({ code: 0, signal: null });
      expect(w.eventsOf("stopped")).toHaveLength(1);
      for (const [i, id] of running.entries()) {
        const row = await getQueueJob(id);
        expect([row.status, row.result], w.describe()).toEqual(["done", echoOf(i, 1)]);
      }
      for (const id of later) {
        const row = await getQueueJob(id);
        expect([row.status, row.attempts]).toEqual(["pending", 0]);
      }
      expect(w.eventsOf("signal")).toEqual([]);
    });
  });
}
