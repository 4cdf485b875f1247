#!/usr/bin/env node
// `npm run bench`: pb-fleet's claim/renew/release endpoints measured against
// baselines in the same run, on the same PocketBase binary (PB_VERSION), each
// server its own spawned PocketBase on a temp data dir with the migrations of
// the binary's hooks line:
//   pb-fleet          the line's bundle as built by `npm run build` (hooksPool 25, PocketBase's default)
//   reference         ../shared/reference/fleet-claim.pb.js (PocketBase 0.22 only; skipped with a note when absent)
//   pb-fleet-poolN    the bundle again with --hooksPool N
// plus, on every server, a bench-only hooks file (noop route, minimal claim,
// row seeding; see scripts/bench/hooks.mjs). A last phase starts one pb-fleet
// server per version of --versions (default: 0.22.21 and 0.40.4, one per hooks
// line; --quick: PB_VERSION's only) and puts claim vs plain PATCH and the
// lifecycle vs 0.22 side by side, one row per version: what upgrading PocketBase
// costs or gains. Two queue phases (scripts/bench/queue.mjs) follow on servers
// of their own: enqueue of 1,000 jobs in one call vs the record API, and
// claim-next per call at 100,000 pending rows vs pb-fleet before the queue
// contract (--baseline, a git revision). The batched phase (scripts/bench/batched.mjs, issue 13) runs
// 8 pb-fleet Workers of concurrency 50 in Node processes of their own against
// the per-job lifecycle of the same fleet shape, checks every job was done
// exactly once, and with --profile reports where PocketBase's CPU goes (a
// pprof-enabled build, scripts/bench/profile.mjs). The identity phase
// (scripts/bench/identity.mjs, issue 19) runs claim-next (limit 10) + complete
// at W=8 and W=1 with a worker identity's token against the admin token (and
// the admin token again: an A/A control), in many short rounds of a rotating
// order, on one pb-fleet server per version of --versions, and reports the
// worker/admin ratios of CPU per job and of jobs/s against 1.05, with
// PocketBase's own price of each token (GET /api/health) as context. Three retention phases
// (scripts/bench/retention.mjs, issue 18) follow: steady (a sustained
// 500 jobs/s for --steadyMinutes with PB_FLEET_KEEP_DONE=2m, sampled every
// minute), retained (per-call cost at 1,000 vs --retainedRows finished rows)
// and prune (claim latency while retention deletes a large backlog). The flow phase
// (scripts/bench/flow.mjs) measures docs/flow-control.md's three performance figures, each
// against its baseline on a server of its own in the same run: queue isolation
// (claim-next of queue A beside 1,000,000 jobs of queue B vs B empty), a group
// at its limit in front of other groups' jobs (vs without that group's jobs),
// and the common path (claim-next 100 + complete) vs pb-fleet before flow
// control (--flowBaseline, a git revision). The hot-path phase (scripts/bench/hot-path.mjs,
// issue 21) puts the claim-next -> complete path as built beside a git revision's
// (--hotPathBaseline): 8 loops of claim-next 100 + complete against each bundle,
// then 8 Worker processes of concurrency 50 with each revision's own client, jobs/s
// and CPU per job, every job checked done exactly once. --phases runs a subset. Prints Markdown tables, writes
// the run as JSON (bench/results/, gitignored) and, for a full run, the summary
// to bench/LATEST.md. Exits 1 when any claim round had other than exactly one
// winner, any call answered unexpectedly, or a fleet run of the batched phase
// completed a job twice or left one behind; performance targets are reported
// as PASS/MISS and never change the exit code.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { cacheRoot, ensurePocketBase } from "./pocketbase/binary.mjs";
import { DEFAULT_PB_VERSION, NEWEST_TESTED_MODERN_VERSION, UnsupportedPocketBaseVersion, lineLayout, normalizePbVersion } from "./pocketbase/lines.mjs";
import { startPocketBase } from "./pocketbase/server.mjs";
import { benchedHookFiles, writeHooksDir } from "./bench/hooks.mjs";
import { createBenchClient } from "./bench/http.mjs";
import { contentionRatio, endpointRatio, lifecycleRatio, runClaimNextVsList, runContention, runEndpoints, runLifecycle, warmUp } from "./bench/phases.mjs";
import { machineLine, renderReport } from "./bench/report.mjs";
import { createRssSampler } from "./bench/proc.mjs";
import { runBatchedPhase } from "./bench/batched.mjs";
import { runClaimNext100kPhase, runEnqueuePhase } from "./bench/queue.mjs";
import { runVersions } from "./bench/versions.mjs";
import { runPrunePhase, runRetainedPhase, runSteadyPhase } from "./bench/retention.mjs";
import { identityTargets, runIdentityPhase, withIdentitySection } from "./bench/identity.mjs";
import { DEFAULT_FLOW_BASELINE_REV, flowShape, flowTargets, runFlowPhase } from "./bench/flow.mjs";
import { DEFAULT_HOT_PATH_BASELINE_REV, hotPathShape, hotPathTargets, runHotPathPhase } from "./bench/hot-path.mjs";
import { createJobPool } from "./bench/workloads.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const REFERENCE_HOOKS = resolve(REPO, "../shared/reference/fleet-claim.pb.js");

/** The per-version phase's default: one version per hooks line. */
const DEFAULT_LINE_VERSIONS = [DEFAULT_PB_VERSION, NEWEST_TESTED_MODERN_VERSION];

/** Every phase, in the order a run does them. */
const PHASES = ["contention", "endpoints", "lifecycle", "claim-next", "hooks-pool", "versions", "enqueue", "claim-next-100k", "batched", "hot-path", "identity", "steady", "retained", "prune", "flow"];
/** The retention phases (issue 18, scripts/bench/retention.mjs). */
const RETENTION_PHASES = ["steady", "retained", "prune"];
/**
 * --quick's phases unless --phases says otherwise: the rot check leaves out the 100k-row seeding, the client fleets,
 * the identity phase (its own servers; `--quick --phases identity` runs it short), the retention phases, the flow
 * phase (its own servers and seeding; `--quick --phases flow` runs it short) and the hot-path phase (its own servers
 * and client fleets; `--quick --phases hot-path` or --hotPathJobs runs it short).
 */
const QUICK_PHASES = PHASES.filter((p) => p !== "enqueue" && p !== "claim-next-100k" && p !== "batched" && p !== "hot-path" && p !== "identity" && p !== "flow" && !RETENTION_PHASES.includes(p));
/** The steady phase's default length (the issue's full run: --steadyMinutes 60) and the retained phase's default row count. */
const DEFAULT_STEADY_MINUTES = 10;
const DEFAULT_RETAINED_ROWS = 10_000_000;
/** The flow phase's default sizes: queue B's jobs (isolation) and group G's (group at its limit), docs/flow-control.md's figures. */
const DEFAULT_FLOW_ROWS = 1_000_000;
const DEFAULT_FLOW_GROUP_ROWS = 100_000;
/** The hot-path phase's jobs a run (both parts; issue 21's 30,000). */
const DEFAULT_HOT_PATH_JOBS = 30_000;
/** How long --profile's CPU profile runs. */
const PROFILE_SECONDS = 25;
const QUICK_PROFILE_SECONDS = 10;
/** pb-fleet of main before the queue contract (docs/queue.md): the claim-next-100k baseline. */
const DEFAULT_BASELINE_REV = "9d957f6";

