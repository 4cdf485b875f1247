// GET /api/fleet/stats, scoped to this test's prefix so other tests' rows do not count.
import { describe, expect, inject, it } from "vitest";
import { createJob, futureDate, get, pastDate, randomKey } from "./support/fleet-api";

describe("GET /api/fleet/stats", () => {
  it("counts by status, expired leases, the orphan cap and the oldest pending age", async () => {
    const prefix = randomKey("st") + "/";
    const cap = (await get("/api/fleet/stats")).body.orphanCap as number;
    const rows = [
      { status: "pending" }, { status: "pending", consecutive_orphan_count: cap },
      { status: "claimed", claimed_by: "a", lease_expires_at: futureDate() },
      { status: "running", claimed_by: "a", lease_expires_at: pastDate() },
      { status: "running", claimed_by: "b", lease_expires_at: futureDate() },
      { status: "done", claimed_by: "a" }, { status: "failed", claimed_by: "a" },
    ];
    for (const [i, fields] of rows.entries()) await createJob({ probe_key: `${prefix}${i}`, ...fields });
    const before = Date.now();

    const res = await get(`/api/fleet/stats?probeKeyPrefix=${encodeURIComponent(prefix)}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      counts: { pending: 2, claimed: 1, running: 2, done: 1, failed: 1 },
      total: 7,
      expiredLeases: 1,
      pastOrphanCap: 1,
      orphanCap: cap,
      // The shared test server runs with PB_FLEET_SWEEP_CRON=off (see global-setup.ts).
      sweeper: { scheduled: false, schedule: "off" },
    });
    expect(res.body.oldestPendingAgeSeconds).toBeGreaterThan(0);
    expect(res.body.oldestPendingAgeSeconds).toBeLessThan((Date.now() - before) / 1000 + 60);
  });

  it("answers null age and zero counts for an empty scope", async () => {
    const res = await get(`/api/fleet/stats?probeKeyPrefix=${randomKey("none")}`);
    expect(res.body).toMatchObject({
      counts: { pending: 0, claimed: 0, running: 0, done: 0, failed: 0 },
      total: 0, oldestPendingAgeSeconds: null, expiredLeases: 0, pastOrphanCap: 0,
    });
  });

  it("speaks Prometheus text with ?format=prometheus", async () => {
    const prefix = randomKey("prom") + "/";
    await createJob({ probe_key: prefix + "1" });
    // fleet-api's get() parses JSON; the Prometheus answer is text, so fetch it directly.
    const url = `${inject("pbUrl")}/api/fleet/stats?format=prometheus&probeKeyPrefix=${encodeURIComponent(prefix)}`;
    const res = await fetch(url, { headers: { Authorization: inject("adminToken") } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain("# TYPE pb_fleet_jobs gauge\n");
    expect(text).toContain('pb_fleet_jobs{status="pending"} 1\n');
    expect(text).toMatch(/\npb_fleet_oldest_pending_age_seconds [0-9.]+\n/);
    expect(text).toContain("pb_fleet_expired_leases 0\n");
  });

  it("rejects an unknown format with a 400 and needs an admin", async () => {
    expect(await get("/api/fleet/stats?format=xml")).toEqual({
      status: 400, body: { error: "format must be json or prometheus" },
    });
    expect((await get("/api/fleet/stats", { token: null })).status).toBe(401);
  });
});
