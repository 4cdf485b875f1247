// The hot-path phase of the benchmark (issue 21): the claim-next -> complete
// path as built against a git revision of pb-fleet (--hotPathBaseline, default
// 97dd997), side by side in one run, on the run's PocketBase binary, both
// servers alive for the whole phase and measured alternately (the order
// rotating per repetition), medians of the repetitions and ratios paired by
// repetition (current over baseline):
//   server  a load generator in this process (scripts/bench/http.mjs's client):
//           `loops` loops, each claim-next (limit 100) then complete of every
//           job it claimed (status done, a tiny result), until `jobs` jobs are
//           done. The current bundle (pb_hooks/ or pb_hooks_0.23/ as built)
//           against the baseline's bundle and migrations from git (baseline.mjs).
//           Targets: jobs/s >= 1.8x, PocketBase CPU per job <= 0.45x.
//   worker  the real Worker: `processes` Node processes x `workersPerProcess`
//           Workers of `concurrency` (batched.mjs's client, batched-fleet.mjs in
//           "worker" mode), no-op handler, tiny result. The current client
//           (the working tree's src/client, bundled) on the current server
//           against the baseline's client (its src/ read from git and bundled
//           the same way) on the baseline's server.
//           Targets: jobs/s >= 1.8x, client CPU per job <= 0.3x; p99
//           claim-to-completion (finished_at - claimed_at) beside them.
//   limited the server part's load with a rate limit set on the jobs' queue
//           that it never reaches (100,000 claims a second): what flow
//           control's per-claim bookkeeping costs (context, no target).
//   held    claim-next while the held jobs grow: one loop of claim-next
//           (limit 100) and no completes, until `jobs` are held; ms per call
//           and PocketBase CPU per job over the claims (context: finding the
//           expired leases must not read the live ones). The jobs are then
//           completed, untimed, so the run is checked like the others.
// A run: `jobs` jobs enqueued through POST /api/fleet/enqueue (1,000 a call,
// not timed), the load, then the rows checked: every job done exactly once
// (done, attempts 1, reclaim_count 0, its result its holder's, each completed
// by one loop or worker, once: fleet-run.mjs's checkRows, as the batched phase
// checks); anything else is a failure of the bench (exit 1). Between runs the rows and the
// probe_job_events records are deleted. jobs/s: jobs / (last finished_at -
// first claimed_at), the server's own stamps; the client clock's figure (first
// claim sent to last completion answered) is kept beside it. PocketBase CPU:
// utime + stime from /proc (proc.mjs) over the run; the clients' CPU:
// process.cpuUsage() of the client processes (worker), of this process over
// the loops (server: the load generator, context only).
import os from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { baselineClientFromGit, baselineFromGit, baselineServerEnv, baselineSummary, hooksOf } from "./baseline.mjs";
import { bundleClient, startServer } from "./batched.mjs";
import { checkRows, clearRun, COMPLETED_BY_LOOPS_OR_WORKERS, enqueueJobs, fleetTotals, runFleet } from "./fleet-run.mjs";
import { fmtFlowRatio, pairedRatio } from "./flow.mjs";
import { cpuMicrosPerOp, readCpuSeconds } from "./proc.mjs";
import { median } from "./stats.mjs";

const CLAIM_NEXT = "/api/fleet/claim-next";
const COMPLETE = "/api/fleet/complete";
const FLOW = "/api/fleet/flow";
/** claim-next's and complete's most items a call (src/lib/validate.ts, src/lib/queue.ts). */
const MAX_LIMIT = 100;

/**
 * pb-fleet of main when the hot-path work started (issue 21): the phase's
 * baseline. A fixed revision, not HEAD: once the work is committed, HEAD is
 * the code under test.
 */
