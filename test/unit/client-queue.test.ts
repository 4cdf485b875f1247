// FleetClient's queue calls over a fake fetch (no server): enqueue and
// enqueueMany (their checks before any request, the chunks of
// MAX_ENQUEUE_JOBS, the record API kept for bare probe keys, on a server
// without /api/fleet/enqueue too), cancel, retry, and renew/release with
// progress, result and error beside their old positional forms.
import { describe, expect, it } from "vitest";
import { FleetHttpError, FleetProtocolError } from "../../src/client/errors";
import { AUTH_PATHS, FleetClient } from "../../src/client/fleet-client";
import {
  MAX_ENQUEUE_JOBS, MAX_MAX_ATTEMPTS, MAX_PAYLOAD_BYTES, MAX_PRIORITY, MAX_PROGRESS_BYTES, MAX_RESULT_BYTES,
} from "../../src/lib/queue";
import { fakeFetch, json, NOT_FOUND, type Route } from "./support/route-fetch";

const AUTH = `POST ${AUTH_PATHS.superusers}`;
const ENQUEUE = "POST /api/fleet/enqueue";
const RECORDS = "POST /api/collections/probe_jobs/records";

function client(fetchImpl: typeof fetch) {
  return new FleetClient({ url: "http://fleet.test", email: "a@x.io", password: "secret123", fetch: fetchImpl });
}

const signIn: Route = () => json(200, { token: "t", record: { id: "s1" } });

/** The server's enqueue: ids in request order, created unless told otherwise. */
function enqueueRoute(): Route {
  let next = 1;
  return (req) => json(200, { jobs: req.body.jobs.map((j: any) => ({ id: `q${next++}`, probeKey: j.probeKey, created: true })) });
}

/** The record API's create, as both PocketBase lines answer it. */
function recordsRoute(): Route {
  let next = 1;
  return (req) => json(200, {
    id: `r${next++}`, created: "2025-01-01 00:00:00.000Z", updated: "2025-01-01 00:00:00.000Z", ...req.body,
  });
}

