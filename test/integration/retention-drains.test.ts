// Retention drains (issue: weeks of load without a growing table): 200,000
// expired done rows and 100,000 old probe_job_events are all gone after a
// bounded number of maintenance ticks, while rows and events inside their keep
// stay, the counts stats reads stay exact, and claims go on between the
// delete batches (each batch is its own short transaction).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RETENTION_BATCH } from "../../src/lib/retention";
import type { FleetStats } from "../../src/lib/types";
import { get, post, type RequestOptions } from "./support/fleet-api";
import { startOwnServer, type OwnServer } from "./support/own-server";
import { rawSql, rawSqlValue } from "./support/raw-sql";

const EXPIRED_ROWS = 200_000;
const KEPT_ROWS = 1_000;
const OLD_EVENTS = 100_000;
const RECENT_EVENTS = 100;
/** Ticks the drain may take: each runs batches for up to RETENTION_BUDGET_MS; this machine needs one or two. */
const MAX_TICKS = 6;

let server: OwnServer;
let on: RequestOptions;

beforeAll(async () => {
  // Only the test's own requests run maintenance: a cron tick would delete what the test counts.
  server = await startOwnServer({ testHooks: ["raw-sql.pb.js"], env: { PB_FLEET_KEEP_DONE: "1h", PB_FLEET_KEEP_FAILED: "1h", PB_FLEET_MAINTENANCE_CRON: "off" } });
  on = { baseUrl: server.url, token: server.token };
});
afterAll(async () => {
  await server?.stop();
});

const sql = (statement: string, params: Record<string, string | number> = {}) => rawSql(on, statement, params);

async function count(table: string): Promise<number> {
  return Number(await rawSqlValue(on, `SELECT COUNT(*) AS value FROM ${table}`));
}

