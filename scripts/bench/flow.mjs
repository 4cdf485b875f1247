// The flow phase of the benchmark: docs/flow-control.md's three "Performance" figures, each
// measured side by side with its baseline in the same run, on the run's
// PocketBase binary, every pair of servers alive at once and alternated per
// repetition (the order rotating), medians of the repetitions, latency and
// PocketBase's CPU (schedstat, identity.mjs's readCpu) per call:
//   isolation  claim-next { queue: "A", limit 10 } with 1,000 due jobs in A
//              while queue B holds 1,000,000 due jobs that sort before them
//              (priorities 0..2, all older), against the same call on a
//              server whose B is empty. Target <= 1.5x.
//   group      claim-next { queue: "work", limit 10 } with 100,000 due jobs of
//              group G sorting before 1,000 claimable jobs of 50 other groups,
//              G at its limit (POST /api/fleet/flow { group: G, concurrency: 1 }
//              and one G job held under a one-hour lease), against the same
//              server shape without G's 100,000 pending jobs. Target <= 3x.
//   common     claim-next (limit 100) then complete of those 100 (status done)
//              on jobs no limit applies to (no probe_flow rows), pb-fleet as
//              built against pb-fleet before flow control (a git revision's
//              bundle and migrations: --flowBaseline), same binary, same rows.
//              Target <= 1.1x, per job, both latency and CPU.
// Rows are seeded with INSERT ... SELECT over a recursive CTE through the
// bench-only SQL route (hooks.mjs), each a copy of one job made through
// POST /api/fleet/enqueue on that server (so every column holds what enqueue
// writes on its schema), with its own id (15 of [a-z0-9], in insertion
// order), probe_key, queue, group, priority, created = updated = run_at (in
// PocketBase's layout) and enqueue_index. After every cell the rows it
// claimed (or completed) are put back as that enqueued copy had them, so every
// call of every repetition sees the same rows. Wrong answers fail the run:
// non-200, a claim-next short of its limit, a job of another queue, a job of
// the group at its limit handed out, a complete item not released.
import os from "node:os";
import { performance } from "node:perf_hooks";
import { baselineFromGit, baselineServerEnv, baselineSummary, hooksOf } from "./baseline.mjs";
import { startServer } from "./batched.mjs";
import { createBenchClient } from "./http.mjs";
import { benchSql, benchSqlValue } from "./hooks.mjs";
import { cpuDelta, readCpu } from "./identity.mjs";
import { latencySummary, median, ratio, ratioSummary } from "./stats.mjs";

const ENQUEUE = "/api/fleet/enqueue";
const CLAIM = "/api/fleet/claim";
const CLAIM_NEXT = "/api/fleet/claim-next";
const COMPLETE = "/api/fleet/complete";
const FLOW = "/api/fleet/flow";

/** docs/flow-control.md "Performance": each figure's ratio must stay at or under this. */
export const FLOW_TARGETS = { isolation: 1.5, group: 3, common: 1.1 };
/**
 * pb-fleet of main before flow control (the commit the flow-control work
 * started from): the common-path figure's baseline. A fixed revision, not
 * HEAD: once flow control is committed, HEAD would be the code under test.
 */
export const DEFAULT_FLOW_BASELINE_REV = "98ad389";
/** The figures, in the order a run measures them. */
export const FLOW_FIGURES = ["isolation", "group", "common"];

const QUEUE_A = "A";
const QUEUE_B = "B";
const GROUP_QUEUE = "work";
const GROUP_G = "G";
/** The workerId of every measured call (the reset puts back only its rows). */
const WORKER = "flow-bench";
/** Holds the one G job that keeps G at its limit. */
const HOLDER = "flow-holder";
const TEMPLATE_TABLE = "bench_flow_template";
/** One seeding INSERT may take minutes on a big table; PocketBase 0.23+ ends a response after 5 minutes. */
const SEED_TIMEOUT_MS = 280_000;
/** Columns a seeded row gets of its own; every other column is the enqueued template's (and a reset puts it back). */
const OWN_COLUMNS = ["id", "probe_key", "created", "updated", "run_at", "priority", "queue", "group_key", "enqueue_index"];