describe("FleetClient.enqueue", () => {
  it("without job options it is today's call: one record through the record API, answered as the row", async () => {
    const f = fakeFetch({ [AUTH]: signIn, [RECORDS]: recordsRoute(), [ENQUEUE]: enqueueRoute() });
    const c = client(f.fetchImpl);
    const row = await c.enqueue("probe/a");
    expect(row).toMatchObject({ id: "r1", probe_key: "probe/a", status: "pending", version: 0 });
    await c.enqueue("probe/b", { timeoutMs: 5_000 }); // request options only: still the record API
    expect(f.of(ENQUEUE)).toEqual([]);
    expect(f.of(RECORDS)).toHaveLength(2);
    expect(c.hasEnqueue).toBeUndefined();
  });

  it("with job options it posts one item to /api/fleet/enqueue (a Date runAt as ISO text) and answers { id, probeKey, created }", async () => {
    const f = fakeFetch({ [AUTH]: signIn, [ENQUEUE]: enqueueRoute() });
    const c = client(f.fetchImpl);
    const runAt = new Date("2030-01-02T03:04:05.000Z");
    const job = await c.enqueue("probe/a", {
      payload: { url: "https://example.test" }, runAt, priority: 5, maxAttempts: 3, uniqueKey: "a", timeoutMs: 5_000,
    });
    expect(job).toEqual({ id: "q1", probeKey: "probe/a", created: true });
    expect(f.of(ENQUEUE).map((s) => s.body)).toEqual([{
      jobs: [{ probeKey: "probe/a", payload: { url: "https://example.test" }, runAt: "2030-01-02T03:04:05.000Z", priority: 5, maxAttempts: 3, uniqueKey: "a" }],
    }]);
    expect(c.hasEnqueue).toBe(true);
    // An option given as undefined still asks for the queue form; it is left out of the item.
    await c.enqueue("probe/b", { delaySeconds: 30, payload: undefined });
    expect(f.of(ENQUEUE)[1]!.body).toEqual({ jobs: [{ probeKey: "probe/b", delaySeconds: 30 }] });
  });

  it("accepts runAt text with a zone (Z, an offset, PocketBase's own form)", async () => {
    const f = fakeFetch({ [AUTH]: signIn, [ENQUEUE]: enqueueRoute() });
    const c = client(f.fetchImpl);
    for (const runAt of ["2030-01-01T00:00:00Z", "2030-01-01T00:00:00.123+02:00", "2030-01-01 00:00:00.000Z"]) {
      await c.enqueue("k", { runAt });
    }
    expect(f.of(ENQUEUE).map((s) => s.body.jobs[0].runAt)).toEqual([
      "2030-01-01T00:00:00Z", "2030-01-01T00:00:00.123+02:00", "2030-01-01 00:00:00.000Z",
    ]);
  });

  const big = "x".repeat(MAX_PAYLOAD_BYTES); // its JSON has two quotes more
  const cyclic: Record<string, unknown> = {};
  cyclic["self"] = cyclic;
  it.each([
    ["payload", { payload: big }, `at most ${MAX_PAYLOAD_BYTES} bytes`],
    ["payload", { payload: 10n }, "a JSON value"],
    ["payload", { payload: cyclic }, "a JSON value"],
    ["payload", { payload: () => 1 }, "a JSON value"],
    ["runAt", { runAt: "2030-01-01T00:00:00" }, "with a zone"],
    ["runAt", { runAt: "tomorrow" }, "with a zone"],
    ["runAt", { runAt: new Date(Number.NaN) }, "a valid Date"],
    ["runAt", { runAt: 1893456000000 }, "a Date, or ISO-8601 text"],
    ["delaySeconds", { delaySeconds: -1 }, ">= 0"],
    ["delaySeconds", { delaySeconds: Number.NaN }, ">= 0"],
    ["delaySeconds", { runAt: "2030-01-01T00:00:00Z", delaySeconds: 5 }, "not both"],
    ["priority", { priority: 1.5 }, "an integer"],
    ["priority", { priority: MAX_PRIORITY + 1 }, `to ${MAX_PRIORITY}`],
    ["maxAttempts", { maxAttempts: -1 }, "an integer from 0"],
    ["maxAttempts", { maxAttempts: MAX_MAX_ATTEMPTS + 1 }, `to ${MAX_MAX_ATTEMPTS}`],
    ["uniqueKey", { uniqueKey: 5 }, "a string"],
    ["maxAttempt", { maxAttempt: 3 }, "unknown option"],
  ] as const)("refuses a bad `%s` with a TypeError naming it, before any request (%#)", async (name, options, says) => {
    const f = fakeFetch({ [AUTH]: signIn, [ENQUEUE]: enqueueRoute() });
    const err = await client(f.fetchImpl).enqueue("k", options as any).catch((e) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toContain(`\`${name}\``);
    expect(err.message).toContain(says);
    expect(f.seen).toEqual([]); // not even the sign-in
  });

  it("refuses an empty probe key in the queue form before any request", async () => {
    const f = fakeFetch({ [AUTH]: signIn, [ENQUEUE]: enqueueRoute() });
    await expect(client(f.fetchImpl).enqueue("", { priority: 1 })).rejects.toThrow(/enqueue: `probeKey` must be a non-empty string/);
    expect(f.seen).toEqual([]);
  });

  it("an answer without the protocol's shape is a FleetProtocolError", async () => {
    const f = fakeFetch({ [AUTH]: signIn, [ENQUEUE]: () => json(200, { jobs: [{ id: "q1" }] }) });
    await expect(client(f.fetchImpl).enqueue("k", { priority: 1 })).rejects.toBeInstanceOf(FleetProtocolError);
  });
});

describe("FleetClient.enqueueMany", () => {
  it(`sends 2500 jobs as chunks of ${MAX_ENQUEUE_JOBS}, ${MAX_ENQUEUE_JOBS} and 500, one after the other, answering in order`, async () => {
    let inFlight = 0;
    let peak = 0;
    const route = enqueueRoute();
    const f = fakeFetch({
      [AUTH]: signIn,
      [ENQUEUE]: async (req) => {
        peak = Math.max(peak, ++inFlight);
        await new Promise((r) => setTimeout(r, 1));
        inFlight--;
        return route(req);
      },
    });
    const jobs = Array.from({ length: 2500 }, (_, i) => ({ probeKey: `k${i}`, priority: i % 3 }));
    const answer = await client(f.fetchImpl).enqueueMany(jobs);
    expect(f.of(ENQUEUE).map((s) => s.body.jobs.length)).toEqual([1000, 1000, 500]);
    expect(f.of(ENQUEUE)[1]!.body.jobs[0]).toEqual({ probeKey: "k1000", priority: 1 });
    expect(peak).toBe(1);
    expect(answer).toHaveLength(2500);
    expect(answer.map((j) => j.probeKey)).toEqual(jobs.map((j) => j.probeKey));
    expect(answer[2499]).toEqual({ id: "q2500", probeKey: "k2499", created: true });
  });

  it("checks every job before the first request: a bad one in the last chunk sends nothing", async () => {
    const f = fakeFetch({ [AUTH]: signIn, [ENQUEUE]: enqueueRoute() });
    const jobs: any[] = Array.from({ length: 1501 }, (_, i) => ({ probeKey: `k${i}` }));
    jobs[1500] = { probeKey: "k1500", maxAttempts: 2.5 };
    const err = await client(f.fetchImpl).enqueueMany(jobs).catch((e) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toMatch(/^enqueueMany: jobs\[1500\]: `maxAttempts` must be/);
    expect(f.seen).toEqual([]);
  });

  it("a chunk that fails stops the rest; the chunks before it stay enqueued (separate transactions)", async () => {
    let calls = 0;
    const route = enqueueRoute();
    const f = fakeFetch({
      [AUTH]: signIn,
      [ENQUEUE]: (req) => (++calls === 2 ? json(400, { error: "jobs[3].uniqueKey: too long" }) : route(req)),
    });
    const jobs = Array.from({ length: 2500 }, (_, i) => ({ probeKey: `k${i}` }));
    const err = await client(f.fetchImpl).enqueueMany(jobs).catch((e) => e);
    expect(err).toBeInstanceOf(FleetHttpError);
    expect(err).toMatchObject({ status: 400 });
    expect(f.of(ENQUEUE)).toHaveLength(2);
  });

  it("an array of probe keys is today's call: the record API, `concurrency` at a time, answered as rows", async () => {
    const f = fakeFetch({ [AUTH]: signIn, [RECORDS]: recordsRoute(), [ENQUEUE]: enqueueRoute() });
    const rows = await client(f.fetchImpl).enqueueMany(["a", "b", "c"], { concurrency: 1 });
    expect(rows.map((r) => [r.id, r.probe_key, r.status])).toEqual([["r1", "a", "pending"], ["r2", "b", "pending"], ["r3", "c", "pending"]]);
    expect(f.of(ENQUEUE)).toEqual([]);
    expect(await client(f.fetchImpl).enqueueMany([])).toEqual([]);
  });

  it("on a server without /api/fleet/enqueue (a 404, probed once) bare probe keys fall back to the record API", async () => {
    const f = fakeFetch({ [AUTH]: signIn, [RECORDS]: recordsRoute() });
    const c = client(f.fetchImpl);
    const answer = await c.enqueueMany([{ probeKey: "a" }, { probeKey: "b" }], { concurrency: 1 });
    expect(answer).toEqual([{ id: "r1", probeKey: "a", created: true }, { id: "r2", probeKey: "b", created: true }]);
    expect(c.hasEnqueue).toBe(false);
    expect(f.of(RECORDS).map((s) => s.body.probe_key)).toEqual(["a", "b"]);
    // Known now: the next bare jobs go straight to the record API.
    await c.enqueueMany([{ probeKey: "c" }]);
    expect(f.of(ENQUEUE)).toHaveLength(1);
    expect(f.of(RECORDS)).toHaveLength(3);
  });

  it("on such a server, jobs with options are refused with a 404 naming them, and nothing is created", async () => {
    const f = fakeFetch({ [AUTH]: signIn, [RECORDS]: recordsRoute() });
    const c = client(f.fetchImpl);
    const err = await c.enqueueMany([{ probeKey: "a" }, { probeKey: "b", payload: { n: 1 }, priority: 2 }]).catch((e) => e);
    expect(err).toBeInstanceOf(FleetHttpError);
    expect(err.status).toBe(404);
    expect(err.message).toContain("no POST /api/fleet/enqueue");
    expect(err.message).toContain("`payload`, `priority`");
    expect(f.of(RECORDS)).toEqual([]);
    expect(c.hasEnqueue).toBe(false);
    // enqueue's queue form too; a job with options asks the server again (it may have been upgraded since).
    await expect(c.enqueue("c", { payload: 1 })).rejects.toMatchObject({ status: 404 });
    expect(f.of(ENQUEUE)).toHaveLength(2);
    expect(f.of(RECORDS)).toEqual([]);
  });

  it("once the server has taken an enqueue, a 404 is an error like any other (no fallback)", async () => {
    let calls = 0;
    const route = enqueueRoute();
    const f = fakeFetch({ [AUTH]: signIn, [RECORDS]: recordsRoute(), [ENQUEUE]: (req) => (++calls === 1 ? route(req) : json(404, NOT_FOUND)) });
    const c = client(f.fetchImpl);
    await c.enqueueMany([{ probeKey: "a" }]);
    await expect(c.enqueueMany([{ probeKey: "b" }])).rejects.toMatchObject({ status: 404 });
    expect(f.of(RECORDS)).toEqual([]);
    expect(c.hasEnqueue).toBe(true);
  });

  it("refuses what is not an array of jobs before any request", async () => {
    const f = fakeFetch({ [AUTH]: signIn });
    const c = client(f.fetchImpl);
    await expect(c.enqueueMany("a" as any)).rejects.toBeInstanceOf(TypeError);
    await expect(c.enqueueMany(["a", { probeKey: "b" }] as any)).rejects.toThrow(/jobs\[0\] must be an object/);
    expect(f.seen).toEqual([]);
  });
});

describe("FleetClient renew, release, cancel and retry", () => {
  const JOB = { id: "j1", probe_key: "k", status: "running", claimed_by: "w", lease_expires_at: "2030-01-01 00:00:00.000Z", version: 2 };

  it("renew keeps its positional form and sends progress when given (checked against MAX_PROGRESS_BYTES first)", async () => {
    const f = fakeFetch({ [AUTH]: signIn, "POST /api/fleet/renew": () => json(200, { renewed: true, job: JOB }) });
    const c = client(f.fetchImpl);
    await c.renew("j1", "w", 30, "L");
    await c.renew("j1", "w", 30, "L", { progress: { done: 3, of: 10 } });
    expect(f.of("POST /api/fleet/renew").map((s) => s.body)).toEqual([
      { jobId: "j1", workerId: "w", leaseSeconds: 30, leaseToken: "L" },
      { jobId: "j1", workerId: "w", leaseSeconds: 30, leaseToken: "L", progress: { done: 3, of: 10 } },
    ]);
    const err = await c.renew("j1", "w", 30, "L", { progress: "x".repeat(MAX_PROGRESS_BYTES) }).catch((e) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toContain("`progress`");
    expect(f.of("POST /api/fleet/renew")).toHaveLength(2);
  });

  it("release keeps its positional form and sends result and error when given; retry is a target", async () => {
    const f = fakeFetch({ [AUTH]: signIn, "POST /api/fleet/release": () => json(200, { released: true, job: { ...JOB, status: "done" } }) });
    const c = client(f.fetchImpl);
    await c.release("j1", "w", "done", "L");
    await c.release("j1", "w", "done", "L", { result: { latencyMs: 12 } });
    await c.release("j1", "w", "retry", "L", { error: "timed out" });
    await c.release("j1", "w", "failed", undefined, { result: null, error: null });
    expect(f.of("POST /api/fleet/release").map((s) => s.body)).toEqual([
      { jobId: "j1", workerId: "w", status: "done", leaseToken: "L" },
      { jobId: "j1", workerId: "w", status: "done", leaseToken: "L", result: { latencyMs: 12 } },
      { jobId: "j1", workerId: "w", status: "retry", leaseToken: "L", error: "timed out" },
      { jobId: "j1", workerId: "w", status: "failed" },
    ]);
    await expect(c.release("j1", "w", "done", "L", { result: "x".repeat(MAX_RESULT_BYTES) })).rejects.toThrow(/`result` must be JSON of at most/);
    await expect(c.release("j1", "w", "failed", "L", { error: 42 as any })).rejects.toThrow(/`error` must be a string/);
    expect(f.of("POST /api/fleet/release")).toHaveLength(4);
  });

  it("cancel and retry post the job id and answer as the server does", async () => {
    const queueJob = { ...JOB, status: "cancelled", payload: null, attempts: 1, max_attempts: 25 };
    let cancels = 0;
    const f = fakeFetch({
      [AUTH]: signIn,
      "POST /api/fleet/cancel": () => json(200, ++cancels === 1 ? { cancelled: true, job: queueJob } : { cancelled: false }),
      "POST /api/fleet/retry": (req) => json(200, req.body.jobId === "j1"
        ? { retried: true, job: { ...queueJob, status: "pending", attempts: 0 } }
        : { retried: false, reason: "unique_key_taken" }),
    });
    const c = client(f.fetchImpl);
    expect(await c.cancel("j1")).toEqual({ cancelled: true, job: queueJob });
    expect(await c.cancel("j1")).toEqual({ cancelled: false });
    expect(await c.retry("j1")).toMatchObject({ retried: true, job: { status: "pending", attempts: 0 } });
    expect(await c.retry("j2")).toEqual({ retried: false, reason: "unique_key_taken" });
    expect(f.of("POST /api/fleet/cancel").map((s) => s.body)).toEqual([{ jobId: "j1" }, { jobId: "j1" }]);
    expect(f.of("POST /api/fleet/retry").map((s) => s.body)).toEqual([{ jobId: "j1" }, { jobId: "j2" }]);
  });

  it("cancel and retry: a server without the queue answers 404; a wrong shape is a FleetProtocolError", async () => {
    const f = fakeFetch({ [AUTH]: signIn, "POST /api/fleet/retry": () => json(200, { retried: false, reason: "nope" }) });
    const c = client(f.fetchImpl);
    await expect(c.cancel("j1")).rejects.toMatchObject({ name: "FleetHttpError", status: 404 });
    await expect(c.retry("j1")).rejects.toBeInstanceOf(FleetProtocolError);
  });
});
