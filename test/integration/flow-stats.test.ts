// GET /api/fleet/stats by queue (docs/flow-control.md "Endpoints"): ?queue=q counts only
// q's jobs in every figure, ?probeKeyPrefix narrows it further (both apply), a
// bad queue name is a 400; the Prometheus text of the whole fleet carries
// pb_fleet_queue_jobs{queue,status} for the unfinished jobs of each queue, and
// a narrowed scrape's figures are its scope's.
import { beforeAll, describe, expect, inject, it } from "vitest";
import { createJob, futureDate, get, pastDate, randomKey } from "./support/fleet-api";

let prefix: string;
let other: string;
// "0" first: the queue gauges are listed by queue name, at most MAX_QUEUE_GAUGE_ROWS rows.
const q = randomKey("0fst-q");
const q2 = randomKey("0fst-r");

beforeAll(async () => {
  prefix = randomKey("fst") + "/";
  other = randomKey("fst-other") + "/";
  const rows: [string, string, Record<string, unknown>][] = [
    // q under prefix
    [prefix, q, { status: "pending" }],
    [prefix, q, { status: "pending", run_at: futureDate(3_600_000) }],
    [prefix, q, { status: "pending", attempts: 2, max_attempts: 5 }],
    [prefix, q, { status: "claimed", claimed_by: "a", lease_expires_at: futureDate() }],
    [prefix, q, { status: "running", claimed_by: "a", lease_expires_at: pastDate() }],
    [prefix, q, { status: "done", claimed_by: "a" }],
    [prefix, q, { status: "failed", claimed_by: "", dead_lettered_at: pastDate() }],
    [prefix, q, { status: "cancelled" }],
    // q under another prefix
    [other, q, { status: "pending" }],
    [other, q, { status: "running", claimed_by: "b", lease_expires_at: futureDate() }],
    [other, q, { status: "done", claimed_by: "b" }],
    // q2 under prefix
    [prefix, q2, { status: "pending" }],
    [prefix, q2, { status: "failed", claimed_by: "c" }],
    // the default queue under prefix (the record API's row without a queue)
    [prefix, "", { status: "pending" }],
  ];
  for (const [i, [p, queue, fields]] of rows.entries()) {
    await createJob({ probe_key: `${p}${i}`, ...(queue === "" ? {} : { queue }), ...fields } as any);
  }
});

