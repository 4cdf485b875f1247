// The identity phase of the benchmark (issue 19's performance criterion: "the
// auth check costs the hot path little: claim-next + complete with a worker
// token <= 1.05x the same with an admin token"). One pb-fleet server per
// PocketBase version of --versions (default 0.22.21 and 0.40.4, one per hooks
// line; --quick: PB_VERSION's only), started and measured one after the other,
// each with:
//   - one worker identity (a fleet_workers record made by the admin, queues
//     [], can_enqueue on) signed in with auth-with-password;
//   - pending jobs seeded with one SQL INSERT (queue.mjs's seedPlainRows),
//     enough that no cell can run out;
//   - the loop "claim-next limit 10 + complete those 10" at W concurrent
//     callers (8 and 1) with the admin token, with the worker token, and (the
//     A/A control, shape.control) with the admin token again, in many short
//     rounds: per round and W the cells run back to back in an order that
//     rotates, so the worker/admin ratio of a round pairs cells that ran under
//     nearly the same machine load, and the control's ratio says what the
//     design reads when there is no difference. Every variant sends the same
//     bodies (workerId `<identity id>/w<n>`): only Authorization differs;
//   - then, as context, GET /api/health with each token and none: PocketBase's
//     own price of loading each kind of token, with no pb-fleet code on the route.
// CPU is the server's time on a CPU summed over its threads' schedstat (ns),
// not proc.mjs's 10 ms ticks: a half-second cell at one core is 50 ticks.
// Per variant: jobs/s and PocketBase's CPU per job (median over rounds),
// p50/p99 of the claim-next and complete calls; per W: the worker/admin ratio
// of CPU per job and of jobs/s (median of the rounds' ratios), PASS/MISS
// against 1.05 (the report's, never the exit code's). Wrong answers fail the
// run: a non-200, a claim-next short of 10 jobs, a job claimed twice, a complete
// item not released, rows left claimed or done more than once at the end, or a
// worker token the server does not serve as a worker (a foreign workerId
// answered other than 403, last_seen_at never stamped).
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync } from "node:fs";
import os from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { ensurePocketBase } from "../pocketbase/binary.mjs";
import { lineLayout } from "../pocketbase/lines.mjs";
import { startServer } from "./batched.mjs";
import { benchSqlValue, benchedHookFiles } from "./hooks.mjs";
import { cpuMicrosPerOp, readCpuSeconds } from "./proc.mjs";
import { seedPlainRows } from "./queue.mjs";
import { table } from "./report.mjs";
import { latencySummary, median, ratio, ratioSummary } from "./stats.mjs";
import { closedLoop } from "./workloads.mjs";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CLAIM_NEXT = "/api/fleet/claim-next";
const HEALTH = "/api/health";
const COMPLETE = "/api/fleet/complete";
const WORKERS = "/api/collections/fleet_workers";
const WORKER_NAME = "bench-identity-worker";
const WORKER_PASSWORD = "bench-identity-password-1234";
const PREFIX = "ident-";
/** The variants, in the order of an even round. */
export const IDENTITY_VARIANTS = ["admin", "worker"];
/** The A/A control (shape.control): the admin token again, its ratio to the admin's the design's noise floor and bias. */
export const CONTROL_VARIANT = "admin again";

/** The variants a round runs. */
export function variantsOf(shape) {
  return shape.control ? [...IDENTITY_VARIANTS, CONTROL_VARIANT] : IDENTITY_VARIANTS;
}
/** Issue 19: worker-token cost <= this times the admin token's. */
export const IDENTITY_LIMIT = 1.05;