const USAGE = `Usage: node scripts/bench.mjs [--quick] [--phases <p,p,...>] [--versions <v,v,...>] [--baseline <rev>] [--flowBaseline <rev>] [--hotPathJobs <n>] [--hotPathBaseline <rev>] [--profile] [--json <path>] [--latest <path>] [--verbose] [--help]
  --quick            a rot check: fewer rounds, fewer worker counts, short durations (well under a minute);
                     without --phases it leaves out enqueue, claim-next-100k, batched, identity, flow and the retention phases,
                     and hot-path (with them: 1,000 jobs, 10,000 rows, 2,000 jobs per fleet run, 4 identity rounds, 20,000 jobs in queue B,
                     3,000 jobs per hot-path run)
  --phases <list>    run only these phases (default: all): ${PHASES.join(", ")}.
                     A run of a subset writes no bench/LATEST.md unless --latest is given.
  --baseline <rev>   the git revision whose pb-fleet (hooks bundle and migrations) is claim-next-100k's baseline
                     (default: ${DEFAULT_BASELINE_REV}, main before the queue contract); skipped with a note when git or the revision is missing
  --versions <list>  PocketBase versions for the per-version phase, one pb-fleet server each, compared
                     with the first 0.22.x of the list, and for the identity phase (worker token vs admin token,
                     one server per version) (default: ${DEFAULT_LINE_VERSIONS.join(",")}; with --quick: PB_VERSION's only).
                     Each is got like PB_VERSION (cache, go install, release); POCKETBASE_BIN is not used for them.
  --profile          batched phase: also load a PocketBase built with Go's net/http/pprof (built on demand into
                     the cache, scripts/bench/profile.mjs; PB_PROFILE_VERSION, default: the run's version) and report where its CPU goes
                     (a ${PROFILE_SECONDS} s CPU profile, --quick: ${QUICK_PROFILE_SECONDS} s; the .pprof file is kept in the cache, ~/.cache/pb-fleet/profiles/)
  --json <path>      where to write this run's JSON (default: bench/results/<time>-<full|quick>.json)
  --latest <path>    where to write the Markdown summary (default: bench/LATEST.md for a full run, none for --quick)
  --steadyMinutes <n>  steady phase: minutes of sustained load (default ${DEFAULT_STEADY_MINUTES}; the issue's full run is 60; --quick: 0.5)
  --retainedRows <n>   retained phase: finished rows seeded for the large side (default ${DEFAULT_RETAINED_ROWS.toLocaleString("en-US")}; --quick: 20,000)
  --identityLimit <n>  identity phase: jobs per claim-next and complete (default 10; a Worker of concurrency 50 claims up to 50)
  --flowRows <n>       flow phase: queue B's due jobs beside queue A's 1,000 (default ${DEFAULT_FLOW_ROWS.toLocaleString("en-US")}; --quick: 20,000)
  --flowGroupRows <n>  flow phase: due jobs of the group at its limit (default ${DEFAULT_FLOW_GROUP_ROWS.toLocaleString("en-US")}; --quick: 10,000)
  --flowBaseline <rev> flow phase: the git revision whose pb-fleet (hooks bundle and migrations) is the common path's baseline
                       (default: ${DEFAULT_FLOW_BASELINE_REV}, main before flow control); skipped with a note when git or the revision is missing
  --hotPathJobs <n>    hot-path phase: jobs a run, both parts (default ${DEFAULT_HOT_PATH_JOBS.toLocaleString("en-US")}; --quick: 3,000); e.g. 3000 for a short run
  --hotPathBaseline <rev> hot-path phase: the git revision whose pb-fleet (hooks bundle, migrations and src/client) is the baseline
                       (default: ${DEFAULT_HOT_PATH_BASELINE_REV}, main before the hot-path work); skipped with a note when git or the revision is missing
  --verbose          also show PocketBase's own log lines
Environment: PB_VERSION (default ${DEFAULT_PB_VERSION}: the version of every other phase), POCKETBASE_BIN (use this binary for them),
BENCH_BATCHED (JSON merged into the batched phase's shape, e.g. '{"jobs":5000,"processes":2,"workersPerProcess":4}'),
CI=true (on PocketBase 0.22 the reference baseline must run).`;

