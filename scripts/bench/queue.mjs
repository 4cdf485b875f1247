// The queue phases of the benchmark (docs/queue.md), each on PocketBase servers of
// its own, started here and stopped at the phase's end so the servers of the
// other phases see no extra rows:
//   enqueue          1,000 jobs in one POST /api/fleet/enqueue against the same
//                    1,000 jobs created through the record API (the only way
//                    before enqueue), alternated per repetition on one server.
//   claim-next-100k  claim-next per call at 100,000 pending rows: pb-fleet as
//                    built (priorities and future due times mixed in, seeded
//                    through enqueue; and the same code on plain rows) against
//                    pb-fleet as it was before the queue contract (a git
//                    revision's bundle and migrations, plain rows), with and
//                    without a probeKeyPrefix covering all the rows.
// Every cell is followed by a reset that puts the rows it claimed back to
// pending, so each call sees the same 100,000 pending rows and no pile of
// held rows grows under the expired-lease query.
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startPocketBase } from "../pocketbase/server.mjs";
import { benchSql, benchSqlValue, writeHooksDir } from "./hooks.mjs";
import { cpuMicrosPerOp, readCpuSeconds } from "./proc.mjs";
import { latencySummary, median, ratio, ratioSummary } from "./stats.mjs";
import { closedLoop } from "./workloads.mjs";

const ENQUEUE = "/api/fleet/enqueue";
const CLAIM_NEXT = "/api/fleet/claim-next";
const RECORDS = "/api/collections/probe_jobs/records";
const LEASE_SECONDS = 3600;
/** Every row of the 100k phase has a probe_key under this prefix. */
const CN_PREFIX = "q100k-";
/** The most jobs one enqueue call takes (docs/queue.md). */
const ENQUEUE_MAX = 1000;

const pbDate = (ms) => new Date(ms).toISOString().replace("T", " ");
const rotate = (xs, n) => xs.map((_, i) => xs[(i + n) % xs.length]);
const brief = (res) => `HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`;

/** A small seeded PRNG (mulberry32): every run enqueues the same mix. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const REGIONS = ["eu-west-1", "us-east-1", "ap-south-1", "sa-east-1"];

/**
 * `count` enqueue items: a ~100-byte payload each, a priority drawn from
 * [lo, hi], and a share `futureFraction` due 1 to 24 hours from now.
 */
function queueJobs(count, keyOf, rand, { priorities: [lo, hi], futureFraction }) {
  const jobs = [];
  for (let i = 0; i < count; i++) {
    const job = {
      probeKey: keyOf(i),
      payload: { target: `https://probe.example.com/check/${String(i).padStart(6, "0")}`, region: REGIONS[i % REGIONS.length], timeoutMs: 5000, tag: "b" },
      priority: lo + Math.floor(rand() * (hi - lo + 1)),
    };
    if (rand() < futureFraction) job.delaySeconds = 3600 + Math.floor(rand() * 82800);
    jobs.push(job);
  }
  return jobs;
}

/** The record API's body for an enqueue item: the row enqueue would write, as far as the record API can. */
function recordBody(job, nowMs) {
  const body = { probe_key: job.probeKey, status: "pending", payload: job.payload, priority: job.priority, max_attempts: 25 };
  if (job.delaySeconds !== undefined) body.run_at = pbDate(nowMs + job.delaySeconds * 1000);
  return body;
}