const brief = (res) => `HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
const rotate = (xs, n) => xs.map((_, i) => xs[(i + n) % xs.length]);
const round1 = (v) => (typeof v === "number" ? Math.round(v * 10) / 10 : null);

/* ------------------------------------------------------------ CPU time */

/**
 * A process's CPU time in seconds at nanosecond resolution: the sum over its
 * threads of /proc/<pid>/task/<tid>/schedstat's time on a CPU, or null when
 * /proc cannot tell. proc.mjs's utime + stime comes in 10 ms ticks: a short
 * cell at half a core is some 25 ticks, too coarse for a 5% question.
 */
export function readCpuSecondsFine(pid) {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // the thread ended between the listing and the read
      }
    }
    return Number.isFinite(ns) && ns > 0 ? ns / 1e9 : null;
  } catch {
    return null;
  }
}

/**
 * A reading of both clocks; cpuDelta prefers the fine one, and falls back to
 * the ticks when it is missing or went backwards (a thread ended in between:
 * its time left the sum, while utime + stime keep it).
 */
export function readCpu(pid) {
  return { fine: readCpuSecondsFine(pid), ticks: readCpuSeconds(pid) };
}

export function cpuDelta(before, after) {
  const fine = before.fine !== null && after.fine !== null ? after.fine - before.fine : null;
  if (fine !== null && fine >= 0) return { seconds: fine, clock: "schedstat" };
  const ticks = before.ticks !== null && after.ticks !== null ? after.ticks - before.ticks : null;
  return ticks === null ? { seconds: null, clock: null } : { seconds: ticks, clock: "ticks" };
}

/* ------------------------------------------------------------ pure helpers */

/** The variant order of round `round` at the `wIndex`-th W: A/B, then B/A, and so on (with the control: A/B/C, B/C/A, C/A/B). */
export function roundOrder(round, wIndex = 0, variants = IDENTITY_VARIANTS) {
  return rotate(variants, round + wIndex);
}

/**
 * The worker/admin ratios of the cells at one W, paired by round (`pair`: which
 * variant over which; the control's is { of: CONTROL_VARIANT, over: "admin" }), and their
 * verdicts against `limit`:
 *   cpu         worker CPU per job / admin CPU per job: PASS when the median <= limit;
 *   throughput  worker jobs/s / admin jobs/s: PASS when the median >= 1 / limit,
 *               i.e. the worker's wall time per job <= limit x the admin's
 *               (`wallCost`, the same median inverted).
 * A pass is null when no round has both cells (nothing to judge). `pooled`
 * (context, not judged): the same ratios of the paired rounds' totals (CPU
 * seconds over jobs, jobs over seconds), when the cells carry them.
 * @param {Array<{ round: number, workers: number, variant: string, jobsPerSec: number | null, cpuMicrosPerJob: number | null,
 *   jobs?: number, elapsedMs?: number, cpuSeconds?: number | null }>} cells
 */
export function identityRatios(cells, workers, limit = IDENTITY_LIMIT, pair = { of: "worker", over: "admin" }) {
  const atW = cells.filter((c) => c.workers === workers);
  const rounds = [...new Set(atW.map((c) => c.round))].sort((a, b) => a - b);
  const pairs = rounds.map((r) => [atW.find((c) => c.round === r && c.variant === pair.of), atW.find((c) => c.round === r && c.variant === pair.over)]);
  const cpu = ratioSummary(pairs.map(([w, a]) => ratio(w?.cpuMicrosPerJob, a?.cpuMicrosPerJob)));
  const throughput = ratioSummary(pairs.map(([w, a]) => ratio(w?.jobsPerSec, a?.jobsPerSec)));
  const judged = (m, ok) => (typeof m === "number" ? ok(m) : null);
  const both = pairs.filter(([w, a]) => w && a);
  const sum = (xs, k) => (xs.every((c) => typeof c[k] === "number" && Number.isFinite(c[k])) ? xs.reduce((t, c) => t + c[k], 0) : null);
  const totals = (i) => {
    const xs = both.map((p) => p[i]);
    return { jobs: sum(xs, "jobs"), ms: sum(xs, "elapsedMs"), cpu: sum(xs, "cpuSeconds") };
  };
  const [tw, ta] = [totals(0), totals(1)];
  const per = (num, den) => (num === null || den === null || !(den > 0) ? null : num / den);
  return {
    workers,
    limit,
    of: pair.of,
    over: pair.over,
    pooled: both.length
      ? { cpu: ratio(per(tw.cpu, tw.jobs), per(ta.cpu, ta.jobs)), throughput: ratio(per(tw.jobs, tw.ms), per(ta.jobs, ta.ms)) }
      : { cpu: null, throughput: null },
    cpu: { ...cpu, pass: judged(cpu.median, (m) => m <= limit) },
    throughput: {
      ...throughput,
      wallCost: typeof throughput.median === "number" && throughput.median > 0 ? 1 / throughput.median : null,
      pass: judged(throughput.median, (m) => m >= 1 / limit),
    },
  };
}

/** "1.02x (0.97-1.08, n=10)". */
export function fmtIdentityRatio(r) {
  if (!r || typeof r.median !== "number") return "n/a";
  return `${r.median.toFixed(3)}x (${r.min.toFixed(2)}-${r.max.toFixed(2)}, n=${r.n})`;
}

const verdict = (pass) => (pass === null || pass === undefined ? "n/a" : pass ? "PASS" : "MISS");

/** The run's Targets rows of the phase: per version and W, CPU per job and throughput. */
export function identityTargets(identity) {
  const out = [];
  for (const v of identity?.versions ?? []) {
    for (const r of v.ratios) {
      const where = `claim-next (limit ${identity.shape.limit}) + complete, W=${r.workers}, PocketBase ${v.version}`;
      out.push({
        target: `worker token <= ${r.limit}x admin token: PocketBase CPU per job (${where})`,
        measured: fmtIdentityRatio(r.cpu),
        pass: r.cpu.pass,
      });
      out.push({
        target: `worker token <= ${r.limit}x admin token: wall time per job, i.e. jobs/s worker/admin >= ${(1 / r.limit).toFixed(3)} (${where})`,
        measured: `jobs/s ${fmtIdentityRatio(r.throughput)}${typeof r.throughput.wallCost === "number" ? `; wall/job ${r.throughput.wallCost.toFixed(3)}x` : ""}`,
        pass: r.throughput.pass,
      });
    }
  }
  return out;
}

/* ------------------------------------------------------------ the phase */

/**
 * @param {{ client: any, log: (m: string) => void }} ctx
 * @param env bench.mjs's queue environment: { binary, hookFiles, migrationsDir, tmpRoot, started, retire, verbose }
 * @param shape { workers, rounds, durationMs, maxJobs, limit, warmupLoops, leaseSeconds, hooksPool, ratioLimit }
 * @param {string[]} versions PocketBase versions, one server each
 */
export async function runIdentityPhase(ctx, env, shape, versions) {
  const results = [];
  const failures = [];
  for (const version of versions) {
    const r = await measureVersion(ctx, env, shape, version);
    results.push(r.summary);
    failures.push(...r.failures);
  }
  return { shape: { ...shape }, versions: results, failures };
}

async function measureVersion(ctx, env, shape, version) {
  const { client, log } = ctx;
  const failures = [];
  const fail = (m) => {
    if (failures.length < 20) log(`!!! identity ${version}: ${m}`);
    failures.push(`identity ${version}: ${m}`);
  };
  // The run's own binary serves its own version (it may be POCKETBASE_BIN); the rest are got by version.
  const binary = version === env.binary.version ? env.binary : await ensurePocketBase({ version, log, useEnvBinary: false });
  const layout = lineLayout(binary.line);
  const hookFiles = await benchedHookFiles(layout, log);
  if (hookFiles === null) throw new Error(`the bundle for PocketBase ${version} is missing: run \`npm run build\``);
  // The bundle may be rebuilt while a run goes on: what this server loaded is its hooks dir's copy, hashed once it started.
  const builtAt = hookFiles.map((f) => statSync(f).mtime.toISOString());
  const name = `identity-v${version}`;
  const server = await startServer({ ...env, hookFiles, migrationsDir: layout.migrationsDir }, { name, hooksPool: shape.hooksPool, binary });
  const hooks = hookFiles.map((f, i) => ({
    file: relative(REPO, f),
    sha256: createHash("sha256").update(readFileSync(join(env.tmpRoot, `hooks-${name}`, basename(f)))).digest("hex"),
    builtAt: builtAt[i],
  }));
  try {
    // ---- the identity, as the admin makes one and a worker signs in
    const created = await client.post(server.pb, `${WORKERS}/records`, { username: WORKER_NAME, password: WORKER_PASSWORD, passwordConfirm: WORKER_PASSWORD, queues: [], can_enqueue: true });
    if (created.status !== 200 || typeof created.body?.id !== "string") throw new Error(`${server.name}: creating the worker identity failed: ${brief(created)}`);
    const identityId = created.body.id;
    const auth = await client.post({ port: server.pb.port }, `${WORKERS}/auth-with-password`, { identity: WORKER_NAME, password: WORKER_PASSWORD });
    if (auth.status !== 200 || typeof auth.body?.token !== "string") throw new Error(`${server.name}: the worker identity's auth-with-password failed: ${brief(auth)}`);
    const adminTarget = { port: server.pb.port, token: server.pb.token };
    const targets = { admin: adminTarget, worker: { port: server.pb.port, token: auth.body.token }, [CONTROL_VARIANT]: adminTarget };
    const variants = variantsOf(shape);

    // ---- the server serves the token as a worker: another holder's workerId is refused
    const foreign = await client.post(targets.worker, CLAIM_NEXT, { workerId: "someone-else", leaseSeconds: shape.leaseSeconds, limit: 1 });
    if (foreign.status !== 403) fail(`claim-next with the worker token and a foreign workerId answered ${brief(foreign)}, 403 expected: the token is not served as a worker identity`);

    // ---- pending jobs: every cell bounded by maxJobs, plus the warm-up
    const loopsPerCell = Math.ceil(shape.maxJobs / shape.limit);
    const cellsCount = shape.rounds * shape.workers.length * variants.length;
    const warmLoops = IDENTITY_VARIANTS.length * shape.warmupLoops;
    const seeded = (cellsCount * loopsPerCell + warmLoops) * shape.limit;
    const t0 = Date.now();
    const columns = await seedPlainRows(client, server, seeded, PREFIX);
    const count = async (where) => Number(await benchSqlValue(client, server, `SELECT CAST(COUNT(*) AS TEXT) AS value FROM probe_jobs WHERE ${where}`));
    const pendingAtStart = await count("status = 'pending'");
    const seedSeconds = round1((Date.now() - t0) / 1000);
    log(`identity ${version}: ${pendingAtStart.toLocaleString("en-US")} pending jobs seeded in ${seedSeconds} s; identity ${identityId}`);
    if (pendingAtStart !== seeded) throw new Error(`${server.name}: ${pendingAtStart} pending rows after seeding, ${seeded} expected`);

    // ---- the loop: claim-next limit N + complete those N
    const seen = new Set();
    let duplicates = 0;
    let completedJobs = 0;
    const op = (variant) => async (w) => {
      const target = targets[variant];
      const workerId = `${identityId}/w${w}`;
      const claim = await client.post(target, CLAIM_NEXT, { workerId, leaseSeconds: shape.leaseSeconds, limit: shape.limit });
      if (claim.status !== 200 || !Array.isArray(claim.body?.jobs)) return { latencies: { claim: claim.ms }, ok: false, detail: `${variant} claim-next ${brief(claim)}` };
      const jobs = claim.body.jobs;
      for (const j of jobs) {
        if (seen.has(j.job.id)) duplicates += 1;
        seen.add(j.job.id);
      }
      if (jobs.length === 0) return { latencies: { claim: claim.ms }, ok: false, detail: `${variant} claim-next claimed none: the seeded jobs ran out` };
      const done = await client.post(target, COMPLETE, { workerId, releases: jobs.map((j) => ({ jobId: j.job.id, leaseToken: j.leaseToken, status: "done", result: { w } })) });
      const released = done.status === 200 && Array.isArray(done.body?.results) && done.body.results.length === jobs.length ? done.body.results.filter((x) => x.released === true).length : 0;
      completedJobs += released;
      const latencies = { claim: claim.ms, complete: done.ms };
      if (released !== jobs.length) return { latencies, ok: false, detail: `${variant} complete of ${jobs.length}: ${released} released, ${brief(done)}` };
      if (jobs.length !== shape.limit) return { latencies, ok: false, detail: `${variant} claim-next claimed ${jobs.length} of ${shape.limit}` };
      return { latencies, ok: true };
    };
    const cell = async (variant, workers, { durationMs, maxOps }) => {
      const cpu0 = readCpu(server.pb.pid);
      const r = await closedLoop({ workers, durationMs, maxOps, op: op(variant) });
      const cpu = cpuDelta(cpu0, readCpu(server.pb.pid));
      const jobs = r.ops * shape.limit;
      return {
        variant,
        workers,
        loops: r.ops,
        jobs,
        elapsedMs: r.elapsedMs,
        jobsPerSec: jobs / (r.elapsedMs / 1000),
        cpuSeconds: cpu.seconds,
        cpuClock: cpu.clock,
        cpuMicrosPerJob: cpuMicrosPerOp(0, cpu.seconds, jobs),
        pbCores: cpu.seconds === null ? null : cpu.seconds / (r.elapsedMs / 1000),
        latencies: r.latencies,
        failureCount: r.failureCount,
        failureSamples: r.failureSamples,
      };
    };

    // First calls of each token (and the pooled runtimes) stay out of the figures.
    const warmW = Math.max(...shape.workers);
    for (const variant of IDENTITY_VARIANTS) {
      const w = await cell(variant, warmW, { durationMs: 30_000, maxOps: shape.warmupLoops });
      if (w.failureCount) fail(`warm-up, ${variant}: ${w.failureCount} failed loops, e.g. ${w.failureSamples[0]}`);
    }

    const load1 = { start: round1(os.loadavg()[0]), end: null };
    log(`identity ${version}: ${shape.rounds} rounds of W=${shape.workers.join(",")} x (${variants.join(", ")}) in a rotating order, ${shape.durationMs} ms or ${shape.maxJobs} jobs a cell; load average ${load1.start}`);
    const cells = [];
    for (let round = 0; round < shape.rounds; round++) {
      for (const [wi, workers] of shape.workers.entries()) {
        for (const variant of roundOrder(round, wi, variants)) {
          const c = await cell(variant, workers, { durationMs: shape.durationMs, maxOps: loopsPerCell });
          if (c.failureCount) fail(`${variant} W=${workers} round ${round + 1}: ${c.failureCount} failed loops, e.g. ${c.failureSamples[0]}`);
          cells.push({ round, ...c });
        }
      }
    }
    load1.end = round1(os.loadavg()[0]);

    // ---- context: PocketBase's own cost of each token, on a route without pb-fleet (it loads the token all the same)
    const tokenLoad = shape.tokenRounds > 0 ? await measureTokenLoad(client, server, targets, shape) : null;
    if (tokenLoad?.failureCount) fail(`GET ${HEALTH}: ${tokenLoad.failureCount} answers other than 200, e.g. ${tokenLoad.failureSample}`);

    // ---- exactly once: every job claimed once, completed once, none left claimed
    if (duplicates) fail(`${duplicates} jobs were handed out by claim-next more than once`);
    const left = { claimed: await count("status = 'claimed'"), done: await count("status = 'done'"), pending: await count("status = 'pending'") };
    const twice = columns.includes("attempts") ? await count("status = 'done' AND attempts != 1") : 0;
    if (left.claimed) fail(`${left.claimed} jobs left claimed at the end`);
    if (left.done !== completedJobs || left.done !== seen.size) fail(`${left.done} rows done, ${completedJobs} completions answered released, ${seen.size} distinct jobs claimed: all three must agree`);
    if (twice) fail(`${twice} done rows were claimed other than exactly once (attempts != 1)`);
    if (left.pending + left.done + left.claimed !== seeded) fail(`${left.pending + left.done + left.claimed} rows at the end, ${seeded} seeded`);
    const rec = await client.get(server.pb, `${WORKERS}/records/${identityId}`);
    const lastSeenAt = rec.status === 200 ? rec.body?.last_seen_at ?? "" : null;
    if (!lastSeenAt) fail(`the identity's last_seen_at is ${JSON.stringify(lastSeenAt)} after its calls (${brief(rec)}): the calls were not served as a worker identity's`);

    const rows = [];
    for (const workers of shape.workers) {
      for (const variant of variants) {
        const mine = cells.filter((c) => c.workers === workers && c.variant === variant);
        const lat = (k) => latencySummary(mine.flatMap((c) => c.latencies[k] ?? []));
        rows.push({
          variant,
          workers,
          cells: mine.length,
          jobs: mine.reduce((s, c) => s + c.jobs, 0),
          jobsPerSec: median(mine.map((c) => c.jobsPerSec)),
          perRoundJobsPerSec: mine.map((c) => c.jobsPerSec),
          cpuMicrosPerJob: median(mine.map((c) => c.cpuMicrosPerJob)),
          perRoundCpuMicros: mine.map((c) => c.cpuMicrosPerJob),
          pbCores: median(mine.map((c) => c.pbCores)),
          claimMs: lat("claim"),
          completeMs: lat("complete"),
          failureCount: mine.reduce((s, c) => s + c.failureCount, 0),
        });
      }
    }
    const ratios = shape.workers.map((w) => identityRatios(cells, w, shape.ratioLimit));
    const controls = shape.control ? shape.workers.map((w) => identityRatios(cells, w, shape.ratioLimit, { of: CONTROL_VARIANT, over: "admin" })) : [];
    for (const r of controls) log(`identity ${version} W=${r.workers}: control, admin again / admin: CPU/job ${fmtIdentityRatio(r.cpu)}, jobs/s ${fmtIdentityRatio(r.throughput)}`);
    for (const r of ratios) log(`identity ${version} W=${r.workers}: worker/admin CPU/job ${fmtIdentityRatio(r.cpu)} ${verdict(r.cpu.pass)}, jobs/s ${fmtIdentityRatio(r.throughput)} ${verdict(r.throughput.pass)}`);
    return {
      summary: {
        version,
        line: binary.line,
        server: server.name,
        binary: binary.path,
        identityId,
        seeded,
        seedSeconds,
        hooks,
        end: left,
        tokenLoad,
        lastSeenAt,
        load1,
        rows,
        ratios,
        controls,
        cells: cells.map(({ latencies, failureSamples, ...c }) => c),
      },
      failures,
    };
  } finally {
    await env.retire(server);
  }
}

