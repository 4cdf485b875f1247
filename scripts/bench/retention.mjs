// The retention phases of the benchmark (issue 18), each on a PocketBase of its
// own (hooksPool 100, the sweeper cron off, the maintenance cron on as shipped):
//   steady    a sustained load for --steadyMinutes (default 10; the issue's
//             60-minute run is `--steadyMinutes 60`): jobs enqueued at a fixed
//             rate (500 jobs/s) and drained by a fleet of pb-fleet Workers in
//             Node processes of their own (batched-fleet.mjs), PocketBase with
//             PB_FLEET_KEEP_DONE=2m and PB_FLEET_KEEP_EVENTS=2m (the same
//             compressed keep for rows and events, so both level off within
//             the 5 settling minutes). Every sample interval (a minute) the
//             probe_jobs and probe_job_events row counts, PocketBase's VmRSS,
//             its CPU per job, and the p99 of stats, completions and
//             claim-next (limit 10) + complete calls made by a prober beside
//             the fleet. Pass: after the first 5 samples nothing grows by more
//             than 10% over its value at the 5th.
//   retained  per-call cost of stats, completions and claim-next (limit 10) +
//             complete at 1,000 finished rows against --retainedRows (default
//             10,000,000; done/failed/cancelled, finished over the last 3
//             days, inserted with SQL on the server's own database so its
//             indexes and triggers apply), two servers alive side by side
//             with the same small live backlog, measured in a rotating order.
//             Pass: <= 1.5x. The seeding time is reported.
//   prune     claim-next (limit 1) + complete at W=8 while retention deletes
//             200,000 expired done rows and 100,000 old probe_job_events
//             (seeded with SQL to expire at one moment): the worst and p99
//             claim latency during the prune against the same load just
//             before it (same server, same rows present, not yet expired),
//             and how long until every seeded row is gone. The prune is
//             POST /api/fleet/maintenance called back to back (each call is
//             one retention tick) until nothing seeded is left.
import os from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { readProcMemoryBytes } from "../pocketbase/server.mjs";
import { createBenchClient } from "./http.mjs";
import { benchSql, benchSqlValue } from "./hooks.mjs";
import { bundleClient, startServer } from "./batched.mjs";
import { ADMIN, spawnClient } from "./fleet-run.mjs";
import { cpuMicrosPerOp, readCpuSeconds } from "./proc.mjs";
import { latencySummary, median, percentile, ratio, ratioSummary } from "./stats.mjs";