async function stats(query: string): Promise<any> {
  const res = await get(`/api/fleet/stats?${query}`);
  expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

async function prometheus(query = ""): Promise<string> {
  const res = await fetch(`${inject("pbUrl")}/api/fleet/stats?format=prometheus${query}`, { headers: { Authorization: inject("adminToken") } });
  expect(res.status).toBe(200);
  return res.text();
}

const zero = { pending: 0, claimed: 0, running: 0, done: 0, failed: 0, cancelled: 0 };

describe("GET /api/fleet/stats?queue=", () => {
  it("counts only the queue's jobs, in every figure", async () => {
    expect(await stats(`queue=${q}`)).toMatchObject({
      counts: { pending: 4, claimed: 1, running: 2, done: 2, failed: 1, cancelled: 1 },
      total: 11, scheduled: 1, retrying: 1, deadLettered: 1, expiredLeases: 1,
    });
    expect(await stats(`queue=${q2}`)).toMatchObject({ counts: { ...zero, pending: 1, failed: 1 }, total: 2, scheduled: 0, expiredLeases: 0 });
    const none = await stats(`queue=${randomKey("0fst-none")}`);
    expect(none).toMatchObject({ counts: zero, total: 0, scheduled: 0, retrying: 0, deadLettered: 0, expiredLeases: 0, oldestPendingAgeSeconds: null });
  });

  it("with probeKeyPrefix too, both apply", async () => {
    const p = encodeURIComponent(prefix);
    expect(await stats(`queue=${q}&probeKeyPrefix=${p}`)).toMatchObject({
      counts: { pending: 3, claimed: 1, running: 1, done: 1, failed: 1, cancelled: 1 },
      total: 8, scheduled: 1, retrying: 1, deadLettered: 1, expiredLeases: 1,
    });
    expect(await stats(`queue=${q}&probeKeyPrefix=${encodeURIComponent(other)}`)).toMatchObject({
      counts: { ...zero, pending: 1, running: 1, done: 1 }, total: 3, scheduled: 0, expiredLeases: 0,
    });
    expect(await stats(`queue=${q2}&probeKeyPrefix=${encodeURIComponent(other)}`)).toMatchObject({ counts: zero, total: 0 });
    // the default queue, narrowed to this file's prefix: only the row posted without a queue
    expect(await stats(`queue=default&probeKeyPrefix=${p}`)).toMatchObject({ counts: { ...zero, pending: 1 }, total: 1 });
    // the prefix alone counts every queue
    expect(await stats(`probeKeyPrefix=${p}`)).toMatchObject({ total: 11, counts: { pending: 5, failed: 2 } });
  });

  it("a bad queue name is a 400", async () => {
    for (const bad of ["-x", "a%20b", "q".repeat(65), "%C3%A9", "a%2Fb"]) {
      const res = await get(`/api/fleet/stats?queue=${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body, bad).toEqual({ error: expect.stringMatching(/queue/) });
      expect((await get(`/api/fleet/stats?format=prometheus&queue=${bad}`)).status, bad).toBe(400);
    }
  });
});

describe("Prometheus", () => {
  it("the fleet's scrape has pb_fleet_queue_jobs{queue,status} for each queue's unfinished jobs, and pb_fleet_jobs as before", async () => {
    const text = await prometheus();
    expect(text).toContain("# TYPE pb_fleet_queue_jobs gauge\n");
    const series = (queue: string) => text.split("\n").filter((line) => line.startsWith(`pb_fleet_queue_jobs{queue="${queue}",`)).sort();
    expect(series(q)).toEqual([
      `pb_fleet_queue_jobs{queue="${q}",status="claimed"} 1`,
      `pb_fleet_queue_jobs{queue="${q}",status="pending"} 4`,
      `pb_fleet_queue_jobs{queue="${q}",status="running"} 2`,
    ]);
    expect(series(q2)).toEqual([`pb_fleet_queue_jobs{queue="${q2}",status="pending"} 1`]);
    // the per-status gauge keeps its old series: no queue label on it
    expect(text).toMatch(/\npb_fleet_jobs\{status="pending"\} \d+\n/);
    expect(text).not.toMatch(/pb_fleet_jobs\{queue=/);
    // every sample line is of the form name{labels} value
    for (const line of text.split("\n").filter((l) => l.startsWith("pb_fleet_queue_jobs"))) {
      expect(line).toMatch(/^pb_fleet_queue_jobs\{queue="[A-Za-z0-9][A-Za-z0-9_.:-]*",status="(pending|claimed|running)"\} \d+$/);
    }
  });

  it("a scrape narrowed by queue (and prefix) reports that scope's figures", async () => {
    const text = await prometheus(`&queue=${q}`);
    expect(text).toContain('pb_fleet_jobs{status="pending"} 4\n');
    expect(text).toContain('pb_fleet_jobs{status="running"} 2\n');
    expect(text).toContain('pb_fleet_jobs{status="cancelled"} 1\n');
    expect(text).toContain("pb_fleet_expired_leases 1\n");
    const both = await prometheus(`&queue=${q}&probeKeyPrefix=${encodeURIComponent(other)}`);
    expect(both).toContain('pb_fleet_jobs{status="pending"} 1\n');
    expect(both).toContain('pb_fleet_jobs{status="done"} 1\n');
    expect(both).toContain('pb_fleet_jobs{status="failed"} 0\n');
  });
});
