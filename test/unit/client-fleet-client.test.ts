// FleetClient over a fake fetch (no server): sign-in and the single retry after a
// 401, typed errors, timeouts, the safe retry of a claim whose answer was lost,
// the claim-next capability probe with its list-and-claim fallback (which never
// drops a claim it won), the server's sweep, and the protocol facts it shares
// with src/lib.
import { describe, expect, it } from "vitest";
import {
  FleetAbortError, FleetAuthError, FleetHttpError, FleetNetworkError, FleetProtocolError, FleetTimeoutError,
} from "../../src/client/errors";
import { FleetClient } from "../../src/client/fleet-client";
import { toPbDate } from "../../src/client/index";
import { formatPbDate } from "../../src/lib/lease";
import { RELEASE_REFUSALS } from "../../src/lib/types";

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  auth: string | null;
  body: any;
}
type Route = (req: Seen, signal: AbortSignal | undefined) => Response | Promise<Response>;

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/** A fetch that answers from `routes` ("POST /api/fleet/claim" -> handler) and records every request. */
function fakeFetch(routes: Record<string, Route>) {
  const seen: Seen[] = [];
  const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(String(input));
    const headers = new Headers(init?.headers);
    const req: Seen = {
      method: init?.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      auth: headers.get("authorization"),
      body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined,
    };
    seen.push(req);
    const route = routes[`${req.method} ${req.path}`];
    if (!route) return json(404, { code: 404, message: "Not Found.", data: {} });
    return route(req, init?.signal ?? undefined);
  }) as typeof fetch;
  return { fetchImpl, seen, count: (key: string) => seen.filter((s) => `${s.method} ${s.path}` === key).length };
}

/** Never answers; rejects like fetch does when its signal aborts. */
function hang(signal: AbortSignal | undefined): Promise<Response> {
  return new Promise((_resolve, reject) => {
    signal?.addEventListener("abort", () => reject(signal.reason));
  });
}

const AUTH = "POST /api/admins/auth-with-password";
const CLAIM = "POST /api/fleet/claim";
const JOB = { id: "j1", probe_key: "k", status: "claimed", claimed_by: "w", lease_expires_at: "2030-01-01 00:00:00.000Z", version: 1 };

function signIn(tokens: string[]): Route {
  let n = 0;
  return () => json(200, { token: tokens[Math.min(n++, tokens.length - 1)], admin: { id: "a1", email: "a@x.io" } });
}

function client(fetchImpl: typeof fetch, extra: Partial<ConstructorParameters<typeof FleetClient>[0]> = {}) {
  return new FleetClient({ url: "http://fleet.test", email: "a@x.io", password: "secret123", fetch: fetchImpl, ...extra });
}