const brief = (res) => `HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
const rotate = (xs, n) => xs.map((_, i) => xs[(i + n) % xs.length]);
const julianDay = (ms) => ms / 86400000 + 2440587.5;
const round1 = (v) => (typeof v === "number" ? Math.round(v * 10) / 10 : null);
const fmtInt = (n) => n.toLocaleString("en-US");

/* ------------------------------------------------------------ pure helpers */

/**
 * The phase's shape: bench.mjs's config for the mode, with the CLI's
 * --flowRows (queue B's jobs), --flowGroupRows (group G's jobs) and
 * --flowBaseline (the common figure's git revision) applied, and the targets.
 * @param {any} config CONFIGS[mode].flow
 * @param {{ flowRows?: number, flowGroupRows?: number, flowBaseline?: string }} [cli]
 */
export function flowShape(config, cli = {}) {
  const shape = structuredClone(config);
  if (cli.flowRows !== undefined) shape.isolation.bJobs = cli.flowRows;
  if (cli.flowGroupRows !== undefined) shape.group.gJobs = cli.flowGroupRows;
  shape.baselineRev = cli.flowBaseline ?? shape.baselineRev ?? DEFAULT_FLOW_BASELINE_REV;
  shape.targets = { ...FLOW_TARGETS, ...(shape.targets ?? {}) };
  const problem = flowShapeProblem(shape);
  if (problem) throw new Error(`flow phase: ${problem}`);
  return shape;
}

/**
 * Why a shape cannot run, or null: every cell's calls must find their jobs
 * (cells are reset after, not during), and there must be reps to take a median of.
 */
export function flowShapeProblem(shape) {
  const { isolation: i, group: g, common: c } = shape;
  if (!(shape.reps >= 1) || !(c.reps >= 1)) return "reps must be at least 1";
  if (Math.max(i.calls, shape.warmupCalls) * i.limit > i.aJobs) return `isolation: ${Math.max(i.calls, shape.warmupCalls)} calls of ${i.limit} need more than queue A's ${i.aJobs} jobs`;
  if (Math.max(g.calls, shape.warmupCalls) * g.limit > g.otherJobs) return `group: ${Math.max(g.calls, shape.warmupCalls)} calls of ${g.limit} need more than the other groups' ${g.otherJobs} jobs`;
  if (Math.max(c.loops, shape.warmupCalls) * c.limit > c.rows) return `common: ${Math.max(c.loops, shape.warmupCalls)} loops of ${c.limit} need more than its ${c.rows} jobs`;
  if (!(g.concurrency >= 1)) return "group: concurrency must be at least 1";
  return null;
}

/**
 * `of`'s cell value `key` over `over`'s, paired by repetition: the median of
 * the per-rep ratios (not the ratio of medians), its spread, and the per-rep
 * values in rep order (null where a rep lacks a cell or a value).
 * @param {Array<{ rep: number, variant: string, [k: string]: any }>} cells
 */
export function pairedRatio(cells, of, over, key) {
  const reps = [...new Set(cells.map((c) => c.rep))].sort((a, b) => a - b);
  const perRep = reps.map((rep) => {
    const a = cells.find((c) => c.rep === rep && c.variant === of);
    const b = cells.find((c) => c.rep === rep && c.variant === over);
    return ratio(a?.[key], b?.[key]);
  });
  return { ...ratioSummary(perRep), perRep };
}

/** PASS (true) when the median ratio is at most the limit; null when there is nothing to judge. */
export function flowVerdict(median, limit) {
  return typeof median === "number" && Number.isFinite(median) ? median <= limit : null;
}

/** "1.07x (per rep 1.02, 1.10, 0.98)". */
export function fmtFlowRatio(r) {
  if (!r || typeof r.median !== "number") return "n/a";
  const reps = (r.perRep ?? []).map((x) => (typeof x === "number" ? x.toFixed(2) : "n/a"));
  return `${r.median.toFixed(2)}x${reps.length ? ` (per rep ${reps.join(", ")})` : ""}`;
}

/** A figure's sentence for the Targets table. */
function figureTarget(f) {
  const sz = f.sizes;
  if (f.key === "isolation") {
    return `claim-next {queue: A, limit ${sz.limit}}: ${fmtInt(sz.aJobs)} due in A while queue B holds ${fmtInt(sz.bJobs)} due jobs sorting before them <= ${f.target}x the call with B empty`;
  }
  if (f.key === "group") {
    return `claim-next {queue, limit ${sz.limit}}: ${fmtInt(sz.gJobs)} due jobs of one group at its concurrency limit sorting before ${fmtInt(sz.otherJobs)} claimable jobs of other groups <= ${f.target}x the call without that group`;
  }
  return `common path: claim-next ${sz.limit} + complete ${sz.limit} (no limits set) <= ${f.target}x pb-fleet before flow control`;
}