export const DEFAULT_HOT_PATH_BASELINE_REV = "97dd997";
/** Issue 21's targets, current over baseline: jobs/s at least, CPU per job at most. */
export const HOT_PATH_TARGETS = {
  server: { jobsPerSec: 1.8, pbCpuPerJob: 0.45 },
  worker: { jobsPerSec: 1.8, clientCpuPerJob: 0.3 },
};
/** The parts, in the order a run measures them. */
export const HOT_PATH_PARTS = ["server", "limited", "worker", "held"];
/** The limited part's setting: a rate limit on the default queue (where the runs enqueue) that the load never reaches. */
export const LIMITED_PART_FLOW = { queue: "default", rateLimit: { limit: 100_000, periodSeconds: 1 } };
/** The variants of each part: of / over in every ratio. */
export const HOT_PATH_VARIANTS = ["current", "baseline"];
/** Each ratio of a part: the run's field it pairs, and whether the target is a floor or a ceiling (context: not judged). */
export const HOT_PATH_METRICS = {
  jobsPerSec: { field: "jobsPerSec", label: "jobs/s", direction: "atLeast" },
  pbCpuPerJob: { field: "pbCpuMicrosPerJob", label: "PocketBase CPU per job", direction: "atMost" },
  clientCpuPerJob: { field: "clientCpuMicrosPerJob", label: "client CPU per job", direction: "atMost" },
  clientSteadyCpuPerJob: { field: "clientSteadyCpuMicrosPerJob", label: "client CPU per job, steady (20-80% of each process's jobs)", direction: "atMost" },
  p99: { field: "p99Ms", label: "p99 claim-to-completion", direction: "atMost" },
  msPerCall: { field: "msPerCall", label: "claim-next ms per call", direction: "atMost" },
};


const brief = (res) => `HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`;
const rotate = (xs, n) => xs.map((_, i) => xs[(i + n) % xs.length]);
const round1 = (v) => (typeof v === "number" ? Math.round(v * 10) / 10 : null);
const fmtInt = (n) => (typeof n === "number" ? Math.round(n).toLocaleString("en-US") : "n/a");

/* ------------------------------------------------------------ pure helpers */

/**
 * The phase's shape: bench.mjs's config for the mode, with the CLI's
 * --hotPathJobs (each run's jobs, both parts; the warm-up never more) and
 * --hotPathBaseline (the git revision) applied, and the targets.
 * @param {any} config CONFIGS[mode].hotPath
 * @param {{ hotPathJobs?: number, hotPathBaseline?: string }} [cli]
 */
export function hotPathShape(config, cli = {}) {
  const shape = structuredClone(config);
  if (cli.hotPathJobs !== undefined) {
    shape.server.jobs = cli.hotPathJobs;
    shape.worker.jobs = cli.hotPathJobs;
  }
  shape.warmupJobs = Math.min(shape.warmupJobs, shape.server.jobs, shape.worker.jobs);
  shape.baselineRev = cli.hotPathBaseline ?? shape.baselineRev ?? DEFAULT_HOT_PATH_BASELINE_REV;
  shape.targets = {
    server: { ...HOT_PATH_TARGETS.server, ...(shape.targets?.server ?? {}) },
    worker: { ...HOT_PATH_TARGETS.worker, ...(shape.targets?.worker ?? {}) },
    // No target of the issue's: context.
    limited: { ...(shape.targets?.limited ?? {}) },
    held: { ...(shape.targets?.held ?? {}) },
  };
  const problem = hotPathShapeProblem(shape);
  if (problem) throw new Error(`hot-path phase: ${problem}`);
  return shape;
}

/** Why a shape cannot run, or null. */
export function hotPathShapeProblem(shape) {
  const { server: s, worker: w } = shape;
  if (!(shape.reps >= 1)) return "reps must be at least 1";
  if (!(s.jobs >= 1) || !(w.jobs >= 1)) return "each part needs at least 1 job";
  if (!(shape.warmupJobs >= 0)) return "warmupJobs must not be negative";
  if (!(s.loops >= 1)) return "server: loops must be at least 1";
  if (!(s.limit >= 1 && s.limit <= MAX_LIMIT)) return `server: limit must be 1 to ${MAX_LIMIT} (claim-next's and complete's most items a call)`;
  if (!(w.processes >= 1) || !(w.workersPerProcess >= 1) || !(w.concurrency >= 1)) return "worker: processes, workersPerProcess and concurrency must be at least 1";
  const h = shape.held;
  if (h !== undefined && (!(h.jobs >= 1) || !(h.limit >= 1 && h.limit <= MAX_LIMIT) || !(h.leaseSeconds >= 1))) {
    return `held: jobs and leaseSeconds at least 1, limit 1 to ${MAX_LIMIT}`;
  }
  return null;
}

/** @typedef {"jobsPerSec" | "pbCpuPerJob" | "clientCpuPerJob" | "clientSteadyCpuPerJob" | "p99" | "msPerCall"} HotPathMetric */
/** @typedef {{ median: number | null, min: number | null, max: number | null, n: number, perRep: Array<number | null> }} HotPathRatio */
/** @typedef {{ target: number, direction: string, median: number | null, pass: boolean | null }} HotPathJudged */