describe("FleetClient authentication", () => {
  it("signs in on first use, then after a 401 signs in again and retries once", async () => {
    let claims = 0;
    const f = fakeFetch({
      [AUTH]: signIn(["tok-1", "tok-2"]),
      [CLAIM]: (req) => (++claims === 1 ? json(401, { message: "token expired" }) : json(200, { claimed: true, job: JOB, leaseToken: "L" })),
    });
    const c = client(f.fetchImpl);
    expect(await c.claim("j1", "w")).toEqual({ claimed: true, job: JOB, leaseToken: "L", alreadyHeld: false });
    expect(f.seen.map((s) => `${s.method} ${s.path} ${s.auth ?? "-"}`)).toEqual([
      `${AUTH} -`, `${CLAIM} tok-1`, `${AUTH} tok-1`, `${CLAIM} tok-2`,
    ]);
    expect(f.seen[0]!.body).toEqual({ identity: "a@x.io", password: "secret123" });
    expect(c.token).toBe("tok-2");
  });

  it("throws FleetAuthError when the retry after signing in is a 401 again (no third try)", async () => {
    const f = fakeFetch({ [AUTH]: signIn(["t"]), [CLAIM]: () => json(401, { message: "nope" }) });
    const err = await client(f.fetchImpl).claim("j1", "w").catch((e) => e);
    expect(err).toBeInstanceOf(FleetAuthError);
    expect(err).toMatchObject({ status: 401, op: "claim" });
    expect(err.message).toContain("again, right after signing in");
    expect(f.count(CLAIM)).toBe(2);
    expect(f.count(AUTH)).toBe(2);
  });

  it("a token-only client cannot sign in again: its 401 is thrown at once", async () => {
    const f = fakeFetch({ [CLAIM]: () => json(401, { message: "invalid token" }) });
    const c = new FleetClient({ url: "http://fleet.test", token: "given", fetch: f.fetchImpl });
    const err = await c.claim("j1", "w").catch((e) => e);
    expect(err).toBeInstanceOf(FleetAuthError);
    expect(err.message).toContain("token-only client");
    expect(f.seen.map((s) => `${s.path} ${s.auth}`)).toEqual(["/api/fleet/claim given"]);
  });

  it("the record API's 403 for a token it does not take as an admin's is handled like a 401", async () => {
    let writes = 0;
    const f = fakeFetch({
      [AUTH]: signIn(["old", "new"]),
      "PATCH /api/collections/probe_jobs/records/j1": () =>
        ++writes === 1 ? json(403, { code: 403, message: "Only admins can perform this action.", data: {} }) : json(200, { id: "j1" }),
    });
    await client(f.fetchImpl).writeResult("j1", { ok: true });
    expect(f.seen.map((s) => `${s.method} ${s.auth}`)).toEqual(["POST null", "PATCH old", "POST old", "PATCH new"]);
    expect(f.seen[3]!.body).toEqual({ result: { ok: true } });

    const tokenOnly = new FleetClient({ url: "http://fleet.test", token: "t", fetch: fakeFetch({
      "GET /api/collections/probe_jobs/records/j1": () => json(403, { message: "Only admins can perform this action." }),
    }).fetchImpl });
    await expect(tokenOnly.getJob("j1")).rejects.toMatchObject({ name: "FleetAuthError", status: 403 });
  });

  it("concurrent calls share one sign-in", async () => {
    const f = fakeFetch({ [AUTH]: signIn(["t"]), [CLAIM]: () => json(200, { claimed: false }) });
    const c = client(f.fetchImpl);
    await Promise.all([c.claim("a", "w"), c.claim("b", "w"), c.claim("c", "w")]);
    expect(f.count(AUTH)).toBe(1);
  });

  it("wrong credentials are an HTTP error naming the sign-in", async () => {
    const f = fakeFetch({ [AUTH]: () => json(400, { code: 400, message: "Failed to authenticate.", data: {} }) });
    const err = await client(f.fetchImpl).claim("j1", "w").catch((e) => e);
    expect(err).toBeInstanceOf(FleetHttpError);
    expect(err).toMatchObject({ status: 400, op: "authenticate", message: "authenticate: HTTP 400: Failed to authenticate." });
  });

  it("needs credentials or a token", () => {
    expect(() => new FleetClient({ url: "http://x" })).toThrow(/email.*password.*token/);
    expect(() => new FleetClient({ url: "", token: "t" })).toThrow(/url/);
  });
});