describe("retention drains a large backlog", () => {
  it(`${EXPIRED_ROWS} expired done rows and ${OLD_EVENTS} old events go within ${MAX_TICKS} ticks; kept ones stay; counts stay exact`, async () => {
    const seeded = Date.now();
    await sql(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {:rows} - 1)
INSERT INTO probe_jobs (id, probe_key, status, created, updated, run_at, finished_at, attempts, max_attempts)
SELECT printf('x%014d', i), printf('old/%06d', i), CASE WHEN i % 10 = 0 THEN 'cancelled' ELSE 'done' END,
  '2020-01-01 00:00:00.000Z', '2020-01-01 00:00:00.000Z', '2020-01-01 00:00:00.000Z',
  strftime('%Y-%m-%d %H:%M:%f', 1577836800 + i, 'unixepoch') || 'Z', 1, 25 FROM n`,
      { rows: EXPIRED_ROWS });
    const recent = new Date().toISOString().replace("T", " ");
    await sql(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {:rows} - 1)
INSERT INTO probe_jobs (id, probe_key, status, created, updated, run_at, finished_at, attempts, max_attempts)
SELECT printf('k%014d', i), printf('kept/%06d', i), 'done', {:now}, {:now}, {:now}, {:now}, 1, 25 FROM n`,
      { rows: KEPT_ROWS, now: recent });
    await sql(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {:rows} - 1)
INSERT INTO probe_job_events (id, source, changes, created, updated)
SELECT printf('e%014d', i), 'seed', '[{"id":"x","probe_key":"old","status":"done","claimed_by":"w","lease_expires_at":"","version":3}]',
  CASE WHEN i < {:old} THEN '2020-01-01 00:00:00.000Z' ELSE {:now} END, {:now} FROM n`,
      { rows: OLD_EVENTS + RECENT_EVENTS, old: OLD_EVENTS, now: recent });
    console.log(`[retention-drains] seeded ${EXPIRED_ROWS + KEPT_ROWS} rows and ${OLD_EVENTS + RECENT_EVENTS} events in ${Date.now() - seeded} ms`);
    await post("/api/fleet/enqueue", { jobs: Array.from({ length: 200 }, (_, i) => ({ probeKey: `live/${i}` })) }, on);

    // Claims keep going while the prune runs: each waits at most for one delete batch.
    let pruning = true;
    const claimLatencies: number[] = [];
    const claims = (async () => {
      while (pruning) {
        const started = performance.now();
        const res = await post("/api/fleet/claim-next", { workerId: "during-prune", limit: 1, leaseSeconds: 60 }, on);
        expect(res.status).toBe(200);
        claimLatencies.push(performance.now() - started);
      }
    })();

    const ticks: { deleted: { done: number; failed: number }; events: number; batches: number; drained: boolean }[] = [];
    const pruneStarted = Date.now();
    while (ticks.length < MAX_TICKS) {
      const res = await post("/api/fleet/maintenance", {}, on);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ticks.push(res.body.retention);
      if (res.body.retention.drained) break;
    }
    const pruneMs = Date.now() - pruneStarted;
    pruning = false;
    await claims;
    const sorted = claimLatencies.slice().sort((a, b) => a - b);
    console.log(`[retention-drains] ${ticks.length} tick(s), ${ticks.map((t) => t.batches).join("+")} batches, ${pruneMs} ms; ` +
      `${sorted.length} claims during it: p50 ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms`);

    expect(ticks.at(-1)!.drained).toBe(true);
    // The cron's own tick may share the work when a minute starts during the prune: what is left decides.
    expect(ticks.reduce((sum, t) => sum + t.deleted.done, 0)).toBeLessThanOrEqual(EXPIRED_ROWS);
    expect(ticks.reduce((sum, t) => sum + t.events, 0)).toBeLessThanOrEqual(OLD_EVENTS);
    // In batches: several transactions, none larger than a batch.
    expect(ticks.reduce((sum, t) => sum + t.batches, 0)).toBeGreaterThan(1);
    for (const t of ticks) expect(t.deleted.done).toBeLessThanOrEqual(t.batches * RETENTION_BATCH);
    expect(claimLatencies.length).toBeGreaterThan(0);

    // By key and source, not id: the server's own rows and events have random ids.
    expect(await count("probe_jobs WHERE probe_key GLOB 'old/*'")).toBe(0);
    expect(await count("probe_jobs WHERE probe_key GLOB 'kept/*'")).toBe(KEPT_ROWS);
    expect(await count("probe_job_events WHERE created < '2021'")).toBe(0);
    expect(await count("probe_job_events WHERE source = 'seed'")).toBe(RECENT_EVENTS);

    const stats = (await get("/api/fleet/stats", on)).body as FleetStats;
    expect(stats.counts.done).toBe(KEPT_ROWS);
    expect(stats.counts.cancelled).toBe(0);
    expect(stats.total).toBe(await count("probe_jobs"));
  }, 300_000);

  it("every complete deletes up to twice as many expired finished rows as it releases, in its own transaction", async () => {
    await sql(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999)
INSERT INTO probe_jobs (id, probe_key, status, created, updated, run_at, finished_at, attempts, max_attempts)
SELECT printf('a%014d', i), printf('alongside/%04d', i), 'done', '2020-01-01 00:00:00.000Z', '2020-01-01 00:00:00.000Z',
  '2020-01-01 00:00:00.000Z', '2020-01-02 00:00:00.000Z', 1, 25 FROM n`);
    const expired = () => count("probe_jobs WHERE probe_key GLOB 'alongside/*'");
    expect(await expired()).toBe(1000);
    await post("/api/fleet/enqueue", { jobs: Array.from({ length: 10 }, (_, i) => ({ probeKey: `fresh/${i}` })) }, on);
    const claimed = await post("/api/fleet/claim-next", { workerId: "alongside", limit: 10, probeKeyPrefix: "fresh/" }, on);
    expect(claimed.body.jobs).toHaveLength(10);
    const done = await post("/api/fleet/complete", {
      workerId: "alongside",
      releases: claimed.body.jobs.map((j: { job: { id: string }; leaseToken: string }) => ({ jobId: j.job.id, leaseToken: j.leaseToken, status: "done" })),
    }, on);
    expect(done.status).toBe(200);
    expect(done.body.results.every((r: { released: boolean }) => r.released)).toBe(true);
    expect(await expired()).toBe(1000 - 20);
    // The just-finished rows are inside their keep: untouched.
    expect(await count("probe_jobs WHERE probe_key GLOB 'fresh/*' AND status = 'done'")).toBe(10);
    const stats = (await get("/api/fleet/stats", on)).body as FleetStats;
    expect(stats.total).toBe(await count("probe_jobs"));
  });
});