/**
 * The run's Targets rows of the phase: isolation and group judged on latency
 * per call (CPU per call beside it), the common path twice: latency per job
 * and PocketBase CPU per job.
 */
export function flowTargets(flow) {
  const out = [];
  for (const f of flow?.figures ?? []) {
    const base = figureTarget(f);
    if (f.skipped) {
      out.push({ target: base, measured: `skipped: ${f.skipped}`, pass: null });
      continue;
    }
    if (f.key === "common") {
      out.push({ target: `${base}: latency per job`, measured: fmtFlowRatio(f.ratios.latency), pass: flowVerdict(f.ratios.latency.median, f.target) });
      out.push({ target: `${base}: PocketBase CPU per job`, measured: fmtFlowRatio(f.ratios.cpu), pass: flowVerdict(f.ratios.cpu.median, f.target) });
    } else {
      const cpu = typeof f.ratios.cpu?.median === "number" ? `; CPU/call ${f.ratios.cpu.median.toFixed(2)}x` : "";
      out.push({ target: `${base} (latency per call)`, measured: `${fmtFlowRatio(f.ratios.latency)}${cpu}`, pass: flowVerdict(f.ratios.latency.median, f.target) });
    }
  }
  return out;
}

/* ------------------------------------------------------------ SQL helpers */

async function columnsOf(client, server) {
  return String(await benchSqlValue(client, server, "SELECT group_concat(name, ',') AS value FROM pragma_table_info('probe_jobs')")).split(",");
}

const sqlCount = async (client, server, where, params = {}) =>
  Number(await benchSqlValue(client, server, `SELECT CAST(COUNT(*) AS TEXT) AS value FROM probe_jobs WHERE ${where}`, params));

/**
 * One job enqueued through the server's own endpoint, copied into
 * bench_flow_template and deleted: what every seeded row copies and every
 * reset puts back. Answers the schema's columns.
 */
export async function makeTemplate(client, server) {
  const res = await client.post(server.pb, ENQUEUE, {
    jobs: [{ probeKey: "flow-template", payload: { target: "https://probe.example.com/check/000000", region: "eu-west-1", timeoutMs: 5000, tag: "flow" } }],
  });
  const id = res.body?.jobs?.[0]?.id;
  if (res.status !== 200 || typeof id !== "string") throw new Error(`${server.name}: enqueueing the template job failed: ${brief(res)}`);
  await benchSql(client, server, `CREATE TABLE ${TEMPLATE_TABLE} AS SELECT * FROM probe_jobs WHERE id = {:id}`, { id });
  await benchSql(client, server, "DELETE FROM probe_jobs WHERE id = {:id}", { id });
  return columnsOf(client, server);
}

/**
 * `count` pending rows, copies of the template, `chunk` a statement:
 * ids `<idPrefix><n zero-padded to 15>`, probe keys `<keyPrefix><n>`,
 * created = updated = run_at = baseMs + n * stepMs (all due), priority and
 * group_key from SQL expressions of seq.n (absent: the template's), queue
 * given or the template's, enqueue_index n % 1000 (a call's position).
 */