/**
 * A part's ratios, current over baseline, each paired by repetition (flow.mjs's
 * pairedRatio: the median of the reps' ratios, the spread, the per-rep values).
 * @param {Array<{ rep: number, variant: string, [k: string]: any }>} runs the part's measured runs
 * @returns {Record<HotPathMetric, HotPathRatio>}
 */
export function hotPathRatios(runs, of = HOT_PATH_VARIANTS[0], over = HOT_PATH_VARIANTS[1]) {
  return /** @type {Record<HotPathMetric, HotPathRatio>} */ (Object.fromEntries(Object.entries(HOT_PATH_METRICS).map(([key, m]) => [key, pairedRatio(runs, of, over, m.field)])));
}

/** PASS (true) when the median ratio is on the target's side (atLeast: >=, atMost: <=); null when there is nothing to judge. */
export function hotPathVerdict(median, target, direction) {
  if (typeof median !== "number" || !Number.isFinite(median) || typeof target !== "number") return null;
  return direction === "atLeast" ? median >= target : median <= target;
}

/**
 * The judged ratios of a part: { metric: { target, direction, median, pass } } for each metric the part has a target for.
 * @param {Partial<Record<HotPathMetric, HotPathRatio>> | null} ratios
 * @param {Partial<Record<HotPathMetric, number>>} targets
 * @returns {Partial<Record<HotPathMetric, HotPathJudged>>}
 */
export function hotPathJudge(ratios, targets) {
  /** @type {Partial<Record<HotPathMetric, HotPathJudged>>} */
  const out = {};
  for (const [key, target] of Object.entries(targets ?? {})) {
    const m = HOT_PATH_METRICS[key];
    if (!m) continue;
    const r = ratios?.[key] ?? null;
    out[key] = { target, direction: m.direction, median: r?.median ?? null, pass: hotPathVerdict(r?.median ?? null, target, m.direction) };
  }
  return out;
}

/** "1.07x (per rep 1.02, 1.10, 0.98)": a paired ratio as the flow phase writes it (flow.mjs's fmtFlowRatio). */
export const fmtHotPathRatio = fmtFlowRatio;

/** Each part's figures shown as context beside its targets (current over the baseline, not judged). */
const HOT_PATH_CONTEXT = { worker: ["clientSteadyCpuPerJob", "p99"], limited: ["jobsPerSec", "pbCpuPerJob"], held: ["msPerCall"] };
const CONTEXT_LABELS = { p99: "p99 claim-to-completion (finished_at - claimed_at)" };

/** A metric's medians, current vs baseline, in its unit. */
function medians(key, rows) {
  const cur = rows.current;
  const base = rows.baseline;
  if (key === "jobsPerSec") return `${fmtInt(cur?.jobsPerSec)} vs ${fmtInt(base?.jobsPerSec)} jobs/s`;
  if (key === "msPerCall") return `${round1(cur?.msPerCall) ?? "n/a"} vs ${round1(base?.msPerCall) ?? "n/a"} ms`;
  if (key === "p99") return `${cur?.latencyMs?.p99 ?? "n/a"} vs ${base?.latencyMs?.p99 ?? "n/a"} ms`;
  const field = HOT_PATH_METRICS[key].field;
  return `${fmtInt(cur?.[field])} vs ${fmtInt(base?.[field])} us`;
}

/** Each part's name in the Targets rows. */
const HOT_PATH_PART_TITLES = { server: "server", limited: "server with a rate limit set", worker: "Worker", held: "claim-next while held jobs grow" };

/** The part's load in a few words (the Targets table's and the report's). */
export function hotPathLoad(part) {
  const z = part.sizes ?? {};
  if (part.key === "server") return `${z.loops} loops of claim-next (limit ${z.limit}) + complete, ${fmtInt(z.jobs)} jobs`;
  if (part.key === "held") return `1 loop of claim-next (limit ${z.limit}), no completes, until ${fmtInt(z.jobs)} jobs are held`;
  if (part.key === "limited") {
    return `${z.loops} loops of claim-next (limit ${z.limit}) + complete, ${fmtInt(z.jobs)} jobs, rate limit ${JSON.stringify(z.flow?.rateLimit)} set`;
  }
  return `${z.processes * z.workersPerProcess} Workers x ${z.concurrency} (${z.processes} processes), ${fmtInt(z.jobs)} jobs`;
}