/** Runs `fn` over `items` with at most `concurrency` in flight. */
async function pool(items, concurrency, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/* ------------------------------------------------------------ the servers */

/**
 * Starts one PocketBase for a queue phase on the run's binary. `env` is what
 * bench.mjs hands the queue phases: { binary, tmpRoot, started, retire, verbose }.
 */
async function startServer(env, { name, hookFiles, migrationsDir, hooksPool }) {
  const hooksDir = await writeHooksDir(join(env.tmpRoot, `hooks-${name}`), hookFiles, env.binary.line, { sql: true });
  const pb = await startPocketBase({
    binary: env.binary.path,
    line: env.binary.line,
    dataDir: join(env.tmpRoot, `data-${name}`),
    hooksDir,
    migrationsDir,
    hooksPool,
    adminEmail: "bench@example.com",
    adminPassword: "bench-password-1234",
    log: env.verbose ? (m) => console.error(`[${name}] ${m}`) : () => {},
  });
  const server = { name, hooksPool, pb };
  env.started.push(server);
  return server;
}

/**
 * pb-fleet as it was at a git revision: its hooks bundle and migrations of the
 * binary's line, written into the run's temp dir. `{ skipped }` (a sentence)
 * when git, the repository's history or the revision is not there.
 */
export async function baselineFromGit(repo, rev, layout, tmpRoot) {
  const git = (args) => execFileSync("git", args, { cwd: repo, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "pipe", "pipe"] });
  let sha;
  try {
    sha = git(["rev-parse", "--verify", "--quiet", `${rev}^{commit}`]).trim();
  } catch (err) {
    const why = err.code === "ENOENT" ? "git is not installed" : `${repo} has no commit ${rev} (not a git clone, or a shallow one)`;
    return { rev, skipped: `${why}; the baseline (pb-fleet before the queue contract) is not measured, and no new/baseline ratio is reported.` };
  }
  const dir = join(tmpRoot, `baseline-${sha.slice(0, 12)}`);
  const hooksOut = join(dir, layout.relative.hooksDir);
  const migrationsOut = join(dir, layout.relative.migrationsDir);
  try {
    const list = (folder) => git(["ls-tree", "--name-only", sha, "--", `${folder}/`]).split("\n").filter(Boolean);
    const hooks = list(layout.relative.hooksDir).filter((f) => f.endsWith(".pb.js"));
    const migrations = list(layout.relative.migrationsDir).filter((f) => f.endsWith(".js"));
    if (hooks.length === 0 || migrations.length === 0) {
      return { rev, sha, skipped: `${rev} has no ${layout.relative.hooksDir}/*.pb.js or ${layout.relative.migrationsDir}/*.js; the baseline is not measured.` };
    }
    await mkdir(hooksOut, { recursive: true });
    await mkdir(migrationsOut, { recursive: true });
    const hookFiles = [];
    for (const f of hooks) {
      const out = join(hooksOut, f.split("/").pop());
      await writeFile(out, git(["show", `${sha}:${f}`]));
      hookFiles.push(out);
    }
    for (const f of migrations) await writeFile(join(migrationsOut, f.split("/").pop()), git(["show", `${sha}:${f}`]));
    const subject = git(["log", "-1", "--format=%s", sha]).trim();
    return { rev, sha, subject, hookFiles, migrationsDir: migrationsOut, files: [...hooks, ...migrations], skipped: null };
  } catch (err) {
    return { rev, sha, skipped: `reading ${rev} from git failed (${String(err.message).split("\n")[0]}); the baseline is not measured.` };
  }
}

/* ------------------------------------------------------------ SQL helpers */

async function columnsOf(client, server) {
  return String(await benchSqlValue(client, server, "SELECT group_concat(name, ',') AS value FROM pragma_table_info('probe_jobs')")).split(",");
}

const count = async (client, server, where) => Number(await benchSqlValue(client, server, `SELECT CAST(COUNT(*) AS TEXT) AS value FROM probe_jobs WHERE ${where}`));

/** julianday() of an epoch-ms time, for SQLite's date functions. */
const julianDay = (ms) => ms / 86400000 + 2440587.5;

/**
 * `rows` plain pending rows in one INSERT: each a copy of one row created
 * through the record API (so every column holds what a record save writes on
 * this schema), with its own id, probe_key `<prefix><n>`, and created (and,
 * where the schema has it, run_at) 1 ms apart in the past: rows created the
 * old way, oldest first.
 */
