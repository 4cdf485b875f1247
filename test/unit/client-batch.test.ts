// FleetClient's batch calls over a fake fetch: heartbeat (many renews) and
// complete (many releases). Their checks before any request (the server's
// limits, a TypeError naming the item and the field), the chunks of
// MAX_BATCH_ITEMS (each its own transaction), the one retry after a lost
// answer (a committed release then reads refused_terminal_same_holder), the
// 404 of a server without them, and the answer's shape. Behind the fake
// fetch, where it matters, is FakeFleet: the server's validation and the
// lib's decideRenew/decideRelease.
import { describe, expect, it } from "vitest";
import { FleetHttpError, FleetProtocolError, FleetTimeoutError } from "../../src/client/errors";
import { AUTH_PATHS, FleetClient } from "../../src/client/fleet-client";
import { MAX_BATCH_ITEMS, MAX_ERROR_BYTES, MAX_PROGRESS_BYTES, MAX_RESULT_BYTES } from "../../src/lib/queue";
import { FakeFleet } from "./support/fake-fleet";

interface Seen {
  path: string;
  body: any;
}
type Route = (req: Seen, signal: AbortSignal | undefined) => Response | Promise<Response>;

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

const NOT_FOUND = { code: 404, message: "The requested resource wasn't found.", data: {} };
const AUTH = AUTH_PATHS.superusers;
const HEARTBEAT = "/api/fleet/heartbeat";
const COMPLETE = "/api/fleet/complete";

function fakeFetch(routes: Record<string, Route>) {
  const seen: Seen[] = [];
  const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req: Seen = { path: new URL(String(input)).pathname, body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined };
    seen.push(req);
    const route = routes[req.path];
    return route ? route(req, init?.signal ?? undefined) : json(404, NOT_FOUND);
  }) as typeof fetch;
  return { fetchImpl, seen, of: (path: string) => seen.filter((s) => s.path === path) };
}

function client(fetchImpl: typeof fetch, timeoutMs?: number) {
  return new FleetClient({ url: "http://fleet.test", email: "a@x.io", password: "secret123", fetch: fetchImpl, timeoutMs });
}

const signIn: Route = () => json(200, { token: "t", record: { id: "s1" } });

/** Never answers; rejects like fetch does when its signal aborts. */
function hang(signal: AbortSignal | undefined): Promise<Response> {
  return new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason)));
}

/** Routes answered by a FakeFleet: the server's validation (400s) and decisions. */
function fleetRoutes(fake: FakeFleet): Record<string, Route> {
  const answer = async (work: () => Promise<unknown>): Promise<Response> => {
    try {
      return json(200, await work());
    } catch (err) {
      if (err instanceof FleetHttpError) return json(err.status, err.body);
      throw err;
    }
  };
  return {
    [AUTH]: signIn,
    [HEARTBEAT]: (req) => answer(() => fake.heartbeat(req.body.workerId, req.body.leases, { leaseSeconds: req.body.leaseSeconds })),
    [COMPLETE]: (req) => answer(() => fake.complete(req.body.workerId, req.body.releases)),
  };
}

/** `n` jobs claimed by w1 in the fake, with their tokens. */
async function held(fake: FakeFleet, n: number) {
  for (let i = 0; i < n; i++) fake.add();
  const won = await fake.claimNext({ workerId: "w1", leaseSeconds: 30, limit: n });
  return won.map((h) => ({ jobId: h.job.id, leaseToken: h.leaseToken! }));
}