/**
 * The run's Targets rows of the phase: per part, each judged ratio (current
 * over the baseline), p99 claim-to-completion of the Worker as context, and
 * the exactly-once row over every run of the phase.
 */
export function hotPathTargets(hp) {
  if (!hp) return [];
  const rev = hp.baseline?.sha ? hp.baseline.sha.slice(0, 7) : (hp.baseline?.rev ?? hp.shape?.baselineRev ?? "?");
  if (hp.skipped) return [{ target: `hot path: current >= 1.8x the jobs/s of pb-fleet ${rev}`, measured: `skipped: ${hp.skipped}`, pass: null }];
  const out = [];
  for (const part of hp.parts ?? []) {
    const title = `hot path, ${HOT_PATH_PART_TITLES[part.key] ?? part.key} (${hotPathLoad(part)})`;
    if (part.skipped) {
      out.push({ target: `${title}: current vs pb-fleet ${rev}`, measured: `skipped: ${part.skipped}`, pass: null });
      continue;
    }
    const rows = Object.fromEntries((part.rows ?? []).map((r) => [r.variant, r]));
    for (const [key, j] of Object.entries(part.judged ?? {})) {
      out.push({
        target: `${title}: ${HOT_PATH_METRICS[key].label} ${j.direction === "atLeast" ? ">=" : "<="} ${j.target}x pb-fleet ${rev}`,
        measured: `${fmtHotPathRatio(part.ratios[key])}; ${medians(key, rows)}`,
        pass: j.pass,
      });
    }
    for (const key of HOT_PATH_CONTEXT[part.key] ?? []) {
      out.push({
        target: `(context) ${title}: ${CONTEXT_LABELS[key] ?? HOT_PATH_METRICS[key].label}, current over pb-fleet ${rev}`,
        measured: `${fmtHotPathRatio(part.ratios[key])}; ${medians(key, rows)}`,
        pass: null,
      });
    }
  }
  const runs = (hp.parts ?? []).flatMap((p) => p.runs ?? []);
  if (runs.length) {
    const clean = runs.filter((r) => r.failures.length === 0).length;
    out.push({ target: "hot path exactly once: every job completed once, none left behind (every run, both parts and variants)", measured: `${clean} of ${runs.length} runs`, pass: clean === runs.length });
  }
  return out;
}

/** Per variant: medians over the reps of a part's runs. */
export function summarizeRuns(runs, variants = HOT_PATH_VARIANTS) {
  return variants.map((variant) => {
    const mine = runs.filter((r) => r.variant === variant).sort((a, b) => a.rep - b.rep);
    const med = (f) => median(mine.map(f));
    return {
      variant,
      server: mine[0]?.server ?? null,
      reps: mine.length,
      jobsPerSec: med((r) => r.jobsPerSec),
      perRepJobsPerSec: mine.map((r) => r.jobsPerSec),
      clientJobsPerSec: med((r) => r.clientJobsPerSec),
      pbCpuMicrosPerJob: med((r) => r.pbCpuMicrosPerJob),
      perRepPbCpuMicros: mine.map((r) => r.pbCpuMicrosPerJob),
      clientCpuMicrosPerJob: med((r) => r.clientCpuMicrosPerJob),
      perRepClientCpuMicros: mine.map((r) => r.clientCpuMicrosPerJob),
      clientSteadyCpuMicrosPerJob: med((r) => r.clientSteadyCpuMicrosPerJob),
      latencyMs: { p50: med((r) => r.latencyMs?.p50), p99: med((r) => r.latencyMs?.p99), max: Math.max(0, ...mine.map((r) => r.latencyMs?.max ?? 0)) },
      requestsPerJob: med((r) => r.requestsPerJob),
      msPerCall: med((r) => r.msPerCall),
      exactlyOnceRuns: `${mine.filter((r) => r.failures.length === 0).length} of ${mine.length}`,
    };
  });
}

/* ------------------------------------------------------------ runs */

/** The hot-path phase's probe keys: the tag, then the index padded to 7 digits (fleet-run.mjs's enqueueJobs). */
const KEY_DIGITS = 7;

/** The figures of a checked run. */
function runFigures(jobs, check, extra) {
  return {
    jobs,
    jobsPerSec: check.spanMs > 0 ? jobs / (check.spanMs / 1000) : null,
    spanMs: check.spanMs,
    latencyMs: check.latency,
    p99Ms: check.latency.p99,
    exactlyOnce: check.exactlyOnce,
    ...extra,
  };
}