const ENQUEUE = "/api/fleet/enqueue";
const ENQUEUE_MAX = 1000;
const CLAIM_NEXT = "/api/fleet/claim-next";
const COMPLETE = "/api/fleet/complete";
const STATS = "/api/fleet/stats";
const COMPLETIONS = "/api/fleet/completions";
const MAINTENANCE = "/api/fleet/maintenance";
const RECORDS = "/api/collections/probe_jobs/records";
/** How long probe_job_events records are kept (src/lib/bulk.ts JOB_EVENTS_KEEP_MS). */
const EVENTS_KEEP_MS = 15 * 60_000;
/** One seeding INSERT may take minutes on a big table; PocketBase 0.23+ ends a response after 5 minutes. */
const SEED_TIMEOUT_MS = 280_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const brief = (res) => `HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
const rotate = (xs, n) => xs.map((_, i) => xs[(i + n) % xs.length]);
const julianDay = (ms) => ms / 86400000 + 2440587.5;
const round1 = (v) => (typeof v === "number" ? Math.round(v * 10) / 10 : null);

const sqlNumber = async (client, server, text, params) => Number(await benchSqlValue(client, server, `SELECT CAST((${text}) AS TEXT) AS value`, params));

async function columnsOf(client, server) {
  return String(await benchSqlValue(client, server, "SELECT group_concat(name, ',') AS value FROM pragma_table_info('probe_jobs')")).split(",");
}

/** `count` pending jobs through enqueue, 1,000 a call, probe keys `<prefix><n>`. */
async function enqueueJobs(client, server, count, prefix, from = 0) {
  for (let start = 0; start < count; start += ENQUEUE_MAX) {
    const n = Math.min(ENQUEUE_MAX, count - start);
    const jobs = Array.from({ length: n }, (_, i) => ({ probeKey: `${prefix}${from + start + i}`, payload: { n: from + start + i } }));
    const res = await client.post(server.pb, ENQUEUE, { jobs });
    if (res.status !== 200 || res.body?.jobs?.length !== n) throw new Error(`${server.name}: enqueue failed: ${brief(res)}`);
  }
}

/**
 * `rows` finished rows with one INSERT ... SELECT per `chunk` rows, each row a
 * copy of one row made through the record API (so every column holds what a
 * record save writes on this schema, including columns this file does not
 * know), with ids in insertion order, probe keys `<prefix><n>`, and
 * finished_at from `finishedAt(n)` (an SQL expression of seq.n). Status:
 * `statusSql` (SQL of seq.n). The statements run on the server's own database
 * (the bench-only SQL route), so its indexes and triggers apply.
 * @returns {Promise<{ ms: number, statements: number }>}
 */
async function seedFinishedRows(client, server, { rows, chunk, prefix, idPrefix, statusSql, finishedSql, params, onChunk }) {
  const seeder = createBenchClient({ maxSockets: 2, timeoutMs: SEED_TIMEOUT_MS });
  const template = await client.post(server.pb, RECORDS, { probe_key: `${prefix}template`, status: "done" });
  if (template.status !== 200) throw new Error(`${server.name}: creating the template row failed: ${brief(template)}`);
  const columns = await columnsOf(client, server);
  const at = (expr) => `strftime('%Y-%m-%d %H:%M:%fZ', ${expr})`;
  const overrides = {
    // 15 characters of [a-z0-9], as PocketBase's ids; in insertion order, so the primary key is appended to.
    id: `{:idPrefix} || printf('%0${15 - idPrefix.length}d', seq.n)`,
    probe_key: "{:prefix} || printf('%010d', seq.n)",
    status: statusSql,
    created: at(`(${finishedSql}) - 2.0 / 86400`),
    updated: at(finishedSql),
    run_at: at(`(${finishedSql}) - 2.0 / 86400`),
    claimed_at: at(`(${finishedSql}) - 1.0 / 86400`),
    finished_at: at(finishedSql),
    claimed_by: "'bench-seed-worker'",
    lease_expires_at: "''",
    lease_token: "''",
    attempts: "1",
    version: "2",
    result: `CASE WHEN ${statusSql} = 'done' THEN '{"ok":true}' ELSE t.\`result\` END`,
    error: `CASE WHEN ${statusSql} = 'failed' THEN 'bench: seeded failure' ELSE '' END`,
  };
  const exprs = columns.map((c) => overrides[c] ?? `t.\`${c}\``);
  const t0 = performance.now();
  let statements = 0;
  try {
    for (let start = 0; start < rows; start += chunk) {
      const n = Math.min(chunk, rows - start);
      await benchSql(
        seeder,
        server,
        `WITH RECURSIVE seq(n) AS (SELECT {:start} UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < {:end})
INSERT INTO probe_jobs (${columns.map((c) => `\`${c}\``).join(", ")})
SELECT ${exprs.join(", ")} FROM seq CROSS JOIN (SELECT * FROM probe_jobs WHERE id = {:template}) AS t`,
        { ...params, start, end: start + n, prefix, idPrefix, template: template.body.id },
      );
      statements++;
      onChunk?.(start + n, performance.now() - t0);
    }
  } finally {
    seeder.close();
  }
  const ms = performance.now() - t0;
  await benchSql(client, server, "DELETE FROM probe_jobs WHERE id = {:id}", { id: template.body.id });
  return { ms, statements };
}

/** `count` probe_job_events records created at `createdSql` (SQL of seq.n), each with a batch of 10 changes. */
async function seedEvents(client, server, { count, chunk, createdSql, params }) {
  const changes = JSON.stringify(
    Array.from({ length: 10 }, (_, i) => ({ id: `bench${String(i).padStart(10, "0")}`, probe_key: `prune-event-${i}`, status: "done", claimed_by: "bench-seed-worker", lease_expires_at: "", version: 2 })),
  );
  const at = `strftime('%Y-%m-%d %H:%M:%fZ', ${createdSql})`;
  const t0 = performance.now();
  for (let start = 0; start < count; start += chunk) {
    const n = Math.min(chunk, count - start);
    await benchSql(
      client,
      server,
      `WITH RECURSIVE seq(n) AS (SELECT {:start} UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < {:end})