/** How much of each phase a run does. Every loop is bounded by count and by time. */
const CONFIGS = {
  full: {
    warmup: { requests: 400 },
    contention: { workers: [20, 50, 200], rounds: 40 },
    endpoints: { workers: [8, 50], reps: 8, durationMs: 600, maxOps: 2000 },
    lifecycle: { workers: [1, 8, 32, 128], reps: 5, durationMs: 1500, maxJobs: 3000 },
    claimNext: { workers: 32, reps: 4, durationMs: 1500, maxJobs: 4000 },
    hooksPool: { sizes: [10, 25, 100], workers: [50, 200], rounds: 20, reps: 4, durationMs: 1500, maxJobs: 3000 },
    lines: { hooksPool: 100, contention: { workers: 50, rounds: 10 }, endpoints: { workers: [8], reps: 6, durationMs: 800, maxOps: 2000 }, lifecycle: { workers: [8, 32], reps: 5, durationMs: 1500, maxJobs: 3000 } },
    enqueue: { jobs: 1000, reps: 8, recordConcurrency: 8, priorities: [-2, 2], futureFraction: 0.2 },
    // seqCalls: calls per sequential (W=1) cell; durationMs/maxOps bound a W>1 cell. Each cell's claims are put back to pending after it.
    claimNext100k: { rows: 100000, reps: 5, limits: [1, 10], workers: [1, 8], seqCalls: 100, durationMs: 800, maxOps: 300, priorities: [-2, 2], futureFraction: 0.2 },
    // Issue 13: 8 Workers of concurrency 50, each in a Node process of its own, against the per-job lifecycle of the same
    // shape (its pool fits its 400 requests in flight; fewer jobs: it is slow) and at 1 loop per worker (lowConcurrency).
    batched: {
      jobs: 20000, unbatchedJobs: 4000, reps: 3, warmupJobs: 2000, processes: 8, workersPerProcess: 1, concurrency: 50, lowConcurrency: 1,
      leaseSeconds: 30, hooksPool: { batched: 100, unbatched: 400 }, timeoutMs: 300_000,
    },
    // Issue 18. steady: a sample a minute, the rule judged from the 5th; the fleet well above the rate (batched reaches ~2,000 jobs/s).
    steady: {
      minutes: DEFAULT_STEADY_MINUTES, sampleSeconds: 60, settleSamples: 5, growthLimit: 0.1, rate: 500, processes: 2, workersPerProcess: 2, concurrency: 50,
      leaseSeconds: 30, keepDone: "2m", probeHz: 2, hooksPool: 100,
    },
    // retained: `calls` sequential calls per cell, fewer (at least minCalls) when a cell passes cellMs; chunk: rows per INSERT statement.
    retained: { small: 1000, rows: DEFAULT_RETAINED_ROWS, chunk: 200_000, backlog: 2000, reps: 5, calls: 40, minCalls: 5, cellMs: 8000, limit: 10, hooksPool: 100, ratioLimit: 1.5 },
    prune: { rows: 200_000, events: 100_000, chunk: 50_000, workers: 8, baselineSeconds: 20, capSeconds: 300, backlog: 60_000, seedMarginSeconds: 90, hooksPool: 100 },
    // Issue 19: per round and W, the admin and the worker token back to back (the order rotating by round); a cell ends at durationMs or maxJobs.
    // Many short rounds rather than a few long ones: a pair of cells half a second apart sees nearly the same load from the rest of the machine.
    // control: a third cell per round with the admin token again (an A/A test: the design's noise floor, shown beside the ratios).
    // tokenRounds: then GET /api/health with each token (and none), W=tokenWorkers, tokenMs a cell: PocketBase's own price of each token (context).
    identity: { workers: [8, 1], rounds: 40, durationMs: 500, maxJobs: 1200, limit: 10, warmupLoops: 40, leaseSeconds: 300, hooksPool: 25, ratioLimit: 1.05, control: true,
      tokenRounds: 10, tokenWorkers: 4, tokenMs: 300 },
    // docs/flow-control.md's figures (scripts/bench/flow.mjs). reps: rotating repetitions of isolation and group (calls: sequential
    // claim-next calls a cell); common: its own reps of `loops` claim-next (limit) + complete loops. chunk: rows per seeding INSERT.
    flow: {
      reps: 7, warmupCalls: 5, leaseSeconds: 3600, chunk: 200_000, hooksPool: 25,
      isolation: { aJobs: 1000, bJobs: DEFAULT_FLOW_ROWS, limit: 10, calls: 40 },
      group: { gJobs: DEFAULT_FLOW_GROUP_ROWS, otherJobs: 1000, otherGroups: 50, concurrency: 1, limit: 10, calls: 40 },
      common: { rows: 10_000, limit: 100, loops: 20, reps: 15 },
    },
    // Issue 21 (scripts/bench/hot-path.mjs): the current bundle (and client) against --hotPathBaseline's, reps alternating.
    // server: `loops` loops of claim-next (limit) + complete in this process; worker: batched-fleet.mjs children in "worker" mode;
    // held: one loop of claim-next (limit) and no completes until `jobs` are held.
    hotPath: {
      reps: 3, warmupJobs: 2000, leaseSeconds: 30, hooksPool: 100, timeoutMs: 300_000,
      server: { jobs: DEFAULT_HOT_PATH_JOBS, loops: 8, limit: 100 },
      worker: { jobs: DEFAULT_HOT_PATH_JOBS, processes: 8, workersPerProcess: 1, concurrency: 50 },
      // Leases that outlast the run: every held job stays live.
      held: { jobs: 20_000, limit: 100, leaseSeconds: 3600 },
    },
  },
  quick: {
    warmup: { requests: 100 },
    contention: { workers: [20, 50], rounds: 5 },
    endpoints: { workers: [8], reps: 2, durationMs: 300, maxOps: 600 },
    lifecycle: { workers: [8, 32], reps: 1, durationMs: 400, maxJobs: 600 },
    claimNext: { workers: 32, reps: 1, durationMs: 400, maxJobs: 600 },
    hooksPool: { sizes: [10, 25], workers: [50], rounds: 3, reps: 1, durationMs: 400, maxJobs: 600 },
    lines: { hooksPool: 100, contention: { workers: 20, rounds: 3 }, endpoints: { workers: [8], reps: 1, durationMs: 300, maxOps: 600 }, lifecycle: { workers: [8], reps: 1, durationMs: 400, maxJobs: 600 } },
    enqueue: { jobs: 1000, reps: 3, recordConcurrency: 8, priorities: [-2, 2], futureFraction: 0.2 },
    claimNext100k: { rows: 10000, reps: 3, limits: [1, 10], workers: [1, 8], seqCalls: 20, durationMs: 300, maxOps: 100, priorities: [-2, 2], futureFraction: 0.2 },
    batched: {
      jobs: 2000, unbatchedJobs: 1000, reps: 3, warmupJobs: 500, processes: 8, workersPerProcess: 1, concurrency: 50, lowConcurrency: 1,
      leaseSeconds: 30, hooksPool: { batched: 100, unbatched: 400 }, timeoutMs: 120_000,
    },
    steady: {
      minutes: 0.5, sampleSeconds: 5, settleSamples: 2, growthLimit: 0.1, rate: 100, processes: 1, workersPerProcess: 1, concurrency: 20,
      leaseSeconds: 30, keepDone: "2m", probeHz: 2, hooksPool: 100,
    },
    retained: { small: 1000, rows: 20_000, chunk: 10_000, backlog: 500, reps: 2, calls: 10, minCalls: 3, cellMs: 2000, limit: 10, hooksPool: 100, ratioLimit: 1.5 },
    prune: { rows: 5000, events: 2000, chunk: 5000, workers: 4, baselineSeconds: 3, capSeconds: 30, backlog: 3000, seedMarginSeconds: 10, hooksPool: 100 },
    identity: { workers: [8, 1], rounds: 4, durationMs: 300, maxJobs: 400, limit: 10, warmupLoops: 10, leaseSeconds: 300, hooksPool: 25, ratioLimit: 1.05, control: true,
      tokenRounds: 3, tokenWorkers: 4, tokenMs: 200 },
    flow: {
      reps: 3, warmupCalls: 3, leaseSeconds: 3600, chunk: 50_000, hooksPool: 25,
      isolation: { aJobs: 1000, bJobs: 20_000, limit: 10, calls: 15 },
      group: { gJobs: 10_000, otherJobs: 1000, otherGroups: 50, concurrency: 1, limit: 10, calls: 15 },
      common: { rows: 3000, limit: 100, loops: 10, reps: 5 },
    },
    hotPath: {
      reps: 3, warmupJobs: 500, leaseSeconds: 30, hooksPool: 100, timeoutMs: 120_000,
      server: { jobs: 3000, loops: 8, limit: 100 },
      worker: { jobs: 3000, processes: 8, workersPerProcess: 1, concurrency: 50 },
      held: { jobs: 3000, limit: 100, leaseSeconds: 3600 },
    },
  },
};

function parseCli(argv) {
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        quick: { type: "boolean", default: false },
        versions: { type: "string" },
        phases: { type: "string" },
        baseline: { type: "string", default: DEFAULT_BASELINE_REV },
        json: { type: "string" },
        latest: { type: "string" },
        verbose: { type: "boolean", default: false },
        profile: { type: "boolean", default: false },
        steadyMinutes: { type: "string" },
        retainedRows: { type: "string" },
        identityLimit: { type: "string" },
        flowRows: { type: "string" },
        flowGroupRows: { type: "string" },
        flowBaseline: { type: "string" },
        hotPathJobs: { type: "string" },
        hotPathBaseline: { type: "string" },
        help: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    for (const name of ["json", "latest", "baseline", "flowBaseline", "hotPathBaseline"]) {
      if (values[name] !== undefined && values[name].trim() === "") throw new Error(`--${name} needs ${name === "baseline" || name === "flowBaseline" || name === "hotPathBaseline" ? "a git revision" : "a file path"}`);
    }
    if (values.steadyMinutes !== undefined) values.steadyMinutes = positiveNumber("--steadyMinutes", values.steadyMinutes, { integer: false, min: 0.1, max: 1440 });
    if (values.identityLimit !== undefined) values.identityLimit = positiveNumber("--identityLimit", values.identityLimit, { integer: true, min: 1, max: 100 });
    if (values.retainedRows !== undefined) values.retainedRows = positiveNumber("--retainedRows", values.retainedRows, { integer: true, min: 1001, max: 100_000_000 });
    if (values.flowRows !== undefined) values.flowRows = positiveNumber("--flowRows", values.flowRows, { integer: true, min: 1, max: 100_000_000 });
    if (values.flowGroupRows !== undefined) values.flowGroupRows = positiveNumber("--flowGroupRows", values.flowGroupRows, { integer: true, min: 1, max: 100_000_000 });
    if (values.hotPathJobs !== undefined) values.hotPathJobs = positiveNumber("--hotPathJobs", values.hotPathJobs, { integer: true, min: 100, max: 10_000_000 });
    if (values.versions !== undefined) values.versions = parseVersions(values.versions);
    if (values.phases !== undefined) values.phases = parsePhases(values.phases);
    return values;
  } catch (err) {
    console.error(`bench: ${err.message.split("\n")[0]}. See the usage below.\n\n${USAGE}`);
    process.exit(2);
  }
}