/* ------------------------------------------------------------ part 1: the server */

/** One run of the load generator: `loops` loops of claim-next + complete until `jobs` are done. */
async function loopRun(ctx, server, { jobs, tag, shape }) {
  const { client } = ctx;
  const s = shape.server;
  const prefix = `${tag}-`;
  await enqueueJobs(client, server, jobs, prefix, KEY_DIGITS);
  const failures = [];
  const bad = (m) => {
    if (failures.length < 20) failures.push(m);
  };
  const completedLists = [];
  const calls = { claimNext: 0, complete: 0 };
  let done = 0;
  let firstSent = null;
  let lastAnswered = null;
  const deadline = performance.now() + shape.timeoutMs;
  const loop = async (workerId) => {
    const mine = [];
    completedLists.push(mine);
    while (done < jobs) {
      if (performance.now() > deadline) return bad(`${workerId}: ${jobs - done} of ${jobs} jobs not done after ${Math.round(shape.timeoutMs / 1000)} s`);
      const sent = performance.now();
      const claim = await client.post(server.pb, CLAIM_NEXT, { workerId, leaseSeconds: shape.leaseSeconds, limit: s.limit });
      calls.claimNext++;
      const held = claim.body?.jobs;
      if (claim.status !== 200 || !Array.isArray(held)) return bad(`${workerId}: claim-next ${brief(claim)}`);
      // Nothing left to claim: the rest is held by the other loops.
      if (held.length === 0) return;
      if (firstSent === null || sent < firstSent) firstSent = sent;
      const res = await client.post(server.pb, COMPLETE, {
        workerId,
        releases: held.map((h) => ({ jobId: h.job.id, leaseToken: h.leaseToken, status: "done", result: { w: workerId } })),
      });
      calls.complete++;
      const results = res.body?.results;
      if (res.status !== 200 || !Array.isArray(results)) return bad(`${workerId}: complete of ${held.length} ${brief(res)}`);
      for (const r of results) {
        if (r.released === true) {
          mine.push(r.jobId);
          done++;
        } else bad(`${workerId}: complete refused ${r.jobId}: ${r.reason}`);
      }
      lastAnswered = performance.now();
    }
  };
  try {
    const cpu0 = readCpuSeconds(server.pb.pid);
    const own0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: s.loops }, (_, i) => loop(`${tag}-l${i}`)));
    const wallMs = performance.now() - t0;
    const own = process.cpuUsage(own0);
    const cpu1 = readCpuSeconds(server.pb.pid);
    const check = await checkRows(client, server, prefix, jobs, completedLists, COMPLETED_BY_LOOPS_OR_WORKERS);
    failures.push(...check.failures);
    return runFigures(jobs, check, {
      clientJobsPerSec: firstSent !== null && lastAnswered > firstSent ? jobs / ((lastAnswered - firstSent) / 1000) : null,
      wallMs,
      pbCpuMicrosPerJob: cpuMicrosPerOp(cpu0, cpu1, jobs),
      pbCpuShare: cpu0 !== null && cpu1 !== null ? (cpu1 - cpu0) / (wallMs / 1000) : null,
      // The load generator (this process) over the loops: context, the same code for both variants.
      clientCpuMicrosPerJob: ((own.user + own.system) / jobs),
      calls,
      requestsPerJob: (calls.claimNext + calls.complete) / jobs,
      failures,
    });
  } finally {
    await clearRun(client, server, prefix);
  }
}

/** A flow setting on every variant's server (POST /api/fleet/flow), or the phase fails. */
async function setFlowOnAll(ctx, variants, body) {
  for (const v of variants) {
    const res = await ctx.client.post(v.server.pb, FLOW, body);
    if (res.status !== 200) throw new Error(`hot-path: POST ${FLOW} ${JSON.stringify(body)} on ${v.server.name}: ${brief(res)}`);
  }
}

/* ------------------------------------------------------------ part 3: claim-next while held jobs grow */