export async function seedPlainRows(client, server, rows, prefix) {
  const template = await client.post(server.pb, RECORDS, { probe_key: "bench-template", status: "done" });
  if (template.status !== 200) throw new Error(`${server.name}: creating the template row failed: ${brief(template)}`);
  const columns = await columnsOf(client, server);
  const stamp = "strftime('%Y-%m-%d %H:%M:%fZ', {:base} + seq.n / 86400000.0)";
  const overrides = {
    id: "substr(lower(hex(randomblob(8))), 1, 15)",
    probe_key: "{:prefix} || printf('%06d', seq.n)",
    status: "'pending'",
    created: stamp,
    updated: stamp,
    run_at: stamp,
  };
  const exprs = columns.map((c) => overrides[c] ?? `t.\`${c}\``);
  await benchSql(
    client,
    server,
    `WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < {:rows})
INSERT INTO probe_jobs (${columns.map((c) => `\`${c}\``).join(", ")})
SELECT ${exprs.join(", ")} FROM seq CROSS JOIN (SELECT * FROM probe_jobs WHERE id = {:template}) AS t`,
    { rows, prefix, template: template.body.id, base: julianDay(Date.now() - rows - 60_000) },
  );
  await benchSql(client, server, "DELETE FROM probe_jobs WHERE id = {:id}", { id: template.body.id });
  return columns;
}

/**
 * `rows` pending jobs through enqueue, 1,000 a call: the priority / due-time
 * mix of the phase. Also says what the first and the last calls took (median
 * of 5 each): enqueue into an empty table and into one of ~`rows` rows.
 */
async function seedQueueRows(client, server, rows, prefix, shape) {
  const rand = prng(0x100000);
  const callMs = [];
  for (let start = 0; start < rows; start += ENQUEUE_MAX) {
    const n = Math.min(ENQUEUE_MAX, rows - start);
    const jobs = queueJobs(n, (i) => `${prefix}${String(start + i).padStart(6, "0")}`, rand, shape);
    const res = await client.post(server.pb, ENQUEUE, { jobs });
    if (res.status !== 200 || res.body?.jobs?.length !== n) throw new Error(`${server.name}: seeding through enqueue failed: ${brief(res)}`);
    callMs.push(res.ms);
  }
  const seedCalls = { calls: callMs.length, firstMs: median(callMs.slice(0, 5)), lastMs: median(callMs.slice(-5)) };
  return { columns: await columnsOf(client, server), seedCalls };
}

/**
 * Puts every row a cell claimed back to pending as it was (no holder, no lease,
 * version and attempts 0), outside the measured time. Only the columns the
 * schema has are written.
 */
function resetSql(columns) {
  const sets = ["status = 'pending'"];
  for (const c of ["claimed_by", "lease_expires_at", "claimed_at", "lease_token"]) if (columns.includes(c)) sets.push(`\`${c}\` = ''`);
  for (const c of ["version", "attempts"]) if (columns.includes(c)) sets.push(`\`${c}\` = 0`);
  return `UPDATE probe_jobs SET ${sets.join(", ")} WHERE status = 'claimed'`;
}

/* ------------------------------------------------------------ enqueue */

/**
 * 1,000 jobs a call through enqueue against the same 1,000 through the record
 * API at `recordConcurrency`, alternated per repetition on one fresh server.
 * @param {{ client: any, log: (m: string) => void }} ctx
 * @param {{ jobs: number, reps: number, recordConcurrency: number, priorities: [number, number], futureFraction: number }} shape
 */