/** A number flag's value within [min, max] (an integer when asked), or an error naming the flag. */
function positiveNumber(flag, text, { integer, min, max }) {
  // Digits, "_" allowed between them (10_000_000), an optional decimal part.
  const n = /^\d+(_\d+)*(\.\d+)?$/.test(text.trim()) ? Number(text.trim().replace(/_/g, "")) : NaN;
  if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    throw new Error(`${flag} needs ${integer ? "a whole number" : "a number"} from ${min.toLocaleString("en-US")} to ${max.toLocaleString("en-US")}, got ${JSON.stringify(text)}`);
  }
  return n;
}

/** "enqueue,claim-next-100k" -> the phases in run order; an unknown phase is refused. */
function parsePhases(text) {
  const parts = text.split(",").map((p) => p.trim()).filter((p) => p !== "");
  if (parts.length === 0) throw new Error(`--phases needs a comma-separated list of phases from ${PHASES.join(", ")}`);
  const unknown = parts.find((p) => !PHASES.includes(p));
  if (unknown) throw new Error(`--phases: unknown phase ${JSON.stringify(unknown)} (phases: ${PHASES.join(", ")})`);
  return PHASES.filter((p) => parts.includes(p));
}

/** "0.22.21,v0.40.4" -> ["0.22.21", "0.40.4"]; an unsupported or repeated version is refused. */
function parseVersions(text) {
  const parts = text.split(",").map((v) => v.trim());
  if (parts.some((v) => v === "")) throw new Error(`--versions needs a comma-separated list of versions such as ${DEFAULT_LINE_VERSIONS.join(",")}, got ${JSON.stringify(text)}`);
  const versions = parts.map((v) => {
    try {
      return normalizePbVersion(v, "--versions entry");
    } catch (err) {
      if (err instanceof UnsupportedPocketBaseVersion) throw new Error(err.message.replace(/\.$/, ""));
      throw err;
    }
  });
  const repeated = versions.find((v, i) => versions.indexOf(v) !== i);
  if (repeated) throw new Error(`--versions names ${repeated} twice`);
  return versions;
}

function machine(pbVersion) {
  let cpuModel = os.cpus()[0]?.model?.trim() || "unknown CPU";
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
    if (m) cpuModel = m[1].trim();
  } catch {
    // not Linux: os.cpus() said it
  }
  const cores = typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length;
  return { cpuModel, cores, node: process.version, pbVersion, platform: `${os.platform()} ${os.release()}`, date: new Date().toISOString() };
}

