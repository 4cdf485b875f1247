// The benchmark's `batched` phase (issue 13): a fleet of pb-fleet Workers
// against one PocketBase, with the batch endpoints, side by side with the same
// fleet shape doing one job per request, in one run:
//   batched    `processes` Node processes x `workersPerProcess` pb-fleet
//              Workers of `concurrency`, no-op handler returning a tiny result
//              (scripts/bench/batched-fleet.mjs, mode "worker"): claim-next of
//              the free slots, one heartbeat per renew interval for all held
//              leases, releases coalesced into `complete` calls
//   unbatched  the same processes and worker ids, `concurrency` loops each of
//              claim-next (limit 1) -> renew -> release done per job, through
//              the same FleetClient (mode "unbatched"): the per-job lifecycle
// Each variant has a PocketBase of its own (so each one's peak RSS is its own),
// both alive for the whole phase, measured alternately (rotating order per
// repetition). A run: enqueue `jobs` jobs through POST /api/fleet/enqueue
// (1,000 a call), start the client processes (signed in, idle), say "go",
// wait until every job is done, stop them, and read the rows:
//   jobs/s             jobs / (last finished_at - first claimed_at), the
//                      server's own stamps (the clients' clocks say the same
//                      within a few ms: clientJobsPerSec)
//   claim-to-completion finished_at - claimed_at per row (p50/p99)
//   exactly once       every row done, claimed once (attempts 1, reclaim_count
//                      0), its result written by its holder, and each job
//                      reported completed by exactly one worker, once: any
//                      other outcome is a failure of the bench
// Between runs the rows (and the probe_job_events records) are deleted, so
// each run starts from the same empty table. CPU: PocketBase's from /proc,
// the clients' from process.cpuUsage(); client and server share the machine's
// cores. --profile adds a third PocketBase, built with Go's net/http/pprof
// (scripts/bench/profile.mjs), loaded like `batched` while a CPU profile is
// taken, and summarized by where the time goes.
import { mkdir } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { startPocketBase, freePort } from "../pocketbase/server.mjs";
import { ADMIN, fleetTotals, runFleet } from "./fleet-run.mjs";
import { writeHooksDir } from "./hooks.mjs";
import { captureCpuProfile, ensurePprofPocketBase, PPROF_ENV, summarizeProfile } from "./profile.mjs";
import { median, ratio, ratioSummary } from "./stats.mjs";

