// When the stats query fails, callers get 503 and a plain sentence; the
// database's own text (table and column names, SQL) goes to PocketBase's log.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATS_UNAVAILABLE } from "../../src/lib/stats";
import { get } from "./support/fleet-api";
import { startOwnServer, type OwnServer } from "./support/own-server";
import { rawSql } from "./support/raw-sql";

let server: OwnServer;
beforeAll(async () => {
  server = await startOwnServer({ testHooks: ["raw-sql.pb.js"] });
});
afterAll(async () => {
  await server?.stop();
});

describe("GET /api/fleet/stats on a broken database", () => {
  it("answers 503 with a plain sentence and logs the database's error", async () => {
    const opts = { baseUrl: server.url, token: server.token };
    await rawSql(opts, "ALTER TABLE probe_jobs RENAME COLUMN consecutive_orphan_count TO renamed_by_test");
    const answer = await get("/api/fleet/stats", opts);
    expect(answer).toEqual({ status: 503, body: { error: STATS_UNAVAILABLE } });
    expect(JSON.stringify(answer.body)).not.toMatch(/consecutive_orphan_count|no such column|SELECT/);
    // PocketBase writes its logs to its logs database in batches: poll for the entry.
    const query = "/api/logs?filter=" + encodeURIComponent('message="pb-fleet: query failed"');
    let logged = "";
    for (const deadline = Date.now() + 15_000; Date.now() < deadline && logged === ""; ) {
      const logs = await get(query, opts);
      expect(logs.status).toBe(200);
      if (logs.body.items.length > 0) logged = JSON.stringify(logs.body.items);
      else await new Promise((r) => setTimeout(r, 500));
    }
    expect(logged).toMatch(/consecutive_orphan_count/);
  });
});