describe("FleetClient errors", () => {
  it("a 400 is a FleetHttpError carrying the server's message, not retried", async () => {
    const f = fakeFetch({ [AUTH]: signIn(["t"]), "POST /api/fleet/release": () => json(400, { error: "status must be done|failed|pending" }) });
    const err = await client(f.fetchImpl).release("j1", "w", "bogus" as "done").catch((e) => e);
    expect(err).toBeInstanceOf(FleetHttpError);
    expect(err).toMatchObject({ status: 400, body: { error: "status must be done|failed|pending" } });
    expect(err.message).toBe("release: HTTP 400: status must be done|failed|pending");
    expect(f.count("POST /api/fleet/release")).toBe(1);
  });

  it("PocketBase's field errors are part of the message", async () => {
    const f = fakeFetch({
      [AUTH]: signIn(["t"]),
      "POST /api/collections/probe_jobs/records": () => json(400, {
        code: 400, message: "Failed to create record.", data: { probe_key: { code: "validation_required", message: "Missing required value." } },
      }),
    });
    await expect(client(f.fetchImpl).enqueue("")).rejects.toThrow("enqueue: HTTP 400: Failed to create record. (probe_key: Missing required value.)");
  });

  it("a 5xx is thrown after the one retry that claim/renew/release get", async () => {
    const f = fakeFetch({ [AUTH]: signIn(["t"]), "POST /api/fleet/renew": () => json(503, { message: "busy" }) });
    const err = await client(f.fetchImpl).renew("j1", "w").catch((e) => e);
    expect(err).toBeInstanceOf(FleetHttpError);
    expect(err.status).toBe(503);
    expect(f.count("POST /api/fleet/renew")).toBe(2);
  });

  it("no answer within the timeout is a FleetTimeoutError (per client, or per call)", async () => {
    const f = fakeFetch({ [AUTH]: signIn(["t"]), "GET /api/collections/probe_jobs/records/j1": (_r, signal) => hang(signal) });
    const c = client(f.fetchImpl, { timeoutMs: 30 });
    const err = await c.getJob("j1").catch((e) => e);
    expect(err).toBeInstanceOf(FleetTimeoutError);
    expect(err).toMatchObject({ timeoutMs: 30, message: "getJob: no answer within 30 ms" });
    await expect(c.getJob("j1", { timeoutMs: 10 })).rejects.toMatchObject({ timeoutMs: 10 });
  });

  it("an enqueue that timed out is not retried (it may have been created)", async () => {
    const f = fakeFetch({ [AUTH]: signIn(["t"]), "POST /api/collections/probe_jobs/records": (_r, s) => hang(s) });
    await expect(client(f.fetchImpl, { timeoutMs: 20 }).enqueue("k")).rejects.toBeInstanceOf(FleetTimeoutError);
    expect(f.count("POST /api/collections/probe_jobs/records")).toBe(1);
  });

  it("a refused connection is a FleetNetworkError naming the code", async () => {
    const f = fakeFetch({
      [AUTH]: signIn(["t"]),
      [CLAIM]: () => Promise.reject(new TypeError("fetch failed", { cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }) })),
    });
    const err = await client(f.fetchImpl).claim("j1", "w").catch((e) => e);
    expect(err).toBeInstanceOf(FleetNetworkError);
    expect(err.message).toBe("claim: fetch failed (ECONNREFUSED)");
  });

  it("the caller's own signal gives FleetAbortError", async () => {
    const f = fakeFetch({ [AUTH]: signIn(["t"]), "GET /api/collections/probe_jobs/records/j1": (_r, s) => hang(s) });
    const ac = new AbortController();
    const pending = client(f.fetchImpl).getJob("j1", { signal: ac.signal });
    setTimeout(() => ac.abort(), 5);
    await expect(pending).rejects.toBeInstanceOf(FleetAbortError);
  });

  it("an answer without the protocol's shape is a FleetProtocolError", async () => {
    const f = fakeFetch({ [AUTH]: signIn(["t"]), [CLAIM]: () => json(200, { ok: true }) });
    await expect(client(f.fetchImpl).claim("j1", "w")).rejects.toBeInstanceOf(FleetProtocolError);
  });
});