async function main() {
  const cli = parseCli(process.argv.slice(2));
  if (cli.help) {
    console.log(USAGE);
    return 0;
  }
  const mode = cli.quick ? "quick" : "full";
  const config = CONFIGS[mode];
  const phases = cli.phases ?? (cli.quick ? QUICK_PHASES : PHASES);
  const want = (phase) => phases.includes(phase);
  const partial = phases.length !== PHASES.length && !(cli.quick && cli.phases === undefined);
  const t0 = performance.now();
  const log = (m) => console.error(`[bench ${((performance.now() - t0) / 1000).toFixed(1)}s] ${m}`);
  const failures = [];

  // Which of the shared servers the chosen phases use (the queue phases start their own).
  const needsFleet = ["contention", "endpoints", "lifecycle", "claim-next", "hooks-pool"].some(want);
  const needsReference = ["contention", "endpoints", "lifecycle"].some(want);

  const binary = await ensurePocketBase({ log });
  // The binary's own line (POCKETBASE_BIN may differ from PB_VERSION) picks the bundle and migrations.
  const layout = lineLayout(binary.line);
  const hookFiles = await benchedHookFiles(layout, log);
  if (hookFiles === null) return 1;

  let reference = { path: relative(REPO, REFERENCE_HOOKS), skipped: null };
  if (!needsReference) {
    reference = { path: null, skipped: `not used by the phases run (${phases.join(", ")}).` };
  } else if (binary.line !== "0.22") {
    // A true limitation: the reference is written against 0.22's JS API and does not load on 0.23+.
    reference = { path: null, skipped: `the reference hooks are written for PocketBase 0.22's JS API and cannot run on ${binary.version}; the pb-fleet/reference ratios are measured on 0.22.x only.` };
    log(`note: ${reference.skipped}`);
  } else if (!existsSync(REFERENCE_HOOKS)) {
    if (process.env.CI === "true") {
      console.error(`bench: the reference hooks ${REFERENCE_HOOKS} are missing and CI=true, where the reference baseline must run. Provide ../shared/reference/ next to the repository.`);
      return 1;
    }
    reference = { path: null, skipped: `${REFERENCE_HOOKS} is absent (a clone without ../shared); the pb-fleet/reference ratios are not measured.` };
    log(`note: ${reference.skipped}`);
  }
  const lineVersions = cli.versions ?? (cli.quick ? [binary.version] : DEFAULT_LINE_VERSIONS);
  let binaryVersionText = null;
  try {
    binaryVersionText = execFileSync(binary.path, ["--version"], { encoding: "utf8", timeout: 10_000 }).trim();
  } catch {
    // informational only
  }
  const mach = machine(binary.version);
  log(`machine: ${machineLine(mach)}; binary ${binary.path} (${binary.source}${binaryVersionText ? `, says "${binaryVersionText}"` : ""})`);
  if (partial) log(`phases: ${phases.join(", ")}`);

  const tmpRoot = await mkdtemp(join(os.tmpdir(), "pb-fleet-bench-"));
  const started = [];
  /** Servers a phase stopped before the end of the run, with their peak memory. */
  const retired = [];
  const servers = {};
  const client = createBenchClient({ maxSockets: 512 });
  let rss = null;
  const stopAll = async () => {
    await Promise.allSettled(started.map((s) => s.pb.stop()));
    started.length = 0;
  };
  const onSignal = (signal) => {
    console.error(`bench: ${signal}, stopping the PocketBase servers`);
    stopAll().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    const fleetHooksDir = await writeHooksDir(join(tmpRoot, "hooks-fleet"), hookFiles, binary.line);
    const specs = [];
    if (needsFleet) specs.push({ name: "pb-fleet", hooksDir: fleetHooksDir, hooksPool: 25 });
    if (needsReference && !reference.skipped) {
      specs.push({ name: "reference", hooksDir: await writeHooksDir(join(tmpRoot, "hooks-reference"), [REFERENCE_HOOKS], "0.22"), hooksPool: 25 });
    }
    if (want("hooks-pool")) for (const size of config.hooksPool.sizes) if (size !== 25) specs.push({ name: `pb-fleet-pool${size}`, hooksDir: fleetHooksDir, hooksPool: size });

    if (specs.length) log(`starting ${specs.length} PocketBase servers: ${specs.map((s) => s.name).join(", ")}`);
    await Promise.all(
      specs.map(async (spec) => {
        const pb = await startPocketBase({
          binary: binary.path,
          line: binary.line,
          dataDir: join(tmpRoot, `data-${spec.name}`),
          hooksDir: spec.hooksDir,
          migrationsDir: layout.migrationsDir,
          hooksPool: spec.hooksPool,
          adminEmail: "bench@example.com",
          adminPassword: "bench-password-1234",
          log: cli.verbose ? (m) => console.error(`[${spec.name}] ${m}`) : () => {},
        });
        const server = { name: spec.name, hooksPool: spec.hooksPool, pb, hasMinClaim: true };
        server.pending = createJobPool(client, pb, "pending");
        server.held = createJobPool(client, pb, "claimed");
        started.push(server);
        servers[spec.name] = server;
      }),
    );
    rss = createRssSampler(() => started.map((s) => ({ name: s.name, pid: s.pb.pid })), 100);
    const ctx = { client, config, log };
    const fleet = servers["pb-fleet"] ?? null;
    const ref = servers.reference ?? null;

    if (started.length) {
      rss.enter("warmup");
      log("warm-up");
      for (const s of started) await warmUp(ctx, s);
    }

    let contention = null;
    let contentionRows = [];
    if (want("contention")) {
      rss.enter("contention");
      log(`contention: W=${config.contention.workers.join(",")}, ${config.contention.rounds} rounds each`);
      const contentionVariants = [{ key: "pb-fleet claim", server: fleet, kind: "claim" }];
      if (ref) contentionVariants.push({ key: "reference claim", server: ref, kind: "claim" });
      contentionVariants.push({ key: "pb-fleet patch", server: fleet, kind: "patch" });
      contentionRows = await runContention(ctx, contentionVariants, config.contention.workers, config.contention.rounds);
      const contentionRatios = [];
      for (const w of config.contention.workers) {
        contentionRatios.push({ name: "pb-fleet claim / PATCH (same row)", workers: w, ratio: contentionRatio(contentionRows, "pb-fleet claim", "pb-fleet patch", w) });
        if (ref) contentionRatios.push({ name: "pb-fleet / reference claim", workers: w, ratio: contentionRatio(contentionRows, "pb-fleet claim", "reference claim", w) });
      }
      contention = { rows: contentionRows, ratios: contentionRatios };
    }

    let endpoints = null;
    let endpointRows = [];
    if (want("endpoints")) {
      rss.enter("endpoints");
      log(`single endpoints: W=${config.endpoints.workers.join(",")}, ${config.endpoints.reps} reps of ${config.endpoints.durationMs} ms`);
      const endpointVariants = [];
      for (const endpoint of ["claim", "renew", "release"]) {
        endpointVariants.push({ key: `pb-fleet ${endpoint}`, server: fleet, endpoint });
        if (ref) endpointVariants.push({ key: `reference ${endpoint}`, server: ref, endpoint });
      }
      endpointVariants.push({ key: "pb-fleet patch", server: fleet, endpoint: "patch" });
      endpointVariants.push({ key: "pb-fleet min-claim", server: fleet, endpoint: "min-claim" });
      endpointVariants.push({ key: "pb-fleet noop", server: fleet, endpoint: "noop" });
      if (ref) endpointVariants.push({ key: "reference noop", server: ref, endpoint: "noop" });
      endpointRows = await runEndpoints(ctx, endpointVariants, config.endpoints.workers);
      const endpointRatios = [];
      for (const w of config.endpoints.workers) {
        const add = (name, a, b) => endpointRatios.push({ name, workers: w, ratio: endpointRatio(endpointRows, a, b, w) });
        add("pb-fleet claim / PATCH", "pb-fleet claim", "pb-fleet patch");
        if (ref) {
          for (const e of ["claim", "renew", "release"]) add(`pb-fleet / reference ${e}`, `pb-fleet ${e}`, `reference ${e}`);
          add("noop pb-fleet server / reference server (control)", "pb-fleet noop", "reference noop");
        }
        add("pb-fleet claim / min-claim (cost of the protocol logic)", "pb-fleet claim", "pb-fleet min-claim");
        add("pb-fleet claim / noop (cost of tx + save + logic)", "pb-fleet claim", "pb-fleet noop");
      }
      endpoints = { rows: endpointRows, ratios: endpointRatios };
    }

    let lifecycle = null;
    let lifecycleRows = [];
    if (want("lifecycle")) {
      rss.enter("lifecycle");
      const lc = config.lifecycle;
      log(`lifecycle: W=${lc.workers.join(",")}, ${lc.reps} reps of ${lc.durationMs} ms`);
      const lifecycleVariants = [{ key: "pb-fleet", server: fleet }];
      if (ref) lifecycleVariants.push({ key: "reference", server: ref });
      lifecycleRows = await runLifecycle(ctx, lifecycleVariants, lc.workers, lc);
      const lifecycleRatios = ref ? lc.workers.map((w) => ({ name: "pb-fleet / reference jobs/s", workers: w, ratio: lifecycleRatio(lifecycleRows, "pb-fleet", "reference", w) })) : [];
      lifecycle = { rows: lifecycleRows, ratios: lifecycleRatios };
    }

    let claimNext = null;
    if (want("claim-next")) {
      rss.enter("claim-next");
      const cn = config.claimNext;
      log(`claim-next vs list-then-claim: W=${cn.workers}, ${cn.reps} reps of ${cn.durationMs} ms`);
      claimNext = await runClaimNextVsList(ctx, fleet, cn);
    }

    const hp = config.hooksPool;
    let hooksPool = null;
    let poolContention = [];
    let poolLifecycle = [];
    let poolVariants = [];
    if (want("hooks-pool")) {
      rss.enter("hooks-pool");
      log(`hooksPool ${hp.sizes.join(",")} at W=${hp.workers.join(",")}`);
      const poolServer = (size) => (size === 25 ? fleet : servers[`pb-fleet-pool${size}`]);
      poolVariants = hp.sizes.map((size) => ({ key: `pool ${size}`, server: poolServer(size), kind: "claim", size }));
      poolContention = await runContention(ctx, poolVariants, hp.workers, hp.rounds);
      poolLifecycle = await runLifecycle(ctx, poolVariants, hp.workers, hp);
    }

    let versions = { summary: null, failures: [] };
    if (want("versions")) {
      rss.enter("versions");
      versions = await runVersions(ctx, {
        versions: lineVersions,
        // The primary binary serves its own version (it may be POCKETBASE_BIN); the rest are got by version.
        reuse: { version: binary.version, binary },
        tmpRoot,
        started,
        verbose: cli.verbose,
      });
    }

    // The queue phases start their own servers and stop them when done.
    const queueEnv = {
      repo: REPO,
      binary,
      layout,
      hookFiles,
      migrationsDir: layout.migrationsDir,
      tmpRoot,
      started,
      verbose: cli.verbose,
      baselineRev: cli.baseline,
      retire: async (server) => {
        const i = started.indexOf(server);
        if (i === -1) return;
        const peak = server.pb.peakRssBytes();
        await server.pb.stop();
        started.splice(i, 1);
        retired.push({ name: server.name, hooksPool: server.hooksPool, peakHwmBytes: peak });
      },
    };
    let enqueue = null;
    if (want("enqueue")) {
      rss.enter("enqueue");
      const eq = config.enqueue;
      log(`enqueue: ${eq.jobs} jobs per call vs the record API at concurrency ${eq.recordConcurrency}, ${eq.reps} reps`);
      enqueue = await runEnqueuePhase(ctx, queueEnv, eq);
    }
    let claimNext100k = null;
    if (want("claim-next-100k")) {
      rss.enter("claim-next-100k");
      const c = config.claimNext100k;
      log(`claim-next-100k: ${c.rows.toLocaleString("en-US")} pending rows, baseline ${cli.baseline}`);
      claimNext100k = await runClaimNext100kPhase(ctx, queueEnv, c);
    }
    let batched = null;
    if (want("batched")) {
      rss.enter("batched");
      const b = { ...config.batched, ...(process.env.BENCH_BATCHED ? JSON.parse(process.env.BENCH_BATCHED) : {}) };
      config.batched = b;
      const profileSeconds = cli.quick ? QUICK_PROFILE_SECONDS : PROFILE_SECONDS;
      log(`batched: ${b.jobs.toLocaleString("en-US")} jobs, ${b.reps} reps, batched vs unbatched alternating${cli.profile ? `, then a ${profileSeconds} s CPU profile` : ""}`);
      const profile = cli.profile ? { seconds: profileSeconds, version: process.env.PB_PROFILE_VERSION || binary.version, outDir: join(cacheRoot(), "profiles") } : null;
      batched = await runBatchedPhase(ctx, queueEnv, b, profile);
    }

    let hotPath = null;
    if (want("hot-path")) {
      rss.enter("hot-path");
      const hp = hotPathShape(config.hotPath, cli);
      config.hotPath = hp;
      log(`hot-path: current vs ${hp.baselineRev}: ${hp.server.loops} loops of claim-next ${hp.server.limit} + complete, then ${hp.worker.processes * hp.worker.workersPerProcess} Workers x ${hp.worker.concurrency}; ${hp.server.jobs.toLocaleString("en-US")} jobs a run, ${hp.reps} reps`);
      hotPath = await runHotPathPhase(ctx, queueEnv, hp);
    }

    let identity = null;
    if (want("identity")) {
      rss.enter("identity");
      const id = { ...config.identity, ...(cli.identityLimit !== undefined ? { limit: cli.identityLimit } : {}) };
      log(`identity: PocketBase ${lineVersions.join(", ")}, claim-next (limit ${id.limit}) + complete at W=${id.workers.join(",")}, worker token vs admin token, ${id.rounds} rounds`);
      identity = await runIdentityPhase(ctx, queueEnv, id, lineVersions);
    }

    let steady = null;
    if (want("steady")) {
      rss.enter("steady");
      const st = { ...config.steady, ...(cli.steadyMinutes !== undefined ? { minutes: cli.steadyMinutes } : {}) };
      config.steady = st;
      log(`steady: ${st.minutes} min at ${st.rate} jobs/s, ${st.processes * st.workersPerProcess} Workers x ${st.concurrency}, PB_FLEET_KEEP_DONE=${st.keepDone}, a sample every ${st.sampleSeconds} s`);
      steady = await runSteadyPhase(ctx, queueEnv, st);
    }
    let retained = null;
    if (want("retained")) {
      rss.enter("retained");
      const rt = { ...config.retained, ...(cli.retainedRows !== undefined ? { rows: cli.retainedRows } : {}) };
      config.retained = rt;
      log(`retained: ${rt.small.toLocaleString("en-US")} vs ${rt.rows.toLocaleString("en-US")} finished rows`);
      retained = await runRetainedPhase(ctx, queueEnv, rt);
    }
    let prune = null;
    if (want("prune")) {
      rss.enter("prune");
      const pr = config.prune;
      log(`prune: ${pr.rows.toLocaleString("en-US")} expired done rows and ${pr.events.toLocaleString("en-US")} old events under claim-next + complete at W=${pr.workers}`);
      prune = await runPrunePhase(ctx, queueEnv, pr);
    }

    let flow = null;
    if (want("flow")) {
      rss.enter("flow");
      const fl = flowShape(config.flow, cli);
      config.flow = fl;
      log(`flow: queue isolation (${fl.isolation.bJobs.toLocaleString("en-US")} jobs in B), a group at its limit (${fl.group.gJobs.toLocaleString("en-US")} jobs of G), the common path vs ${fl.baselineRev}; ${fl.reps} reps (common: ${fl.common.reps})`);
      flow = await runFlowPhase(ctx, queueEnv, fl);
    }

    rss.enter("done");
    const rssByPhase = rss.report();
    if (want("hooks-pool")) {
      const poolRows = [];
      for (const w of hp.workers) {
        for (const v of poolVariants) {
          const c = poolContention.find((r) => r.variant === v.key && r.workers === w);
          const l = poolLifecycle.find((r) => r.variant === v.key && r.workers === w);
          poolRows.push({
            hooksPool: v.size,
            server: v.server.name,
            workers: w,
            contentionPerSec: c.requestsPerSec,
            contentionCpuMicros: c.cpuMicrosPerRequest,
            contentionP99: c.latencyMs.p99,
            badRounds: c.badRounds,
            contentionErrors: c.errorCount,
            jobsPerSec: l.jobsPerSec,
            lifecycleCpuMicros: l.cpuMicrosPerJob,
            lifecycleClaimP99: l.latencyMs.claim.p99,
            lifecycleFailures: l.failureCount,
            maxRssBytes: rssByPhase["hooks-pool"]?.[v.server.name] ?? null,
          });
        }
      }
      hooksPool = { rows: poolRows, recommendation: recommendPool(poolRows, hp) };
    }

    // Collected before the servers stop: VmHWM of the whole life of each process.
    const peakHwmBytes = {
      ...Object.fromEntries(retired.map((s) => [s.name, s.peakHwmBytes])),
      ...Object.fromEntries(started.map((s) => [s.name, s.pb.peakRssBytes()])),
    };
    rss.stop();

    // ---- correctness: these make the run fail
    for (const r of [...contentionRows, ...poolContention]) {
      if (r.badRounds) failures.push(`${r.variant} (${r.server}) W=${r.workers}: ${r.badRounds} of ${r.rounds} rounds did not have exactly one winner (winners:rounds ${JSON.stringify(r.winnersHistogram)})`);
      if (r.errorCount) failures.push(`${r.variant} (${r.server}) W=${r.workers}: ${r.errorCount} contention requests failed, e.g. ${r.errorSamples[0]}`);
    }
    for (const r of endpointRows) if (r.failureCount) failures.push(`${r.variant} W=${r.workers}: ${r.failureCount} unexpected answers, e.g. ${r.failureSamples[0]}`);
    for (const r of claimNext?.rows ?? []) if (r.failureCount) failures.push(`${r.variant} W=${r.workers}: ${r.failureCount} failed acquisitions, e.g. ${r.failureSamples[0]}`);
    for (const r of [...lifecycleRows, ...poolLifecycle]) if (r.failureCount) failures.push(`lifecycle ${r.variant} (${r.server}) W=${r.workers}: ${r.failureCount} failed jobs, e.g. ${r.failureSamples[0]}`);
    failures.push(...versions.failures);
    for (const r of enqueue?.rows ?? []) if (r.failureCount) failures.push(`enqueue phase, ${r.variant}: ${r.failureCount} unexpected answers, e.g. ${r.failureSamples[0]}`);
    failures.push(...(batched?.failures ?? []));
    for (const r of [steady, retained, prune, identity, flow, hotPath]) failures.push(...(r?.failures ?? []));
    for (const r of claimNext100k?.results ?? []) {
      if (r.failureCount) failures.push(`claim-next-100k ${r.variant} limit=${r.limit} W=${r.workers}${r.prefix ? " prefix" : ""}: ${r.failureCount} unexpected answers, e.g. ${r.failureSamples[0]}`);
    }

    const run = {
      schema: "pb-fleet-bench/1",
      mode,
      command: `node scripts/bench.mjs ${process.argv.slice(2).join(" ")}`.trim(),
      machine: mach,
      binary: { ...binary, versionText: binaryVersionText },
      config,
      reference,
      hooks: hookFiles.map((f) => ({ file: relative(REPO, f), sha256: createHash("sha256").update(readFileSync(f)).digest("hex"), builtAt: statSync(f).mtime.toISOString() })),
      servers: [...retired, ...started].map((s) => ({ name: s.name, hooksPool: s.hooksPool })),
      // A phase left out by --phases is null.
      contention,
      endpoints,
      lifecycle,
      claimNext,
      hooksPool,
      versions: versions.summary,
      memory: { maxRssByPhase: rssByPhase, peakHwmBytes, sampleIntervalMs: 100 },
      targets: [],
      failures,
      ok: failures.length === 0,
      durationSec: null,
    };
    // The queue phases' keys are there when they ran (--quick leaves them out by default).
    if (want("enqueue") || want("claim-next-100k")) {
      run.phases = phases;
      run.enqueue = enqueue;
      run.claimNext100k = claimNext100k;
    } else if (partial) {
      run.phases = phases;
    }
    if (want("batched")) {
      run.phases = phases;
      run.batched = batched;
    }
    if (want("identity")) {
      run.phases = phases;
      run.identity = identity;
    }
    if (RETENTION_PHASES.some(want)) {
      run.phases = phases;
      run.steady = steady;
      run.retained = retained;
      run.prune = prune;
    }
    if (want("flow")) {
      run.phases = phases;
      run.flow = flow;
    }
    if (want("hot-path")) {
      run.phases = phases;
      run.hotPath = hotPath;
    }
    run.targets = evaluateTargets(run);
    run.durationSec = Math.round((performance.now() - t0) / 100) / 10;

    const jsonPath = resolve(cli.json ?? join(REPO, "bench", "results", `${mach.date.replace(/[:.]/g, "-")}-${mode}${partial ? "-partial" : ""}.json`));
    await mkdir(dirname(jsonPath), { recursive: true });
    await writeFile(jsonPath, `${JSON.stringify(run, null, 2)}\n`);
    const report = withIdentitySection(renderReport(run), run.identity);
    console.log(report);
    console.log(`JSON: ${relative(process.cwd(), jsonPath) || jsonPath}`);
    const latestPath = cli.latest ?? (mode === "full" && !partial ? join(REPO, "bench", "LATEST.md") : null);
    if (latestPath) {
      await writeFile(resolve(latestPath), `<!-- Written by \`npm run bench\` (scripts/bench.mjs); do not edit by hand. -->\n${report}`);
      console.log(`Summary: ${relative(process.cwd(), resolve(latestPath))}`);
    }
    if (failures.length) {
      console.error(`\n!!! BENCH FAILED: ${failures.length} correctness failure(s):\n${failures.map((f) => `!!! ${f}`).join("\n")}`);
      return 1;
    }
    log(`done in ${run.durationSec} s`);
    return 0;
  } finally {
    rss?.stop();
    client.close();
    await stopAll();
    await rm(tmpRoot, { recursive: true, force: true });
  }
}