export async function seedRows(seeder, server, columns, { count, chunk, idPrefix, keyPrefix, queue, groupSql, prioritySql, baseMs, stepMs }) {
  if (count <= 0) return { ms: 0, statements: 0 };
  const at = "strftime('%Y-%m-%d %H:%M:%fZ', {:base} + seq.n * {:step})";
  const overrides = {
    id: `{:idPrefix} || printf('%0${15 - idPrefix.length}d', seq.n)`,
    probe_key: "{:keyPrefix} || printf('%07d', seq.n)",
    created: at,
    updated: at,
    run_at: at,
    enqueue_index: "seq.n % 1000",
  };
  if (queue !== undefined) overrides.queue = "{:queue}";
  if (prioritySql !== undefined) overrides.priority = prioritySql;
  if (groupSql !== undefined) {
    if (!columns.includes("group_key")) throw new Error(`${server.name}: the schema has no group_key, the rows cannot have groups`);
    overrides.group_key = groupSql;
  }
  const exprs = columns.map((c) => overrides[c] ?? `t.\`${c}\``);
  const t0 = performance.now();
  let statements = 0;
  for (let start = 0; start < count; start += chunk) {
    const end = Math.min(count, start + chunk);
    await benchSql(
      seeder,
      server,
      `WITH RECURSIVE seq(n) AS (SELECT {:start} UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < {:end})
INSERT INTO probe_jobs (${columns.map((c) => `\`${c}\``).join(", ")})
SELECT ${exprs.join(", ")} FROM seq CROSS JOIN ${TEMPLATE_TABLE} AS t`,
      { start, end, idPrefix, keyPrefix, ...(queue !== undefined ? { queue } : {}), base: julianDay(baseMs), step: stepMs / 86400000 },
    );
    statements++;
  }
  return { ms: performance.now() - t0, statements };
}

/**
 * Puts the rows the measured calls claimed or completed back as the template
 * had them (every column but the row's own), outside the measured time. The
 * held G job (HOLDER's) is left alone.
 */
export function resetSql(columns) {
  const sets = columns.filter((c) => !OWN_COLUMNS.includes(c)).map((c) => `\`${c}\` = (SELECT \`${c}\` FROM ${TEMPLATE_TABLE})`);
  return `UPDATE probe_jobs SET ${sets.join(", ")} WHERE status IN ('claimed', 'running', 'done') AND claimed_by = '${WORKER}'`;
}

/* ------------------------------------------------------------ cells */

/**
 * Sequential claim-next calls: the median call's latency, PocketBase's CPU
 * per call, and every answer checked with `check(jobs)` (a message or null).
 */
async function claimCell(client, server, { calls, body, limit, check }) {
  const ms = [];
  const bad = [];
  const cpu0 = readCpu(server.pb.pid);
  for (let i = 0; i < calls; i++) {
    const res = await client.post(server.pb, CLAIM_NEXT, body);
    ms.push(res.ms);
    const jobs = res.body?.jobs;
    if (res.status !== 200 || !Array.isArray(jobs)) bad.push(`claim-next ${brief(res)}`);
    else if (jobs.length !== limit) bad.push(`claim-next claimed ${jobs.length} of ${limit}`);
    else {
      const why = check(jobs);
      if (why) bad.push(why);
    }
  }
  const cpu = cpuDelta(cpu0, readCpu(server.pb.pid));
  return {
    calls,
    costMs: median(ms),
    latencies: ms,
    cpuMicrosPerCall: cpu.seconds === null ? null : (cpu.seconds * 1e6) / calls,
    cpuClock: cpu.clock,
    failureCount: bad.length,
    failureSamples: bad.slice(0, 3),
  };
}

/** `loops` sequential loops of claim-next (limit) + complete (done) of those jobs: per job latency and CPU. */
async function lifecycleCell(client, server, { loops, limit, leaseSeconds }) {
  const perJob = [];
  const claimMs = [];
  const completeMs = [];
  const bad = [];
  let jobsDone = 0;
  const cpu0 = readCpu(server.pb.pid);
  for (let i = 0; i < loops; i++) {
    const claim = await client.post(server.pb, CLAIM_NEXT, { workerId: WORKER, leaseSeconds, limit });
    const jobs = claim.body?.jobs;
    if (claim.status !== 200 || !Array.isArray(jobs) || jobs.length === 0) {
      bad.push(`claim-next ${brief(claim)}`);
      continue;
    }
    if (jobs.length !== limit) bad.push(`claim-next claimed ${jobs.length} of ${limit}`);
    const done = await client.post(server.pb, COMPLETE, {
      workerId: WORKER,
      releases: jobs.map((j) => ({ jobId: j.job.id, leaseToken: j.leaseToken, status: "done", result: { ok: true } })),
    });
    const released = done.status === 200 && Array.isArray(done.body?.results) ? done.body.results.filter((r) => r.released === true).length : 0;
    if (released !== jobs.length) bad.push(`complete of ${jobs.length}: ${released} released, ${brief(done)}`);
    jobsDone += jobs.length;
    claimMs.push(claim.ms);
    completeMs.push(done.ms);
    perJob.push((claim.ms + done.ms) / jobs.length);
  }
  const cpu = cpuDelta(cpu0, readCpu(server.pb.pid));
  return {
    loops,
    jobs: jobsDone,
    costMs: median(perJob),
    claimMs: median(claimMs),
    completeMs: median(completeMs),
    latencies: perJob,
    cpuMicrosPerCall: cpu.seconds === null || jobsDone === 0 ? null : (cpu.seconds * 1e6) / jobsDone,
    cpuClock: cpu.clock,
    failureCount: bad.length,
    failureSamples: bad.slice(0, 3),
  };
}

