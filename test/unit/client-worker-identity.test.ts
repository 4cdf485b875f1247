// FleetClient as a worker identity (a record of the auth collection
// fleet_workers), over a fake fetch: the `worker` option and its checks, the
// sign-in at PocketBase's own auth-with-password (the same path and answer on
// 0.22 and 0.23+), identity() from the answer's record, one sign-in again
// after a 401, a refused sign-in as a FleetAuthError with a sentence, a 403 as
// a FleetForbiddenError that is never retried, a worker token without a
// password, and the queue fields of claim-next and enqueue.
import { describe, expect, it } from "vitest";
import { FleetAuthError, FleetForbiddenError, FleetHttpError } from "../../src/client/errors";
import { FleetClient, WORKER_AUTH_PATHS, type FleetClientOptions } from "../../src/client/fleet-client";
import { NOT_SIGNED_IN } from "../../src/lib/identity";
import { MAX_CLAIM_QUEUES } from "../../src/lib/queue-names";
import { fakeFetch, json, type Route } from "./support/route-fetch";


/** What both lines answer a wrong identity or password. */
const REFUSED = { code: 400, message: "Failed to authenticate.", data: {} };
/** 0.23+'s answer when the collection's authRule (disabled = false) does not hold. */
const AUTH_RULE_REFUSED = { code: 403, message: "The request doesn't satisfy the collection requirements to authenticate.", data: {} };

const SIGN_IN = `POST ${WORKER_AUTH_PATHS.password}`;
const REFRESH = `POST ${WORKER_AUTH_PATHS.refresh}`;
const CLAIM_NEXT = "POST /api/fleet/claim-next";
const CLAIM = "POST /api/fleet/claim";
const ENQUEUE = "POST /api/fleet/enqueue";
const RECORD = { id: "wrk1234567890ab", collectionName: "fleet_workers", username: "scraper-1", queues: ["crawl", "fetch"], can_enqueue: true };
const JOB = {
  id: "j1", probe_key: "k", status: "claimed", claimed_by: `${RECORD.id}/a`, lease_expires_at: "2030-01-01 00:00:00.000Z", version: 1,
  queue: "crawl", attempts: 1, max_attempts: 25,
};

/** A sign-in handing out `tokens` in turn (the last one again once they run out), with `record`. */
function signIn(tokens: string[], record: Record<string, unknown> = RECORD): Route {
  let n = 0;
  return () => json(200, { token: tokens[Math.min(n++, tokens.length - 1)], record });
}

function workerClient(fetchImpl: typeof fetch, extra: Partial<FleetClientOptions> = {}): FleetClient {
  return new FleetClient({ url: "http://fleet.test", worker: { identity: "scraper-1", password: "a-long-password" }, fetch: fetchImpl, ...extra });
}

describe("FleetClient's `worker` option", () => {
  it("takes { identity, password } or { token }, and says which client it is", () => {
    expect(workerClient(fakeFetch({}).fetchImpl).isWorkerIdentity).toBe(true);
    expect(new FleetClient({ url: "http://x", worker: { token: "t" } }).isWorkerIdentity).toBe(true);
    expect(new FleetClient({ url: "http://x", email: "a@x.io", password: "p" }).isWorkerIdentity).toBe(false);
  });

  it("refuses admin credentials beside it, with a sentence", () => {
    const both = "FleetClient: give admin/superuser credentials (`email`, `password`, `token`) or `worker`, not both";
    const worker = { identity: "scraper-1", password: "a-long-password" };
    expect(() => new FleetClient({ url: "http://x", worker, email: "a@x.io", password: "p" })).toThrow(new TypeError(both));
    expect(() => new FleetClient({ url: "http://x", worker, token: "admin-token" })).toThrow(new TypeError(both));
    expect(() => new FleetClient({ url: "http://x", worker: { token: "t" }, email: "a@x.io" })).toThrow(new TypeError(both));
  });

  it("refuses a `worker` that is neither form", () => {
    const bad = [
      {}, { identity: "scraper-1" }, { password: "p" }, { identity: "", password: "p" }, { identity: "s", password: "" },
      { token: "" }, { identity: "s", password: "p", token: "t" }, { token: 5 }, "scraper-1", null,
    ];
    for (const worker of bad) {
      expect(() => new FleetClient({ url: "http://x", worker: worker as never }), JSON.stringify(worker))
        .toThrow(/^FleetClient: `worker` must be \{ identity, password \} .* or \{ token \}/);
    }
  });

  it("without any credential the message names the worker forms too", () => {
    expect(() => new FleetClient({ url: "http://x" })).toThrow(/`worker: \{ identity, password \}` or `worker: \{ token \}`/);
  });
});