/** The token variants of the GET /api/health control: no token is PocketBase's floor. */
const TOKEN_VARIANTS = ["admin", "worker", "none"];

/**
 * GET /api/health at W=shape.tokenWorkers with each token, in shape.tokenRounds
 * rounds of cells of shape.tokenMs in a rotating order: PocketBase's CPU per
 * request for loading (verifying, reading the account of) each token, with no
 * pb-fleet code on the route. workerMinusAdmin: the median of the rounds'
 * differences, per request; perJob: that difference for the hot path's two
 * calls per `limit` jobs.
 */
async function measureTokenLoad(client, server, targets, shape) {
  const t = { ...targets, none: { port: server.pb.port } };
  const cells = [];
  let failureCount = 0;
  let failureSample = null;
  for (let round = 0; round < shape.tokenRounds; round++) {
    for (const variant of rotate(TOKEN_VARIANTS, round)) {
      const cpu0 = readCpu(server.pb.pid);
      const r = await closedLoop({
        workers: shape.tokenWorkers,
        durationMs: shape.tokenMs,
        maxOps: 1_000_000,
        op: async () => {
          const res = await client.get(t[variant], HEALTH);
          if (res.status !== 200) failureSample ??= brief(res);
          return { latencies: { call: res.ms }, ok: res.status === 200 };
        },
      });
      failureCount += r.failureCount;
      const cpu = cpuDelta(cpu0, readCpu(server.pb.pid));
      cells.push({ round, variant, requests: r.ops, cpuMicrosPerRequest: cpuMicrosPerOp(0, cpu.seconds, r.ops) });
    }
  }
  const of = (variant) => cells.filter((c) => c.variant === variant);
  const perRequest = Object.fromEntries(TOKEN_VARIANTS.map((v) => [v, median(of(v).map((c) => c.cpuMicrosPerRequest))]));
  const diffs = [...Array(shape.tokenRounds).keys()].map((round) => {
    const w = cells.find((c) => c.round === round && c.variant === "worker")?.cpuMicrosPerRequest;
    const a = cells.find((c) => c.round === round && c.variant === "admin")?.cpuMicrosPerRequest;
    return typeof w === "number" && typeof a === "number" ? w - a : null;
  });
  const workerMinusAdmin = median(diffs);
  return {
    rounds: shape.tokenRounds,
    workers: shape.tokenWorkers,
    cellMs: shape.tokenMs,
    requests: cells.reduce((s, c) => s + c.requests, 0),
    cpuMicrosPerRequest: perRequest,
    workerMinusAdmin,
    perJob: typeof workerMinusAdmin === "number" ? (workerMinusAdmin * 2) / shape.limit : null,
    failureCount,
    failureSample,
  };
}