/** One run: one loop of claim-next and no completes until `jobs` are held (timed), then every job completed (not timed). */
async function heldRun(ctx, server, { jobs, tag, shape }) {
  const { client } = ctx;
  const h = shape.held;
  const prefix = `${tag}-`;
  const workerId = `${tag}-held`;
  await enqueueJobs(client, server, jobs, prefix, KEY_DIGITS);
  const failures = [];
  const held = [];
  let calls = 0;
  const cpu0 = readCpuSeconds(server.pb.pid);
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = t0 + shape.timeoutMs;
  while (held.length < jobs && performance.now() < deadline) {
    const claim = await client.post(server.pb, CLAIM_NEXT, { workerId, leaseSeconds: h.leaseSeconds, limit: h.limit });
    calls++;
    if (claim.status !== 200 || !Array.isArray(claim.body?.jobs)) {
      failures.push(`claim-next ${brief(claim)}`);
      break;
    }
    if (claim.body.jobs.length === 0) break;
    held.push(...claim.body.jobs);
  }
  const wallMs = performance.now() - t0;
  const own = process.cpuUsage(own0);
  const cpu1 = readCpuSeconds(server.pb.pid);
  if (held.length !== jobs) failures.push(`${held.length} of ${jobs} jobs claimed`);
  try {
    const completed = [];
    for (let i = 0; i < held.length; i += MAX_LIMIT) {
      const batch = held.slice(i, i + MAX_LIMIT);
      const res = await client.post(server.pb, COMPLETE, {
        workerId, releases: batch.map((x) => ({ jobId: x.job.id, leaseToken: x.leaseToken, status: "done", result: { w: workerId } })),
      });
      for (const r of res.body?.results ?? []) {
        if (r.released === true) completed.push(r.jobId);
        else failures.push(`complete refused ${r.jobId}: ${r.reason}`);
      }
    }
    const check = await checkRows(client, server, prefix, jobs, [completed], COMPLETED_BY_LOOPS_OR_WORKERS);
    failures.push(...check.failures);
    return runFigures(jobs, check, {
      // The claims alone: the completes after them are not timed.
      jobsPerSec: jobs / (wallMs / 1000),
      clientJobsPerSec: jobs / (wallMs / 1000),
      wallMs,
      msPerCall: calls > 0 ? wallMs / calls : null,
      pbCpuMicrosPerJob: cpuMicrosPerOp(cpu0, cpu1, jobs),
      clientCpuMicrosPerJob: (own.user + own.system) / jobs,
      latencyMs: { p50: null, p99: null, max: 0 },
      p99Ms: null,
      calls: { claimNext: calls },
      requestsPerJob: calls / jobs,
      failures,
    });
  } finally {
    await clearRun(client, server, prefix);
  }
}

/* ------------------------------------------------------------ part 2: the Worker */

/** One run of the Worker fleet (batched-fleet.mjs children, "worker" mode) of `clientModule` on `server` (fleet-run.mjs's runFleet). */
async function fleetRun(ctx, env, server, clientModule, { jobs, tag, shape }) {
  const w = shape.worker;
  const run = await runFleet(ctx.client, env, server, {
    clientModule,
    mode: "worker",
    jobs,
    tag,
    processes: w.processes,
    workersPerProcess: w.workersPerProcess,
    concurrency: w.concurrency,
    leaseSeconds: shape.leaseSeconds,
    timeoutMs: shape.timeoutMs,
    keyDigits: KEY_DIGITS,
    words: COMPLETED_BY_LOOPS_OR_WORKERS,
  });
  const { cpuBefore: cpu0, cpuAfter: cpu1, wallMs } = run;
  const t = fleetTotals(run.reports, jobs, wallMs);
  return runFigures(jobs, run.check, {
    clientJobsPerSec: t.clientJobsPerSec,
    wallMs,
    pbCpuMicrosPerJob: cpuMicrosPerOp(cpu0, cpu1, jobs),
    pbCpuShare: cpu0 !== null && cpu1 !== null ? (cpu1 - cpu0) / (wallMs / 1000) : null,
    clientCpuMicrosPerJob: t.clientCpuMicrosPerJob,
    clientSteadyCpuMicrosPerJob: t.clientSteadyCpuMicrosPerJob,
    clientCpuShare: t.clientCpuShare,
    calls: t.calls,
    requestsPerJob: t.requestsPerJob,
    problems: t.problems,
    errorSamples: t.errorSamples,
    failures: run.failures,
  });
}

/* ------------------------------------------------------------ the phase */

/**
 * A warm-up run per variant (not kept), then `reps` repetitions, the order
 * rotating by rep. `run(v, { jobs, tag })` measures one.
 */
