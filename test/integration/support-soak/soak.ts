// The machinery of the fleet soaks (fleet-soak.test.ts, batched-crash-soak.test.ts):
// a PocketBase of the soak's own (the suite's shared one must not be killed),
// with the server-side cron sweeper off so the client Sweepers do that work;
// fleet processes (fleet-process.mjs: 4 Workers + 1 Sweeper each) on one
// self-contained bundle of src/client; the two crash phases (a worker process
// SIGKILLed and started again; PocketBase SIGKILLed and restarted on the same
// pb_data); and the end-state checks both soaks make.
//
// The jobs are the queue's (docs/queue.md): enqueued through POST /api/fleet/enqueue
// with max_attempts MAX_ATTEMPTS, so the Workers report on the queue path, the
// result in the done release itself. So no job ends `done` without its result,
// not even one whose worker was SIGKILLed right after its release (the window
// the old release-then-write order left). A handler that throws is released
// `retry` and runs again after the server's backoff; a job that uses its
// attempts (abandons and failures in a row) is dead-lettered, and the final
// accounting counts it as such. At the end every job is terminal, each has
// exactly one successful terminal release (by its final holder), and every done
// job carries the result of its final holder's last claim (no result from a
// worker that had lost its lease).
//
// SOAK_MAX_ATTEMPTS sets the jobs' max_attempts (default 3: low enough that a
// few jobs are dead-lettered in a run, so that path is exercised too).
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import * as esbuild from "esbuild";
import { afterAll, beforeAll, expect, inject } from "vitest";
import { ensurePocketBase } from "../../../scripts/pocketbase/binary.mjs";
import { startPocketBase } from "../../../scripts/pocketbase/server.mjs";
import { FleetClient, type JobRecord } from "../../../src/client/index";
import { WORKER_FIELDS, WORKERS_COLLECTION } from "../../../src/lib/identity";
import { layout, type Line } from "../support/pocketbase-line";

const repoRoot = resolve(import.meta.dirname, "../../..");
const CHILD_SCRIPT = join(repoRoot, "test/integration/support-soak/fleet-process.mjs");
const ADMIN = { email: "soak@pb-fleet.test", password: "pb-fleet-soak-password" };
const LEASE_SECONDS = 3;
const WORKERS_PER_PROCESS = 4;
export const MAX_ATTEMPTS = Number(process.env.SOAK_MAX_ATTEMPTS || 3);
/** last_error of a job dead-lettered because it used its attempts (src/lib/queue.ts MAX_ATTEMPTS_ERROR). */
const MAX_ATTEMPTS_ERROR = "max attempts reached";

type PocketBase = Awaited<ReturnType<typeof startPocketBase>>;

/** The host a fleet process runs as: A2 is host A started again; PA and PB are hosts of their own. */
const hostOf = (processName: string): string => (processName.startsWith("P") ? processName : processName.slice(0, 1));

/** A fleet_workers record made as the admin: the credential a Worker host holds. */
async function createIdentity(pb: PocketBase, name: string): Promise<{ identity: string; password: string }> {
  const password = `soak-${name}-password`;
  const res = await fetch(`${pb.url}/api/collections/${WORKERS_COLLECTION}/records`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: pb.token },
    body: JSON.stringify({ [WORKER_FIELDS.name]: name, password, passwordConfirm: password, [WORKER_FIELDS.queues]: [] }),
  });
  if (res.status !== 200) throw new Error(`creating the worker identity ${name}: HTTP ${res.status} ${await res.text()}`);
  return { identity: name, password };
}