/** The smallest pool whose throughput stays within 5% of the best pool at every W measured. */
function recommendPool(rows, hp) {
  const score = new Map(hp.sizes.map((s) => [s, []]));
  const bites = [];
  for (const w of hp.workers) {
    const atW = rows.filter((r) => r.workers === w);
    const bestJobs = Math.max(...atW.map((r) => r.jobsPerSec ?? 0));
    const bestClaims = Math.max(...atW.map((r) => r.contentionPerSec ?? 0));
    for (const r of atW) {
      const rel = Math.min((r.jobsPerSec ?? 0) / bestJobs, (r.contentionPerSec ?? 0) / bestClaims);
      score.get(r.hooksPool).push(rel);
      if (rel < 0.95) bites.push(`pool ${r.hooksPool} at W=${w} reaches ${(100 * rel).toFixed(0)}% of the best`);
    }
  }
  const ok = hp.sizes.filter((s) => score.get(s).every((x) => x >= 0.95));
  const pick = ok.length ? Math.min(...ok) : null;
  const where = bites.length ? `Where a small pool bites: ${bites.join("; ")}.` : "No pool size fell more than 5% behind the best at the W measured.";
  return pick === null
    ? `No pool size was within 5% of the best at every W (noise?). ${where}`
    : `Recommendation: --hooksPool ${pick} (the smallest pool within 5% of the best throughput at W=${hp.workers.join(" and ")}; PocketBase's default is 25). ${where}`;
}