async function alternate(ctx, part, variants, shape, jobs, run, failures) {
  const { log } = ctx;
  if (shape.warmupJobs > 0) {
    for (const v of variants) {
      const r = await run(v, { jobs: shape.warmupJobs, tag: `hp-${part}-warm-${v.key}` });
      failures.push(...r.failures.map((f) => `hot-path ${part} warm-up ${v.key}: ${f}`));
    }
  }
  const runs = [];
  for (let rep = 0; rep < shape.reps; rep++) {
    for (const v of rotate(variants, rep)) {
      const r = await run(v, { jobs, tag: `hp-${part}-r${rep}-${v.key}` });
      log(
        `hot-path ${part}: rep ${rep + 1}/${shape.reps} ${v.key}: ${fmtInt(r.jobsPerSec)} jobs/s (client clock ${fmtInt(r.clientJobsPerSec)}), ` +
          `PB CPU ${fmtInt(r.pbCpuMicrosPerJob)} us/job, client CPU ${fmtInt(r.clientCpuMicrosPerJob)} us/job` +
          `${r.clientSteadyCpuMicrosPerJob != null ? ` (steady ${fmtInt(r.clientSteadyCpuMicrosPerJob)})` : ""}, ` +
          `${r.msPerCall !== undefined ? `${round1(r.msPerCall)} ms a claim-next` : `p99 ${r.latencyMs.p99} ms`}, ${r.requestsPerJob.toFixed(3)} requests/job` +
          `${r.failures.length ? `; !!! ${r.failures.join("; ")}` : ""}`,
      );
      failures.push(...r.failures.map((f) => `hot-path ${part} rep ${rep + 1} ${v.key}: ${f}`));
      runs.push({ variant: v.key, server: v.server.name, rep, ...r });
    }
  }
  return runs;
}

function partResult(key, sizes, runs, targets, extra = {}) {
  const ratios = hotPathRatios(runs);
  const judged = hotPathJudge(ratios, targets);
  const verdicts = Object.values(judged).map((j) => j.pass);
  return {
    key,
    sizes,
    targets,
    rows: summarizeRuns(runs),
    ratios,
    judged,
    pass: verdicts.includes(null) ? null : verdicts.every(Boolean),
    runs,
    skipped: null,
    ...extra,
  };
}

/**
 * @param {{ client: any, log: (m: string) => void }} ctx
 * @param env bench.mjs's queue environment: { repo, binary, layout, hookFiles, migrationsDir, tmpRoot, started, retire, verbose }
 * @param shape hotPathShape(...)'s answer
 */
