#!/usr/bin/env node
// The Node client's conformance worker (docs/client-conformance.md): the
// package's Worker, signed in as a worker identity, with a handler that does
// what each job's payload asks. Runs the built client (dist/, `npm run
// build:client`), as a user's program would import it.
import { FleetClient, PermanentJobError, RateLimitedError, Worker } from "../../../dist/client/index.js";

const env = (name, fallback) => {
  const value = process.env[name];
  if (value === undefined || value === "") {
    if (fallback === undefined) {
      process.stderr.write(`node conformance worker: ${name} is not set (see docs/client-conformance.md)\n`);
      process.exit(2);
    }
    return fallback;
  }
  return value;
};

const emit = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

const echo = (payload, job) => ({ echo: payload.value ?? null, attempt: job.attempt });

/** Resolves after `ms`, or rejects "interrupted" (after printing `signal`) when the job's signal fires first. */
function waitOrSignal(job, ms) {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      emit({ event: "signal", jobId: job.id });
      reject(new Error("interrupted"));
    };
    const timer = setTimeout(() => {
      job.signal.removeEventListener("abort", onAbort);
      resolve(false);
    }, ms);
    if (job.signal.aborted) onAbort();
    else job.signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Jobs this process has rate-limited once (the `rate_limited` op limits only a job's first run here). */
const rateLimitedOnce = new Set();

async function handle(job) {
  const payload = job.payload ?? {};
  emit({ event: "start", jobId: job.id, attempt: job.attempt });
  const before = (n) => typeof n === "number" ? job.attempt < n : true;
  switch (payload.op) {
    case "echo":
      return echo(payload, job);
    case "fail":
      if (typeof payload.untilAttempt === "number" && !before(payload.untilAttempt)) return echo(payload, job);
      throw new Error(payload.message ?? "failed");
    case "permanent":
      throw new PermanentJobError(payload.message ?? "permanent failure");
    case "sleep":
      await waitOrSignal(job, payload.ms ?? 0);
      return echo(payload, job);
    case "wait_signal":
      await waitOrSignal(job, payload.ms ?? 60_000);
      return { signalled: false };
    case "crash":
      if (!before(payload.untilAttempt)) return echo(payload, job);
      emit({ event: "crash", jobId: job.id });
      process.exit(17);
    // eslint-disable-next-line no-fallthrough
    case "progress":
      job.progress(payload.progress ?? null);
      await waitOrSignal(job, payload.ms ?? 0);
      return echo(payload, job);
    case "rate_limited":
      if (!rateLimitedOnce.has(job.id)) {
        rateLimitedOnce.add(job.id);
        throw new RateLimitedError({ retryAfterSeconds: payload.retryAfterSeconds ?? 1 });
      }
      return echo(payload, job);
    default:
      throw new PermanentJobError(`unknown op ${JSON.stringify(payload.op)}`);
  }
}

const client = new FleetClient({
  url: env("PB_FLEET_URL"),
  worker: { identity: env("PB_FLEET_WORKER_IDENTITY"), password: env("PB_FLEET_WORKER_PASSWORD") },
});
const worker = new Worker(client, {
  workerId: env("PB_FLEET_WORKER_ID"),
  queue: env("PB_FLEET_QUEUE"),
  concurrency: Number(env("PB_FLEET_CONCURRENCY", "4")),
  leaseSeconds: Number(env("PB_FLEET_LEASE_SECONDS", "3")),
  pollInterval: 50,
  maxPollInterval: Number(env("PB_FLEET_POLL_MS", "200")),
  handler: handle,
});
worker.on("error", (e) => process.stderr.write(`node conformance worker: ${e?.error?.message ?? e?.message ?? String(e)}\n`));

const identity = await client.identity();
emit({ event: "ready", workerId: `${identity.id}/${env("PB_FLEET_WORKER_ID")}` });
worker.start();

let stopping = false;
process.on("SIGTERM", async () => {
  if (stopping) return;
  stopping = true;
  await worker.stop({ mode: "finish" });
  emit({ event: "stopped" });
  process.exit(0);
});
