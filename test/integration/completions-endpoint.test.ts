// GET /api/fleet/completions on the suite's PocketBase: jobs finished done and
// failed per time bucket, from the real SQL (strftime, text ranges, the prefix
// range), as the dashboard's chart reads it when it opens mid-run.
import { describe, expect, inject, it } from "vitest";
import { FleetClient } from "../../src/client/index";
import type { CompletionsResponse } from "../../src/lib/completions";
import { get, post, randomKey } from "./support/fleet-api";
import { startOwnServer } from "./support/own-server";
import { sleep } from "./support/race";

const client = new FleetClient({ url: inject("pbUrl"), email: inject("adminEmail"), password: inject("adminPassword") });

async function finish(prefix: string, outcomes: ("done" | "failed")[]): Promise<void> {
  const jobs = await client.enqueueMany(outcomes.map((_, i) => ({ probeKey: `${prefix}${i}` })));
  await Promise.all(jobs.map(async (job, i) => {
    const claim = await client.claim(job.id, "completions-worker", 30);
    if (!claim.claimed) throw new Error(`could not claim ${job.id}`);
    await client.release(job.id, "completions-worker", outcomes[i]!, claim.leaseToken);
  }));
}

describe("GET /api/fleet/completions", () => {
  it("counts the prefix's jobs finished done and failed, in the bucket of their finished_at", async () => {
    const prefix = randomKey("completions") + "/";
    const before = Date.now();
    await finish(prefix, ["done", "done", "done", "failed", "done"]);
    const after = Date.now();
    const res = await get(`/api/fleet/completions?windowSeconds=60&bucketSeconds=5&probeKeyPrefix=${encodeURIComponent(prefix)}`);
    expect(res.status).toBe(200);
    const body = res.body as CompletionsResponse;
    expect(body.bucketSeconds).toBe(5);
    expect(body.buckets).toHaveLength(12);
    expect(body.from % 5000).toBe(0);
    expect(body.to - body.from).toBe(60_000);
    expect(body.now).toBeGreaterThanOrEqual(before - 5_000);
    body.buckets.forEach((b, i) => expect(b.start).toBe(body.from + i * 5000));
    expect(body.buckets.reduce((n, b) => n + b.done, 0)).toBe(4);
    expect(body.buckets.reduce((n, b) => n + b.failed, 0)).toBe(1);
    // Every finish is in a bucket that overlaps the time the test finished them.
    for (const bucket of body.buckets.filter((b) => b.done + b.failed > 0)) {
      expect(bucket.start).toBeLessThanOrEqual(after);
      expect(bucket.start + 5000).toBeGreaterThan(before - 1000);
    }
  });

  it("leaves out other prefixes, and jobs finished before the window", async () => {
    const prefix = randomKey("completions-other") + "/";
    await finish(`${prefix}a/`, ["done", "done"]);
    await finish(`${prefix}b/`, ["failed"]);
    const sum = async (query: string) => {
      const body = (await get(`/api/fleet/completions?${query}`)).body as CompletionsResponse;
      return [body.buckets.reduce((n, b) => n + b.done, 0), body.buckets.reduce((n, b) => n + b.failed, 0)];
    };
    expect(await sum(`probeKeyPrefix=${encodeURIComponent(`${prefix}a/`)}`)).toEqual([2, 0]);
    expect(await sum(`probeKeyPrefix=${encodeURIComponent(`${prefix}b/`)}`)).toEqual([0, 1]);
    expect(await sum(`probeKeyPrefix=${encodeURIComponent(prefix)}`)).toEqual([2, 1]);
    // A window of the last second in one-second buckets may miss them, but never counts more.
    const [done] = await sum(`windowSeconds=1&bucketSeconds=1&probeKeyPrefix=${encodeURIComponent(prefix)}`);
    expect(done).toBeLessThanOrEqual(2);
  });

  it("refuses bad numbers with 400 and anyone but an admin/superuser with 401", async () => {
    for (const query of ["windowSeconds=0", "bucketSeconds=abc", "windowSeconds=3600&bucketSeconds=1"]) {
      const res = await get(`/api/fleet/completions?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error).toMatch(/must be/);
    }
    expect((await get("/api/fleet/completions", { token: null })).status).toBe(401);
  });
});

describe("GET /api/fleet/completions without a prefix: probe_job_completions, kept by triggers", () => {
  it("answers the same buckets as the rows do, and keeps counting finishes that retention has since deleted", async () => {
    const server = await startOwnServer({ env: { PB_FLEET_KEEP_DONE: "1s", PB_FLEET_KEEP_FAILED: "1s" } });
    try {
      const on = { baseUrl: server.url, token: server.token };
      const own = new FleetClient({ url: server.url, token: server.token });
      const jobs = await own.enqueueMany(Array.from({ length: 30 }, (_, i) => ({ probeKey: `c/${i}` })));
      const claimed = (await post("/api/fleet/claim-next", { workerId: "w", limit: 30 }, on)).body.jobs as { job: { id: string }; leaseToken: string }[];
      expect(claimed).toHaveLength(jobs.length);
      const releases = claimed.map(({ job, leaseToken }, i) => ({ jobId: job.id, leaseToken, status: i % 3 === 0 ? "failed" : "done" }));
      expect((await post("/api/fleet/complete", { workerId: "w", releases: releases.slice(0, 20) }, on)).status).toBe(200);
      for (const r of releases.slice(20)) expect((await post("/api/fleet/release", { workerId: "w", ...r }, on)).body.released).toBe(true);
      const read = async (query: string) => (await get(`/api/fleet/completions?windowSeconds=120&bucketSeconds=1${query}`, on)).body as CompletionsResponse;
      // The rows' answer (a prefix takes the index path) and the counters' agree bucket by bucket.
      const [counted, rows] = [await read(""), await read("&probeKeyPrefix=c%2F")];
      expect(counted.from).toBe(rows.from);
      expect(counted.buckets).toEqual(rows.buckets);
      const sum = (body: CompletionsResponse) => [body.buckets.reduce((n, b) => n + b.done, 0), body.buckets.reduce((n, b) => n + b.failed, 0)];
      expect(sum(counted)).toEqual([20, 10]);
      // Retention deletes the rows (kept 1 s); the chart still shows that they finished.
      await sleep(1_200);
      expect((await post("/api/fleet/maintenance", {}, on)).body.retention.deleted).toEqual({ done: 20, failed: 10 });
      expect(sum(await read("&probeKeyPrefix=c%2F"))).toEqual([0, 0]);
      expect(sum(await read(""))).toEqual([20, 10]);
    } finally {
      await server.stop();
    }
  });
});
