// One client process of the benchmark's `batched` phase (scripts/bench/batched.mjs
// starts several): pb-fleet client code against one PocketBase, configured by
// the JSON in BENCH_FLEET_CONFIG. Two modes, the same fleet shape (`workers`
// worker ids here, `concurrency` jobs at once each):
//   worker     `workers` pb-fleet Workers of `concurrency`, a no-op handler that
//              returns a tiny result: claim-next of the free slots, one
//              heartbeat per renew interval for every held lease, releases
//              coalesced into `complete` calls (the Worker as built)
//   unbatched  per worker id, `concurrency` loops of claim-next (limit 1) ->
//              renew -> release done (with the same tiny result), each through
//              FleetClient: one job per request, the lifecycle before batching
// Both go through the same FleetClient (fetch, keep-alive). The parent says
// "go" and "stop" on stdin; this process prints JSON lines: ready, progress
// (completions so far, every 100 ms), and, after "stop", writes its report (the
// ids of the jobs it completed, request counts, CPU) to `reportFile`.
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { countedClient } from "./counted-client.mjs";
import { steadyCpu } from "./stats.mjs";

const config = JSON.parse(process.env.BENCH_FLEET_CONFIG ?? "{}");
const { FleetClient, Worker } = await import(config.clientModule);
const { url, email, password, mode, workers: workerCount, concurrency, leaseSeconds, procName, reportFile } = config;
/** countOnly (the steady phase's long runs): count completions without keeping every job id. */
const countOnly = config.countOnly === true;

const emit = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

const client = new FleetClient({ url, email, password, timeoutMs: 30_000 });
await client.authenticate();

/** What came back. */
const completed = [];
const problems = { leaseLost: 0, refused: 0, errors: 0 };
const errorSamples = [];
let firstClaimAt = null;
let lastCompletionAt = null;

const noteError = (op, err) => {
  problems.errors++;
  if (errorSamples.length < 5) errorSamples.push(`${op}: ${err?.name ?? "Error"}: ${String(err?.message ?? err).slice(0, 200)}`);
};

/** The client, counting what each Worker asks of it (requests by endpoint, items per batch call). */
const { api, calls, items } = countedClient(client, {
  onClaimed: (held) => {
    if (held.length && firstClaimAt === null) firstClaimAt = Date.now();
  },
});

let completedCount = 0;
const completedOne = (jobId) => {
  completedCount++;
  if (!countOnly) completed.push(jobId);
  lastCompletionAt = Date.now();
};

let go;
const started = new Promise((r) => (go = r));
let stopRequested;
const stopping = new Promise((r) => (stopRequested = r));
let stopped = false;

/* ------------------------------------------------------------ worker mode */

function startWorkers() {
  const list = [];
  for (let i = 0; i < workerCount; i++) {
    const workerId = `${procName}-w${i}`;
    const worker = new Worker(api, {
      workerId,
      concurrency,
      leaseSeconds,
      handler: async () => ({ w: workerId }),
    });
    worker.on("released", (e) => {
      // committed "released", or "refused_terminal_same_holder": its own release, whose first answer was lost.
      if (e.status === "done") completedOne(e.jobId);
      else problems.refused++;
    });
    worker.on("lease_lost", () => problems.leaseLost++);
    worker.on("error", (e) => noteError(e.op, e.error));
    worker.start();
    list.push(worker);
  }
  return list;
}

/* ------------------------------------------------------------ unbatched mode */

async function unbatchedLoop(workerId) {
  let emptyPolls = 0;
  while (!stopped) {
    let held;
    try {
      held = await api.claimNext({ workerId, leaseSeconds, limit: 1 });
    } catch (err) {
      noteError("claimNext", err);
      continue;
    }
    if (held.length === 0) {
      // Every job is claimed: wait for the parent's stop, polling again now and
      // then (100 ms, doubling to 2 s, as a Worker backs off).
      await Promise.race([stopping, new Promise((r) => setTimeout(r, Math.min(2000, 100 * 2 ** emptyPolls++)))]);
      continue;
    }
    emptyPolls = 0;
    const { job, leaseToken } = held[0];
    try {
      const renewed = await api.renew(job.id, workerId, leaseSeconds, leaseToken);
      if (!renewed.renewed) {
        problems.leaseLost++;
        continue;
      }
      const answer = await api.release(job.id, workerId, "done", leaseToken, { result: { w: workerId } });
      if (answer.released || answer.reason === "refused_terminal_same_holder") completedOne(job.id);
      else problems.refused++;
    } catch (err) {
      noteError("renew/release", err);
    }
  }
}

/* ------------------------------------------------------------ run */

createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() === "go") go();
  if (line.trim() === "stop") stopRequested();
});
emit({ ev: "ready", pid: process.pid });
await started;

const cpu0 = process.cpuUsage();
const t0 = Date.now();
/** [completions, CPU µs since go] every 100 ms: the steady window's CPU (steadyCpu). */
const cpuSamples = [];
const progress = setInterval(() => {
  const c = process.cpuUsage(cpu0);
  cpuSamples.push([completedCount, c.user + c.system]);
  emit({ ev: "progress", done: completedCount });
}, 100);
let runners;
if (mode === "worker") {
  runners = startWorkers();
} else {
  runners = [];
  for (let i = 0; i < workerCount; i++) for (let c = 0; c < concurrency; c++) runners.push(unbatchedLoop(`${procName}-w${i}`));
}

await stopping;
stopped = true;
if (mode === "worker") await Promise.all(runners.map((w) => w.stop({ mode: "finish" })));
else await Promise.all(runners);
clearInterval(progress);
const cpu = process.cpuUsage(cpu0);
writeFileSync(
  reportFile,
  JSON.stringify({
    procName, mode, completed, completedCount, calls, items, problems, errorSamples, firstClaimAt, lastCompletionAt,
    cpuSeconds: (cpu.user + cpu.system) / 1e6, wallSeconds: (Date.now() - t0) / 1000, steady: steadyCpu(cpuSamples, completedCount),
  }),
);
emit({ ev: "reported", done: completedCount });
process.exit(0);
