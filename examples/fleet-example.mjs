// A small fleet: enqueue probe jobs, run them on two Workers with a Sweeper
// beside them, print the results.
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
import { FleetClient, Sweeper, Worker } from "../dist/client/index.js";

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
  await client.enqueueMany(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"].map((name) => prefix + name));
} catch (err) {
  fail(`could not enqueue (${err.message}). Is PocketBase with the pb-fleet hooks running (npm start)?`);
}

// A "probe": here it just takes a little time. The signal aborts when the lease
// is lost; a real probe passes it on to fetch() or whatever it waits for.
async function probe(job, signal) {
  await new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, 200 + Math.random() * 300);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
  if (job.probe_key.endsWith("/epsilon")) throw new Error("epsilon is unreachable today");
  return { probedBy: job.workerId, at: new Date().toISOString() };
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
    console.log(`${row.probe_key.slice(prefix.length)}: ${row.status} by ${row.claimed_by}, result ${JSON.stringify(row.result)}`);
  }
}
console.log(`signed in as a PocketBase ${client.authApi === "superusers" ? "0.23+ superuser" : "0.22 admin"}`);