INSERT INTO probe_job_events (id, source, changes, created, updated)
SELECT 'e' || printf('%014d', seq.n), 'bench-prune', {:changes}, ${at}, ${at} FROM seq`,
      { ...params, start, end: start + n, changes },
    );
  }
  return performance.now() - t0;
}

/* ------------------------------------------------------------ probes */

/** One claim-next of up to `limit` jobs and one complete of what it got; the claim's and the pair's latency. */
async function claimAndComplete(client, server, workerId, limit) {
  const t0 = performance.now();
  const claim = await client.post(server.pb, CLAIM_NEXT, { workerId, leaseSeconds: 300, limit });
  const claimMs = performance.now() - t0;
  if (claim.status !== 200 || !Array.isArray(claim.body?.jobs)) return { ok: false, error: `claim-next: ${brief(claim)}`, claimMs };
  const jobs = claim.body.jobs;
  if (jobs.length === 0) return { ok: true, claimed: 0, claimMs, pairMs: claimMs };
  const done = await client.post(server.pb, COMPLETE, { workerId, releases: jobs.map((j) => ({ jobId: j.job.id, leaseToken: j.leaseToken, status: "done", result: { w: workerId } })) });
  const pairMs = performance.now() - t0;
  if (done.status !== 200 || !Array.isArray(done.body?.results) || !done.body.results.every((r) => r.released === true)) return { ok: false, error: `complete: ${brief(done)}`, claimMs, pairMs };
  return { ok: true, claimed: jobs.length, claimMs, pairMs };
}

/** The three calls the phases time, as `name -> () => Promise<{ ok, ms, error? }>`. */
function probes(client, server, workerId, limit) {
  const get = (path) => async () => {
    const res = await client.get(server.pb, path);
    return res.status === 200 ? { ok: true, ms: res.ms } : { ok: false, ms: res.ms, error: `${path}: ${brief(res)}` };
  };
  return {
    stats: get(STATS),
    completions: get(COMPLETIONS),
    claim: async () => {
      const r = await claimAndComplete(client, server, workerId, limit);
      return { ok: r.ok, ms: r.pairMs ?? r.claimMs, claimMs: r.claimMs, claimed: r.claimed, error: r.error };
    },
  };
}

/* ------------------------------------------------------------ steady */

/**
 * @param {{ client: any, log: (m: string) => void }} ctx
 * @param env bench.mjs's queue environment: { repo, binary, hookFiles, migrationsDir, tmpRoot, started, retire, verbose }
 * @param shape { minutes, sampleSeconds, settleSamples, rate, processes, workersPerProcess, concurrency, leaseSeconds, keepDone, probeHz, hooksPool, growthLimit }
 */
export async function runSteadyPhase(ctx, env, shape) {
  const { client, log } = ctx;
  const bundle = await bundleClient(env.repo, join(env.tmpRoot, "steady-client"));
  if (bundle.skipped) {
    log(`note: steady: ${bundle.skipped}`);
    return { skipped: bundle.skipped, failures: [] };
  }
  const server = await startServer(env, { name: "steady", hooksPool: shape.hooksPool, extraEnv: { PB_FLEET_KEEP_DONE: shape.keepDone, PB_FLEET_KEEP_EVENTS: shape.keepDone } });
  const failures = [];
  const procs = [];
  const durationMs = shape.minutes * 60_000;
  const samples = [];
  try {
    for (let p = 0; p < shape.processes; p++) {
      procs.push(
        spawnClient({
          clientModule: bundle.path, url: server.pb.url, email: ADMIN.email, password: ADMIN.password, mode: "worker",
          workers: shape.workersPerProcess, concurrency: shape.concurrency, leaseSeconds: shape.leaseSeconds,
          procName: `steady-p${p}`, reportFile: join(env.tmpRoot, `report-steady-p${p}.json`), countOnly: true,
        }),
      );
    }
    await Promise.all(procs.map((p) => p.ready));
    for (const p of procs) p.send("go");
    const t0 = performance.now();
    const end = t0 + durationMs;
    let stop = false;

    // The enqueuer: every 100 ms, the jobs the fixed rate owes by now (one call, at most 1,000).
    let enqueued = 0;
    let enqueueErrors = 0;
    const enqueuer = (async () => {
      while (!stop) {
        const owed = Math.floor(((performance.now() - t0) / 1000) * shape.rate) - enqueued;
        if (owed > 0) {
          const n = Math.min(ENQUEUE_MAX, owed);
          const jobs = Array.from({ length: n }, (_, i) => ({ probeKey: `steady-${enqueued + i}` }));
          const res = await client.post(server.pb, ENQUEUE, { jobs });
          if (res.status === 200 && res.body?.jobs?.length === n) enqueued += n;
          else if (++enqueueErrors <= 3) failures.push(`steady: enqueue failed: ${brief(res)}`);
        }
        await sleep(100);
      }
    })();

    // The prober: each of stats, completions, claim-next (limit 10) + complete, probeHz times a second.
    const window = { stats: [], completions: [], claim: [], claimOnly: [] };
    let probeErrors = 0;
    const probe = probes(client, server, "steady-prober", 10);
    const prober = (async () => {
      while (!stop) {
        const tick = performance.now();
        for (const name of ["stats", "completions", "claim"]) {
          const r = await probe[name]();
          if (!r.ok) {
            if (++probeErrors <= 3) failures.push(`steady: ${r.error}`);
            continue;
          }
          window[name].push(r.ms);
          if (name === "claim") window.claimOnly.push(r.claimMs);
        }
        await sleep(Math.max(0, 1000 / shape.probeHz - (performance.now() - tick)));
      }
    })();

    let cpuBefore = readCpuSeconds(server.pb.pid);
    let doneBefore = 0;
    let lastAt = t0;
    for (let i = 1; performance.now() < end - 1000; i++) {
      await sleep(Math.max(0, t0 + i * shape.sampleSeconds * 1000 - performance.now()));
      const now = performance.now();
      const cpuNow = readCpuSeconds(server.pb.pid);
      const done = procs.reduce((s, p) => s + p.done, 0);
      const rows = await sqlNumber(client, server, "SELECT COUNT(*) FROM probe_jobs");
      const pending = await sqlNumber(client, server, "SELECT COUNT(*) FROM probe_jobs WHERE status = 'pending'");
      const events = await sqlNumber(client, server, "SELECT COUNT(*) FROM probe_job_events");
      const take = (k) => {
        const xs = window[k].sort((a, b) => a - b);
        window[k] = [];
        return { n: xs.length, p50: round1(percentile(xs, 50)), p99: round1(percentile(xs, 99)), max: round1(xs[xs.length - 1] ?? null) };
      };
      const jobs = done - doneBefore;
      const sample = {
        minute: Math.round((now - t0) / 600) / 100,
        rows,
        pending,
        events,
        rssBytes: readProcMemoryBytes(server.pb.pid, "VmRSS"),
        // The machine's 1-minute load average: the cores are shared (other processes' load shows in the latencies).
        load1: round1(os.loadavg()[0]),
        jobsPerSec: jobs / ((now - lastAt) / 1000),
        pbCpuMicrosPerJob: cpuMicrosPerOp(cpuBefore, cpuNow, jobs),
        stats: take("stats"),
        completions: take("completions"),
        claim: take("claim"),
        claimOnly: take("claimOnly"),
      };
      samples.push(sample);
      log(
        `steady: ${sample.minute} min: ${rows.toLocaleString("en-US")} rows (${pending.toLocaleString("en-US")} pending), ${events.toLocaleString("en-US")} events, ` +
          `RSS ${Math.round((sample.rssBytes ?? 0) / 1048576)} MB, ${Math.round(sample.jobsPerSec)} jobs/s, PB CPU ${Math.round(sample.pbCpuMicrosPerJob ?? 0)} us/job, ` +
          `p99 ms: claim-next+complete ${sample.claim.p99}, stats ${sample.stats.p99}, completions ${sample.completions.p99}`,
      );
      cpuBefore = cpuNow;
      doneBefore = done;
      lastAt = now;
      const dead = procs.find((p) => p.child.exitCode !== null || p.child.signalCode !== null);
      if (dead) {
        failures.push(`steady: a client process exited early: ${dead.stderr.slice(-3).join(" | ")}`);
        break;
      }
    }
    stop = true;
    await Promise.all([enqueuer, prober]);
    for (const p of procs) p.send("stop");
    await Promise.race([Promise.all(procs.map((p) => p.exited)), sleep(60_000)]);
    const totalDone = procs.reduce((s, p) => s + p.done, 0);
    const verdict = steadyVerdict(samples, shape);
    return {
      shape: { ...shape },
      samples,
      enqueued,
      completed: totalDone,
      wallSeconds: round1((performance.now() - t0) / 1000),
      verdict,
      failures,
    };
  } finally {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    await Promise.all(procs.map((p) => p.exited));
    await env.retire(server);
  }
}

/** The metrics the steady pass rule watches, read from a sample. */
export const STEADY_METRICS = [
  { key: "rows", label: "probe_jobs rows", of: (s) => s.rows },
  { key: "events", label: "probe_job_events rows", of: (s) => s.events },
  { key: "rss", label: "PocketBase RSS", of: (s) => s.rssBytes },
  { key: "claim", label: "p99 claim-next+complete", of: (s) => s.claim.p99 },
  { key: "stats", label: "p99 stats", of: (s) => s.stats.p99 },
  { key: "completions", label: "p99 completions", of: (s) => s.completions.p99 },
];

/**
 * The steady pass rule: after the first `settleSamples` samples, no metric
 * grows by more than `growthLimit` (0.10) over its value at the
 * `settleSamples`-th sample. Latencies are judged the same way.
 */
export function steadyVerdict(samples, { settleSamples, growthLimit }) {
  if (samples.length <= settleSamples) {
    return { pass: null, why: `only ${samples.length} samples: the rule needs more than ${settleSamples}`, metrics: [] };
  }
  const base = samples[settleSamples - 1];
  const later = samples.slice(settleSamples);
  const metrics = STEADY_METRICS.map((m) => {
    const b = m.of(base);
    const worst = Math.max(...later.map((s) => m.of(s) ?? -Infinity));
    const growth = typeof b === "number" && b > 0 && Number.isFinite(worst) ? worst / b - 1 : null;
    return { key: m.key, label: m.label, base: b, worst, growth, pass: growth === null ? null : growth <= growthLimit };
  });
  const pass = metrics.some((m) => m.pass === false) ? false : metrics.every((m) => m.pass === true) ? true : null;
  return { pass, baseMinute: base.minute, metrics };
}

/* ------------------------------------------------------------ retained */

/** SQL puting the live backlog (probe keys `live-...`) back to pending as enqueued, so each cell sees the same queue. */
function backlogResetSql(columns) {
  const sets = ["status = 'pending'"];
  for (const c of ["claimed_by", "lease_expires_at", "claimed_at", "lease_token", "finished_at", "error"]) if (columns.includes(c)) sets.push(`\`${c}\` = ''`);
  if (columns.includes("result")) sets.push("`result` = NULL");
  for (const c of ["version", "attempts"]) if (columns.includes(c)) sets.push(`\`${c}\` = 0`);
  return `UPDATE probe_jobs SET ${sets.join(", ")} WHERE probe_key LIKE 'live-%' AND status != 'pending'`;
}

