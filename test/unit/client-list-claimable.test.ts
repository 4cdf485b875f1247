// listClaimable lists what a claim would take: a pending job only once it is
// due (run_at empty or come, as claim-next's `run_at <= {:now}` and isDue
// judge it), and claimed/running jobs whose lease has passed (a steal does
// not wait on run_at). The record API here evaluates the filter the client
// sends, so a filter that forgot run_at lists the future job and fails.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AUTH_PATHS, FleetClient } from "../../src/client/fleet-client";
import { formatPbDate } from "../../src/lib/lease";
import { claimableRecordFilter, JOBS_COLLECTION } from "../../src/lib/record-filters";
import { isDue } from "../../src/lib/transitions";
import type { JobRow } from "../../src/lib/job-row";
import { compileFilter } from "./support/pb-filter-eval";

const NOW = Date.parse("2026-12-04T00:40:00.000Z");
const at = (offsetMs: number) => formatPbDate(NOW + offsetMs);
const base = { claimed_by: "", lease_expires_at: "", version: 1, created: at(-60_000), updated: at(-60_000), lease_token: "" };

const ROWS = [
  { ...base, id: "future", probe_key: "p/future", status: "pending", run_at: at(60_000) },
  { ...base, id: "due", probe_key: "p/due", status: "pending", run_at: at(-1_000) },
  { ...base, id: "due-now", probe_key: "p/due-now", status: "pending", run_at: at(0) },
  { ...base, id: "unstamped", probe_key: "p/unstamped", status: "pending", run_at: "" },
  { ...base, id: "stale", probe_key: "p/stale", status: "running", claimed_by: "w", lease_expires_at: at(-5_000), run_at: at(60_000) },
  { ...base, id: "live", probe_key: "p/live", status: "claimed", claimed_by: "w", lease_expires_at: at(30_000), run_at: at(-1_000) },
  { ...base, id: "done", probe_key: "p/done", status: "done", run_at: at(-1_000) },
  { ...base, id: "other", probe_key: "q/due", status: "pending", run_at: at(-1_000) },
];

/** The record API of probe_jobs, applying the `filter` it is sent (and perPage). */
function recordServer() {
  const filters: string[] = [];
  const paths: string[] = [];
  const fetchImpl = (async (input: RequestInfo | URL) => {
    const url = new URL(String(input));
    paths.push(url.pathname);
    if (url.pathname === AUTH_PATHS.superusers) return Response.json({ token: "t" });
    if (url.pathname === `/api/collections/${JOBS_COLLECTION}/records`) {
      const filter = url.searchParams.get("filter") ?? "";
      filters.push(filter);
      const test = filter === "" ? () => true : compileFilter(filter);
      const perPage = Number(url.searchParams.get("perPage") ?? "30");
      return Response.json({ items: ROWS.filter((r) => test(r)).slice(0, perPage) });
    }
    return Response.json({ code: 404, message: "Not found.", data: {} }, { status: 404 });
  }) as typeof fetch;
  const client = new FleetClient({ url: "http://fleet.test", email: "a@x.io", password: "secret123", fetch: fetchImpl });
  return { client, filters, paths };
}

describe("listClaimable leaves out jobs that are not yet due", () => {
  beforeEach(() => { vi.useFakeTimers({ toFake: ["Date"] }); vi.setSystemTime(NOW); });
  afterEach(() => { vi.useRealTimers(); });

  it("lists due and unstamped pending jobs and passed leases, not a future pending job, a live lease or a finished job", async () => {
    const { client, filters } = recordServer();
    const rows = await client.listClaimable({ limit: 100 });
    expect(rows.map((r) => r.id)).toEqual(["due", "due-now", "unstamped", "stale", "other"]);
    expect(filters).toEqual([claimableRecordFilter(NOW)]);
  });

  it("keeps the due-time term under a probe_key prefix (the prefix narrows the whole filter)", async () => {
    const { client, filters } = recordServer();
    const rows = await client.listClaimable({ probeKeyPrefix: "p/", limit: 100 });
    expect(rows.map((r) => r.id)).toEqual(["due", "due-now", "unstamped", "stale"]);
    expect(filters[0]).toBe(`(${claimableRecordFilter(NOW)}) && probe_key ~ 'p/%'`);
  });

  it("agrees with the server's own isDue on every pending row", () => {
    const test = compileFilter(claimableRecordFilter(NOW));
    for (const row of ROWS.filter((r) => r.status === "pending")) {
      expect(test(row), row.id).toBe(isDue(row as unknown as JobRow, NOW));
    }
  });

  it("builds the filter from PocketBase's date form of the given instant", () => {
    expect(claimableRecordFilter(NOW)).toBe(
      "((status = 'pending' && (run_at = '' || run_at <= '2026-12-04 00:40:00.000Z')) || " +
      "((status = 'claimed' || status = 'running') && lease_expires_at < '2026-12-04 00:40:00.000Z'))",
    );
  });
});

