// One run of a pb-fleet Worker fleet against a PocketBase, and the check of
// its rows, shared by the batched phase (batched.mjs) and the hot-path phase
// (hot-path.mjs):
//   runFleet    `jobs` jobs enqueued through POST /api/fleet/enqueue (1,000 a
//               call, before any client starts), `processes` client processes
//               (batched-fleet.mjs, spawnClient) started signed in and idle,
//               "go", every job waited for (the workers' reports and the rows),
//               "stop", the processes' reports read, the rows checked; then the
//               rows and the probe_job_events records deleted (clearRun), so
//               the next run starts from an empty table
//   checkRows   the rows of a run against what its loops or workers said they
//               completed: every job done exactly once (done, attempts 1,
//               reclaim_count 0, its result its holder's, each completed by one
//               loop or worker, once), nothing left behind; also the run's span
//               (last finished_at - first claimed_at) and its claim-to-completion
//               latencies, from the rows
//   fleetTotals the client processes' reports summed: calls, CPU, problems
// Each phase builds its own figures from these (its results keep their shape).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { readProcMemoryBytes } from "../pocketbase/server.mjs";
import { benchSql, benchSqlValue } from "./hooks.mjs";
import { readCpuSeconds } from "./proc.mjs";
import { latencySummary } from "./stats.mjs";

/** The phases' servers' admin/superuser (batched.mjs's startServer), which the client processes sign in as. */
export const ADMIN = { email: "bench@example.com", password: "bench-password-1234" };

const ENQUEUE = "/api/fleet/enqueue";
const ENQUEUE_MAX = 1000;
const CHILD = new URL("./batched-fleet.mjs", import.meta.url).pathname;

const brief = (res) => `HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* ------------------------------------------------------------ SQL helpers */

/** The SQL route's value as text ("" when it has none). */
export const sqlText = async (client, server, text, params) => String((await benchSqlValue(client, server, text, params)) ?? "");

export const sqlNumber = async (client, server, text, params) => Number(await sqlText(client, server, `SELECT CAST((${text}) AS TEXT) AS value`, params));

/** Epoch ms of a PocketBase date column, in SQL (SQLite reads the trailing Z). */
export const sqlEpochMs = (col) => `((julianday(${col}) - 2440587.5) * 86400000.0)`;

/* ------------------------------------------------------------ rows */

/** `jobs` jobs, probe keys `${prefix}` and the index padded to `digits`, 1,000 a call. */
export async function enqueueJobs(client, server, jobs, prefix, digits = 6) {
  for (let start = 0; start < jobs; start += ENQUEUE_MAX) {
    const n = Math.min(ENQUEUE_MAX, jobs - start);
    const res = await client.post(server.pb, ENQUEUE, { jobs: Array.from({ length: n }, (_, i) => ({ probeKey: `${prefix}${String(start + i).padStart(digits, "0")}` })) });
    if (res.status !== 200 || res.body?.jobs?.length !== n) throw new Error(`${server.name}: enqueue failed: ${brief(res)}`);
  }
}

/** The next run starts from an empty table (outside the measured time). */
export async function clearRun(client, server, prefix) {
  await benchSql(client, server, "DELETE FROM probe_jobs WHERE probe_key LIKE {:p}", { p: `${prefix}%` });
  await benchSql(client, server, "DELETE FROM probe_job_events");
}

/** checkRows's words for the completions, by who says they completed a job: the client processes' workers (batched.mjs)... */
export const REPORTED_BY_WORKERS = {
  twice: "jobs completed twice (reported by the workers)",
  unreported: "jobs no worker reported completed",
  notInRun: "completions reported for jobs not in this run",
};
/** ...or the loops and workers of the hot-path phase. */
export const COMPLETED_BY_LOOPS_OR_WORKERS = {
  twice: "jobs completed twice",
  unreported: "jobs no loop or worker completed",
  notInRun: "completions of jobs not in this run",
};

/**
 * The rows of a run against what its loops or workers said they completed
 * (`completedLists`: one list of job ids each): every job done exactly once,
 * nothing left behind. Also the run's span and latencies, from the rows.
 * @param {string[][]} completedLists
 * @param {{ twice: string, unreported: string, notInRun: string }} [words] the failures' words for the completions
 */
export async function checkRows(client, server, prefix, jobs, completedLists, words = REPORTED_BY_WORKERS) {
  const ms = sqlEpochMs;
  const p = { p: `${prefix}%` };
  const where = "probe_key LIKE {:p}";
  const n = (cond) => sqlNumber(client, server, `SELECT COUNT(*) FROM probe_jobs WHERE ${where} AND (${cond})`, p);
  const rows = await n("1");
  const notDone = await n("status != 'done'");
  const claimedTwice = await n("attempts != 1 OR reclaim_count != 0");
  const noFinish = await n("finished_at = '' OR finished_at IS NULL OR claimed_at = '' OR claimed_at IS NULL");
  const foreignResult = await n("status = 'done' AND (json_extract(result, '$.w') IS NULL OR json_extract(result, '$.w') != claimed_by)");
  const spanMs = await sqlNumber(client, server, `SELECT MAX(${ms("finished_at")}) - MIN(${ms("claimed_at")}) FROM probe_jobs WHERE ${where} AND status = 'done'`, p);
  const latText = await sqlText(
    client,
    server,
    `SELECT group_concat(CAST(ROUND(${ms("finished_at")} - ${ms("claimed_at")}, 1) AS TEXT), ',') AS value FROM probe_jobs WHERE ${where} AND status = 'done'`,
    p,
  );
  const latency = latencySummary(latText ? latText.split(",").map(Number) : []);
  const ids = new Set((await sqlText(client, server, `SELECT group_concat(id, ',') AS value FROM probe_jobs WHERE ${where}`, p)).split(",").filter(Boolean));

  const times = new Map();
  for (const list of completedLists) for (const id of list) times.set(id, (times.get(id) ?? 0) + 1);
  let twice = 0;
  let foreign = 0;
  for (const [id, k] of times) {
    if (k > 1) twice++;
    if (!ids.has(id)) foreign++;
  }
  let unreported = 0;
  for (const id of ids) if (!times.has(id)) unreported++;

  const exactlyOnce = { rows, notDone, claimedTwice, noFinish, foreignResult, completedTwice: twice, unreported, reportedNotInRun: foreign };
  const failures = [];
  if (rows !== jobs) failures.push(`${rows} rows for ${jobs} jobs`);
  if (notDone) failures.push(`${notDone} jobs left behind (not done)`);
  if (claimedTwice) failures.push(`${claimedTwice} jobs claimed more than once (attempts != 1 or reclaim_count != 0)`);
  if (noFinish) failures.push(`${noFinish} rows without claimed_at/finished_at`);
  if (foreignResult) failures.push(`${foreignResult} done rows whose result is not their holder's`);
  if (twice) failures.push(`${twice} ${words.twice}`);
  if (unreported) failures.push(`${unreported} ${words.unreported}`);
  if (foreign) failures.push(`${foreign} ${words.notInRun}`);
  return { exactlyOnce, failures, spanMs, latency };
}