export async function runEnqueuePhase(ctx, env, shape) {
  const { client, log } = ctx;
  const server = await startServer(env, { name: "pb-fleet-enqueue", hookFiles: env.hookFiles, migrationsDir: env.migrationsDir, hooksPool: 25 });
  try {
    const n = shape.jobs;
    const hows = ["enqueue", "record API"];
    // Both ways get the same jobs in a repetition (same payloads, priorities, delays); only the probe keys differ.
    const measure = async (how, tag, seed) => {
      const jobs = queueJobs(n, (i) => `${tag}-${i}`, prng(seed), shape);
      const failures = [];
      const cpuBefore = readCpuSeconds(server.pb.pid);
      const t0 = performance.now();
      if (how === "enqueue") {
        const res = await client.post(server.pb, ENQUEUE, { jobs });
        const ok = res.status === 200 && res.body?.jobs?.length === n && res.body.jobs.every((j) => j.created === true);
        if (!ok) failures.push(`enqueue ${brief(res)}`);
      } else {
        const nowMs = Date.now();
        await pool(jobs, shape.recordConcurrency, async (job) => {
          const res = await client.post(server.pb, RECORDS, recordBody(job, nowMs));
          if (res.status !== 200) failures.push(`record API ${brief(res)}`);
        });
      }
      const ms = performance.now() - t0;
      return { ms, jobsPerSec: n / (ms / 1000), cpuMicrosPerJob: cpuMicrosPerOp(cpuBefore, readCpuSeconds(server.pb.pid), n), failureCount: failures.length, failureSamples: failures.slice(0, 5) };
    };
    // First use of each route (and of the pooled runtimes) stays out of the figures.
    for (const how of hows) await measure(how, `enq-warm-${how === "enqueue" ? "e" : "r"}`, 0xe17);
    const cells = [];
    for (let rep = 0; rep < shape.reps; rep++) {
      for (const how of rotate(hows, rep)) {
        const cell = await measure(how, `enq-${rep}-${how === "enqueue" ? "e" : "r"}`, 0xe17 + rep + 1);
        if (cell.failureCount) log(`!!! enqueue phase, ${how}: ${cell.failureCount} failed, e.g. ${cell.failureSamples[0]}`);
        cells.push({ how, rep, ...cell });
      }
    }
    const payloadBytes = median(queueJobs(50, (i) => `x-${i}`, prng(1), shape).map((j) => Buffer.byteLength(JSON.stringify(j.payload))));
    const rows = hows.map((how) => {
      const mine = cells.filter((c) => c.how === how);
      return {
        variant: how,
        concurrency: how === "enqueue" ? 1 : shape.recordConcurrency,
        jobsPerCall: how === "enqueue" ? n : 1,
        reps: mine.length,
        msPer1000: median(mine.map((c) => (c.ms * 1000) / n)),
        jobsPerSec: median(mine.map((c) => c.jobsPerSec)),
        perRepJobsPerSec: mine.map((c) => c.jobsPerSec),
        cpuMicrosPerJob: median(mine.map((c) => c.cpuMicrosPerJob)),
        perRepCpuMicros: mine.map((c) => c.cpuMicrosPerJob),
        failureCount: mine.reduce((s, c) => s + c.failureCount, 0),
        failureSamples: mine.flatMap((c) => c.failureSamples).slice(0, 5),
      };
    });
    const [e, r] = rows;
    return {
      jobs: n,
      payloadBytes,
      priorities: shape.priorities,
      futureFraction: shape.futureFraction,
      rows,
      // enqueue jobs/s over record-API jobs/s, paired per repetition; CPU: record API's CPU/job over enqueue's
      ratio: {
        ...ratioSummary(e.perRepJobsPerSec.map((x, i) => ratio(x, r.perRepJobsPerSec[i]))),
        cpu: ratioSummary(e.perRepCpuMicros.map((x, i) => ratio(r.perRepCpuMicros[i], x))).median,
      },
    };
  } finally {
    await env.retire(server);
  }
}

/* ---------------------------------------------------- claim-next at 100k */

/**
 * @param {{ client: any, log: (m: string) => void }} ctx
 * @param env { binary, layout, hookFiles, migrationsDir, tmpRoot, started, retire, verbose, repo, baselineRev }
 * @param {{ rows: number, reps: number, limits: number[], workers: number[], seqCalls: number, durationMs: number, maxOps: number,
 *   priorities: [number, number], futureFraction: number }} shape
 */