// A server from before the queue (docs/queue.md) has neither claim-next nor a run_at column, and PocketBase's
// record API refuses a filter that names a field the collection lacks (a 400): the claim-next fallback
// and listClaimable against such a server list without the due-time term.
describe("against a server from before the queue (no claim-next, no run_at)", () => {
  beforeEach(() => { vi.useFakeTimers({ toFake: ["Date"] }); vi.setSystemTime(NOW); });
  afterEach(() => { vi.useRealTimers(); });

  const OLD_ROWS = ROWS.filter((r) => r.id !== "future").map(({ run_at: _runAt, ...row }) => row);

  function oldServer() {
    const filters: string[] = [];
    const claims: string[] = [];
    const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(String(input));
      if (url.pathname === AUTH_PATHS.superusers) return Response.json({ token: "t" });
      if (url.pathname === `/api/collections/${JOBS_COLLECTION}/records`) {
        const filter = url.searchParams.get("filter") ?? "";
        filters.push(filter);
        if (/\brun_at\b/.test(filter)) {
          return Response.json({ code: 400, message: "Something went wrong while processing your request. Invalid filter parameters.", data: {} }, { status: 400 });
        }
        const test = filter === "" ? () => true : compileFilter(filter);
        return Response.json({ items: OLD_ROWS.filter((r) => test(r)) });
      }
      if (url.pathname === "/api/fleet/claim") {
        const { jobId, workerId } = JSON.parse(String(init?.body)) as { jobId: string; workerId: string };
        claims.push(jobId);
        const row = OLD_ROWS.find((r) => r.id === jobId)!;
        return Response.json({
          claimed: true, leaseToken: "tok",
          job: { id: row.id, probe_key: row.probe_key, status: "claimed", claimed_by: workerId, lease_expires_at: at(30_000), version: row.version + 1 },
        });
      }
      return Response.json({ code: 404, message: "The requested resource wasn't found.", data: {} }, { status: 404 });
    }) as typeof fetch;
    return { client: new FleetClient({ url: "http://fleet.test", email: "a@x.io", password: "secret123", fetch: fetchImpl }), filters, claims };
  }

  it("claim-next's fallback lists pending jobs and passed leases without naming run_at, and claims from them", async () => {
    const { client, filters, claims } = oldServer();
    const won = await client.claimNext({ workerId: "w-old", limit: 10 });
    expect(client.hasClaimNext).toBe(false);
    expect(filters.every((f) => !/\brun_at\b/.test(f))).toBe(true);
    expect(new Set(claims)).toEqual(new Set(["due", "due-now", "unstamped", "stale", "other"]));
    expect(won.map((h) => h.job.id).sort()).toEqual(["due", "due-now", "other", "stale", "unstamped"]);
  });

  it("listClaimable leaves the due-time term out once the server is known to have no claim-next", async () => {
    const { client, filters } = oldServer();
    await client.claimNext({ workerId: "w-old", limit: 1 });
    filters.length = 0;
    const rows = await client.listClaimable({ limit: 100 });
    expect(filters).toEqual([claimableRecordFilter(NOW, { hasRunAt: false })]);
    expect(rows.map((r) => r.id)).toEqual(["due", "due-now", "unstamped", "stale", "other"]);
  });

  it("listClaimable before any claim-next (or on a server with claim-next but no run_at) asks again without the due-time term after the 400, once", async () => {
    const { client, filters } = oldServer();
    const rows = await client.listClaimable({ limit: 100 });
    expect(filters).toEqual([claimableRecordFilter(NOW, { hasRunAt: true }), claimableRecordFilter(NOW, { hasRunAt: false })]);
    expect(rows.map((r) => r.id)).toEqual(["due", "due-now", "unstamped", "stale", "other"]);
    filters.length = 0;
    await client.listClaimable({ limit: 100 });
    expect(filters, "the server's answer is remembered").toEqual([claimableRecordFilter(NOW, { hasRunAt: false })]);
  });
});