/** One line a fleet process printed (see fleet-process.mjs). */
export interface SoakEvent {
  t: number;
  proc: string;
  ev: string;
  role?: "worker" | "sweeper";
  jobId?: string;
  workerId?: string;
  version?: number | null;
  status?: string;
  committed?: string;
  reason?: string;
  op?: string;
  name?: string;
  message?: string;
  /** "failed": the job was dead-lettered by this worker's `retry` release (its last attempt failed). */
  deadLettered?: boolean;
  attempt?: number;
  /** A `calls` line (countCalls): the process's batch calls so far. */
  claimNext?: number;
  claimed?: number;
  heartbeat?: number;
  heartbeatItems?: number;
  complete?: number;
  completeItems?: number;
  renew?: number;
  release?: number;
  /** Complete calls that also claimed, and the jobs they claimed. */
  completeAndClaim?: number;
  rideClaimed?: number;
}

export interface Figures {
  jobs: number;
  done: number;
  failed: number;
  seconds: number;
  workerClaims: number;
  abandonedByHandler: number;
  abandonedClaims: number;
  leaseLost: Record<string, number>;
  sweeperRequeues: number;
  expiredLeaseSteals: number;
  reclaimsTotal: number;
  gaveUp: number;
  renews: number;
  releasesRecoveredAfterLostAnswer: number;
  errors: Record<string, number>;
  jobsWithoutReleaseLine: number;
  /** `retry` releases that put a job back to pending (a handler threw). */
  retried: number;
  /** Failed by the worker (a PermanentJobError), not dead-lettered. */
  failedByWorker: number;
  /** Dead-lettered, by reason: a worker's `retry` release of the last attempt, max attempts at a claim or sweep, the orphan cap. */
  deadLettered: { lastAttemptFailed: number; maxAttemptsReached: number; orphanCap: number };
  /** The issue's invariant: must be 0 (the result travels in the done release). */
  doneWithoutResult: number;
  /** Results written after a release (the old two-step path): must be 0 on the queue path. */
  resultWrites: number;
}

/** What a soak sets: its name, its fleet's settings, and what its checks allow. */
export interface SoakOptions {
  /** Tags the log lines and names the temp folder. */
  name: string;
  /** How long the fleet may take to get to a phase's next step. */
  completionTimeoutMs: number;
  /** Per Worker: jobs at once, and the chance a handler makes its Worker walk away. */
  concurrency: number;
  abandonRate: number;
  /** The fleet processes count their batch calls (`calls` lines). */
  countCalls?: boolean;
  /**
   * A release may report no version (null): an item of `complete` answers no
   * job, so its version is the Worker's reckoning, or null once it could not know.
   */
  releaseVersionMayBeUnknown?: boolean;
  /** More to log with a phase's figures. */
  logExtras?: (events: SoakEvent[]) => Record<string, unknown>;
}

export interface PhaseOutcome {
  figures: Figures & { downSeconds?: number };
  events: SoakEvent[];
}

/**
 * Sets up the soak's PocketBase (beforeAll/afterAll of the calling file) and
 * returns its two crash phases. Each enqueues `jobs` jobs under `prefix`, runs
 * two fleet processes until every job is terminal, with the crash half-way (at
 * 30% terminal), then checks the end state: verify's per-job checks,
 * expectQueuePath, and what the crash must have caused. The caller adds its own.
 */