describe("FleetClient.heartbeat", () => {
  it("posts every lease in one call with one leaseSeconds and answers the results in request order", async () => {
    const fake = new FakeFleet();
    const leases = await held(fake, 3);
    fake.row(leases[1]!.jobId).claimed_by = "thief";
    const f = fakeFetch(fleetRoutes(fake));
    const c = client(f.fetchImpl);
    const answer = await c.heartbeat("w1", [
      { ...leases[0]!, progress: { step: 1 } }, leases[1]!, { ...leases[2]!, progress: null },
    ], { leaseSeconds: 60 });
    expect(answer).toEqual({
      results: [
        { jobId: leases[0]!.jobId, renewed: true, job: expect.objectContaining({ id: leases[0]!.jobId, status: "running" }) },
        { jobId: leases[1]!.jobId, renewed: false },
        { jobId: leases[2]!.jobId, renewed: true, job: expect.objectContaining({ id: leases[2]!.jobId, status: "running" }) },
      ],
    });
    // null progress is left out, as the server would read it.
    expect(f.of(HEARTBEAT).map((s) => s.body)).toEqual([{
      workerId: "w1", leaseSeconds: 60,
      leases: [{ ...leases[0]!, progress: { step: 1 } }, leases[1]!, leases[2]!],
    }]);
    expect(fake.progressOf(leases[0]!.jobId)).toEqual({ step: 1 });
    expect(fake.row(leases[0]!.jobId).status).toBe("running");
    expect(c.hasHeartbeat).toBe(true);
  });

  it.each([
    ["an empty workerId", "", [{ jobId: "j1" }], {}, "heartbeat: `workerId` must be a non-empty string"],
    ["the sweeper's reserved id", "pb-fleet-sweeper", [{ jobId: "j1" }], {}, "heartbeat: `workerId`: workerId \"pb-fleet-sweeper\" is reserved"],
    ["no leases", "w1", [], {}, "heartbeat: `leases` must be a non-empty array (got an empty array)"],
    ["leases that are not an array", "w1", { jobId: "j1" }, {}, "heartbeat: `leases` must be a non-empty array (got an object)"],
    ["an item that is not an object", "w1", [{ jobId: "j1" }, "j2"], {}, "heartbeat: leases[1] must be an object"],
    ["an item without a jobId", "w1", [{ leaseToken: "t" }], {}, "heartbeat: leases[0]: `jobId` must be a non-empty string (got undefined)"],
    ["an empty leaseToken", "w1", [{ jobId: "j1", leaseToken: "" }], {}, "heartbeat: leases[0]: `leaseToken` must be a non-empty string when given"],
    ["an unknown field", "w1", [{ jobId: "j1", token: "t" }], {}, "heartbeat: leases[0]: unknown field `token`"],
    ["progress over the limit", "w1", [{ jobId: "j1" }, { jobId: "j2", progress: "x".repeat(MAX_PROGRESS_BYTES) }], {},
      `heartbeat: leases[1]: \`progress\` must be JSON of at most ${MAX_PROGRESS_BYTES} bytes`],
    ["progress that is not JSON", "w1", [{ jobId: "j1", progress: 1n }], {}, "heartbeat: leases[0]: `progress` must be a JSON value"],
    ["a leaseSeconds of 0", "w1", [{ jobId: "j1" }], { leaseSeconds: 0 }, "heartbeat: `leaseSeconds` must be a number of seconds > 0 (got 0)"],
    ["a leaseSeconds that is not a number", "w1", [{ jobId: "j1" }], { leaseSeconds: "30" }, "heartbeat: `leaseSeconds` must be a number of seconds > 0"],
  ])("refuses %s with a TypeError naming it, before any request", async (_what, workerId, leases, opts, message) => {
    const f = fakeFetch({ [AUTH]: signIn });
    const err = await client(f.fetchImpl).heartbeat(workerId, leases as any, opts as any).catch((e) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toContain(message);
    expect(f.seen).toEqual([]);
  });

  it(`sends 250 leases as chunks of ${MAX_BATCH_ITEMS}, ${MAX_BATCH_ITEMS} and 50, one after the other, answering in order`, async () => {
    const fake = new FakeFleet();
    const leases = await held(fake, 250);
    const f = fakeFetch(fleetRoutes(fake));
    const answer = await client(f.fetchImpl).heartbeat("w1", leases, { leaseSeconds: 30 });
    expect(f.of(HEARTBEAT).map((s) => s.body.leases.length)).toEqual([100, 100, 50]);
    expect(f.of(HEARTBEAT).every((s) => s.body.leaseSeconds === 30)).toBe(true);
    expect(answer.results.map((r) => r.jobId)).toEqual(leases.map((l) => l.jobId));
    expect(answer.results.every((r) => r.renewed)).toBe(true);
  });

  it("a chunk that fails is thrown and the ones after it are not sent; the chunks before it have renewed (their own transactions)", async () => {
    const fake = new FakeFleet();
    const leases = await held(fake, 250);
    const routes = fleetRoutes(fake);
    let calls = 0;
    const f = fakeFetch({ ...routes, [HEARTBEAT]: (req, s) => (++calls === 2 ? json(400, { error: "bad" }) : routes[HEARTBEAT]!(req, s)) });
    const err = await client(f.fetchImpl).heartbeat("w1", leases).catch((e) => e);
    expect(err).toBeInstanceOf(FleetHttpError);
    expect(err).toMatchObject({ status: 400 });
    expect(f.of(HEARTBEAT)).toHaveLength(2);
    expect(fake.row(leases[0]!.jobId).status).toBe("running"); // renewed by the first chunk
    expect(fake.row(leases[100]!.jobId).status).toBe("claimed");
  });

  it("a heartbeat whose answer was lost is sent once more (it only renews again)", async () => {
    const fake = new FakeFleet();
    const leases = await held(fake, 2);
    const routes = fleetRoutes(fake);
    let calls = 0;
    const f = fakeFetch({
      ...routes,
      [HEARTBEAT]: async (req, signal) => {
        const answer = await routes[HEARTBEAT]!(req, signal); // committed...
        return ++calls === 1 ? hang(signal) : answer; // ...but the first answer never arrives
      },
    });
    const answer = await client(f.fetchImpl, 30).heartbeat("w1", leases);
    expect(f.of(HEARTBEAT)).toHaveLength(2);
    expect(answer.results.map((r) => r.renewed)).toEqual([true, true]);
  });

  it("a server without it answers 404: a FleetHttpError 404 saying to renew instead, remembered as hasHeartbeat false", async () => {
    const f = fakeFetch({ [AUTH]: signIn });
    const c = client(f.fetchImpl);
    expect(c.hasHeartbeat).toBeUndefined();
    const err = await c.heartbeat("w1", [{ jobId: "j1" }]).catch((e) => e);
    expect(err).toBeInstanceOf(FleetHttpError);
    expect(err.status).toBe(404);
    expect(err.message).toContain("this server has no POST /api/fleet/heartbeat");
    expect(err.message).toContain("renew each job instead");
    expect(c.hasHeartbeat).toBe(false);
    expect(f.of(HEARTBEAT)).toHaveLength(1); // a 404 is not retried
  });

  it("once the server has answered one, a 404 is an error like any other", async () => {
    let calls = 0;
    const f = fakeFetch({
      [AUTH]: signIn,
      [HEARTBEAT]: (req) => (++calls === 1 ? json(200, { results: [{ jobId: req.body.leases[0].jobId, renewed: true }] }) : json(404, NOT_FOUND)),
    });
    const c = client(f.fetchImpl);
    await c.heartbeat("w1", [{ jobId: "j1" }]);
    const err = await c.heartbeat("w1", [{ jobId: "j1" }]).catch((e) => e);
    expect(err).toMatchObject({ status: 404 });
    expect(err.message).not.toContain("this server has no");
    expect(c.hasHeartbeat).toBe(true);
  });

  it.each([
    ["no results", {}],
    ["fewer results than leases", { results: [{ jobId: "j1", renewed: true }] }],
    ["results out of order", { results: [{ jobId: "j2", renewed: true }, { jobId: "j1", renewed: true }] }],
    ["a result without a boolean renewed", { results: [{ jobId: "j1", renewed: "yes" }, { jobId: "j2", renewed: true }] }],
  ])("an answer with %s is a FleetProtocolError", async (_what, body) => {
    const f = fakeFetch({ [AUTH]: signIn, [HEARTBEAT]: () => json(200, body) });
    await expect(client(f.fetchImpl).heartbeat("w1", [{ jobId: "j1" }, { jobId: "j2" }])).rejects.toBeInstanceOf(FleetProtocolError);
  });
});

describe("FleetClient.complete", () => {
  it("posts every release in one call and answers released, or released:false with the reason, per item in order", async () => {
    const fake = new FakeFleet();
    const jobs = await held(fake, 3);
    fake.row(jobs[2]!.jobId).lease_token = "a-later-claim";
    const f = fakeFetch(fleetRoutes(fake));
    const c = client(f.fetchImpl);
    const answer = await c.complete("w1", [
      { ...jobs[0]!, status: "done", result: { answer: 42 }, error: null },
      { ...jobs[1]!, status: "failed", error: "no such host" },
      { ...jobs[2]!, status: "done", result: "stale" },
    ]);
    expect(answer).toEqual({
      results: [
        { jobId: jobs[0]!.jobId, released: true, job: expect.objectContaining({ id: jobs[0]!.jobId, status: "done" }) },
        { jobId: jobs[1]!.jobId, released: true, job: expect.objectContaining({ id: jobs[1]!.jobId, status: "failed" }) },
        { jobId: jobs[2]!.jobId, released: false, reason: "refused_stale_token" },
      ],
    });
    expect(f.of(COMPLETE)[0]!.body.releases[0]).toEqual({ ...jobs[0]!, status: "done", result: { answer: 42 } });
    expect(fake.results.get(jobs[0]!.jobId)).toEqual({ answer: 42 });
    expect(fake.row(jobs[1]!.jobId)).toMatchObject({ status: "failed", last_error: "no such host" });
    expect(fake.row(jobs[2]!.jobId).status).toBe("claimed");
    expect(c.hasComplete).toBe(true);
  });

  it.each([
    ["an unknown status", [{ jobId: "j1", status: "finished" }], "complete: releases[0]: `status` must be one of done, failed, pending, retry"],
    ["no status", [{ jobId: "j1" }], "complete: releases[0]: `status` must be one of"],
    ["a result over the limit", [{ jobId: "j1", status: "done" }, { jobId: "j2", status: "done", result: "x".repeat(MAX_RESULT_BYTES) }],
      `complete: releases[1]: \`result\` must be JSON of at most ${MAX_RESULT_BYTES} bytes`],
    ["an error that is not a string", [{ jobId: "j1", status: "failed", error: new Error("boom") }], "complete: releases[0]: `error` must be a string"],
    ["an error over the limit", [{ jobId: "j1", status: "failed", error: "x".repeat(MAX_ERROR_BYTES + 1) }],
      `complete: releases[0]: \`error\` must be at most ${MAX_ERROR_BYTES} bytes`],
    ["an error over the limit in UTF-8", [{ jobId: "j1", status: "failed", error: "é".repeat(MAX_ERROR_BYTES / 2) + "x" }],
      `complete: releases[0]: \`error\` must be at most ${MAX_ERROR_BYTES} bytes`],
    ["no releases", [], "complete: `releases` must be a non-empty array"],
  ])("refuses %s with a TypeError naming it, before any request", async (_what, releases, message) => {
    const f = fakeFetch({ [AUTH]: signIn });
    const err = await client(f.fetchImpl).complete("w1", releases as any).catch((e) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toContain(message);
    expect(f.seen).toEqual([]);
  });

  it("an error is measured in UTF-8 as the server measures it, not as JSON text: MAX_ERROR_BYTES of newlines is taken", async () => {
    const fake = new FakeFleet();
    const [job] = await held(fake, 1);
    const f = fakeFetch(fleetRoutes(fake));
    const trace = "\n".repeat(MAX_ERROR_BYTES); // twice as long escaped in the body
    const answer = await client(f.fetchImpl).complete("w1", [{ ...job!, status: "failed", error: trace }]);
    expect(answer.results).toEqual([{ jobId: job!.jobId, released: true, job: expect.objectContaining({ status: "failed" }) }]);
    expect(fake.row(job!.jobId).last_error).toBe(trace);
  });

  it("an error of exactly MAX_ERROR_BYTES is taken, by the client and by the server", async () => {
    const fake = new FakeFleet();
    const [job] = await held(fake, 1);
    const f = fakeFetch(fleetRoutes(fake));
    const answer = await client(f.fetchImpl).complete("w1", [{ ...job!, status: "failed", error: "é".repeat(MAX_ERROR_BYTES / 2) }]);
    expect(answer.results).toEqual([{ jobId: job!.jobId, released: true, job: expect.objectContaining({ status: "failed" }) }]);
  });

  it("sends 250 releases as chunks of 100, 100 and 50 (each its own transaction), answering in order", async () => {
    const fake = new FakeFleet();
    const jobs = await held(fake, 250);
    const f = fakeFetch(fleetRoutes(fake));
    const answer = await client(f.fetchImpl).complete("w1", jobs.map((j) => ({ ...j, status: "done" as const })));
    expect(f.of(COMPLETE).map((s) => s.body.releases.length)).toEqual([100, 100, 50]);
    expect(answer.results.map((r) => r.jobId)).toEqual(jobs.map((j) => j.jobId));
    expect(answer.results.every((r) => r.released)).toBe(true);
  });

  it("a complete whose answer was lost is sent once more: what committed then reads refused_terminal_same_holder", async () => {
    const fake = new FakeFleet();
    const jobs = await held(fake, 2);
    const routes = fleetRoutes(fake);
    let calls = 0;
    const f = fakeFetch({
      ...routes,
      [COMPLETE]: async (req, signal) => {
        const answer = await routes[COMPLETE]!(req, signal); // committed...
        return ++calls === 1 ? hang(signal) : answer; // ...but the first answer never arrives
      },
    });
    const answer = await client(f.fetchImpl, 30).complete("w1", jobs.map((j) => ({ ...j, status: "done" as const, result: "ok" })));
    expect(f.of(COMPLETE)).toHaveLength(2);
    expect(answer.results).toEqual(jobs.map((j) => ({ jobId: j.jobId, released: false, reason: "refused_terminal_same_holder" })));
    expect(jobs.every((j) => fake.row(j.jobId).status === "done")).toBe(true);
  });

  it("a lost answer twice is a FleetTimeoutError (one retry only)", async () => {
    const f = fakeFetch({ [AUTH]: signIn, [COMPLETE]: (_req, signal) => hang(signal) });
    await expect(client(f.fetchImpl, 20).complete("w1", [{ jobId: "j1", status: "done" }])).rejects.toBeInstanceOf(FleetTimeoutError);
    expect(f.of(COMPLETE)).toHaveLength(2);
  });

  it("a server without it answers 404: a FleetHttpError 404 saying to release instead, remembered as hasComplete false", async () => {
    const fake = new FakeFleet();
    fake.batchCalls = false;
    const f = fakeFetch(fleetRoutes(fake));
    const c = client(f.fetchImpl);
    const err = await c.complete("w1", [{ jobId: "j1", status: "done" }]).catch((e) => e);
    expect(err).toMatchObject({ status: 404 });
    expect(err.message).toContain("this server has no POST /api/fleet/complete");
    expect(err.message).toContain("release each job instead");
    expect(c.hasComplete).toBe(false);
  });

  it.each([
    ["an unknown refusal", { results: [{ jobId: "j1", released: false, reason: "nope" }] }],
    ["released:false without a reason", { results: [{ jobId: "j1", released: false }] }],
    ["another job's result", { results: [{ jobId: "j2", released: true }] }],
    ["no results", { released: true }],
  ])("an answer with %s is a FleetProtocolError", async (_what, body) => {
    const f = fakeFetch({ [AUTH]: signIn, [COMPLETE]: () => json(200, body) });
    await expect(client(f.fetchImpl).complete("w1", [{ jobId: "j1", status: "done" }])).rejects.toBeInstanceOf(FleetProtocolError);
  });
});
