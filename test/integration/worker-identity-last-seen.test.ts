// A worker identity's last activity (src/lib/identity.ts LAST_SEEN_EVERY_MS):
// stamped by its calls at most once a minute, never by a refused caller, and
// written on PocketBase's single writer, so a stamp never makes someone
// else's transaction fail (on 0.22 a stamp through the concurrent pool once
// made claims beside it roll back with "database is locked").
import { expect, it } from "vitest";
import { WORKERS_COLLECTION } from "../../src/lib/identity";
import { createJob, post, randomKey, send } from "./support/fleet-api";
import { createWorkerIdentity } from "./support/worker-identities";

it("a worker identity's call stamps its last_seen_at, at most once a minute; a refused caller stamps nothing", async () => {
  const worker = await createWorkerIdentity();
  const read = async () => (await send("GET", `/api/collections/${WORKERS_COLLECTION}/records/${worker.id}`, undefined)).body.last_seen_at as string;
  expect(await read()).toBe("");
  const call = () => post("/api/fleet/claim-next", { workerId: worker.id, probeKeyPrefix: randomKey("nothing") + "/" }, { token: worker.token });
  const t0 = Date.now();
  expect((await call()).status).toBe(200);
  const first = await read();
  expect(Math.abs(Date.parse(first.replace(" ", "T")) - t0)).toBeLessThan(5_000);
  expect((await call()).status).toBe(200);
  expect(await read()).toBe(first);
  // An admin-only route refuses before anything is stamped (the stamp above is under a minute old anyway, so use a new identity).
  const refused = await createWorkerIdentity();
  expect((await post("/api/fleet/sweep", {}, { token: refused.token })).status).toBe(403);
  expect((await send("GET", `/api/collections/${WORKERS_COLLECTION}/records/${refused.id}`, undefined)).body.last_seen_at).toBe("");
});

it("60 identities' first calls (each one stamps) beside 60 admin claims by id: every claim wins, every call answers", async () => {
  const identities = [];
  for (let i = 0; i < 60; i++) identities.push(await createWorkerIdentity());
  const prefix = randomKey("stamp-race") + "/";
  const jobs = await Promise.all(identities.map((_, i) => createJob({ probe_key: `${prefix}${i}` })));
  const nothing = randomKey("nothing") + "/";
  const [claims, calls] = await Promise.all([
    Promise.all(jobs.map((job) => post("/api/fleet/claim", { jobId: job.id, workerId: "w-admin" }))),
    Promise.all(identities.map((w) => post("/api/fleet/claim-next", { workerId: w.id, probeKeyPrefix: nothing }, { token: w.token }))),
  ]);
  expect(claims.map((c) => c.body.claimed)).toEqual(jobs.map(() => true));
  expect(calls.map((c) => c.status)).toEqual(identities.map(() => 200));
  // And the stamps were written.
  const stamped = await send("GET", `/api/collections/${WORKERS_COLLECTION}/records?perPage=1&filter=${encodeURIComponent(`id = "${identities[0]!.id}"`)}`, undefined);
  expect(stamped.body.items[0].last_seen_at).not.toBe("");
}, 120_000);
