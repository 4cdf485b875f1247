// The attempts guard (docs/queue.md): a job with maxAttempts 3 whose worker process
// is SIGKILLed every time it runs it is dead-lettered after exactly 3
// deliveries, whichever path reclaims it: claim by id, claim-next steals, or
// the sweeper's re-queues then claim-next (the sweeper dead-letters a held job
// that used its attempts). A fourth delivery never happens: the claim that
// would make it dead-letters the job instead. With PB_FLEET_MAX_ORPHANS below
// max_attempts the orphan cap fires first, with its own reason.
//
// Each worker is a child process (support-soak/poison-worker.mjs) that claims
// over the raw API, renews its 1 s lease with progress, and is SIGKILLed
// mid-work. The servers are the file's own: the orphan cap is their
// environment.
import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePbDate } from "../../src/lib/lease";
import { get, getQueueJob, post, randomKey, type ApiResponse, type RequestOptions } from "./support/fleet-api";
import { sleep } from "./support/race";
import { startOwnServer, type OwnServer } from "./support/own-server";

const WORKER_SCRIPT = join(resolve(import.meta.dirname), "support-soak/poison-worker.mjs");
const LEASE_SECONDS = 1;
const RENEW_EVERY_MS = 250;
const MAX_ATTEMPTS = 3;

type Path = "claim by id" | "claim-next steals" | "sweeper re-queues, then claim-next";

interface WorkerLine {
  ev: "claim" | "renew";
  status: number;
  body: any;
}

/** What one worker process did before it was killed (or exited, holding nothing). */
interface Delivery {
  workerId: string;
  claim: WorkerLine;
  won: boolean;
  leaseToken: string | null;
  /** The lease end of its last successful renew (or of its claim). */
  leaseEnd: number | null;
}

const servers: OwnServer[] = [];
let capHigh: RequestOptions;
let capLow: RequestOptions;
const LOW_CAP = 2;

beforeAll(async () => {
  const [high, low] = await Promise.all([
    startOwnServer({ env: { PB_FLEET_MAX_ORPHANS: "100" } }),
    startOwnServer({ env: { PB_FLEET_MAX_ORPHANS: String(LOW_CAP) } }),
  ]);
  servers.push(high, low);
  capHigh = { baseUrl: high.url, token: high.token };
  capLow = { baseUrl: low.url, token: low.token };
  expect((await get("/api/fleet/stats", capHigh)).body.orphanCap).toBe(100);
  expect((await get("/api/fleet/stats", capLow)).body.orphanCap).toBe(LOW_CAP);
});

afterAll(async () => {
  await Promise.allSettled(servers.map((s) => s.stop()));
});

/**
 * Runs one worker process: it claims (by id, or claim-next under the prefix);
 * once it holds the job and has renewed it once, it is SIGKILLed mid-work.
 */