describe("FleetClient claims", () => {
  it("retries a claim whose answer was lost; the alreadyHeld answer is a win", async () => {
    let committed = false;
    const f = fakeFetch({
      [AUTH]: signIn(["t"]),
      [CLAIM]: (req, signal) => {
        if (!committed) {
          committed = true; // the server did the claim, but the answer never arrives
          return hang(signal);
        }
        return json(200, { claimed: true, alreadyHeld: true, job: JOB, leaseToken: "L1" });
      },
    });
    const answer = await client(f.fetchImpl, { timeoutMs: 30 }).claim("j1", "w", 20);
    expect(answer).toEqual({ claimed: true, alreadyHeld: true, job: JOB, leaseToken: "L1" });
    expect(f.seen.filter((s) => s.path === "/api/fleet/claim").map((s) => s.body)).toEqual([
      { jobId: "j1", workerId: "w", leaseSeconds: 20 }, { jobId: "j1", workerId: "w", leaseSeconds: 20 },
    ]);
  });

  it("renew and release send the lease token only when given", async () => {
    const f = fakeFetch({
      [AUTH]: signIn(["t"]),
      "POST /api/fleet/renew": () => json(200, { renewed: false }),
      "POST /api/fleet/release": () => json(200, { released: false, reason: "refused_stale_token" }),
    });
    const c = client(f.fetchImpl);
    expect(await c.renew("j", "w", 5, "tok")).toEqual({ renewed: false });
    expect(await c.renew("j", "w")).toEqual({ renewed: false });
    expect(await c.release("j", "w", "done", "tok")).toEqual({ released: false, reason: "refused_stale_token" });
    expect(f.seen.filter((s) => s.path !== "/api/admins/auth-with-password").map((s) => s.body)).toEqual([
      { jobId: "j", workerId: "w", leaseSeconds: 5, leaseToken: "tok" },
      { jobId: "j", workerId: "w" },
      { jobId: "j", workerId: "w", status: "done", leaseToken: "tok" },
    ]);
  });

  it("claimNext uses /api/fleet/claim-next when the server has it, and remembers", async () => {
    const f = fakeFetch({
      [AUTH]: signIn(["t"]),
      "POST /api/fleet/claim-next": () => json(200, { jobs: [{ job: JOB, leaseToken: "L" }] }),
    });
    const c = client(f.fetchImpl);
    expect(await c.claimNext({ workerId: "w", limit: 3, leaseSeconds: 9, probeKeyPrefix: "p/" })).toEqual([
      { job: JOB, leaseToken: "L", alreadyHeld: false },
    ]);
    expect(f.seen[1]!.body).toEqual({ workerId: "w", limit: 3, leaseSeconds: 9, probeKeyPrefix: "p/" });
    expect(c.hasClaimNext).toBe(true);
  });

  it("without claim-next (404 once) it lists claimable rows and claims them by id from then on", async () => {
    const rows = ["r1", "r2", "r3"].map((id) => ({ ...JOB, id, probe_key: `p/${id}`, status: "pending" }));
    const f = fakeFetch({
      [AUTH]: signIn(["t"]),
      "GET /api/collections/probe_jobs/records": () => json(200, { page: 1, perPage: 12, totalItems: -1, totalPages: -1, items: rows }),
      // r2 is lost to another worker; the others are won
      [CLAIM]: (req) => json(200, req.body.jobId === "r2" ? { claimed: false } : { claimed: true, job: { ...JOB, id: req.body.jobId }, leaseToken: "L-" + req.body.jobId }),
    });
    const c = client(f.fetchImpl);
    const first = await c.claimNext({ workerId: "w", limit: 2, probeKeyPrefix: "p/" });
    expect(first.map((h) => h.job.id).sort()).toEqual(["r1", "r3"]);
    expect(first.every((h) => h.leaseToken === "L-" + h.job.id)).toBe(true);
    expect(c.hasClaimNext).toBe(false);
    await c.claimNext({ workerId: "w" });
    expect(f.count("POST /api/fleet/claim-next")).toBe(1);

    const list = f.seen.find((s) => s.method === "GET")!;
    const filter = list.query.get("filter")!;
    expect(filter).toMatch(/^\(status = "pending" \|\| \(\(status = "claimed" \|\| status = "running"\) && lease_expires_at < '\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z'\)\) && probe_key ~ 'p\/%'$/);
    expect(list.query.get("sort")).toBe("created");
    expect(list.query.get("perPage")).toBe("12");
  });

  it("escapes LIKE wildcards in a prefix and drops rows that only match case-insensitively", async () => {
    const f = fakeFetch({
      [AUTH]: signIn(["t"]),
      "GET /api/collections/probe_jobs/records": () => json(200, {
        items: [{ ...JOB, probe_key: "A_1%x" }, { ...JOB, probe_key: "a_1%x" }],
      }),
    });
    const rows = await client(f.fetchImpl).listExpiredLeases({ probeKeyPrefix: "a_1%" });
    expect(rows.map((r) => r.probe_key)).toEqual(["a_1%x"]);
    expect(f.seen[1]!.query.get("filter")).toContain("probe_key ~ 'a\\_1\\%%'");
    expect(f.seen[1]!.query.get("sort")).toBe("lease_expires_at");
  });
});

