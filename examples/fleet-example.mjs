// A small fleet: enqueue probe jobs with a payload, run them on two Workers
// with a Sweeper beside them, print the results.
//
//   npm start                                   # PocketBase with the hooks on 127.0.0.1:8090
//   npm run build:client && node examples/fleet-example.mjs
//
// The credentials of an admin (PocketBase 0.22) or a superuser (0.23+; the
// client finds out which the server has) come from PB_ADMIN_EMAIL /
// PB_ADMIN_PASSWORD, or else from the file npm start writes
// (pb_data/pb-fleet-admin.json). PB_URL overrides the server address (default
// http://127.0.0.1:8090).
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { hostname } from "node:os";
import { FleetClient, PermanentJobError, Sweeper, Worker } from "../dist/client/index.js";

function fail(message) {
  console.error(`fleet-example: ${message}`);
  process.exit(1);
}

function credentials() {
  if (process.env.PB_ADMIN_EMAIL && process.env.PB_ADMIN_PASSWORD) {
    return { email: process.env.PB_ADMIN_EMAIL, password: process.env.PB_ADMIN_PASSWORD };
  }
  // Where npm start keeps them: PB_DATA_DIR (relative to the current folder), else the repository's pb_data.
  const dataDir = process.env.PB_DATA_DIR
    ? resolve(process.env.PB_DATA_DIR)
    : fileURLToPath(new URL("../pb_data", import.meta.url));
  const file = join(dataDir, "pb-fleet-admin.json");
  try {
    const { email, password } = JSON.parse(readFileSync(file, "utf8"));
    return { email, password };
  } catch {
    fail(`set PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD (no ${file} from npm start to read them from).`);
  }
}

const client = new FleetClient({ url: process.env.PB_URL ?? "http://127.0.0.1:8090", ...credentials(), timeoutMs: 5_000 });

const prefix = `example-${Date.now()}/`;
try {
  // One POST /api/fleet/enqueue: each job carries its input (any JSON) and may retry twice.
  await client.enqueueMany(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"].map((name, i) => ({
    probeKey: prefix + name,
    payload: { host: `${name}.example.test`, timeoutMs: 200 + 60 * i },
    maxAttempts: 3,
  })));
} catch (err) {
  fail(`could not enqueue (${err.message}). Is PocketBase with the pb-fleet hooks running (npm start)?`);
}

// A "probe": here it just waits the payload's timeout. The signal aborts when
// the lease is lost (or the job is cancelled); a real probe passes it on to
// fetch() or whatever it waits for. What it returns is the job's result; an
// error retries the job (after a backoff), a PermanentJobError fails it at once.
async function probe({ payload, attempt, maxAttempts, workerId, progress }, signal) {
  if (payload.host.startsWith("epsilon.")) throw new PermanentJobError(`${payload.host} does not resolve`);
  progress({ phase: "probing", attempt }); // sent with the next lease renew
  await new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, payload.timeoutMs);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
  return { host: payload.host, probedBy: workerId, attempt: `${attempt}/${maxAttempts}`, at: new Date().toISOString() };
}

const workers = [1, 2].map((n) =>
  new Worker(client, {
    workerId: `${hostname()}-${process.pid}-w${n}`, // unique per live worker
    handler: probe,
    concurrency: 2,
    leaseSeconds: 10,
    probeKeyPrefix: prefix,
  }));
const sweeper = new Sweeper(client, { interval: 2_000, probeKeyPrefix: prefix });

for (const worker of workers) {
  worker.on("released", (e) => console.log(`${e.workerId}: ${e.jobId} -> ${e.status}`));
  worker.on("error", (e) => console.error(`${e.op} failed: ${e.error.message}`));
  worker.start();
}
sweeper.start();

// Wait until every job of this run is done or failed.
for (;;) {
  const { counts } = await client.stats({ probeKeyPrefix: prefix });
  if (counts.done + counts.failed === 6) break;
  await new Promise((r) => setTimeout(r, 250));
}
await Promise.all([...workers.map((w) => w.stop()), sweeper.stop()]);

const rows = await client.listClaimable({ probeKeyPrefix: prefix }); // nothing left to claim
console.log(`claimable left: ${rows.length}`);
for (const row of await client.listJobs({ probeKeyPrefix: prefix })) {
  if (row.probe_key.endsWith("/alpha") || row.probe_key.endsWith("/epsilon")) {
    const outcome = row.status === "failed" ? `error ${JSON.stringify(row.last_error)}` : `result ${JSON.stringify(row.result)}`;
    console.log(`${row.probe_key.slice(prefix.length)}: ${row.status} by ${row.claimed_by}, ${outcome}`);
  }
}
console.log(`signed in as a PocketBase ${client.authApi === "superusers" ? "0.23+ superuser" : "0.22 admin"}`);