/** The retained phase's finished-row status mix: 1 in 20 failed, 1 in 50 cancelled, the rest done. */
const STATUS_MIX = "(CASE WHEN seq.n % 20 = 7 THEN 'failed' WHEN seq.n % 50 = 3 THEN 'cancelled' ELSE 'done' END)";

/**
 * @param ctx { client, log }
 * @param env the queue environment
 * @param shape { small, rows, chunk, backlog, reps, calls, minCalls, cellMs, limit, hooksPool, ratioLimit }
 */
export async function runRetainedPhase(ctx, env, shape) {
  const { client, log } = ctx;
  const variants = [
    { key: "small", rows: shape.small },
    { key: "large", rows: shape.rows },
  ];
  const failures = [];
  const servers = [];
  try {
    for (const v of variants) {
      v.server = await startServer(env, { name: `retained-${v.rows}`, hooksPool: shape.hooksPool, extraEnv: { PB_FLEET_KEEP_DONE: "30d", PB_FLEET_KEEP_FAILED: "30d" } });
      servers.push(v.server);
      const nowMs = Date.now();
      const spanDays = 3;
      // Finished over the last 3 days, oldest first, ending a minute ago.
      const finishedSql = `{:base} + seq.n * {:step}`;
      let lastLog = 0;
      log(`retained: seeding ${v.rows.toLocaleString("en-US")} finished rows into ${v.server.name} (${Math.ceil(v.rows / shape.chunk)} INSERT statements)`);
      v.seed = await seedFinishedRows(client, v.server, {
        rows: v.rows,
        chunk: shape.chunk,
        prefix: "old-",
        idPrefix: "r",
        statusSql: STATUS_MIX,
        finishedSql,
        params: { base: julianDay(nowMs - spanDays * 86_400_000), step: (spanDays * 86_400_000 - 60_000) / Math.max(1, v.rows) / 86_400_000 },
        onChunk: (n, ms) => {
          if (ms - lastLog > 30_000) {
            lastLog = ms;
            log(`retained: ${v.server.name}: ${n.toLocaleString("en-US")} rows in ${Math.round(ms / 1000)} s`);
          }
        },
      });
      log(`retained: ${v.server.name}: ${v.rows.toLocaleString("en-US")} rows seeded in ${(v.seed.ms / 1000).toFixed(1)} s (${Math.round(v.rows / (v.seed.ms / 1000)).toLocaleString("en-US")} rows/s)`);
      await enqueueJobs(client, v.server, shape.backlog, "live-");
      v.columns = await columnsOf(client, v.server);
      v.counts = {
        rows: await sqlNumber(client, v.server, "SELECT COUNT(*) FROM probe_jobs"),
        pending: await sqlNumber(client, v.server, "SELECT COUNT(*) FROM probe_jobs WHERE status = 'pending'"),
      };
      const dbBytes = await sqlNumber(client, v.server, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()");
      v.dbBytes = dbBytes;
      // Warm-up: a few calls of each kind.
      const warm = probes(client, v.server, "retained-warm", shape.limit);
      for (let i = 0; i < 5; i++) for (const f of Object.values(warm)) await f();
      await benchSql(client, v.server, backlogResetSql(v.columns));
    }

    const names = ["stats", "completions", "claim"];
    const cells = [];
    log(`retained: ${shape.reps} reps of ${shape.calls} sequential calls of each of ${names.join(", ")} per server, servers alternating`);
    for (let rep = 0; rep < shape.reps; rep++) {
      for (const name of names) {
        for (const v of rotate(variants, rep)) {
          const call = probes(client, v.server, `retained-${rep}`, shape.limit)[name];
          const ms = [];
          const cpu0 = readCpuSeconds(v.server.pb.pid);
          let errors = 0;
          let sample = null;
          const cellStart = performance.now();
          let made = 0;
          for (let i = 0; i < shape.calls; i++) {
            if (i >= shape.minCalls && performance.now() - cellStart > shape.cellMs) break;
            made++;
            const r = await call();
            if (!r.ok) {
              errors++;
              sample ??= r.error;
              continue;
            }
            if (name === "claim" && r.claimed !== shape.limit) {
              errors++;
              sample ??= `claim-next claimed ${r.claimed} of ${shape.limit} (the backlog ran out?)`;
            }
            ms.push(r.ms);
          }
          const cpu = cpuMicrosPerOp(cpu0, readCpuSeconds(v.server.pb.pid), made);
          if (name === "claim") await benchSql(client, v.server, backlogResetSql(v.columns));
          if (errors) failures.push(`retained ${v.key} ${name} rep ${rep + 1}: ${errors} of ${made} calls failed, e.g. ${sample}`);
          cells.push({ rep, name, variant: v.key, rows: v.rows, calls: made, latencyMs: latencySummary(ms), medianMs: median(ms), cpuMicrosPerCall: cpu, errors });
        }
      }
    }
    const rowsOut = [];
    const ratios = [];
    for (const name of names) {
      for (const v of variants) {
        const mine = cells.filter((c) => c.name === name && c.variant === v.key);
        rowsOut.push({ name, variant: v.key, rows: v.rows, medianMs: median(mine.map((c) => c.medianMs)), p99Ms: median(mine.map((c) => c.latencyMs.p99)), cpuMicrosPerCall: median(mine.map((c) => c.cpuMicrosPerCall)) });
      }
      const pairs = [...Array(shape.reps).keys()].map((rep) => {
        const a = cells.find((c) => c.rep === rep && c.name === name && c.variant === "large");
        const b = cells.find((c) => c.rep === rep && c.name === name && c.variant === "small");
        return [a, b];
      });
      ratios.push({
        name,
        ...ratioSummary(pairs.map(([a, b]) => ratio(a?.medianMs, b?.medianMs))),
        cpu: ratioSummary(pairs.map(([a, b]) => ratio(a?.cpuMicrosPerCall, b?.cpuMicrosPerCall))).median,
      });
    }
    return {
      shape: { ...shape },
      servers: variants.map((v) => ({ key: v.key, server: v.server.name, seededRows: v.rows, seedSeconds: round1(v.seed.ms / 1000), seedStatements: v.seed.statements, counts: v.counts, dbBytes: v.dbBytes })),
      rows: rowsOut,
      ratios,
      cells,
      failures,
    };
  } finally {
    for (const s of servers) await env.retire(s);
  }
}

/* ------------------------------------------------------------ prune */

/**
 * @param ctx { client, log }
 * @param env the queue environment
 * @param shape { rows, events, chunk, workers, baselineSeconds, capSeconds, backlog, seedMarginSeconds, hooksPool }
 */
export async function runPrunePhase(ctx, env, shape) {
  const { client, log } = ctx;
  const keepDoneMs = 2 * 60_000;
  const server = await startServer(env, { name: "prune", hooksPool: shape.hooksPool, extraEnv: { PB_FLEET_KEEP_DONE: "2m" } });
  const failures = [];
  try {
    await enqueueJobs(client, server, shape.backlog, "live-");
    // Every seeded row expires at E (within its last second), after the seeding and the baseline window.
    const seedStart = Date.now();
    const expiresAt = seedStart + shape.seedMarginSeconds * 1000;
    log(`prune: seeding ${shape.rows.toLocaleString("en-US")} done rows and ${shape.events.toLocaleString("en-US")} events that expire ${shape.seedMarginSeconds} s from now`);
    const seed = await seedFinishedRows(client, server, {
      rows: shape.rows,
      chunk: shape.chunk,
      prefix: "prune-",
      idPrefix: "p",
      statusSql: "'done'",
      // finished_at within the second before E - keep
      finishedSql: "{:base} + (seq.n % 1000) / 86400000.0",
      params: { base: julianDay(expiresAt - keepDoneMs - 1000) },
    });
    const eventsMs = await seedEvents(client, server, { count: shape.events, chunk: shape.chunk, createdSql: "{:base} + (seq.n % 1000) / 86400000.0", params: { base: julianDay(expiresAt - EVENTS_KEEP_MS - 1000) } });
    const seededIn = Date.now() - seedStart;
    log(`prune: seeded in ${(seed.ms / 1000).toFixed(1)} s (rows) + ${(eventsMs / 1000).toFixed(1)} s (events)`);
    const left = async () => ({
      rows: await sqlNumber(client, server, "SELECT COUNT(*) FROM probe_jobs WHERE probe_key LIKE 'prune-%'"),
      events: await sqlNumber(client, server, "SELECT COUNT(*) FROM probe_job_events WHERE source = 'bench-prune'"),
    });
    const before = await left();
    const baselineStart = expiresAt - shape.baselineSeconds * 1000 - 1500;
    if (Date.now() > baselineStart) {
      failures.push(`prune: seeding took ${(seededIn / 1000).toFixed(1)} s, past the ${shape.seedMarginSeconds} s margin less the baseline window; the baseline is shorter`);
    }
    await sleep(Math.max(0, baselineStart - Date.now()));

    // The load: W loops of claim-next (limit 1) + complete, every claim's latency stamped.
    let stop = false;
    const claims = [];
    let loadErrors = 0;
    let errorSample = null;
    let empty = 0;
    const loops = Array.from({ length: shape.workers }, (_, w) =>
      (async () => {
        while (!stop) {
          const at = Date.now();
          const r = await claimAndComplete(client, server, `prune-w${w}`, 1);
          if (!r.ok) {
            loadErrors++;
            errorSample ??= r.error;
            continue;
          }
          if (r.claimed === 0) empty++;
          claims.push({ at, ms: r.claimMs });
        }
      })(),
    );
    const cpu0 = readCpuSeconds(server.pb.pid);
    await sleep(Math.max(0, expiresAt + 500 - Date.now()));
    const cpuMid = readCpuSeconds(server.pb.pid);
    const loadBefore = round1(os.loadavg()[0]);
    const claimsBefore = claims.length;
    // The prune: retention ticks back to back until nothing seeded is left (or the cap).
    const pruneStart = Date.now();
    const ticks = [];
    let remaining = before;
    let pruneEnd = null;
    while (Date.now() - pruneStart < shape.capSeconds * 1000) {
      const res = await client.post(server.pb, MAINTENANCE, {});
      ticks.push({ ms: round1(res.ms), status: res.status, deleted: res.body?.retention?.deleted ?? null, events: res.body?.retention?.events ?? null });
      if (res.status !== 200 && res.status !== 503) {
        failures.push(`prune: POST ${MAINTENANCE}: ${brief(res)}`);
        break;
      }
      remaining = await left();
      if (remaining.rows === 0 && remaining.events === 0) {
        pruneEnd = Date.now();
        break;
      }
    }
    const cpuEnd = readCpuSeconds(server.pb.pid);
    const loadAfter = round1(os.loadavg()[0]);
    const claimsDuring = claims.length - claimsBefore;
    stop = true;
    await Promise.all(loops);
    if (loadErrors) failures.push(`prune: ${loadErrors} claim-next/complete calls failed, e.g. ${errorSample}`);
    const end = pruneEnd ?? Date.now();
    const inWindow = (a, b) => claims.filter((c) => c.at >= a && c.at < b).map((c) => c.ms);
    const baseline = latencySummary(inWindow(expiresAt - shape.baselineSeconds * 1000, expiresAt));
    const during = latencySummary(inWindow(pruneStart, end));
    return {
      shape: { ...shape },
      seed: { rows: shape.rows, events: shape.events, rowsSeconds: round1(seed.ms / 1000), eventsSeconds: round1(eventsMs / 1000) },
      before,
      remaining,
      gone: pruneEnd !== null,
      pruneSeconds: round1((end - pruneStart) / 1000),
      ticks: ticks.length,
      tickMs: latencySummary(ticks.map((t) => t.ms)),
      firstTicks: ticks.slice(0, 3),
      baseline: { ...baseline, perSec: baseline.n / shape.baselineSeconds, cpuMicrosPerClaim: cpuMicrosPerOp(cpu0, cpuMid, claimsBefore) },
      during: { ...during, perSec: during.n / Math.max(0.001, (end - pruneStart) / 1000), cpuMicrosPerClaim: cpuMicrosPerOp(cpuMid, cpuEnd, claimsDuring) },
      worstRatio: ratio(during.max, baseline.max),
      p99Ratio: ratio(during.p99, baseline.p99),
      emptyClaims: empty,
      load1: { beforePrune: loadBefore, afterPrune: loadAfter },
      failures,
    };
  } finally {
    await env.retire(server);
  }
}