/**
 * Runs `cell` for every variant in each of `reps` repetitions, the order
 * rotating by rep, each cell followed by its variant's reset; a warm-up cell
 * per variant first (not kept).
 */
async function alternate(ctx, figure, variants, reps, { cell, warm }, fail) {
  for (const v of variants) {
    const w = await warm(v);
    if (w.failureCount) fail(`${figure} warm-up, ${v.key}: ${w.failureCount} unexpected answers, e.g. ${w.failureSamples[0]}`);
    await benchSql(ctx.client, v.server, v.reset);
  }
  const cells = [];
  for (let rep = 0; rep < reps; rep++) {
    for (const v of rotate(variants, rep)) {
      const c = await cell(v);
      await benchSql(ctx.client, v.server, v.reset);
      if (c.failureCount) fail(`${figure} ${v.key} rep ${rep + 1}: ${c.failureCount} unexpected answers, e.g. ${c.failureSamples[0]}`);
      cells.push({ rep, variant: v.key, ...c });
    }
  }
  return cells;
}

/** Per variant: medians over the reps, and the pooled latency percentiles. */
function summarize(cells, variants) {
  return variants.map((v) => {
    const mine = cells.filter((c) => c.variant === v.key).sort((a, b) => a.rep - b.rep);
    return {
      variant: v.key,
      server: v.server.name,
      reps: mine.length,
      costMs: median(mine.map((c) => c.costMs)),
      perRepCostMs: mine.map((c) => c.costMs),
      cpuMicros: median(mine.map((c) => c.cpuMicrosPerCall)),
      perRepCpuMicros: mine.map((c) => c.cpuMicrosPerCall),
      claimMs: median(mine.map((c) => c.claimMs)),
      completeMs: median(mine.map((c) => c.completeMs)),
      latencyMs: latencySummary(mine.flatMap((c) => c.latencies)),
      cpuClocks: [...new Set(mine.map((c) => c.cpuClock))],
      failureCount: mine.reduce((s, c) => s + c.failureCount, 0),
    };
  });
}

function figureResult(key, target, sizes, variants, cells, extra = {}) {
  const [of, over] = variants.map((v) => v.key);
  const latency = pairedRatio(cells, of, over, "costMs");
  const cpu = pairedRatio(cells, of, over, "cpuMicrosPerCall");
  return {
    key,
    target,
    sizes,
    of,
    over,
    datasets: variants.map((v) => ({ variant: v.key, server: v.server.name, ...v.dataset })),
    rows: summarize(cells, variants),
    ratios: { latency, cpu },
    pass: flowVerdict(latency.median, target),
    cells: cells.map(({ latencies, failureSamples, ...c }) => c),
    skipped: null,
    ...extra,
  };
}

/* ------------------------------------------------------------ the figures */

async function startPair(env, specs, hooksPool) {
  return Promise.all(specs.map((s) => startServer(s.env ?? env, { name: s.name, hooksPool })));
}