const fmtNum = (v) => (typeof v === "number" ? v.toFixed(1) : "n/a");

/** The CPU-per-request view of a ratio, shown beside the throughput ratio the target is judged on. */
const cpuNote = (r) => (typeof r?.cpu === "number" ? ` (CPU/req: ${r.cpu.toFixed(2)}x)` : "");

/** PASS/MISS is judged on throughput, as the targets are stated; the CPU view is context. A phase not run adds no target. */
function evaluateTargets(run) {
  const targets = [];
  const pass = (value, ok) => (value === null || value === undefined ? null : ok);
  const contentionClaims = run.contention?.rows.filter((r) => r.kind === "claim") ?? [];
  const poolRows = run.hooksPool?.rows ?? [];
  const versionRows = run.versions?.rows ?? [];
  if (run.contention || run.hooksPool || run.versions) {
    const totalRounds =
      contentionClaims.reduce((s, r) => s + r.rounds, 0) + poolRows.length * run.config.hooksPool.rounds + versionRows.reduce((s, r) => s + r.rounds, 0);
    const bad = [...contentionClaims, ...poolRows, ...versionRows].reduce((s, r) => s + r.badRounds, 0);
    targets.push({ target: "zero multi-winner rounds (every claim contention round, every server)", measured: `${bad} of ${totalRounds} rounds`, pass: bad === 0 });
  }

  if (run.endpoints) {
    for (const w of run.config.endpoints.workers) {
      const found = run.endpoints.ratios.find((x) => x.name === "pb-fleet claim / PATCH" && x.workers === w)?.ratio;
      const r = found?.median ?? null;
      targets.push({ target: `claim >= 0.9x plain PATCH, same server (W=${w})`, measured: r === null ? "n/a" : `${r.toFixed(2)}x${cpuNote(found)}`, pass: pass(r, r >= 0.9) });
    }
    for (const e of ["claim", "renew", "release"]) {
      for (const w of run.config.endpoints.workers) {
        const found = run.endpoints.ratios.find((x) => x.name === `pb-fleet / reference ${e}` && x.workers === w)?.ratio;
        const r = found?.median ?? null;
        targets.push({ target: `pb-fleet >= 1.0x reference: ${e} (W=${w})`, measured: r === null ? (run.reference.skipped ? "skipped: no reference" : "n/a") : `${r.toFixed(2)}x${cpuNote(found)}`, pass: pass(r, r >= 1.0) });
      }
    }
  }
  if (run.lifecycle) {
    const lc32Found = run.lifecycle.ratios.find((x) => x.workers === 32)?.ratio;
    const lc32 = lc32Found?.median ?? null;
    targets.push({ target: "pb-fleet >= 1.0x reference: lifecycle (W=32)", measured: lc32 === null ? (run.reference.skipped ? "skipped: no reference" : "not measured") : `${lc32.toFixed(2)}x${cpuNote(lc32Found)}`, pass: pass(lc32, lc32 >= 1.0) });
  }

  if (run.contention) {
    const c50 = run.contention.rows.find((r) => r.variant === "pb-fleet claim" && r.workers === 50)?.latencyMs?.p99 ?? null;
    targets.push({ target: "p99 claim latency < 50 ms at W=50 (contention)", measured: c50 === null ? "not measured" : `${c50.toFixed(1)} ms`, pass: pass(c50, c50 < 50) });
  }
  if (run.lifecycle) {
    const l32 = run.lifecycle.rows.find((r) => r.variant === "pb-fleet" && r.workers === 32)?.jobsPerSec ?? null;
    targets.push({ target: "lifecycle >= 1,000 jobs/s at W=32", measured: l32 === null ? "not measured" : `${Math.round(l32)} jobs/s`, pass: pass(l32, l32 >= 1000) });
  }

  // Issue 13: the batched fleet against the per-job lifecycle of the same shape, same run.
  const bt = run.batched;
  if (bt && !bt.skipped) {
    const [b, u] = bt.rows;
    const fleet = `${bt.fleet.processes * bt.fleet.workersPerProcess} Workers x ${bt.fleet.concurrency}`;
    const r = bt.ratio?.median ?? null;
    targets.push({ target: `batched fleet >= 5,000 jobs/s (${fleet}, no-op handler, first claim to last completion)`, measured: b.jobsPerSec === null ? "n/a" : `${Math.round(b.jobsPerSec).toLocaleString("en-US")} jobs/s`, pass: pass(b.jobsPerSec, b.jobsPerSec >= 5000) });
    targets.push({ target: "batched fleet >= 10x the unbatched lifecycle (same fleet shape, same run)", measured: r === null ? "n/a" : `${r.toFixed(2)}x (${Math.round(u.jobsPerSec ?? 0).toLocaleString("en-US")} jobs/s unbatched; PB CPU/job: ${typeof bt.ratio.cpu === "number" ? bt.ratio.cpu.toFixed(2) : "n/a"}x)`, pass: pass(r, r >= 10) });
    for (const o of bt.otherRatios ?? []) {
      const row = bt.rows.find((x) => o.name.endsWith(x.variant));
      const m = o.median;
      targets.push({ target: `(context) ${o.name}: the per-job lifecycle at its own better concurrency`, measured: m === null ? "n/a" : `${m.toFixed(2)}x (${Math.round(row?.jobsPerSec ?? 0).toLocaleString("en-US")} jobs/s)`, pass: pass(m, m >= 10) });
    }
    const runs = bt.runs.length;
    const clean = bt.runs.filter((x) => x.failures.length === 0).length;
    targets.push({ target: "exactly once: every job completed once, none left behind (every run, both variants)", measured: `${clean} of ${runs} runs`, pass: clean === runs && runs > 0 });
  }

  // Issue 18.
  const st = run.steady;
  if (st && !st.skipped) {
    const v = st.verdict;
    const grew = v.metrics.map((m) => `${m.key} ${m.growth === null ? "n/a" : `${m.growth >= 0 ? "+" : ""}${(100 * m.growth).toFixed(0)}%`}`).join(", ");
    targets.push({
      target: `steady ${st.shape.minutes} min at ${st.shape.rate} jobs/s (PB_FLEET_KEEP_DONE=${st.shape.keepDone}): after sample ${st.shape.settleSamples} nothing grows > ${Math.round(100 * st.shape.growthLimit)}% (rows, events, RSS, p99 claim-next/stats/completions)`,
      measured: v.pass === null && v.metrics.length === 0 ? v.why : `worst growth over sample ${st.shape.settleSamples}: ${grew}`,
      pass: v.pass,
    });
  }
  const rt = run.retained;
  if (rt) {
    for (const r of rt.ratios) {
      const m = r.median;
      targets.push({
        target: `${r.name} per-call cost at ${rt.shape.rows.toLocaleString("en-US")} retained rows <= ${rt.shape.ratioLimit}x at ${rt.shape.small.toLocaleString("en-US")}`,
        measured: m === null ? "n/a" : `${m.toFixed(2)}x${typeof r.cpu === "number" ? ` (CPU/call: ${r.cpu.toFixed(2)}x)` : ""}`,
        pass: pass(m, m <= rt.shape.ratioLimit),
      });
    }
  }
  const pr = run.prune;
  if (pr) {
    targets.push({
      target: `(context) claim latency during a prune of ${pr.seed.rows.toLocaleString("en-US")} rows + ${pr.seed.events.toLocaleString("en-US")} events, W=${pr.shape.workers}: worst / p99 vs the same load without a prune`,
      measured: `worst ${fmtNum(pr.during.max)} vs ${fmtNum(pr.baseline.max)} ms, p99 ${fmtNum(pr.during.p99)} vs ${fmtNum(pr.baseline.p99)} ms; ${pr.gone ? `all gone in ${pr.pruneSeconds} s` : `${pr.remaining.rows.toLocaleString("en-US")} rows + ${pr.remaining.events.toLocaleString("en-US")} events left after ${pr.pruneSeconds} s`} (${pr.ticks} maintenance calls)`,
      pass: null,
    });
  }

  // Issue 19: worker token against admin token, per version and W.
  if (run.identity) targets.push(...identityTargets(run.identity));
  // docs/flow-control.md "Performance": each figure against its baseline, same run.
  if (run.flow) targets.push(...flowTargets(run.flow));
  // Issue 21: the hot path against --hotPathBaseline, same run.
  if (run.hotPath) targets.push(...hotPathTargets(run.hotPath));

  // Cost ratios (above 1: the first costs more per call), judged <= 1.2x.
  const cn = run.claimNext100k;
  if (cn) {
    const rows = cn.rows.toLocaleString("en-US");
    const costNote = (r) => `${r.median.toFixed(2)}x${typeof r.cpu === "number" ? ` (CPU/call: ${r.cpu.toFixed(2)}x)` : ""}`;
    for (const limit of run.config.claimNext100k.limits) {
      for (const w of run.config.claimNext100k.workers) {
        const found = cn.ratios.find((x) => x.kind === "vs-baseline" && x.limit === limit && x.workers === w && !x.prefix)?.ratio;
        const r = found?.median ?? null;
        targets.push({
          target: `claim-next at ${rows} queued <= 1.2x per-call cost of pb-fleet before the queue (limit ${limit}, W=${w})`,
          measured: r === null ? (cn.baseline.skipped ? "skipped: no baseline" : "n/a") : costNote(found),
          pass: pass(r, r <= 1.2),
        });
      }
    }
    for (const limit of run.config.claimNext100k.limits) {
      for (const w of run.config.claimNext100k.workers) {
        const found = cn.ratios.find((x) => x.kind === "prefix" && x.limit === limit && x.workers === w)?.ratio;
        const r = found?.median ?? null;
        targets.push({ target: `claim-next with probeKeyPrefix (${rows} rows under it) <= 1.2x the no-prefix call (limit ${limit}, W=${w})`, measured: r === null ? "n/a" : costNote(found), pass: pass(r, r <= 1.2) });
      }
    }
  }
  return targets;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`bench: ${err?.stack ?? err}`);
    process.exit(1);
  },
);