const rotate = (xs, n) => xs.map((_, i) => xs[(i + n) % xs.length]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* ------------------------------------------------------------ servers, clients */

export async function startServer(env, { name, hooksPool, binary = env.binary, extraEnv = {} }) {
  const hooksDir = await writeHooksDir(join(env.tmpRoot, `hooks-${name}`), env.hookFiles, binary.line, { sql: true });
  const pb = await startPocketBase({
    binary: binary.path,
    line: binary.line,
    dataDir: join(env.tmpRoot, `data-${name}`),
    hooksDir,
    migrationsDir: env.migrationsDir,
    hooksPool,
    adminEmail: ADMIN.email,
    adminPassword: ADMIN.password,
    env: { PB_FLEET_SWEEP_CRON: "off", ...(env.pbEnv ?? {}), ...extraEnv },
    log: env.verbose ? (m) => console.error(`[${name}] ${m}`) : () => {},
  });
  const server = { name, hooksPool, pb };
  env.started.push(server);
  return server;
}

/** The pb-fleet client (src/client) as one ESM file the client processes import. */
export async function bundleClient(repo, outDir) {
  let esbuild;
  try {
    esbuild = await import("esbuild");
  } catch {
    return { skipped: "esbuild (a devDependency) is not installed: the client processes need src/client bundled; run `npm install`." };
  }
  await mkdir(outDir, { recursive: true });
  const outfile = join(outDir, "fleet-client.mjs");
  await esbuild.build({
    entryPoints: [join(repo, "src/client/index.ts")],
    bundle: true, platform: "node", format: "esm", target: "node20", outfile, logLevel: "silent",
  });
  return { path: outfile, skipped: null };
}

/* ------------------------------------------------------------ one run */

/**
 * One measured run of `mode` ("worker" | "unbatched") on `server`: `jobs` jobs
 * enqueued, the fleet started, every job waited for, the rows checked
 * (fleet-run.mjs's runFleet).
 */
async function runOnce(ctx, env, server, { mode, jobs, tag, shape, onRunning }) {
  const run = await runFleet(ctx.client, env, server, {
    clientModule: env.clientModule,
    mode,
    jobs,
    tag,
    processes: shape.processes,
    workersPerProcess: shape.workersPerProcess,
    concurrency: shape.concurrency,
    leaseSeconds: shape.leaseSeconds,
    timeoutMs: shape.timeoutMs,
    sampleRss: true,
    onRunning,
  });
  const { check, cpuBefore, cpuAfter, wallMs } = run;
  const t = fleetTotals(run.reports, jobs, wallMs);
  return {
    mode,
    jobs,
    jobsPerSec: check.spanMs > 0 ? jobs / (check.spanMs / 1000) : null,
    clientJobsPerSec: t.clientJobsPerSec,
    spanMs: check.spanMs,
    wallMs,
    latencyMs: check.latency,
    pbCpuMicrosPerJob: cpuBefore !== null && cpuAfter !== null ? ((cpuAfter - cpuBefore) * 1e6) / jobs : null,
    pbCpuShare: cpuBefore !== null && cpuAfter !== null ? (cpuAfter - cpuBefore) / (wallMs / 1000) : null,
    clientCpuMicrosPerJob: t.clientCpuMicrosPerJob,
    clientCpuShare: t.clientCpuShare,
    peakRssBytes: run.peakRssBytes,
    calls: t.calls,
    requestsPerJob: t.requestsPerJob,
    claimedPerClaimNext: t.calls.claimNext ? t.sum((r) => r.items.claimed) / t.calls.claimNext : null,
    itemsPerComplete: t.calls.complete ? t.sum((r) => r.items.completeItems) / t.calls.complete : null,
    itemsPerHeartbeat: t.calls.heartbeat ? t.sum((r) => r.items.heartbeatItems) / t.calls.heartbeat : null,
    problems: t.problems,
    errorSamples: t.errorSamples,
    exactlyOnce: check.exactlyOnce,
    failures: run.failures,
    profile: run.profile,
  };
}

/* ------------------------------------------------------------ the phase */

/**
 * @param {{ client: any, log: (m: string) => void }} ctx
 * @param env { repo, binary, hookFiles, migrationsDir, tmpRoot, started, retire, verbose }
 * @param shape { jobs, reps, warmupJobs, processes, workersPerProcess, concurrency, leaseSeconds, hooksPool: { batched, unbatched }, timeoutMs }
 * @param {{ seconds: number, version: string, outDir: string } | null} profile
 */
export async function runBatchedPhase(ctx, env, shape, profile = null) {
  const { log } = ctx;
  const bundle = await bundleClient(env.repo, join(env.tmpRoot, "batched-client"));
  if (bundle.skipped) {
    log(`note: batched: ${bundle.skipped}`);
    return { skipped: bundle.skipped };
  }
  // shape.pbEnv: environment for the phase's PocketBase servers (e.g. { "GOGC": "400" }, through BENCH_BATCHED).
  env = { ...env, clientModule: bundle.path, pbEnv: shape.pbEnv ?? {} };
  const fleetSize = shape.processes * shape.workersPerProcess;
  // The issue's comparison (same fleet shape), and the per-job lifecycle at a concurrency it handles better (context).
  const variants = [
    { key: "batched", mode: "worker", hooksPool: shape.hooksPool.batched, jobs: shape.jobs, concurrency: shape.concurrency },
    { key: "unbatched", mode: "unbatched", hooksPool: shape.hooksPool.unbatched, jobs: shape.unbatchedJobs, concurrency: shape.concurrency },
  ];
  if (shape.lowConcurrency) {
    variants.push({ key: `unbatched, ${fleetSize * shape.lowConcurrency} loops`, mode: "unbatched", hooksPool: shape.hooksPool.batched, jobs: shape.unbatchedJobs, concurrency: shape.lowConcurrency });
  }
  const servers = [];
  const runs = [];
  const failures = [];
  try {
    for (const [i, v] of variants.entries()) {
      v.server = await startServer(env, { name: `batched-${["batched", "unbatched", "unbatched-low"][i]}`, hooksPool: v.hooksPool });
      servers.push(v.server);
    }
    log(`batched: ${fleetSize} workers (${shape.processes} processes x ${shape.workersPerProcess}); ${variants.map((v) => `${v.key}: concurrency ${v.concurrency}, ${v.jobs} jobs`).join("; ")}; warm-up of ${shape.warmupJobs} jobs per server`);
    for (const v of variants) {
      const r = await runOnce(ctx, env, v.server, { mode: v.mode, jobs: shape.warmupJobs, tag: `warm-${v.server.name}`, shape: { ...shape, concurrency: v.concurrency } });
      if (r.failures.length) failures.push(...r.failures.map((f) => `batched warm-up ${v.key}: ${f}`));
    }
    for (let rep = 0; rep < shape.reps; rep++) {
      for (const v of rotate(variants, rep)) {
        const r = await runOnce(ctx, env, v.server, { mode: v.mode, jobs: v.jobs, tag: `r${rep}-${v.server.name}`, shape: { ...shape, concurrency: v.concurrency } });
        log(
          `batched: rep ${rep + 1}/${shape.reps} ${v.key}: ${Math.round(r.jobsPerSec ?? 0)} jobs/s, p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms, ` +
            `PB CPU ${Math.round(r.pbCpuMicrosPerJob ?? 0)} us/job (${(r.pbCpuShare ?? 0).toFixed(2)} cores), clients ${Math.round(r.clientCpuMicrosPerJob)} us/job (${r.clientCpuShare.toFixed(2)} cores), ` +
            `${r.requestsPerJob.toFixed(3)} requests/job, peak RSS ${Math.round((r.peakRssBytes ?? 0) / 1048576)} MB${r.failures.length ? `; !!! ${r.failures.join("; ")}` : ""}`,
        );
        failures.push(...r.failures.map((f) => `batched rep ${rep + 1} ${v.key}: ${f}`));
        runs.push({ variant: v.key, rep, ...r });
      }
    }
  } finally {
    // VmHWM: the server's peak resident memory over its whole life (warm-up and every rep of its variant).
    for (const v of variants) v.hwmBytes = v.server?.pb.peakRssBytes() ?? null;
    for (const s of servers) await env.retire(s);
  }

  const rows = variants.map((v) => {
    const mine = runs.filter((r) => r.variant === v.key).sort((a, b) => a.rep - b.rep);
    const med = (f) => median(mine.map(f));
    return {
      variant: v.key,
      server: v.server.name,
      hooksPool: v.hooksPool,
      concurrency: v.concurrency,
      jobs: v.jobs,
      reps: mine.length,
      jobsPerSec: med((r) => r.jobsPerSec),
      perRepJobsPerSec: mine.map((r) => r.jobsPerSec),
      clientJobsPerSec: med((r) => r.clientJobsPerSec),
      latencyMs: { p50: med((r) => r.latencyMs.p50), p95: med((r) => r.latencyMs.p95), p99: med((r) => r.latencyMs.p99), max: Math.max(...mine.map((r) => r.latencyMs.max ?? 0)) },
      pbCpuMicrosPerJob: med((r) => r.pbCpuMicrosPerJob),
      pbCpuShare: med((r) => r.pbCpuShare),
      clientCpuMicrosPerJob: med((r) => r.clientCpuMicrosPerJob),
      clientCpuShare: med((r) => r.clientCpuShare),
      peakRssBytes: Math.max(...mine.map((r) => r.peakRssBytes ?? 0)),
      hwmBytes: v.hwmBytes,
      requestsPerJob: med((r) => r.requestsPerJob),
      claimedPerClaimNext: med((r) => r.claimedPerClaimNext),
      itemsPerComplete: med((r) => r.itemsPerComplete),
      itemsPerHeartbeat: med((r) => r.itemsPerHeartbeat),
      problems: mine.reduce((acc, r) => ({ leaseLost: acc.leaseLost + r.problems.leaseLost, refused: acc.refused + r.problems.refused, errors: acc.errors + r.problems.errors }), { leaseLost: 0, refused: 0, errors: 0 }),
      exactlyOnceRuns: `${mine.filter((r) => r.failures.length === 0).length} of ${mine.length}`,
    };
  });
  const b = rows[0];
  const u = rows[1];
  /** batched over `other`, paired per repetition: jobs/s, and (cpu) the other's PocketBase CPU per job over batched's. */
  const versus = (other) => {
    const pairs = runs.filter((r) => r.variant === "batched").map((r) => [r, runs.find((x) => x.variant === other && x.rep === r.rep)]);
    return {
      name: `batched / ${other}`,
      ...ratioSummary(pairs.map(([x, y]) => ratio(x.jobsPerSec, y?.jobsPerSec))),
      cpu: ratioSummary(pairs.map(([x, y]) => ratio(y?.pbCpuMicrosPerJob, x.pbCpuMicrosPerJob))).median,
    };
  };
  const result = {
    jobs: shape.jobs,
    fleet: { processes: shape.processes, workersPerProcess: shape.workersPerProcess, concurrency: shape.concurrency, leaseSeconds: shape.leaseSeconds },
    pbEnv: shape.pbEnv ?? {},
    rows,
    runs: runs.map(({ profile: _p, ...r }) => r),
    ratio: versus("unbatched"),
    otherRatios: variants.slice(2).map((v) => versus(v.key)),
    // Jobs per second of one core of PocketBase CPU at the measured cost per job (times the cores: the ceiling with the clients elsewhere).
    ceiling: {
      cores: typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length,
      batchedJobsPerCoreSecond: b.pbCpuMicrosPerJob ? 1e6 / b.pbCpuMicrosPerJob : null,
      unbatchedJobsPerCoreSecond: u.pbCpuMicrosPerJob ? 1e6 / u.pbCpuMicrosPerJob : null,
    },
    failures,
    profile: null,
  };
  if (profile) result.profile = await runProfile(ctx, env, shape, profile, b.jobsPerSec, failures);
  return result;
}

/** The batched load against a pprof-enabled PocketBase while a CPU profile is taken. */
async function runProfile(ctx, env, shape, profile, measuredRate, failures) {
  const { log } = ctx;
  let binary;
  try {
    binary = await ensurePprofPocketBase({ version: profile.version, log });
  } catch (err) {
    log(`note: batched --profile: ${err.message}`);
    return { skipped: err.message };
  }
  if (binary.line !== env.binary.line) return { skipped: `the pprof binary is PocketBase ${binary.version} (line ${binary.line}), the bundle measured is line ${env.binary.line}` };
  const addr = `127.0.0.1:${await freePort()}`;
  const server = await startServer(env, { name: "batched-pprof", hooksPool: shape.hooksPool.batched, binary, extraEnv: { [PPROF_ENV]: addr } });
  try {
    await runOnce(ctx, env, server, { mode: "worker", jobs: shape.warmupJobs, tag: "warm-pprof", shape });
    // Enough jobs to keep the fleet busy through the profile, with a margin on each side.
    const rate = measuredRate && measuredRate > 0 ? measuredRate : 2000;
    const jobs = Math.min(400_000, Math.ceil((rate * (profile.seconds + 10)) / 1000) * 1000);
    const outFile = join(profile.outDir, `${new Date().toISOString().replace(/[:.]/g, "-")}-batched-cpu.pprof`);
    log(`batched --profile: ${jobs} jobs on ${binary.path}, CPU profile of ${profile.seconds} s from ${addr} (after 2 s of load)`);
    const r = await runOnce(ctx, env, server, {
      mode: "worker",
      jobs,
      tag: "pprof",
      shape: { ...shape, timeoutMs: shape.timeoutMs + jobs * 2 },
      onRunning: async () => {
        await sleep(2000);
        return captureCpuProfile({ addr, seconds: profile.seconds, outFile });
      },
    });
    if (r.failures.length) failures.push(...r.failures.map((f) => `batched profile run: ${f}`));
    const summary = await summarizeProfile(outFile, { binary: binary.path });
    return {
      binary: binary.path, version: binary.version, jobs, jobsPerSec: r.jobsPerSec, pbCpuShare: r.pbCpuShare, clientCpuShare: r.clientCpuShare,
      pbCpuMicrosPerJob: r.pbCpuMicrosPerJob, clientCpuMicrosPerJob: r.clientCpuMicrosPerJob, ...summary,
    };
  } finally {
    await env.retire(server);
  }
}