/** Figure 1: queue isolation. */
async function runIsolation(ctx, env, shape, fail, seeder) {
  const { client, log } = ctx;
  const s = shape.isolation;
  const specs = [
    { key: `B holds ${fmtInt(s.bJobs)}`, name: "flow-iso-b-full", bJobs: s.bJobs },
    { key: "B empty", name: "flow-iso-b-empty", bJobs: 0 },
  ];
  const servers = await startPair(env, specs, shape.hooksPool);
  try {
    const variants = specs.map((spec, i) => ({ ...spec, server: servers[i] }));
    const nowMs = Date.now();
    for (const v of variants) {
      const t0 = performance.now();
      v.columns = await makeTemplate(client, v.server);
      v.reset = resetSql(v.columns);
      // A: priority 0, created (and due) over the last 10 minutes; B: older (the 3 hours before), priorities 0..2: all sort before A.
      await seedRows(seeder, v.server, v.columns, { count: s.aJobs, chunk: shape.chunk, idPrefix: "a", keyPrefix: "flow-a-", queue: QUEUE_A, prioritySql: "0", baseMs: nowMs - 600_000, stepMs: 500_000 / s.aJobs });
      const b = await seedRows(seeder, v.server, v.columns, { count: v.bJobs, chunk: shape.chunk, idPrefix: "b", keyPrefix: "flow-b-", queue: QUEUE_B, prioritySql: "seq.n % 3", baseMs: nowMs - 3 * 3600_000, stepMs: 3600_000 / Math.max(1, v.bJobs) });
      const a = await sqlCount(client, v.server, "queue = {:q} AND status = 'pending'", { q: QUEUE_A });
      const inB = await sqlCount(client, v.server, "queue = {:q} AND status = 'pending'", { q: QUEUE_B });
      v.dataset = { aPending: a, bPending: inB, seedSec: round1((performance.now() - t0) / 1000), bRowsPerSec: b.ms > 0 ? Math.round(v.bJobs / (b.ms / 1000)) : null };
      log(`flow isolation: ${v.server.name}: ${fmtInt(a)} pending in A, ${fmtInt(inB)} in B, seeded in ${v.dataset.seedSec} s`);
      if (a !== s.aJobs || inB !== v.bJobs) throw new Error(`${v.server.name}: ${a} pending in A and ${inB} in B after seeding, ${s.aJobs} and ${v.bJobs} expected`);
    }
    const body = { workerId: WORKER, leaseSeconds: shape.leaseSeconds, limit: s.limit, queue: QUEUE_A };
    const check = (jobs) => {
      const other = jobs.find((j) => j.job?.queue !== QUEUE_A);
      return other ? `claim-next {queue: A} handed out job ${other.job?.id} of queue ${JSON.stringify(other.job?.queue)}` : null;
    };
    const cells = await alternate(ctx, "isolation", variants, shape.reps, {
      warm: (v) => claimCell(client, v.server, { calls: shape.warmupCalls, body, limit: s.limit, check }),
      cell: (v) => claimCell(client, v.server, { calls: s.calls, body, limit: s.limit, check }),
    }, fail);
    return figureResult("isolation", shape.targets.isolation, { aJobs: s.aJobs, bJobs: s.bJobs, limit: s.limit, calls: s.calls }, variants, cells);
  } finally {
    for (const server of servers) await env.retire(server);
  }
}