/* ------------------------------------------------------------ the report */

const fmtRate = (v) => (typeof v === "number" ? Math.round(v).toLocaleString("en-US") : "n/a");
const fmtCpu = (v) => (typeof v === "number" && Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "n/a");
const fmtMs = (v) => (typeof v === "number" ? v.toFixed(1) : "n/a");
const fmtX = (v) => (typeof v === "number" ? `${v.toFixed(3)}x` : "n/a");

/** Which CPU clock the cells used: "schedstat in every cell", or how many fell back to 10 ms ticks. */
function clockNote(identity) {
  const cells = identity.versions.flatMap((v) => v.cells ?? []);
  const ticks = cells.filter((c) => c.cpuClock === "ticks").length;
  const none = cells.filter((c) => c.cpuClock === null).length;
  if (ticks === 0 && none === 0) return "every cell";
  return `${ticks} of ${cells.length} cells fell back to utime + stime in 10 ms ticks${none ? `, ${none} had no reading` : ""}`;
}

/** The phase's section of the report (Markdown lines; `level` is the heading's "###"). */
export function renderIdentity(identity, level = "###") {
  const s = identity.shape;
  const out = ["", `${level} 13. Worker identities: claim-next (limit ${s.limit}) + complete with a worker token vs the admin token (issue 19)`, ""];
  out.push(
    table(
      ["PocketBase", "W", "token", "jobs/s (median round)", "PB CPU us/job (median)", "PB cores", "claim-next p50 / p99 ms", "complete p50 / p99 ms", "jobs", "failures"],
      identity.versions.flatMap((v) =>
        v.rows.map((r) => [
          v.version,
          r.workers,
          r.variant,
          fmtRate(r.jobsPerSec),
          fmtCpu(r.cpuMicrosPerJob),
          typeof r.pbCores === "number" ? r.pbCores.toFixed(2) : "n/a",
          `${fmtMs(r.claimMs.p50)} / ${fmtMs(r.claimMs.p99)}`,
          `${fmtMs(r.completeMs.p50)} / ${fmtMs(r.completeMs.p99)}`,
          fmtRate(r.jobs),
          r.failureCount,
        ]),
      ),
    ),
    "",
  );
  out.push(
    table(
      [
        "PocketBase", "W",
        "CPU/job worker / admin (median of rounds, spread)", `<= ${s.ratioLimit}x`,
        "jobs/s worker / admin (median of rounds, spread)", `>= ${(1 / s.ratioLimit).toFixed(3)} (wall/job <= ${s.ratioLimit}x)`,
        "pooled CPU/job / jobs/s (context)",
      ],
      identity.versions.flatMap((v) => [
        ...v.ratios.map((r) => [
          v.version, r.workers,
          fmtIdentityRatio(r.cpu), verdict(r.cpu.pass),
          fmtIdentityRatio(r.throughput), verdict(r.throughput.pass),
          `${fmtX(r.pooled?.cpu)} / ${fmtX(r.pooled?.throughput)}`,
        ]),
        ...(v.controls ?? []).map((r) => [
          v.version, `${r.workers}, control: ${r.of} / ${r.over}`,
          fmtIdentityRatio(r.cpu), "(noise)",
          fmtIdentityRatio(r.throughput), "(noise)",
          `${fmtX(r.pooled?.cpu)} / ${fmtX(r.pooled?.throughput)}`,
        ]),
      ]),
    ),
    "",
  );
  const v0 = identity.versions[0];
  out.push(
    `Each version its own pb-fleet server (--hooksPool ${s.hooksPool}, the sweeper cron off), one after the other, with ${v0 ? fmtRate(v0.seeded) : "?"} pending jobs seeded by one SQL INSERT and one worker identity ` +
      "(a fleet_workers record, queues [], can_enqueue on, signed in with auth-with-password). " +
      `A loop: claim-next of ${s.limit} jobs then one complete of those ${s.limit}, W loops at once; both tokens send the same bodies (workerId \`<identity id>/w<n>\`), only Authorization differs. ` +
      `${s.rounds} rounds; per round and W the ${s.control ? "three cells (admin, worker, and the admin token again as an A/A control)" : "two tokens"} run back to back (${s.durationMs} ms or ${fmtRate(s.maxJobs)} jobs a cell), the order rotating by round; ` +
      "a ratio is the median of the rounds' worker/admin ratios (cells paired by round: same machine load); `pooled`: the ratio of the paired rounds' totals instead" +
      (s.control ? "; the control rows are the same ratios for two cells with the same admin token, i.e. what the design reads when there is no difference (noise floor and bias). " : ". ") +
      `CPU: the PocketBase process's time on a CPU over the cell's jobs (the sum of its threads' /proc schedstat, ns; ${clockNote(identity)}). ` +
      "Exactly once: every job handed out once, each complete item released, at the end no row claimed and done = completions = distinct jobs claimed; " +
      "the worker token's foreign workerId answered 403 and last_seen_at was stamped (the calls were served as the identity's). " +
      `Machine load average (1 min) at the start / end of the rounds: ${identity.versions.map((v) => `${v.version} ${v.load1.start} / ${v.load1.end}`).join(", ")} (the cores are shared). ` +
      `Hooks: ${identity.versions.map((v) => `${v.version} ${(v.hooks ?? []).map((h) => `${h.file} (sha256 ${h.sha256.slice(0, 12)}, built ${h.builtAt})`).join(", ")}`).join("; ")}.`,
  );
  const withToken = identity.versions.filter((v) => v.tokenLoad);
  if (withToken.length) {
    out.push(
      "",
      table(
        ["PocketBase", "GET /api/health: PB CPU us/request, admin / worker / no token", "worker - admin per request (median of rounds)", "the same per job of the loop", "share of the admin's CPU/job at W=8"],
        withToken.map((v) => {
          const t = v.tokenLoad;
          const adminJob = v.rows.find((r) => r.variant === "admin" && r.workers === Math.max(...v.rows.map((x) => x.workers)))?.cpuMicrosPerJob;
          return [
            v.version,
            `${fmtCpu(t.cpuMicrosPerRequest.admin)} / ${fmtCpu(t.cpuMicrosPerRequest.worker)} / ${fmtCpu(t.cpuMicrosPerRequest.none)}`,
            typeof t.workerMinusAdmin === "number" ? `${t.workerMinusAdmin >= 0 ? "+" : ""}${fmtCpu(t.workerMinusAdmin)} us` : "n/a",
            typeof t.perJob === "number" ? `${t.perJob >= 0 ? "+" : ""}${t.perJob.toFixed(1)} us` : "n/a",
            typeof t.perJob === "number" && typeof adminJob === "number" && adminJob > 0 ? `${((100 * t.perJob) / adminJob).toFixed(1)}%` : "n/a",
          ];
        }),
      ),
      "",
      `Context, not judged: PocketBase loads (verifies, reads the account of) a request's token on every route; GET ${HEALTH} runs no pb-fleet code, so its CPU per request with each token ` +
        `is PocketBase's own price of that token (${withToken[0].tokenLoad.rounds} rounds of ${withToken[0].tokenLoad.workers} loops x ${withToken[0].tokenLoad.cellMs} ms per token, rotating). ` +
        `Per job of the loop: the difference x 2 calls / ${s.limit} jobs. The rest of the gap between the tokens is spent elsewhere on the hot path's routes (pb-fleet reading the identity and checking it, or other PocketBase work that differs with the kind of token).`,
    );
  }
  return out;
}

/**
 * The report with the phase's section put before its memory table (report.mjs
 * renders the other sections), or at its end when there is none.
 */
export function withIdentitySection(report, identity) {
  if (!identity) return report;
  const section = renderIdentity(identity).join("\n");
  const at = report.indexOf("\n\n### 9. Memory");
  return at === -1 ? `${report}${section}\n` : `${report.slice(0, at)}\n${section}${report.slice(at)}`;
}
