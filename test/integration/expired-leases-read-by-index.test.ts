// Steady state (issues 1 and 21): finding the expired leases must not read the
// live ones. claim-next (both paths), the sweeper and stats look for held rows
// whose lease has passed or is unreadable; a fleet holding thousands of jobs
// made each of those reads walk every held row's lease text. They now read two
// index ranges (the readable leases up to now, and the partial index of
// unreadable ones: src/lib/queries.ts EXPIRED_LEASE_SQL). This checks, on a
// real PocketBase of this line, that the migration made the index from the one
// text in src/lib (and the maintenance tick makes it again if it goes), that
// SQLite's plan for each of those statements searches
// probe_jobs by index and never scans it, and that they still find exactly the
// expired and unreadable leases among thousands of live ones.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobRowsQuery } from "../../src/lib/bulk";
import { claimRoundStatement } from "../../src/lib/claim-plan";
import { formatPbDate } from "../../src/lib/lease";
import {
  CLAIM_ORDER, expiredLeaseWhere, statsQuery, UNREADABLE_LEASE_INDEX, UNREADABLE_LEASE_INDEX_NAME, type WhereClause,
} from "../../src/lib/queries";
import { get, post, type RequestOptions } from "./support/fleet-api";
import { rawSql, rawSqlRows, rawSqlValue } from "./support/raw-sql";
import { startOwnServer, type OwnServer } from "./support/own-server";

const LIVE_HELD = 3_000;
/** Readable and past, unreadable in three ways (another layout, a date that is no instant, not a date): all expired. */
const EXPIRED_TEXTS = ["2020-01-01 00:00:00.000Z", "2026-01-01 00:00:00.000Z", "2099-01-01T00:00:00Z", "2099-02-31 10:00:00.000Z", "garbage", ""];

let server: OwnServer;
let on: RequestOptions;
beforeAll(async () => {
  // Only the test's own requests run maintenance: the cron's tick would make the dropped index again first.
  server = await startOwnServer({ testHooks: ["raw-sql.pb.js"], env: { PB_FLEET_MAINTENANCE_CRON: "off" } });
  on = { baseUrl: server.url, token: server.token };
});
afterAll(async () => {
  await server?.stop();
});

const sql = (statement: string, params: Record<string, string | number> = {}) => rawSql(on, statement, params);

/** SQLite's plan for a statement, one line per step. */
async function plan(query: WhereClause): Promise<string[]> {
  return (await rawSqlRows(on, `EXPLAIN QUERY PLAN ${query.sql}`, query.params, ["detail"])).map((r) => r.detail);
}

/** probe_jobs (also as `j`) is searched by index or rowid, never scanned whole, and both lease indexes are used. */
function expectIndexed(steps: string[], label: string): void {
  const text = steps.join("\n");
  expect(steps.filter((s) => /^SCAN (probe_jobs|j)\b/.test(s)), `${label}:\n${text}`).toEqual([]);
  expect(text, label).toContain(`INDEX ${UNREADABLE_LEASE_INDEX_NAME} `);
  expect(text, label).toContain("INDEX idx_probe_jobs_status_lease (status=? AND lease_expires_at<?)");
}

describe("expired leases are read by index, not by reading every held row", () => {
  it("the migration made the partial index from src/lib's text", async () => {
    expect(await rawSqlValue(on, "SELECT sql AS value FROM sqlite_master WHERE type = 'index' AND name = {:name}", { name: UNREADABLE_LEASE_INDEX_NAME }))
      .toBe(UNREADABLE_LEASE_INDEX);
  });

  it("the maintenance tick makes the index again when it is missing (PocketBase rebuilt the table, a hand edit)", async () => {
    const indexText = () =>
      rawSqlValue(on, "SELECT COALESCE(MAX(sql), '') AS value FROM sqlite_master WHERE type = 'index' AND name = {:name}", { name: UNREADABLE_LEASE_INDEX_NAME });
    await sql(`DROP INDEX ${UNREADABLE_LEASE_INDEX_NAME}`);
    expect(await indexText()).toBe("");
    const tick = await post("/api/fleet/maintenance", {}, on);
    expect(tick.status).toBe(200);
    expect(tick.body.leaseIndexRepaired).toBe(true);
    expect(await indexText()).toBe(UNREADABLE_LEASE_INDEX);
    expect((await post("/api/fleet/maintenance", {}, on)).body.leaseIndexRepaired).toBe(false);
  });

  it(`claim-next (plan and model paths), the sweeper and stats search by index among ${LIVE_HELD} live leases, and find exactly the expired ones`, async () => {
    const now = Date.now();
    const live = formatPbDate(now + 3_600_000);
    await sql(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {:rows} - 1)
INSERT INTO probe_jobs (id, probe_key, status, claimed_by, lease_token, lease_expires_at, created, updated, run_at, attempts, max_attempts, version, queue)
SELECT printf('l%014d', i), printf('live/%05d', i), CASE WHEN i % 2 = 0 THEN 'claimed' ELSE 'running' END, 'holder', 'tok', {:live},
  {:stamp}, {:stamp}, {:stamp}, 1, 25, 2, 'default' FROM n`,
      { rows: LIVE_HELD, live, stamp: formatPbDate(now - 60_000) });
    for (const [i, text] of EXPIRED_TEXTS.entries()) {
      await sql(
        `INSERT INTO probe_jobs (id, probe_key, status, claimed_by, lease_token, lease_expires_at, created, updated, run_at, attempts, max_attempts, version, queue)
VALUES ({:id}, {:key}, 'running', 'gone', 'tok', {:lease}, {:stamp}, {:stamp}, {:stamp}, 1, 25, 2, 'default')`,
        { id: `x${String(i).padStart(14, "0")}`, key: `expired/${i}`, lease: text, stamp: formatPbDate(now - 60_000) });
    }

    const nowMs = Date.now();
    const round = (queues: string[] | null) => claimRoundStatement({ workerId: "w", leaseSeconds: 30, limit: 100, queues }, 100, ["t"], nowMs, 3);
    expectIndexed(await plan(round(null)), "claim-next's statement");
    expectIndexed(await plan(round(["default", "other"])), "claim-next's statement for named queues");
    expectIndexed(await plan(jobRowsQuery(expiredLeaseWhere(nowMs, "", ["default"], { queues: ["held"], groups: ["g"] }), CLAIM_ORDER, 100)),
      "claim-next's flow-control path");
    expectIndexed(await plan(jobRowsQuery(expiredLeaseWhere(nowMs, ""), ["lease_expires_at ASC"], 100)), "the sweeper's read");
    expectIndexed(await plan(statsQuery(nowMs, 3)), "stats");

    expect((await get("/api/fleet/stats", on)).body.expiredLeases).toBe(EXPIRED_TEXTS.length);
    const next = await post("/api/fleet/claim-next", { workerId: "thief", limit: 100 }, on);
    expect(next.status).toBe(200);
    expect(next.body.jobs.map((j: { job: { probe_key: string } }) => j.job.probe_key).sort())
      .toEqual(EXPIRED_TEXTS.map((_, i) => `expired/${i}`).sort());
    expect((await get("/api/fleet/stats", on)).body.expiredLeases).toBe(0);
    // Nothing live was touched.
    const untouched = await rawSqlValue(on,
      "SELECT COUNT(*) AS value FROM probe_jobs WHERE probe_key GLOB 'live/*' AND claimed_by = 'holder' AND lease_expires_at = {:live}", { live });
    expect(Number(untouched)).toBe(LIVE_HELD);
  });
});