/** Figure 2: a group at its limit in front of other groups' jobs. */
async function runGroup(ctx, env, shape, fail, seeder) {
  const { client, log } = ctx;
  const s = shape.group;
  const specs = [
    { key: `G holds ${fmtInt(s.gJobs)}`, name: "flow-group-g-full", gJobs: s.gJobs },
    { key: "without G's jobs", name: "flow-group-g-empty", gJobs: 0 },
  ];
  const servers = await startPair(env, specs, shape.hooksPool);
  try {
    const variants = specs.map((spec, i) => ({ ...spec, server: servers[i] }));
    const nowMs = Date.now();
    for (const v of variants) {
      const t0 = performance.now();
      v.columns = await makeTemplate(client, v.server);
      v.reset = resetSql(v.columns);
      // G at its limit: concurrency 1, one G job held under a long lease (through the endpoints, as a user would).
      const flow = await client.post(v.server.pb, FLOW, { group: GROUP_G, concurrency: s.concurrency });
      if (flow.status !== 200 || flow.body?.flow?.concurrency !== s.concurrency) throw new Error(`${v.server.name}: POST ${FLOW} failed: ${brief(flow)}`);
      for (let i = 0; i < s.concurrency; i++) {
        const enq = await client.post(v.server.pb, ENQUEUE, { jobs: [{ probeKey: `flow-g-held-${i}`, queue: GROUP_QUEUE, group: GROUP_G, payload: { held: i } }] });
        const id = enq.body?.jobs?.[0]?.id;
        if (enq.status !== 200 || typeof id !== "string") throw new Error(`${v.server.name}: enqueueing the held G job failed: ${brief(enq)}`);
        const claim = await client.post(v.server.pb, CLAIM, { jobId: id, workerId: HOLDER, leaseSeconds: shape.leaseSeconds });
        if (claim.status !== 200 || claim.body?.claimed !== true) throw new Error(`${v.server.name}: claiming the held G job failed: ${brief(claim)}`);
      }
      // Others: 50 groups, priority 0, the last 10 minutes; G: older (the 3 hours before), priorities 0..2: all sort before the others.
      await seedRows(seeder, v.server, v.columns, {
        count: s.otherJobs, chunk: shape.chunk, idPrefix: "o", keyPrefix: "flow-o-", queue: GROUP_QUEUE,
        groupSql: `'g-' || printf('%03d', seq.n % ${Math.max(1, Math.floor(s.otherGroups))})`, prioritySql: "0", baseMs: nowMs - 600_000, stepMs: 500_000 / s.otherJobs,
      });
      const g = await seedRows(seeder, v.server, v.columns, {
        count: v.gJobs, chunk: shape.chunk, idPrefix: "g", keyPrefix: "flow-g-", queue: GROUP_QUEUE,
        groupSql: `'${GROUP_G}'`, prioritySql: "seq.n % 3", baseMs: nowMs - 3 * 3600_000, stepMs: 3600_000 / Math.max(1, v.gJobs),
      });
      const gPending = await sqlCount(client, v.server, "group_key = {:g} AND status = 'pending'", { g: GROUP_G });
      const others = await sqlCount(client, v.server, "queue = {:q} AND status = 'pending' AND group_key != {:g}", { q: GROUP_QUEUE, g: GROUP_G });
      const gHeld = await sqlCount(client, v.server, "group_key = {:g} AND status = 'claimed' AND claimed_by = {:h}", { g: GROUP_G, h: HOLDER });
      v.dataset = { gPending, otherPending: others, gHeld, seedSec: round1((performance.now() - t0) / 1000), gRowsPerSec: g.ms > 0 ? Math.round(v.gJobs / (g.ms / 1000)) : null };
      log(`flow group: ${v.server.name}: ${fmtInt(gPending)} pending of G (${gHeld} held, concurrency ${s.concurrency}), ${fmtInt(others)} of ${s.otherGroups} other groups, seeded in ${v.dataset.seedSec} s`);
      if (gPending !== v.gJobs || others !== s.otherJobs || gHeld !== s.concurrency) {
        throw new Error(`${v.server.name}: after seeding ${gPending} pending of G, ${others} others, ${gHeld} G held; ${v.gJobs}, ${s.otherJobs}, ${s.concurrency} expected`);
      }
    }
    const body = { workerId: WORKER, leaseSeconds: shape.leaseSeconds, limit: s.limit, queue: GROUP_QUEUE };
    const check = (jobs) => {
      const g = jobs.find((j) => j.job?.group_key === GROUP_G);
      return g ? `claim-next handed out job ${g.job.id} of group ${GROUP_G}, which is at its concurrency limit` : null;
    };
    const cells = await alternate(ctx, "group", variants, shape.reps, {
      warm: (v) => claimCell(client, v.server, { calls: shape.warmupCalls, body, limit: s.limit, check }),
      cell: (v) => claimCell(client, v.server, { calls: s.calls, body, limit: s.limit, check }),
    }, fail);
    for (const v of variants) {
      const held = await sqlCount(client, v.server, "group_key = {:g} AND status IN ('claimed', 'running')", { g: GROUP_G });
      if (held !== s.concurrency) fail(`group: ${v.server.name}: ${held} jobs of ${GROUP_G} held at the end, ${s.concurrency} (its limit) expected`);
    }
    return figureResult("group", shape.targets.group, { gJobs: s.gJobs, otherJobs: s.otherJobs, otherGroups: s.otherGroups, concurrency: s.concurrency, limit: s.limit, calls: s.calls }, variants, cells);
  } finally {
    for (const server of servers) await env.retire(server);
  }
}

