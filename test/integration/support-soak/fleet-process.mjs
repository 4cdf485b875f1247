// One process of the fleet soaks (fleet-soak.test.ts and batched-crash-soak.test.ts
// start two each, and restart them): N Workers and one Sweeper on the pb-fleet
// client, configured by the JSON in FLEET_SOAK_CONFIG. Every fact the test
// checks is printed to stdout as one JSON line (stdout to a pipe is synchronous
// on Linux, so a line printed is a line the parent gets, even if this process is
// then SIGKILLed).
//
// A simulated crash: with probability abandonRate, a handler makes its own
// Worker walk away (stop({ mode: "abandon" }): no more renews or heartbeats, no
// release of any job it holds, nothing written) and a fresh Worker with a new id
// takes its place. At concurrency 50 that is up to 50 jobs orphaned at once.
// The jobs are the queue's (enqueued through POST /api/fleet/enqueue, with
// max_attempts), so the Workers report on the queue path: one release carries
// the result (done), or the error: `retry` for a plain throw (failRate), `failed`
// for a PermanentJobError (permanentFailRate).
//
// countCalls (the batched crash soak, Workers of concurrency 50: claim-next of
// the free slots, one POST /api/fleet/heartbeat per renew interval for every
// held lease, releases coalesced into POST /api/fleet/complete): the Workers get
// the client through a wrapper that counts those calls and their items
// (scripts/bench/counted-client.mjs), printed every 250 ms as a `calls` line, so
// the test can tell the batch endpoints carried the load.
// The Workers sign in as a worker identity (config.worker), so their workerIds
// are `<record id>/<process>-s<slot>-g<n>`; the Sweeper signs in as the admin.
// On SIGTERM the process stops its workers (mode "finish") and sweeper, then exits.
import { countedClient } from "../../../scripts/bench/counted-client.mjs";

const config = JSON.parse(process.env.FLEET_SOAK_CONFIG ?? "{}");
const { FleetClient, Worker, Sweeper, PermanentJobError } = await import(config.clientModule);

const {
  url, email, password, worker: identity, prefix, processName, workers: workerCount, concurrency, leaseSeconds,
  abandonRate, failRate, permanentFailRate, longJobRate, sweepInterval, maxReclaimAttempts, countCalls,
} = config;

function emit(line) {
  process.stdout.write(JSON.stringify({ t: Date.now(), proc: processName, ...line }) + "\n");
}

function wait(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

// The Workers hold a worker identity's credential only (issue 19); the
// Sweeper is the operator's part and signs in as the admin.
const client = new FleetClient({ url, email, password, timeoutMs: 2_500 });
const workerClient = new FleetClient({ url, worker: identity, timeoutMs: 2_500 });
/** countCalls: the client as the Workers see it, the same methods, counted. */
const counted = countCalls ? countedClient(workerClient) : null;
const emitCalls = () => emit({ ev: "calls", ...counted.calls, ...counted.items });
if (counted) setInterval(emitCalls, 250).unref();
const live = new Set();
let generation = 0;
let stopping = false;

/** The events the test reads; everything else is only counted. */
function watch(emitter, role) {
  emitter.on("claimed", (e) => emit({ ev: "claimed", role, jobId: e.jobId, workerId: e.workerId, version: e.version, alreadyHeld: e.alreadyHeld }));
  emitter.on("renewed", (e) => emit({ ev: "renewed", jobId: e.jobId, workerId: e.workerId }));
  emitter.on("lease_lost", (e) => emit({ ev: "lease_lost", role, jobId: e.jobId, workerId: e.workerId, reason: e.reason }));
  emitter.on("released", (e) => emit({ ev: "released", role, jobId: e.jobId, workerId: e.workerId, status: e.status, version: e.version, committed: e.committed }));
  emitter.on("result_written", (e) => emit({ ev: "result_written", role, jobId: e.jobId, workerId: e.workerId, status: e.status }));
  emitter.on("retried", (e) => emit({ ev: "retried", jobId: e.jobId, workerId: e.workerId, attempt: e.attempt, maxAttempts: e.maxAttempts }));
  emitter.on("failed", (e) => emit({ ev: "failed", jobId: e.jobId, workerId: e.workerId, deadLettered: e.deadLettered === true, message: e.error }));
  emitter.on("swept", (e) => emit({ ev: "swept", jobId: e.jobId, claimedBy: e.claimedBy, count: e.consecutiveOrphanCount }));
  emitter.on("gave_up", (e) => emit({ ev: "gave_up", jobId: e.jobId, claimedBy: e.claimedBy }));
  emitter.on("error", (e) => emit({ ev: "error", role, op: e.op, jobId: e.jobId, name: e.error.name, message: e.error.message }));
}

function startWorker(slot) {
  const workerId = `${processName}-s${slot}-g${generation++}`;
  const worker = new Worker(counted?.api ?? workerClient, {
    workerId,
    concurrency,
    leaseSeconds,
    pollInterval: 50,
    maxPollInterval: 500,
    probeKeyPrefix: prefix,
    handler: async (job, signal) => {
      if (Math.random() < abandonRate) {
        // This worker "dies" holding the job: it stops renewing and never reports.
        emit({ ev: "abandon", jobId: job.id, workerId });
        live.delete(worker);
        void worker.stop({ mode: "abandon" });
        if (!stopping) live.add(startWorker(slot));
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        return null;
      }
      // Most probes are quick; a few outlive several renew intervals.
      const ms = Math.random() < longJobRate ? 1_500 + Math.random() * 2_500 : 5 + Math.random() * 25;
      await wait(ms, signal);
      const roll = Math.random();
      if (roll < permanentFailRate) throw new PermanentJobError(`simulated permanent failure of ${job.probe_key}`);
      if (roll < permanentFailRate + failRate) throw new Error(`simulated probe failure of ${job.probe_key} (attempt ${job.attempt})`);
      return {
        workerId: job.workerId, claimVersion: job.version, leaseToken: job.leaseToken ?? null, pid: process.pid,
        attempt: job.attempt, maxAttempts: job.maxAttempts,
      };
    },
  });
  watch(worker, "worker");
  worker.start();
  return worker;
}

for (let slot = 0; slot < workerCount; slot++) live.add(startWorker(slot));
const sweeper = new Sweeper(client, {
  interval: sweepInterval,
  maxReclaimAttempts,
  batchSize: 100,
  probeKeyPrefix: prefix,
  sweeperId: `${processName}-sweeper`,
});
watch(sweeper, "sweeper");
sweeper.start();
emit({ ev: "ready", pid: process.pid });

process.on("SIGTERM", async () => {
  stopping = true;
  await Promise.all([...live].map((w) => w.stop({ mode: "finish" })));
  await sweeper.stop();
  if (counted) emitCalls();
  emit({ ev: "stopped" });
  process.exit(0);
});