export async function runClaimNext100kPhase(ctx, env, shape) {
  const { client, log } = ctx;
  const baseline = await baselineFromGit(env.repo, env.baselineRev, env.layout, env.tmpRoot);
  if (baseline.skipped) log(`note: claim-next-100k: ${baseline.skipped}`);
  else log(`claim-next-100k: baseline ${baseline.sha.slice(0, 7)} ("${baseline.subject}") from git: ${baseline.files.join(", ")}`);

  const specs = [
    { key: "new (mixed)", name: "cn100k-new", hookFiles: env.hookFiles, migrationsDir: env.migrationsDir, seed: "queue" },
    { key: "new (plain)", name: "cn100k-new-plain", hookFiles: env.hookFiles, migrationsDir: env.migrationsDir, seed: "plain" },
  ];
  if (!baseline.skipped) specs.push({ key: `baseline ${baseline.sha.slice(0, 7)} (plain)`, name: "cn100k-baseline", hookFiles: baseline.hookFiles, migrationsDir: baseline.migrationsDir, seed: "plain", baseline: true });

  const servers = [];
  try {
    log(`claim-next-100k: starting ${specs.map((s) => s.name).join(", ")}`);
    for (const s of await Promise.all(specs.map((spec) => startServer(env, { name: spec.name, hookFiles: spec.hookFiles, migrationsDir: spec.migrationsDir, hooksPool: 25 })))) {
      servers.push(s);
    }
    const variants = specs.map((spec, i) => ({ ...spec, server: servers[i] }));

    const datasets = {};
    for (const v of variants) {
      const t0 = performance.now();
      let seedCalls = null;
      if (v.seed === "queue") ({ columns: v.columns, seedCalls } = await seedQueueRows(client, v.server, shape.rows, CN_PREFIX, shape));
      else v.columns = await seedPlainRows(client, v.server, shape.rows, CN_PREFIX);
      v.reset = resetSql(v.columns);
      const pending = await count(client, v.server, "status = 'pending'");
      const future = v.columns.includes("run_at") ? await count(client, v.server, "status = 'pending' AND run_at > strftime('%Y-%m-%d %H:%M:%fZ', 'now')") : 0;
      const levels = v.columns.includes("priority") ? Number(await benchSqlValue(client, v.server, "SELECT CAST(COUNT(DISTINCT priority) AS TEXT) AS value FROM probe_jobs WHERE status = 'pending'")) : 1;
      datasets[v.key] = {
        server: v.name,
        seededWith: v.seed === "queue" ? `enqueue, ${seedCalls.calls} calls` : "one SQL INSERT (copies of a record-API row)",
        pending,
        future,
        priorityLevels: levels,
        seedSec: Math.round((performance.now() - t0) / 100) / 10,
        seedCalls,
      };
      log(`claim-next-100k: ${v.name}: ${pending} pending (${future} not yet due, ${levels} priority level(s)) in ${datasets[v.key].seedSec} s`);
      if (pending !== shape.rows) throw new Error(`${v.name}: ${pending} pending rows after seeding, ${shape.rows} expected`);
    }

    const modes = [];
    for (const limit of shape.limits) for (const workers of shape.workers) for (const prefix of [false, true]) modes.push({ limit, workers, prefix });

    const cellOnce = async (v, mode, maxOps = shape.maxOps) => {
      const body = (w) => ({ workerId: `cn-${w}`, leaseSeconds: LEASE_SECONDS, limit: mode.limit, ...(mode.prefix ? { probeKeyPrefix: CN_PREFIX } : {}) });
      const op = async (w) => {
        const res = await client.post(v.server.pb, CLAIM_NEXT, body(w));
        const ok = res.status === 200 && Array.isArray(res.body?.jobs) && res.body.jobs.length === mode.limit;
        return { latencies: { call: res.ms }, ok, detail: ok ? undefined : `claim-next ${brief(res)}` };
      };
      const cpuBefore = readCpuSeconds(v.server.pb.pid);
      const sequential = mode.workers === 1;
      const result = await closedLoop({
        workers: mode.workers,
        durationMs: sequential ? 30_000 : shape.durationMs,
        maxOps: sequential ? shape.seqCalls : maxOps,
        op,
      });
      const cpu = cpuMicrosPerOp(cpuBefore, readCpuSeconds(v.server.pb.pid), result.ops);
      await benchSql(client, v.server, v.reset);
      const calls = result.latencies.call ?? [];
      // Per-call cost: sequential, the median call's latency; at W > 1, wall time per call (1 / throughput).
      const costMs = sequential ? median(calls) : result.opsPerSec > 0 ? 1000 / result.opsPerSec : null;
      return { ...result, costMs, cpuMicrosPerCall: cpu };
    };

    log(`claim-next-100k: warm-up`);
    const warmW = Math.max(...shape.workers);
    for (const v of variants) for (const mode of modes.filter((m) => m.workers === warmW)) await cellOnce(v, mode, 5 * warmW);

    log(`claim-next-100k: ${shape.reps} reps of limit ${shape.limits.join(",")} x W=${shape.workers.join(",")} x (no prefix, prefix), servers alternating`);
    const cells = [];
    for (let rep = 0; rep < shape.reps; rep++) {
      for (const [mi, mode] of modes.entries()) {
        for (const v of rotate(variants, rep + mi)) {
          const r = await cellOnce(v, mode);
          if (r.failureCount) log(`!!! claim-next-100k ${v.key} limit=${mode.limit} W=${mode.workers}${mode.prefix ? " prefix" : ""}: ${r.failureCount} unexpected answers, e.g. ${r.failureSamples[0]}`);
          cells.push({ variant: v.key, ...mode, rep, costMs: r.costMs, callsPerSec: r.opsPerSec, cpuMicrosPerCall: r.cpuMicrosPerCall, calls: r.ops, latencies: r.latencies.call ?? [], failureCount: r.failureCount, failureSamples: r.failureSamples });
        }
      }
    }

    const sameMode = (c, m) => c.limit === m.limit && c.workers === m.workers && c.prefix === m.prefix;
    const rows = [];
    for (const mode of modes) {
      for (const v of variants) {
        const mine = cells.filter((c) => c.variant === v.key && sameMode(c, mode)).sort((a, b) => a.rep - b.rep);
        rows.push({
          variant: v.key,
          server: v.name,
          ...mode,
          reps: mine.length,
          costMs: median(mine.map((c) => c.costMs)),
          perRepCostMs: mine.map((c) => c.costMs),
          callsPerSec: median(mine.map((c) => c.callsPerSec)),
          cpuMicrosPerCall: median(mine.map((c) => c.cpuMicrosPerCall)),
          perRepCpuMicros: mine.map((c) => c.cpuMicrosPerCall),
          latencyMs: latencySummary(mine.flatMap((c) => c.latencies)),
          failureCount: mine.reduce((s, c) => s + c.failureCount, 0),
          failureSamples: mine.flatMap((c) => c.failureSamples).slice(0, 5),
        });
      }
    }
    const row = (key, m) => rows.find((r) => r.variant === key && sameMode(r, m));
    /** a's per-call cost over b's, paired per repetition (above 1: a costs more). */
    const costRatio = (a, b) =>
      a && b
        ? {
            ...ratioSummary(a.perRepCostMs.map((x, i) => ratio(x, b.perRepCostMs[i]))),
            cpu: ratioSummary(a.perRepCpuMicros.map((x, i) => ratio(x, b.perRepCpuMicros[i]))).median,
          }
        : null;
    const ratios = [];
    const baseKey = variants.find((v) => v.baseline)?.key ?? null;
    for (const mode of modes) {
      const at = { limit: mode.limit, workers: mode.workers, prefix: mode.prefix };
      if (baseKey) {
        ratios.push({ kind: "vs-baseline", name: `new (mixed) / ${baseKey}`, ...at, ratio: costRatio(row("new (mixed)", mode), row(baseKey, mode)) });
        ratios.push({ kind: "plain-vs-baseline", name: `new (plain) / ${baseKey}`, ...at, ratio: costRatio(row("new (plain)", mode), row(baseKey, mode)) });
      }
    }
    for (const mode of modes.filter((m) => m.prefix)) {
      const plainMode = { ...mode, prefix: false };
      for (const v of variants) {
        ratios.push({ kind: v.key === "new (mixed)" ? "prefix" : "prefix-context", name: `${v.key}: prefix / no prefix`, limit: mode.limit, workers: mode.workers, prefix: true, ratio: costRatio(row(v.key, mode), row(v.key, plainMode)) });
      }
    }
    return {
      rows: shape.rows,
      prefix: CN_PREFIX,
      priorities: shape.priorities,
      futureFraction: shape.futureFraction,
      baseline: { rev: baseline.rev, sha: baseline.sha ?? null, subject: baseline.subject ?? null, files: baseline.files ?? [], skipped: baseline.skipped },
      datasets,
      results: rows,
      ratios,
    };
  } finally {
    for (const s of servers) await env.retire(s);
  }
}