/** Figure 3: the common path against pb-fleet before flow control. */
async function runCommon(ctx, env, shape, fail, seeder) {
  const { client, log } = ctx;
  const s = shape.common;
  const sizes = { rows: s.rows, limit: s.limit, loops: s.loops, reps: s.reps };
  const baseline = await baselineFromGit(env.repo, shape.baselineRev, env.layout, env.tmpRoot);
  const baselineInfo = baselineSummary(baseline);
  if (baseline.skipped) {
    log(`note: flow common: ${baseline.skipped}`);
    return { key: "common", target: shape.targets.common, sizes, baseline: baselineInfo, skipped: baseline.skipped, rows: [], datasets: [], ratios: null, pass: null, cells: [] };
  }
  log(`flow common: baseline ${baseline.sha.slice(0, 7)} ("${baseline.subject}") from git: ${baseline.files.join(", ")}`);
  const specs = [
    { key: "flow control (as built)", name: "flow-common-new", hookFiles: env.hookFiles },
    { key: `before flow control (${baseline.sha.slice(0, 7)})`, name: "flow-common-baseline", hookFiles: baseline.hookFiles, env: baselineServerEnv(env, baseline) },
  ];
  const servers = await startPair(env, specs, shape.hooksPool);
  try {
    const variants = specs.map((spec, i) => ({ ...spec, server: servers[i], hooks: hooksOf(env, spec.name, spec.hookFiles) }));
    const nowMs = Date.now();
    for (const v of variants) {
      const t0 = performance.now();
      v.columns = await makeTemplate(client, v.server);
      v.reset = resetSql(v.columns);
      // Plain jobs as enqueue writes them: the default queue, no group, priority 0, due over the last 10 minutes.
      await seedRows(seeder, v.server, v.columns, { count: s.rows, chunk: shape.chunk, idPrefix: "c", keyPrefix: "flow-c-", baseMs: nowMs - 600_000, stepMs: 500_000 / s.rows });
      const pending = await sqlCount(client, v.server, "status = 'pending'");
      const flowRows = v.columns.includes("group_key") ? Number(await benchSqlValue(client, v.server, "SELECT CAST(COUNT(*) AS TEXT) AS value FROM probe_flow")) : null;
      v.dataset = { pending, flowRows, columns: v.columns.length, seedSec: round1((performance.now() - t0) / 1000), hooks: v.hooks };
      log(`flow common: ${v.server.name}: ${fmtInt(pending)} pending jobs (${v.columns.length} columns${flowRows === null ? ", no probe_flow" : `, ${flowRows} probe_flow rows`})`);
      if (pending !== s.rows) throw new Error(`${v.server.name}: ${pending} pending rows after seeding, ${s.rows} expected`);
      if (flowRows) throw new Error(`${v.server.name}: ${flowRows} probe_flow rows: the common path must have no limits set`);
    }
    const cells = await alternate(ctx, "common", variants, s.reps, {
      warm: (v) => lifecycleCell(client, v.server, { loops: shape.warmupCalls, limit: s.limit, leaseSeconds: shape.leaseSeconds }),
      cell: (v) => lifecycleCell(client, v.server, { loops: s.loops, limit: s.limit, leaseSeconds: shape.leaseSeconds }),
    }, fail);
    const r = figureResult("common", shape.targets.common, sizes, variants, cells, { baseline: baselineInfo });
    // Context: each call on its own (median of the reps' medians), new over baseline.
    r.context = { claimNext: pairedRatio(cells, r.of, r.over, "claimMs"), complete: pairedRatio(cells, r.of, r.over, "completeMs") };
    // The common path is judged on both figures.
    r.pass = r.pass === null ? null : r.pass && flowVerdict(r.ratios.cpu.median, r.target) !== false;
    return r;
  } finally {
    for (const server of servers) await env.retire(server);
  }
}

/**
 * @param {{ client: any, log: (m: string) => void }} ctx
 * @param env bench.mjs's queue environment: { repo, binary, layout, hookFiles, migrationsDir, tmpRoot, started, retire, verbose }
 * @param shape flowShape(...)'s answer
 */
export async function runFlowPhase(ctx, env, shape) {
  const { log } = ctx;
  const failures = [];
  const fail = (m) => {
    if (failures.length < 20) log(`!!! flow ${m}`);
    failures.push(`flow ${m}`);
  };
  const seeder = createBenchClient({ maxSockets: 2, timeoutMs: SEED_TIMEOUT_MS });
  const load1 = { start: round1(os.loadavg()[0]), end: null };
  const figures = [];
  const t0 = performance.now();
  try {
    const wanted = shape.figures ?? FLOW_FIGURES;
    const runners = { isolation: runIsolation, group: runGroup, common: runCommon };
    for (const key of FLOW_FIGURES.filter((k) => wanted.includes(k))) {
      const f = await runners[key](ctx, env, shape, fail, seeder);
      figures.push(f);
      if (!f.skipped) {
        log(`flow ${key}: ${f.of} / ${f.over}: latency ${fmtFlowRatio(f.ratios.latency)}, CPU ${fmtFlowRatio(f.ratios.cpu)}; target <= ${f.target}x: ${f.pass === null ? "n/a" : f.pass ? "PASS" : "MISS"}`);
      }
    }
  } finally {
    seeder.close();
  }
  load1.end = round1(os.loadavg()[0]);
  return { shape, figures, failures, load1, seconds: round1((performance.now() - t0) / 1000) };
}