export async function runHotPathPhase(ctx, env, shape) {
  const { log } = ctx;
  const t0 = performance.now();
  const load1 = { start: round1(os.loadavg()[0]), end: null };
  const failures = [];
  const baseline = await baselineFromGit(env.repo, shape.baselineRev, env.layout, env.tmpRoot);
  const base = { shape, baseline: baselineSummary(baseline), failures, load1, parts: [], clients: null, hooks: null, skipped: null };
  if (baseline.skipped) {
    log(`note: hot-path: ${baseline.skipped}`);
    return { ...base, skipped: baseline.skipped, seconds: round1((performance.now() - t0) / 1000) };
  }
  const sha7 = baseline.sha.slice(0, 7);
  log(`hot-path: baseline ${sha7} ("${baseline.subject}") from git: ${baseline.files.join(", ")}`);
  const [currentClient, baselineClient] = await Promise.all([
    bundleClient(env.repo, join(env.tmpRoot, "hot-path-client-current")),
    baselineClientFromGit(env.repo, baseline, env.tmpRoot),
  ]);
  base.clients = {
    current: currentClient.skipped ? { skipped: currentClient.skipped } : { from: "src/client of the working tree, bundled (batched.mjs's bundleClient)", skipped: null },
    baseline: baselineClient.skipped ? { skipped: baselineClient.skipped } : { from: `src/ of ${sha7} from git, bundled the same way`, files: baselineClient.files, skipped: null },
  };
  const specs = [
    { key: "current", name: "hot-path-current", env, hookFiles: env.hookFiles, clientModule: currentClient.path ?? null },
    { key: "baseline", name: "hot-path-baseline", env: baselineServerEnv(env, baseline), hookFiles: baseline.hookFiles, clientModule: baselineClient.path ?? null },
  ];
  const servers = await Promise.all(specs.map((s) => startServer(s.env, { name: s.name, hooksPool: shape.hooksPool })));
  try {
    const variants = specs.map((s, i) => ({ ...s, server: servers[i] }));
    base.hooks = Object.fromEntries(variants.map((v) => [v.key, hooksOf(env, v.name, v.hookFiles)]));
    const wanted = shape.parts ?? HOT_PATH_PARTS;
    if (wanted.includes("server")) {
      const s = shape.server;
      const sizes = { jobs: s.jobs, loops: s.loops, limit: s.limit, reps: shape.reps };
      log(`hot-path server: ${s.loops} loops of claim-next (limit ${s.limit}) + complete, ${fmtInt(s.jobs)} jobs a run, current vs ${sha7}, ${shape.reps} reps`);
      const runs = await alternate(ctx, "server", variants, shape, s.jobs, (v, o) => loopRun(ctx, v.server, { ...o, shape }), failures);
      base.parts.push(partResult("server", sizes, runs, shape.targets.server));
    }
    if (wanted.includes("limited")) {
      const s = shape.server;
      const sizes = { jobs: s.jobs, loops: s.loops, limit: s.limit, reps: shape.reps, flow: LIMITED_PART_FLOW };
      log(`hot-path limited: the server part's load with ${JSON.stringify(LIMITED_PART_FLOW)} set, current vs ${sha7}, ${shape.reps} reps`);
      await setFlowOnAll(ctx, variants, LIMITED_PART_FLOW);
      try {
        const runs = await alternate(ctx, "limited", variants, shape, s.jobs, (v, o) => loopRun(ctx, v.server, { ...o, shape }), failures);
        base.parts.push(partResult("limited", sizes, runs, shape.targets.limited));
      } finally {
        await setFlowOnAll(ctx, variants, { queue: LIMITED_PART_FLOW.queue, rateLimit: null });
      }
    }
    if (wanted.includes("worker")) {
      const w = shape.worker;
      const sizes = { jobs: w.jobs, processes: w.processes, workersPerProcess: w.workersPerProcess, concurrency: w.concurrency, reps: shape.reps };
      const skipped = currentClient.skipped ?? baselineClient.skipped ?? null;
      if (skipped) {
        log(`note: hot-path worker: ${skipped}`);
        base.parts.push({ key: "worker", sizes, targets: shape.targets.worker, rows: [], ratios: null, judged: {}, pass: null, runs: [], skipped });
      } else {
        log(`hot-path worker: ${w.processes * w.workersPerProcess} Workers x ${w.concurrency} (${w.processes} processes), ${fmtInt(w.jobs)} jobs a run, current client + server vs ${sha7}'s, ${shape.reps} reps`);
        const runs = await alternate(ctx, "worker", variants, shape, w.jobs, (v, o) => fleetRun(ctx, env, v.server, v.clientModule, { ...o, shape }), failures);
        base.parts.push(partResult("worker", sizes, runs, shape.targets.worker));
      }
    }
    if (wanted.includes("held") && shape.held !== undefined) {
      const h = shape.held;
      const sizes = { jobs: h.jobs, limit: h.limit, reps: shape.reps };
      log(`hot-path held: 1 loop of claim-next (limit ${h.limit}), no completes, until ${fmtInt(h.jobs)} jobs are held, current vs ${sha7}, ${shape.reps} reps`);
      const runs = await alternate(ctx, "held", variants, { ...shape, warmupJobs: Math.min(shape.warmupJobs, h.jobs) }, h.jobs,
        (v, o) => heldRun(ctx, v.server, { ...o, shape }), failures);
      base.parts.push(partResult("held", sizes, runs, shape.targets.held));
    }
  } finally {
    for (const server of servers) await env.retire(server);
  }
  for (const p of base.parts.filter((x) => !x.skipped)) {
    const said = Object.entries(p.judged).map(([k, j]) => `${HOT_PATH_METRICS[k].label} ${fmtHotPathRatio(p.ratios[k])} (${j.direction === "atLeast" ? ">=" : "<="} ${j.target}x: ${j.pass === null ? "n/a" : j.pass ? "PASS" : "MISS"})`);
    // A part without targets (limited, held) says its context.
    if (said.length === 0) for (const k of p.key === "held" ? ["msPerCall", "pbCpuPerJob"] : ["jobsPerSec", "pbCpuPerJob"]) said.push(`${HOT_PATH_METRICS[k].label} ${fmtHotPathRatio(p.ratios[k])} (context)`);
    log(`hot-path ${p.key}: current / ${sha7}: ${said.join(", ")}`);
  }
  load1.end = round1(os.loadavg()[0]);
  return { ...base, seconds: round1((performance.now() - t0) / 1000) };
}