describe("FleetClient signed in as a worker identity", () => {
  it("signs in lazily at fleet_workers' auth-with-password with { identity, password }, then sends that token", async () => {
    const f = fakeFetch({ [SIGN_IN]: signIn(["wtok-1"]), [CLAIM_NEXT]: () => json(200, { jobs: [{ job: JOB, leaseToken: "L" }] }) });
    const c = workerClient(f.fetchImpl);
    expect(f.seen).toHaveLength(0); // nothing until the first call
    const held = await c.claimNext({ workerId: `${RECORD.id}/a` });
    expect(held).toEqual([{ job: JOB, leaseToken: "L", alreadyHeld: false }]);
    expect(f.sequence()).toEqual([`${SIGN_IN} -`, `${CLAIM_NEXT} wtok-1`]);
    expect(f.seen[0]!.body).toEqual({ identity: "scraper-1", password: "a-long-password" });
    expect(c.token).toBe("wtok-1");
    expect(c.authApi).toBeUndefined(); // no admin sign-in was probed
  });

  it("identity() answers { id, name, queues, canEnqueue } of the sign-in's record, signing in once", async () => {
    const f = fakeFetch({ [SIGN_IN]: signIn(["wtok-1"]) });
    const c = workerClient(f.fetchImpl);
    expect(await c.identity()).toEqual({ id: RECORD.id, name: "scraper-1", queues: ["crawl", "fetch"], canEnqueue: true });
    expect(await c.identity()).toEqual({ id: RECORD.id, name: "scraper-1", queues: ["crawl", "fetch"], canEnqueue: true });
    expect(f.count(SIGN_IN)).toBe(1);
  });

  it("identity(): a record with no queues (null, as an empty json field reads) and can_enqueue off", async () => {
    const f = fakeFetch({ [SIGN_IN]: signIn(["t"], { ...RECORD, queues: null, can_enqueue: false }) });
    expect(await workerClient(f.fetchImpl).identity()).toEqual({ id: RECORD.id, name: "scraper-1", queues: [], canEnqueue: false });
  });

  it("identity() is null for an admin client, and asks nothing", async () => {
    const f = fakeFetch({});
    expect(await new FleetClient({ url: "http://x", email: "a@x.io", password: "p", fetch: f.fetchImpl }).identity()).toBeNull();
    expect(f.seen).toHaveLength(0);
  });

  it("after a 401 signs in again once and retries, and keeps the identity the new sign-in answered", async () => {
    let claims = 0;
    const f = fakeFetch({
      [SIGN_IN]: (() => {
        let n = 0;
        return () => json(200, { token: `wtok-${++n}`, record: n === 1 ? RECORD : { ...RECORD, queues: ["crawl"] } });
      })(),
      [CLAIM]: () => (++claims === 1 ? json(401, NOT_SIGNED_IN) : json(200, { claimed: true, job: JOB, leaseToken: "L" })),
    });
    const c = workerClient(f.fetchImpl);
    const won = await c.claim("j1", `${RECORD.id}/a`);
    expect(won).toMatchObject({ claimed: true, leaseToken: "L" });
    expect(f.sequence()).toEqual([`${SIGN_IN} -`, `${CLAIM} wtok-1`, `${SIGN_IN} -`, `${CLAIM} wtok-2`]);
    expect(await c.identity()).toMatchObject({ queues: ["crawl"] });
  });

  it("a 401 again right after signing in (a disabled identity on 0.22, whose sign-in still works) is a FleetAuthError", async () => {
    const f = fakeFetch({ [SIGN_IN]: signIn(["wtok-1", "wtok-2"]), [CLAIM]: () => json(401, NOT_SIGNED_IN) });
    const err = await workerClient(f.fetchImpl).claim("j1", RECORD.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FleetAuthError);
    expect(err).not.toBeInstanceOf(FleetForbiddenError);
    expect(err).toMatchObject({ op: "claim", status: 401 });
    expect((err as Error).message).toMatch(/\(again, right after signing in\)$/);
    expect(f.count(SIGN_IN)).toBe(2);
    expect(f.count(CLAIM)).toBe(2);
  });

  it("a 403 is a FleetForbiddenError with the server's message, thrown at once: no second sign-in, no retry", async () => {
    const error = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
    const f = fakeFetch({ [SIGN_IN]: signIn(["wtok-1"]), [ENQUEUE]: () => json(403, { error }) });
    const err = await workerClient(f.fetchImpl).enqueue("k", { payload: { n: 1 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FleetForbiddenError);
    expect(err).toBeInstanceOf(FleetAuthError); // what callers that catch auth errors still see
    expect(err).toBeInstanceOf(FleetHttpError);
    expect(err).toMatchObject({ name: "FleetForbiddenError", op: "enqueue", status: 403, body: { error } });
    expect((err as Error).message).toBe(`enqueue: HTTP 403: ${error}`);
    expect(f.count(SIGN_IN)).toBe(1);
    expect(f.count(ENQUEUE)).toBe(1);
  });

  it("an admin client's 403 is still an auth refusal it signs in again for (the record API to a bad token)", async () => {
    let reads = 0;
    const f = fakeFetch({
      "POST /api/collections/_superusers/auth-with-password": () => json(200, { token: `s${reads}`, record: { id: "s1" } }),
      "GET /api/collections/probe_jobs/records/j1": () => (++reads === 1
        ? json(403, { code: 403, message: "Only superusers can perform this action.", data: {} })
        : json(200, { id: "j1", probe_key: "k", status: "pending" })),
    });
    const c = new FleetClient({ url: "http://fleet.test", email: "a@x.io", password: "p", fetch: f.fetchImpl });
    expect(await c.getJob("j1")).toMatchObject({ id: "j1" });
    expect(f.count("POST /api/collections/_superusers/auth-with-password")).toBe(2);
  });

  it.each([
    ["a wrong name or password (400 on both lines)", 400, REFUSED, `authenticate: HTTP 400: Failed to authenticate. (the worker identity "scraper-1"'s name or password was refused)`],
    ["a disabled identity on 0.23+ (its authRule: 403)", 403, AUTH_RULE_REFUSED,
      `authenticate: HTTP 403: ${AUTH_RULE_REFUSED.message} (the worker identity "scraper-1" may not sign in: is it disabled?)`],
  ])("a refused sign-in, %s, is a FleetAuthError with a sentence, and nothing else is sent", async (_what, status, body, message) => {
    const f = fakeFetch({ [SIGN_IN]: () => json(status, body), [CLAIM_NEXT]: () => json(200, { jobs: [] }) });
    const c = workerClient(f.fetchImpl);
    const err = await c.claimNext({ workerId: "w" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FleetAuthError);
    expect(err).not.toBeInstanceOf(FleetForbiddenError);
    expect(err).toMatchObject({ op: "authenticate", status, body });
    expect((err as Error).message).toBe(message);
    expect(f.count(CLAIM_NEXT)).toBe(0);
    await expect(c.identity()).rejects.toBeInstanceOf(FleetAuthError);
    expect(c.token).toBe("");
  });

  it("a server without fleet_workers (404) says so", async () => {
    const f = fakeFetch({});
    const err = await workerClient(f.fetchImpl).identity().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FleetHttpError);
    expect(err).not.toBeInstanceOf(FleetAuthError);
    expect((err as Error).message).toMatch(/has no fleet_workers collection .*worker identities/);
  });
});

describe("FleetClient with a worker token (no password)", () => {
  it("sends the token, and a 401 is a FleetAuthError at once: it cannot sign in", async () => {
    const f = fakeFetch({ [CLAIM]: () => json(401, NOT_SIGNED_IN) });
    const c = new FleetClient({ url: "http://fleet.test", worker: { token: "given" }, fetch: f.fetchImpl });
    const err = await c.claim("j1", "w").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FleetAuthError);
    expect(err).toMatchObject({ status: 401 });
    expect((err as Error).message).toMatch(/\(a worker token without a password: cannot sign in again\)$/);
    expect(f.sequence()).toEqual([`${CLAIM} given`]);
    await expect(c.authenticate()).rejects.toThrow(/worker token but no worker password/);
  });

  it("identity() asks auth-refresh with the token once (shared by concurrent callers), and uses the fresh token", async () => {
    const f = fakeFetch({ [REFRESH]: signIn(["fresh"]), [CLAIM]: () => json(200, { claimed: false }) });
    const c = new FleetClient({ url: "http://fleet.test", worker: { token: "given" }, fetch: f.fetchImpl });
    const [a, b] = await Promise.all([c.identity(), c.identity()]);
    expect(a).toEqual({ id: RECORD.id, name: "scraper-1", queues: ["crawl", "fetch"], canEnqueue: true });
    expect(b).toEqual(a);
    await c.claim("j1", RECORD.id);
    expect(f.sequence()).toEqual([`${REFRESH} given`, `${CLAIM} fresh`]);
  });
});

describe("queues in the worker's calls", () => {
  const routes = () => fakeFetch({
    [SIGN_IN]: signIn(["t"]),
    [CLAIM_NEXT]: () => json(200, { jobs: [{ job: JOB, leaseToken: "L" }] }),
    [CLAIM]: () => json(200, { claimed: false, reason: "queue_not_allowed" }),
    [ENQUEUE]: (req) => json(200, { jobs: req.body.jobs.map((j: any, i: number) => ({ id: `n${i}`, probeKey: j.probeKey, created: true })) }),
  });

  it("claimNext sends `queue` (a name or a list) only when given; the job view carries its queue", async () => {
    const f = routes();
    const c = workerClient(f.fetchImpl);
    const [held] = await c.claimNext({ workerId: "w", queue: "crawl" });
    expect(held?.job.queue).toBe("crawl");
    await c.claimNext({ workerId: "w", queue: ["crawl", "fetch"] as const });
    await c.claimNext({ workerId: "w" });
    expect(f.seen.filter((s) => s.path === "/api/fleet/claim-next").map((s) => s.body)).toEqual([
      { workerId: "w", queue: "crawl" }, { workerId: "w", queue: ["crawl", "fetch"] }, { workerId: "w" },
    ]);
  });

  it("claimNext refuses a bad `queue` before sending anything", async () => {
    const f = routes();
    const c = workerClient(f.fetchImpl);
    const tooMany = Array.from({ length: MAX_CLAIM_QUEUES + 1 }, (_, i) => `q${i}`);
    for (const queue of ["", "-lead", "has space", "x".repeat(65), [], tooMany, ["ok", "not ok"], 7]) {
      await expect(c.claimNext({ workerId: "w", queue: queue as never }), JSON.stringify(queue)).rejects.toThrow(/^claimNext: `queue(\[\d+\])?` must be/);
    }
    expect(f.seen).toHaveLength(0);
  });

  it("a claim by id of a job in a queue the identity may not take answers claimed:false with reason queue_not_allowed", async () => {
    const c = workerClient(routes().fetchImpl);
    expect(await c.claim("j1", RECORD.id)).toEqual({ claimed: false, reason: "queue_not_allowed" });
  });

  it("enqueue and enqueueMany send `queue`, checked against the queue name pattern", async () => {
    const f = routes();
    const c = workerClient(f.fetchImpl);
    expect(await c.enqueue("k1", { queue: "crawl" })).toEqual({ id: "n0", probeKey: "k1", created: true });
    await c.enqueueMany([{ probeKey: "k2", queue: "fetch:v2" }, { probeKey: "k3" }]);
    expect(f.seen.filter((s) => s.path === "/api/fleet/enqueue").map((s) => s.body)).toEqual([
      { jobs: [{ probeKey: "k1", queue: "crawl" }] }, { jobs: [{ probeKey: "k2", queue: "fetch:v2" }, { probeKey: "k3" }] },
    ]);
    await expect(c.enqueue("k4", { queue: "no spaces" })).rejects.toThrow(/^enqueue: `queue` must be a queue name matching/);
    await expect(c.enqueueMany([{ probeKey: "k5", queue: "" }])).rejects.toThrow(/^enqueueMany: jobs\[0\]: `queue` must be/);
  });

  it("the bare enqueue forms (the record API, admins only) are refused for a worker identity with a sentence", async () => {
    const f = routes();
    const c = workerClient(f.fetchImpl);
    await expect(c.enqueue("k")).rejects.toThrow(/^enqueue: a worker identity cannot create rows through the record API/);
    await expect(c.enqueueMany(["a", "b"])).rejects.toThrow(/^enqueueMany: a worker identity cannot create rows through the record API/);
    expect(f.seen).toHaveLength(0);
  });
});