/* ------------------------------------------------------------ client processes */

/** One client process (batched-fleet.mjs), its stdout lines parsed. */
export function spawnClient(config) {
  const child = spawn(process.execPath, [CHILD], {
    env: { ...process.env, BENCH_FLEET_CONFIG: JSON.stringify(config) },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const proc = { child, done: 0, stderr: [], ready: null, exited: null, reported: false };
  let markReady;
  proc.ready = new Promise((resolve, reject) => {
    markReady = resolve;
    child.once("exit", (code) => reject(new Error(`client process ${config.procName} exited (${code}) before it was ready: ${proc.stderr.slice(-5).join(" | ")}`)));
  });
  proc.ready.catch(() => {});
  proc.exited = new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
  let buffered = "";
  child.stdout.on("data", (chunk) => {
    buffered += chunk.toString();
    let nl;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      let ev;
      try {
        ev = JSON.parse(line);
      } catch {
        proc.stderr.push(`(stdout) ${line}`);
        continue;
      }
      if (ev.ev === "ready") markReady();
      if (typeof ev.done === "number") proc.done = ev.done;
      if (ev.ev === "reported") proc.reported = true;
    }
  });
  child.stderr.on("data", (chunk) => {
    proc.stderr.push(...chunk.toString().split("\n").filter(Boolean));
    if (proc.stderr.length > 50) proc.stderr.splice(0, proc.stderr.length - 50);
  });
  proc.send = (line) => {
    if (child.exitCode === null && child.signalCode === null) child.stdin.write(`${line}\n`);
  };
  return proc;
}

/* ------------------------------------------------------------ one run */

/**
 * One run of `processes` client processes x `workersPerProcess` workers of
 * `concurrency` in `mode` ("worker" | "unbatched") of `clientModule` on
 * `server`: the jobs enqueued, the fleet started, every job waited for (at most
 * `timeoutMs`), the reports read, the rows checked (checkRows, in `words`).
 * `sampleRss`: VmRSS of the server sampled every 50 ms over the run (its peak:
 * peakRssBytes, else null). `onRunning`: called once the fleet is told "go";
 * its promise's answer is the run's `profile`.
 * @returns {Promise<{ failures: string[], reports: any[], check: any, wallMs: number, cpuBefore: number | null, cpuAfter: number | null, peakRssBytes: number | null, profile: any }>}
 */
export async function runFleet(client, env, server, { clientModule, mode, jobs, tag, processes, workersPerProcess, concurrency, leaseSeconds, timeoutMs, keyDigits = 6, words, sampleRss = false, onRunning }) {
  const prefix = `${tag}-`;
  await enqueueJobs(client, server, jobs, prefix, keyDigits);
  const procs = [];
  for (let p = 0; p < processes; p++) {
    procs.push(
      spawnClient({
        clientModule,
        url: server.pb.url,
        email: ADMIN.email,
        password: ADMIN.password,
        mode,
        workers: workersPerProcess,
        concurrency,
        leaseSeconds,
        procName: `${tag}-p${p}`,
        reportFile: join(env.tmpRoot, `report-${tag}-p${p}.json`),
      }),
    );
  }
  const failures = [];
  try {
    await Promise.all(procs.map((p) => p.ready));
    // Peak resident memory during this run (VmRSS sampled every 50 ms; VmHWM is the server's whole life).
    let peakRss = sampleRss ? (readProcMemoryBytes(server.pb.pid, "VmRSS") ?? 0) : null;
    const sampler = sampleRss
      ? setInterval(() => {
          const rss = readProcMemoryBytes(server.pb.pid, "VmRSS");
          if (rss !== null && rss > peakRss) peakRss = rss;
        }, 50)
      : null;
    const cpuBefore = readCpuSeconds(server.pb.pid);
    const t0 = performance.now();
    for (const p of procs) p.send("go");
    const running = onRunning ? onRunning() : null;

    // Done when the workers have reported every job and no row is left undone.
    const deadline = t0 + timeoutMs;
    const left = () => sqlNumber(client, server, "SELECT COUNT(*) FROM probe_jobs WHERE probe_key LIKE {:p} AND status != 'done'", { p: `${prefix}%` });
    for (;;) {
      await sleep(100);
      const reported = procs.reduce((s, p) => s + p.done, 0);
      const dead = procs.find((p) => p.child.exitCode !== null || p.child.signalCode !== null);
      if (dead) {
        failures.push(`client process exited early: ${dead.stderr.slice(-3).join(" | ")}`);
        break;
      }
      if (reported >= jobs && (await left()) === 0) break;
      if (performance.now() > deadline) {
        failures.push(`${await left()} of ${jobs} jobs not done after ${Math.round(timeoutMs / 1000)} s (workers reported ${reported})`);
        break;
      }
    }
    const wallMs = performance.now() - t0;
    const cpuAfter = readCpuSeconds(server.pb.pid);
    if (sampler) clearInterval(sampler);
    const profile = running ? await running : null;

    for (const p of procs) p.send("stop");
    await Promise.race([Promise.all(procs.map((p) => p.exited)), sleep(60_000)]);
    const reports = [];
    for (const [i, p] of procs.entries()) {
      if (!p.reported) failures.push(`client process ${tag}-p${i} wrote no report: ${p.stderr.slice(-3).join(" | ")}`);
      else reports.push(JSON.parse(readFileSync(join(env.tmpRoot, `report-${tag}-p${i}.json`), "utf8")));
    }

    const check = await checkRows(client, server, prefix, jobs, reports.map((r) => r.completed), words);
    failures.push(...check.failures);
    return { failures, reports, check, wallMs, cpuBefore, cpuAfter, peakRssBytes: peakRss, profile };
  } finally {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    await Promise.all(procs.map((p) => p.exited));
    await clearRun(client, server, prefix);
  }
}

/**
 * The client processes' reports of a run of `jobs` jobs over `wallMs`, summed:
 * their calls by endpoint, jobs/s by their clocks (first claim sent to last
 * completion answered), their CPU, their problems and a few error samples.
 * `sum(f)`: f summed over the reports, for a phase's own figures.
 */
export function fleetTotals(reports, jobs, wallMs) {
  const sum = (f) => reports.reduce((s, r) => s + f(r), 0);
  const calls = {};
  for (const r of reports) for (const [k, v] of Object.entries(r.calls)) calls[k] = (calls[k] ?? 0) + v;
  const firstClaim = Math.min(...reports.map((r) => r.firstClaimAt ?? Infinity));
  const lastDone = Math.max(...reports.map((r) => r.lastCompletionAt ?? -Infinity));
  return {
    sum,
    calls,
    clientJobsPerSec: Number.isFinite(lastDone - firstClaim) && lastDone > firstClaim ? jobs / ((lastDone - firstClaim) / 1000) : null,
    clientCpuMicrosPerJob: (sum((r) => r.cpuSeconds) * 1e6) / jobs,
    clientCpuShare: sum((r) => r.cpuSeconds) / (wallMs / 1000),
    // Each process's steady window (batched-fleet.mjs steadyCpu): null unless every process has one.
    clientSteadyCpuMicrosPerJob: reports.every((r) => r.steady) ? sum((r) => r.steady.cpuMicros) / sum((r) => r.steady.jobs) : null,
    // (completeAndClaim is a tally of the complete requests that also claimed, already counted as complete.)
    requestsPerJob: Object.entries(calls).reduce((s, [k, v]) => (k === "completeAndClaim" ? s : s + v), 0) / jobs,
    problems: { leaseLost: sum((r) => r.problems.leaseLost), refused: sum((r) => r.problems.refused), errors: sum((r) => r.problems.errors) },
    errorSamples: reports.flatMap((r) => r.errorSamples).slice(0, 5),
  };
}