async function runDyingWorker(on: RequestOptions, mode: "claim" | "claim-next", jobId: string, prefix: string, workerId: string): Promise<Delivery> {
  const child = spawn(process.execPath, [WORKER_SCRIPT], {
    env: {
      ...process.env,
      POISON_WORKER_CONFIG: JSON.stringify({ url: on.baseUrl, token: on.token, mode, jobId, prefix, workerId, leaseSeconds: LEASE_SECONDS, renewEveryMs: RENEW_EVERY_MS }),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (l) => stderr.push(l));
  // "close": after the process ended and its output was read to the end.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once("close", (code, signal) => r({ code, signal })));
  const lines: WorkerLine[] = [];
  let delivery: Delivery | null = null;
  const settled = new Promise<void>((done) => {
    createInterface({ input: child.stdout! }).on("line", (text) => {
      const line = JSON.parse(text) as WorkerLine;
      lines.push(line);
      if (line.ev === "claim") {
        const won = mode === "claim" ? line.body?.claimed === true : (line.body?.jobs?.length ?? 0) > 0;
        const view = mode === "claim" ? line.body?.job : line.body?.jobs?.[0]?.job;
        const leaseToken = mode === "claim" ? line.body?.leaseToken : line.body?.jobs?.[0]?.leaseToken;
        delivery = { workerId, claim: line, won, leaseToken: won ? leaseToken : null, leaseEnd: won ? parsePbDate(view.lease_expires_at) : null };
        if (!won) done();
      } else if (line.ev === "renew" && line.body?.renewed === true && delivery) {
        // Every renew seen moves the lease end, a late one included.
        delivery.leaseEnd = parsePbDate(line.body.job.lease_expires_at);
        child.kill("SIGKILL"); // dies mid-work, holding the job
        done();
      } else {
        done(); // a refused renew: the worker exits on its own (checked below)
      }
    });
    void exited.then(() => done());
  });
  await settled;
  const exit = await exited;
  const d = delivery as Delivery | null;
  expect(d, `worker printed no claim (exit ${JSON.stringify(exit)}): ${stderr.join("\n")}`).not.toBeNull();
  expect(d!.claim.status, JSON.stringify(d!.claim.body)).toBe(200);
  if (d!.won) {
    expect(exit.signal, `a worker that won must die holding the job: ${JSON.stringify(lines)} ${stderr.join("\n")}`).toBe("SIGKILL");
    // Killed after its first renew (a slow parent may see one more before the kill lands).
    const renews = lines.filter((l) => l.ev === "renew").map((l) => l.body.renewed);
    expect(renews.length).toBeGreaterThanOrEqual(1);
    expect(renews.every((r) => r === true), JSON.stringify(lines)).toBe(true);
  } else {
    expect(exit, stderr.join("\n")).toEqual({ code: 0, signal: null });
  }
  return d!;
}

/** Waits until the dead worker's lease has passed. */
async function waitOutLease(d: Delivery): Promise<void> {
  await sleep(d.leaseEnd! - Date.now() + 150);
}

async function enqueuePoison(on: RequestOptions, maxAttempts: number): Promise<{ id: string; prefix: string }> {
  const prefix = randomKey("poison-attempts") + "/";
  const res = await post("/api/fleet/enqueue", { jobs: [{ probeKey: prefix + "job", payload: { kills: "its worker" }, maxAttempts }] }, on);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { id: res.body.jobs[0].id, prefix };
}

/**
 * Delivers the job to dying workers along `path` until a claim (or, on the
 * sweeper path, the sweep) stops handing it out; returns every worker's
 * delivery, the winning ones first, then the one that got nothing.
 */
async function deliverUntilGivenUp(on: RequestOptions, path: Path, job: { id: string; prefix: string }): Promise<{ deliveries: Delivery[]; sweeps: ApiResponse[] }> {
  const deliveries: Delivery[] = [];
  const sweeps: ApiResponse[] = [];
  const mode = path === "claim by id" ? "claim" : "claim-next";
  for (let n = 1; n <= 10; n++) {
    const d = await runDyingWorker(on, mode, job.id, job.prefix, `dying-${n}`);
    deliveries.push(d);
    if (!d.won) break;
    if (mode === "claim-next") {
      // The attempts so far, this delivery included, as the claim answer says.
      expect(d.claim.body.jobs[0].job).toMatchObject({ id: job.id, attempts: n, max_attempts: expect.any(Number) });
    } else {
      expect(d.claim.body.job.id).toBe(job.id);
    }
    const held = await getQueueJob(job.id, on);
    expect(held).toMatchObject({ status: "running", claimed_by: d.workerId, attempts: n });
    expect(held.progress).toMatchObject({ step: expect.any(Number) });
    await waitOutLease(d);
    if (path === "sweeper re-queues, then claim-next") {
      const sweep = await post("/api/fleet/sweep", { probeKeyPrefix: job.prefix }, on);
      expect(sweep.status).toBe(200);
      sweeps.push(sweep);
    }
  }
  return { deliveries, sweeps };
}

describe("a job that kills its worker every time is dead-lettered after max_attempts deliveries", () => {
  it.each<Path>(["claim by id", "claim-next steals", "sweeper re-queues, then claim-next"])(
    "maxAttempts 3, reclaimed by %s: exactly 3 deliveries, then dead-lettered",
    async (path) => {
      const job = await enqueuePoison(capHigh, MAX_ATTEMPTS);
      const { deliveries, sweeps } = await deliverUntilGivenUp(capHigh, path, job);
      const won = deliveries.filter((d) => d.won);
      expect(won.map((d) => d.workerId)).toEqual(["dying-1", "dying-2", "dying-3"]);
      // The fourth worker got nothing: what a claim of any unclaimable job gets.
      const last = deliveries[deliveries.length - 1]!;
      expect(last.won).toBe(false);
      expect(last.claim.body).toEqual(path === "claim by id" ? { claimed: false } : { jobs: [] });

      if (path === "sweeper re-queues, then claim-next") {
        // Two re-queues, then the sweeper itself dead-letters the job that used its attempts.
        expect(sweeps.map((s) => s.body)).toEqual([
          { requeued: 1, gaveUp: 0, timedOut: 0, jobs: [{ id: job.id, outcome: "requeued", claimedBy: "dying-1", consecutiveOrphanCount: 1 }] },
          { requeued: 1, gaveUp: 0, timedOut: 0, jobs: [{ id: job.id, outcome: "requeued", claimedBy: "dying-2", consecutiveOrphanCount: 2 }] },
          { requeued: 0, gaveUp: 1, timedOut: 0, jobs: [expect.objectContaining({ id: job.id, outcome: "gave_up", claimedBy: "dying-3" })] },
        ]);
      }
      const row = await getQueueJob(job.id, capHigh);
      expect(row).toMatchObject({
        status: "failed",
        attempts: MAX_ATTEMPTS,
        max_attempts: MAX_ATTEMPTS,
        last_error: "max attempts reached",
        claimed_by: "",
        lease_token: "",
        // claim by id keeps the reference's bookkeeping (a steal is no orphaning); the others count each lost holder.
        consecutive_orphan_count: path === "claim by id" ? 0 : 2,
      });
      expect(row.dead_lettered_at).not.toBe("");
      expect(row.finished_at).toBe(row.dead_lettered_at);
      expect(row.result).toBeNull();

      // The last holder's late release is refused: it no longer holds the job.
      const lastHolder = won[won.length - 1]!;
      expect(await post("/api/fleet/release", { jobId: job.id, workerId: lastHolder.workerId, leaseToken: lastHolder.leaseToken, status: "done" }, capHigh)).toEqual({
        status: 200, body: { released: false, reason: "refused_not_holder" },
      });
      // Nobody gets it again, by either claim.
      expect((await post("/api/fleet/claim-next", { workerId: "after", probeKeyPrefix: job.prefix }, capHigh)).body).toEqual({ jobs: [] });
      expect((await post("/api/fleet/claim", { jobId: job.id, workerId: "after" }, capHigh)).body).toEqual({ claimed: false });
      expect((await getQueueJob(job.id, capHigh)).version).toBe(row.version);
    },
    60_000,
  );

  it.each<Path>(["claim-next steals", "sweeper re-queues, then claim-next"])(
    `PB_FLEET_MAX_ORPHANS=${LOW_CAP} below maxAttempts 5, reclaimed by %s: the orphan cap gives it up first (reason orphan_cap)`,
    async (path) => {
      const job = await enqueuePoison(capLow, 5);
      const { deliveries, sweeps } = await deliverUntilGivenUp(capLow, path, job);
      expect(deliveries.filter((d) => d.won)).toHaveLength(LOW_CAP + 1);
      expect(deliveries[deliveries.length - 1]!.claim.body).toEqual({ jobs: [] });
      if (path === "sweeper re-queues, then claim-next") {
        expect(sweeps.map((s) => [s.body.requeued, s.body.gaveUp])).toEqual([[1, 0], [1, 0], [0, 1]]);
      }
      const row = await getQueueJob(job.id, capLow);
      expect(row).toMatchObject({
        status: "failed",
        attempts: LOW_CAP + 1,
        max_attempts: 5,
        claimed_by: "pb-fleet-sweeper",
        lease_token: "",
        consecutive_orphan_count: LOW_CAP,
        result: { reason: "orphan_cap", lastHolder: `dying-${LOW_CAP + 1}` },
      });
      expect(row.last_error).not.toBe("max attempts reached");
      expect(row.last_error).toContain("gave up");
      expect(row.dead_lettered_at).not.toBe("");
      expect(row.finished_at).not.toBe("");
    },
    60_000,
  );
});