describe("FleetClient claim-next fallback keeps what it won", () => {
  const LIST = "GET /api/collections/probe_jobs/records";
  const rows = ["r1", "r2", "r3"].map((id) => ({ ...JOB, id, status: "pending" }));

  it("a claim that fails after earlier wins returns those wins (held under live leases) instead of rejecting", async () => {
    let claims = 0;
    const f = fakeFetch({
      [AUTH]: signIn(["t"]),
      [LIST]: () => json(200, { items: rows }),
      // The first claim wins; then the server starts failing (the claim's retry fails too).
      [CLAIM]: (req) => (++claims === 1
        ? json(200, { claimed: true, job: { ...JOB, id: req.body.jobId }, leaseToken: "L-" + req.body.jobId })
        : json(503, { message: "busy" })),
    });
    const won = await client(f.fetchImpl).claimNext({ workerId: "w", limit: 3 });
    const first = f.seen.find((s) => s.path === "/api/fleet/claim")!.body.jobId;
    expect(won).toEqual([{ job: { ...JOB, id: first }, leaseToken: "L-" + first, alreadyHeld: false }]);
    // It stops at the failure instead of trying the remaining rows against a failing server.
    expect(f.count(CLAIM)).toBe(3);
  });

  it("rejects with the error when the failing claim had won nothing yet", async () => {
    const f = fakeFetch({
      [AUTH]: signIn(["t"]),
      [LIST]: () => json(200, { items: rows }),
      [CLAIM]: () => json(503, { message: "busy" }),
    });
    await expect(client(f.fetchImpl).claimNext({ workerId: "w", limit: 3 })).rejects.toMatchObject({ name: "FleetHttpError", status: 503 });
  });
});

describe("FleetClient sweep", () => {
  const SWEEP = "POST /api/fleet/sweep";
  const ANSWER = {
    requeued: 1, gaveUp: 1, jobs: [
      { id: "a", outcome: "requeued", claimedBy: "dead", consecutiveOrphanCount: 1 },
      { id: "b", outcome: "gave_up", claimedBy: "gone", consecutiveOrphanCount: 5 },
    ],
  };

  it("posts the prefix to /api/fleet/sweep and returns the server's answer", async () => {
    const f = fakeFetch({ [AUTH]: signIn(["t"]), [SWEEP]: () => json(200, ANSWER) });
    const c = client(f.fetchImpl);
    expect(await c.sweep({ probeKeyPrefix: "p/" })).toEqual(ANSWER);
    expect(await c.sweep()).toEqual(ANSWER);
    expect(f.seen.filter((s) => s.path === "/api/fleet/sweep").map((s) => `${s.auth} ${JSON.stringify(s.body)}`))
      .toEqual(['t {"probeKeyPrefix":"p/"}', "t {}"]);
  });

  it("an answer that is not a SweepResponse (no `jobs`, or an unknown outcome) is a FleetProtocolError", async () => {
    for (const body of [
      { requeued: 1, gaveUp: 0 },
      { ...ANSWER, jobs: [{ ...ANSWER.jobs[0], outcome: "vanished" }] },
      { ...ANSWER, requeued: "1" },
    ]) {
      const f = fakeFetch({ [AUTH]: signIn(["t"]), [SWEEP]: () => json(200, body) });
      await expect(client(f.fetchImpl).sweep(), JSON.stringify(body)).rejects.toBeInstanceOf(FleetProtocolError);
    }
  });

  it("a server without the endpoint answers 404, a FleetHttpError", async () => {
    const f = fakeFetch({ [AUTH]: signIn(["t"]) });
    await expect(client(f.fetchImpl).sweep()).rejects.toMatchObject({ name: "FleetHttpError", status: 404, op: "sweep" });
  });
});

describe("FleetClient shares the protocol's facts with src/lib", () => {
  it("accepts every release refusal of the protocol's list, including one added to it", async () => {
    const list = RELEASE_REFUSALS as unknown as string[];
    list.push("refused_added_later");
    try {
      for (const reason of list) {
        const f = fakeFetch({ [AUTH]: signIn(["t"]), "POST /api/fleet/release": () => json(200, { released: false, reason }) });
        expect(await client(f.fetchImpl).release("j", "w", "done")).toEqual({ released: false, reason });
      }
    } finally {
      list.pop();
    }
    const f = fakeFetch({ [AUTH]: signIn(["t"]), "POST /api/fleet/release": () => json(200, { released: false, reason: "refused_unknown" }) });
    await expect(client(f.fetchImpl).release("j", "w", "done")).rejects.toBeInstanceOf(FleetProtocolError);
  });

  it("toPbDate is the protocol's formatPbDate under its older name", () => {
    expect(toPbDate).toBe(formatPbDate);
  });
});