export function useSoak(options: SoakOptions) {
  let workDir: string;
  let clientModule: string;
  let binary: string;
  let line: Line;
  let pb: PocketBase;
  const identities = new Map<string, { identity: string; password: string }>();
  const children = new Set<ChildProcess>();

  const log = (message: string): void => console.log(`[${options.name}] ${message}`);

  async function startServer(port = 0): Promise<PocketBase> {
    return startPocketBase({
      binary,
      line,
      dataDir: join(workDir, "pb_data"),
      port,
      hooksDir: join(workDir, "pb_hooks"),
      migrationsDir: layout(line).migrationsDir,
      adminEmail: ADMIN.email,
      adminPassword: ADMIN.password,
      env: { PB_FLEET_SWEEP_CRON: "off" },
    });
  }

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), `pb-${options.name}-`));
    // The children load the client from one self-contained bundle of src/client.
    clientModule = join(workDir, "fleet-client.mjs");
    await esbuild.build({
      entryPoints: [join(repoRoot, "src/client/index.ts")],
      bundle: true, platform: "node", format: "esm", target: "node20", outfile: clientModule, logLevel: "silent",
    });
    ({ path: binary, line } = await ensurePocketBase({ version: inject("pbVersion"), log }));
    // PocketBase loads every *.pb.js of its hooks dir: give it exactly the built bundle of its line.
    const hooksDir = join(workDir, "pb_hooks");
    mkdirSync(hooksDir);
    copyFileSync(layout(line).bundle, join(hooksDir, "fleet.pb.js"));
    pb = await startServer();
    log(`PocketBase ${binary} at ${pb.url} (pid ${pb.pid}), data in ${workDir}`);
    // One worker identity per host name letter (A1 and A2 are restarts of host A): the Workers never see the admin password.
    for (const host of ["A", "B", "PA", "PB"]) identities.set(host, await createIdentity(pb, `soak-host-${host.toLowerCase()}`));
  });

  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await pb?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  /** A running fleet-process.mjs; its lines land in `events`. */
  class FleetProcess {
    readonly exited: Promise<number | null>;
    readonly ready: Promise<void>;
    readonly stderr: string[] = [];
    readonly child: ChildProcess;

    constructor(readonly name: string, prefix: string, events: SoakEvent[]) {
      const config = {
        url: pb.url, email: ADMIN.email, password: ADMIN.password, worker: identities.get(hostOf(name))!, prefix,
        workers: WORKERS_PER_PROCESS, concurrency: options.concurrency, leaseSeconds: LEASE_SECONDS,
        // failRate: thrown errors, released `retry`; permanentFailRate: PermanentJobErrors, released `failed`.
        abandonRate: options.abandonRate, failRate: 0.03, permanentFailRate: 0.01, longJobRate: 0.02,
        // Workers poll at most every 500 ms and claim-next steals expired leases
        // itself, so a slower sweeper would hardly ever get to a row first.
        sweepInterval: 250, maxReclaimAttempts: 5,
        countCalls: options.countCalls === true,
        processName: name, clientModule,
      };
      this.child = spawn(process.execPath, [CHILD_SCRIPT], {
        env: { ...process.env, FLEET_SOAK_CONFIG: JSON.stringify(config) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.add(this.child);
      let markReady!: () => void;
      this.ready = new Promise((r) => (markReady = r));
      createInterface({ input: this.child.stdout! }).on("line", (line) => {
        let event: SoakEvent;
        try {
          event = JSON.parse(line);
        } catch {
          this.stderr.push(`(stdout) ${line}`);
          return;
        }
        events.push(event);
        if (event.ev === "ready") markReady();
      });
      createInterface({ input: this.child.stderr! }).on("line", (line) => this.stderr.push(line));
      this.exited = new Promise((r) => this.child.once("exit", (code) => {
        children.delete(this.child);
        r(code);
      }));
    }

    async kill(): Promise<void> {
      this.child.kill("SIGKILL");
      await this.exited;
    }

    /** SIGTERM: the workers finish what they hold and exit. */
    async stop(): Promise<number | null> {
      this.child.kill("SIGTERM");
      const timer = setTimeout(() => this.child.kill("SIGKILL"), 30_000);
      const code = await this.exited;
      clearTimeout(timer);
      return code;
    }
  }

  /** Through POST /api/fleet/enqueue (1000 a request): queue jobs, with attempts and max_attempts. */
  async function enqueueJobs(client: FleetClient, prefix: string, n: number): Promise<void> {
    const jobs = Array.from({ length: n }, (_, i) => ({ probeKey: `${prefix}${String(i).padStart(5, "0")}`, maxAttempts: MAX_ATTEMPTS }));
    const answer = await client.enqueueMany(jobs);
    expect(answer.filter((j) => j.created)).toHaveLength(n);
  }

  /** Polls the stats of the prefix until `until(terminal)` (or every job is terminal); throws after the timeout. */
  async function waitForProgress(client: FleetClient, prefix: string, jobs: number, until: (terminal: number) => boolean): Promise<void> {
    const deadline = Date.now() + options.completionTimeoutMs;
    let last = "";
    for (;;) {
      try {
        const s = await client.stats({ probeKeyPrefix: prefix }, { timeoutMs: 2_000 });
        const terminal = s.counts.done + s.counts.failed;
        last = JSON.stringify(s.counts);
        if (until(terminal) || terminal === jobs) return;
      } catch (err) {
        last = String(err); // the server may be down on purpose
      }
      if (Date.now() > deadline) throw new Error(`the fleet did not get there within ${options.completionTimeoutMs / 1000} s; last stats: ${last}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /**
   * One phase: enqueue, start processes `names[0]` and `names[1]`, wait for 30%
   * terminal, `crash`, wait for all terminal, stop the live processes, verify.
   * `crash` returns the processes to stop (and what the phase's figures add).
   */
  async function runPhase(
    phase: string, jobs: number, prefix: string, names: [string, string], killedProcs: string[],
    crash: (a: FleetProcess, b: FleetProcess, events: SoakEvent[], started: number) => Promise<{ live: FleetProcess[]; downSeconds?: number }>,
  ): Promise<PhaseOutcome> {
    const client = new FleetClient({ url: pb.url, ...ADMIN });
    await enqueueJobs(client, prefix, jobs);
    const events: SoakEvent[] = [];
    const started = Date.now();
    const a = new FleetProcess(names[0], prefix, events);
    const b = new FleetProcess(names[1], prefix, events);
    await Promise.all([a.ready, b.ready]);

    await waitForProgress(client, prefix, jobs, (terminal) => terminal >= jobs * 0.3);
    const { live, downSeconds } = await crash(a, b, events, started);

    await waitForProgress(client, prefix, jobs, () => false);
    const seconds = (Date.now() - started) / 1000;
    expect(await Promise.all(live.map((p) => p.stop()))).toEqual(live.map(() => 0));

    const rows = await client.listJobs({ probeKeyPrefix: prefix });
    // Every job a Worker holds or held is under a worker identity's record id (the sweepers' holders end in -sweeper).
    expect(rows.filter((r) => r.claimed_by !== "" && !r.claimed_by.endsWith("-sweeper") && !/^[a-z0-9]{15}\//.test(r.claimed_by)).map((r) => r.claimed_by)).toEqual([]);
    const figures = { ...verify(rows, events, jobs, killedProcs, options.releaseVersionMayBeUnknown === true), seconds, downSeconds };
    log(`${phase}: ${JSON.stringify({ ...figures, ...options.logExtras?.(events) })}`);
    expectQueuePath(figures, jobs);
    return { figures, events };
  }

  return {
    /** Process A1 SIGKILLed at 30% and started again as A2; B1 runs throughout. */
    async workerProcessCrash(jobs: number, prefix: string): Promise<PhaseOutcome> {
      const outcome = await runPhase("worker-process crash phase", jobs, prefix, ["A1", "B1"], ["A1"], async (a1, b1, events, started) => {
        await a1.kill();
        log(`SIGKILLed process A1 (${WORKERS_PER_PROCESS} Workers of ${options.concurrency}) at ${((Date.now() - started) / 1000).toFixed(1)} s`);
        const a2 = new FleetProcess("A2", prefix, events);
        await a2.ready;
        return { live: [a2, b1] };
      });
      expect(outcome.figures.renews).toBeGreaterThan(0);
      return outcome;
    },

    /** PocketBase SIGKILLed at 30% and restarted on the same port and pb_data; PA and PB run throughout. */
    async pocketBaseCrash(jobs: number, prefix: string): Promise<PhaseOutcome> {
      const outcome = await runPhase("PocketBase crash phase", jobs, prefix, ["PA", "PB"], [], async (a, b, _events, started) => {
        const port = pb.port;
        await pb.kill("SIGKILL");
        const killedAt = Date.now();
        log(`SIGKILLed PocketBase at ${((killedAt - started) / 1000).toFixed(1)} s`);
        await new Promise((r) => setTimeout(r, 1_000));
        pb = await startServer(port);
        const downSeconds = (Date.now() - killedAt) / 1000;
        log(`PocketBase back on port ${port} after ${downSeconds.toFixed(1)} s (pid ${pb.pid})`);
        return { live: [a, b], downSeconds };
      });
      // The outage was felt: requests failed while it was down, and the workers carried on.
      expect(Object.keys(outcome.figures.errors).some((k) => k.endsWith(":FleetNetworkError") || k.endsWith(":FleetTimeoutError"))).toBe(true);
      return outcome;
    },
  };
}

/**
 * The end-state checks shared by both phases. `killedProcs`: process names that
 * were SIGKILLed; a job they released just before dying may lack its log line.
 * `versionMayBeUnknown`: see SoakOptions.releaseVersionMayBeUnknown.
 */
function verify(rows: JobRecord[], events: SoakEvent[], jobs: number, killedProcs: string[], versionMayBeUnknown: boolean): Omit<Figures, "seconds"> {
  expect(rows).toHaveLength(jobs);
  const byJob = new Map<string, SoakEvent[]>();
  for (const e of events) {
    if (!e.jobId) continue;
    const list = byJob.get(e.jobId) ?? [];
    list.push(e);
    byJob.set(e.jobId, list);
  }
  // A Worker's id is `<identity's record id>/<process>-s<slot>-g<n>` (fleet-process.mjs).
  const isKilled = (workerId: string) => killedProcs.some((p) => workerId.slice(workerId.indexOf("/") + 1).startsWith(p + "-"));
  let jobsWithoutReleaseLine = 0;
  let doneWithoutResult = 0;
  let failedByWorker = 0;
  const deadLettered = { lastAttemptFailed: 0, maxAttemptsReached: 0, orphanCap: 0 };
  const problems: string[] = [];
  const problem = (row: JobRecord, what: string) => {
    if (problems.length < 20) problems.push(`${row.id} (${row.probe_key}, ${row.status}, ${row.claimed_by}): ${what}`);
  };

  for (const row of rows) {
    const evs = byJob.get(row.id) ?? [];
    if (row.status !== "done" && row.status !== "failed") {
      problem(row, "not terminal");
      continue;
    }
    if (row.finished_at === "") problem(row, "terminal without finished_at");
    // Enqueued through the queue: the row counts its claims against its cap.
    if (row.max_attempts !== MAX_ATTEMPTS) problem(row, `max_attempts ${String(row.max_attempts)}, enqueued with ${MAX_ATTEMPTS}`);
    if (typeof row.attempts !== "number" || row.attempts < 1 || row.attempts > MAX_ATTEMPTS) problem(row, `attempts ${String(row.attempts)}`);
    // Successful terminal releases by workers: a done/failed release (released:true, or its retry's
    // refused_terminal_same_holder), or a `retry` release that dead-lettered the job (its "failed" line).
    const releases = evs.filter((e) => e.ev === "released" && (e.status === "done" || e.status === "failed"));
    const deadLetterReleases = evs.filter((e) => e.ev === "failed" && e.deadLettered === true);
    const result = row.result as Record<string, unknown> | null;
    const lastClaim = evs.filter((e) => e.ev === "claimed").sort((a, b) => (a.version ?? 0) - (b.version ?? 0)).at(-1);

    if (row.dead_lettered_at) {
      // Given up by the queue: claimed_by cleared (or the sweeper's, for the orphan cap), no worker's done/failed release.
      if (releases.length > 0) problem(row, `dead-lettered, yet ${releases.length} done/failed release(s) by ${releases.map((r) => r.workerId).join(", ")}`);
      if (result !== null && result["reason"] === "orphan_cap") {
        deadLettered.orphanCap++;
        if (!row.claimed_by.endsWith("-sweeper")) problem(row, "orphan_cap result not from a sweeper");
        if (deadLetterReleases.length > 0) problem(row, "orphan_cap give-up after a dead-lettering retry release");
        continue;
      }
      if (result !== null) problem(row, `dead-lettered with a result ${JSON.stringify(result)}`);
      if (row.claimed_by !== "") problem(row, "dead-lettered but still held");
      if (row.attempts !== MAX_ATTEMPTS) problem(row, `dead-lettered after ${String(row.attempts)} attempts`);
      if (row.last_error === MAX_ATTEMPTS_ERROR) {
        // Abandoned (or its holder killed) on its last attempt: the next claim-next or sweep gave it up.
        deadLettered.maxAttemptsReached++;
        if (deadLetterReleases.length > 0) problem(row, "max attempts reached, yet a worker's retry release dead-lettered it");
      } else if (row.last_error?.startsWith("simulated probe failure of ")) {
        // The handler threw on its last attempt: the worker's `retry` release dead-lettered it, with its error.
        deadLettered.lastAttemptFailed++;
        if (deadLetterReleases.length > 1) problem(row, `${deadLetterReleases.length} dead-lettering releases`);
        if (deadLetterReleases.length === 0) {
          // The holder was SIGKILLed after the commit, or the answer was lost and its repeat found the job held by no one.
          const answerLost = evs.some((e) => e.ev === "lease_lost" && e.reason === "refused_not_holder");
          if (lastClaim && (isKilled(lastClaim.workerId ?? "") || answerLost)) jobsWithoutReleaseLine++;
          else problem(row, "dead-lettered by a retry release nobody logged");
        }
        if (!row.last_error.endsWith(`(attempt ${MAX_ATTEMPTS})`)) problem(row, `last_error "${row.last_error}" is not its last attempt's`);
      } else {
        problem(row, `dead-lettered with last_error "${String(row.last_error)}"`);
      }
      continue;
    }

    if (deadLetterReleases.length > 0) problem(row, "a retry release reported dead-lettering, but the row is not dead-lettered");
    if (releases.length === 0) {
      if (isKilled(row.claimed_by)) jobsWithoutReleaseLine++;
      else problem(row, "no release line, and its holder was not SIGKILLed");
    } else if (releases.length > 1) {
      problem(row, `${releases.length} successful terminal releases`);
    } else {
      const [r] = releases as [SoakEvent];
      if (r.workerId !== row.claimed_by) problem(row, `released by ${r.workerId}`);
      if (r.status !== row.status) problem(row, `released ${r.status}`);
      // An item of `complete` answers no job: the Worker reports the version it
      // worked out (its claim's, +1 per renew answered, +1), or null once it could
      // not know (a heartbeat whose answer was lost may have renewed).
      const versionKnown = !versionMayBeUnknown || (r.version !== null && r.version !== undefined);
      if (r.committed === "released" && versionKnown && r.version !== row.version) {
        problem(row, `release left version ${r.version}, row has ${row.version}`);
      }
    }
    if (row.consecutive_orphan_count !== 0) problem(row, "a worker's terminal release left consecutive_orphan_count > 0");

    if (row.status === "failed") {
      // A PermanentJobError: one `failed` release with the handler's message, and no result.
      failedByWorker++;
      if (!row.last_error?.startsWith("simulated permanent failure of ")) problem(row, `failed with last_error "${String(row.last_error)}"`);
      if (result !== null) problem(row, `failed with a result ${JSON.stringify(result)}`);
      continue;
    }

    // done: the result came in the release itself, so it is always there, whoever
    // was killed when (the issue: no more `done` rows without their result).
    if (result === null) {
      doneWithoutResult++;
      problem(row, "done without a result");
      continue;
    }
    // The result is the final holder's, from its last claim: nobody claimed the job after that worker did.
    if (result["workerId"] !== row.claimed_by) problem(row, `result names ${String(result["workerId"])}`);
    if (!lastClaim || lastClaim.workerId !== row.claimed_by || lastClaim.version !== result["claimVersion"]) {
      problem(row, `result from claim v${String(result["claimVersion"])}, last logged claim ${lastClaim ? `${lastClaim.workerId} v${lastClaim.version}` : "none"}`);
    }
    // The handler saw the row's attempt count of that claim, and the job's cap.
    if (result["attempt"] !== row.attempts || result["maxAttempts"] !== MAX_ATTEMPTS) {
      problem(row, `result says attempt ${String(result["attempt"])}/${String(result["maxAttempts"])}, row has ${String(row.attempts)}/${String(row.max_attempts)}`);
    }
  }
  expect(problems).toEqual([]);

  const count = (pred: (e: SoakEvent) => boolean) => events.filter(pred).length;
  const tally = (list: SoakEvent[], key: (e: SoakEvent) => string) =>
    list.reduce<Record<string, number>>((acc, e) => ({ ...acc, [key(e)]: (acc[key(e)] ?? 0) + 1 }), {});
  const workerClaims = events.filter((e) => e.ev === "claimed" && e.role === "worker");
  const settled = new Set(events.filter((e) => e.role === "worker" && (e.ev === "released" || e.ev === "lease_lost")).map((e) => `${e.jobId} ${e.workerId}`));
  const sweeperRequeues = count((e) => e.ev === "swept");
  const reclaimsTotal = rows.reduce((sum, r) => sum + r.reclaim_count, 0);
  return {
    jobs,
    done: rows.filter((r) => r.status === "done").length,
    failed: rows.filter((r) => r.status === "failed").length,
    workerClaims: workerClaims.length,
    abandonedByHandler: count((e) => e.ev === "abandon"),
    abandonedClaims: workerClaims.filter((e) => !settled.has(`${e.jobId} ${e.workerId}`)).length,
    leaseLost: tally(events.filter((e) => e.ev === "lease_lost"), (e) => e.reason ?? "?"),
    sweeperRequeues,
    expiredLeaseSteals: reclaimsTotal - sweeperRequeues,
    reclaimsTotal,
    gaveUp: count((e) => e.ev === "gave_up"),
    renews: count((e) => e.ev === "renewed"),
    releasesRecoveredAfterLostAnswer: count((e) => e.ev === "released" && e.committed === "refused_terminal_same_holder"),
    errors: tally(events.filter((e) => e.ev === "error"), (e) => `${e.op}:${e.name}`),
    jobsWithoutReleaseLine,
    retried: count((e) => e.ev === "retried"),
    failedByWorker,
    deadLettered,
    doneWithoutResult,
    resultWrites: count((e) => e.ev === "result_written"),
  };
}

/**
 * What both soaks assert of a phase's figures besides verify's per-job checks
 * (each soak adds how many abandons it must have seen).
 */
function expectQueuePath(figures: Omit<Figures, "seconds">, jobs: number): void {
  const dead = figures.deadLettered;
  expect(figures.done + figures.failed).toBe(jobs);
  expect(figures.failed).toBe(figures.failedByWorker + dead.lastAttemptFailed + dead.maxAttemptsReached + dead.orphanCap);
  // The issue: no job ends done without its result.
  expect(figures.doneWithoutResult).toBe(0);
  // Every report went through the queue's one release: no result was written after one.
  expect(figures.resultWrites).toBe(0);
  // Thrown errors were released `retry` and the jobs ran again.
  expect(figures.retried).toBeGreaterThan(0);
  // The crash simulation really happened: each job orphaned by an abandon came back
  // (a steal or a sweeper re-queue: reclaim_count) or was given up on its last attempt.
  expect(figures.reclaimsTotal + dead.maxAttemptsReached + dead.orphanCap).toBeGreaterThanOrEqual(figures.abandonedByHandler);
}
