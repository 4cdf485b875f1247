// FleetClient over a fake fetch (no server): the sign-in on both PocketBase
// lines (0.22's admins, 0.23+'s _superusers, found by a 404 and remembered) and
// the single retry after a 401/403 with each line's answers, tokens given up
// front, typed errors, timeouts, the safe retry of a claim whose answer was
// lost, the claim-next capability probe with its list-and-claim fallback (which
// never drops a claim it won), the server's sweep, listing, and the protocol
// facts it shares with src/lib.
import { describe, expect, it } from "vitest";
import {
  FleetAbortError, FleetAuthError, FleetHttpError, FleetNetworkError, FleetProtocolError, FleetTimeoutError,
} from "../../src/client/errors";
import { AUTH_PATHS, FleetClient, pbFilter } from "../../src/client/fleet-client";
import { toPbDate } from "../../src/client/index";
import { formatPbDate } from "../../src/lib/lease";
import { claimableRecordFilter } from "../../src/lib/record-filters";
import { RELEASE_REFUSALS } from "../../src/lib/types";

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  auth: string | null;
  contentType: string | null;
  body: any;
}
type Route = (req: Seen, signal: AbortSignal | undefined) => Response | Promise<Response>;

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/** What both lines answer to a route they do not have (0.22 also to an auth collection it does not have). */
const NOT_FOUND = { code: 404, message: "The requested resource wasn't found.", data: {} };

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
      contentType: headers.get("content-type"),
      body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined,
    };
    seen.push(req);
    const route = routes[`${req.method} ${req.path}`];
    if (!route) return json(404, NOT_FOUND);
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

const SUPERUSERS_AUTH = `POST ${AUTH_PATHS.superusers}`;
const ADMINS_AUTH = `POST ${AUTH_PATHS.admins}`;
/** The sign-in of the tests that are about something else (a 0.23+ server: the client's first guess). */
const AUTH = SUPERUSERS_AUTH;
const CLAIM = "POST /api/fleet/claim";
const RECORD_J1 = "/api/collections/probe_jobs/records/j1";
const JOB = { id: "j1", probe_key: "k", status: "claimed", claimed_by: "w", lease_expires_at: "2030-01-01 00:00:00.000Z", version: 1 };

/**
 * The two PocketBase lines as the client meets them (read from PocketBase's
 * source: v0.22.21 apis/admin.go, apis/record_crud.go; v0.23.12 to v0.40.4
 * apis/record_auth_with_password.go, apis/record_crud.go, apis/middlewares.go).
 */
const LINES = [
  {
    line: "0.22",
    api: "admins" as const,
    auth: ADMINS_AUTH,
    /** What a sign-in answers. */
    signedIn: (token: string) => ({ token, admin: { id: "a1", email: "a@x.io" } }),
    /** The record API to a bad, expired or missing token (the collection's rules are null: admins only). */
    recordRefusal: { code: 403, message: "Only admins can perform this action.", data: {} },
    /** What sign-in sequence a first sign-in sends: 0.22 answers 404 at the superusers' path first. */
    firstSignIn: [SUPERUSERS_AUTH, ADMINS_AUTH],
  },
  {
    line: "0.23+",
    api: "superusers" as const,
    auth: SUPERUSERS_AUTH,
    signedIn: (token: string) => ({ token, record: { id: "s1", collectionName: "_superusers", email: "a@x.io" } }),
    recordRefusal: { code: 403, message: "Only superusers can perform this action.", data: {} },
    firstSignIn: [SUPERUSERS_AUTH],
  },
];
type Line = (typeof LINES)[number];

/** A sign-in route handing out `tokens` in turn (the last one again once they run out). */
function signIn(tokens: string[], line: Line = LINES[1]!): Route {
  let n = 0;
  return () => json(200, line.signedIn(tokens[Math.min(n++, tokens.length - 1)]!));
}

function client(fetchImpl: typeof fetch, extra: Partial<ConstructorParameters<typeof FleetClient>[0]> = {}) {
  return new FleetClient({ url: "http://fleet.test", email: "a@x.io", password: "secret123", fetch: fetchImpl, ...extra });
}

const sequence = (f: ReturnType<typeof fakeFetch>) => f.seen.map((s) => `${s.method} ${s.path} ${s.auth ?? "-"}`);

describe.each(LINES)("FleetClient authentication on PocketBase $line", (line) => {
  it("signs in on first use (probing for the line once), then after a 401 signs in again at the endpoint it found and retries once", async () => {
    let claims = 0;
    const f = fakeFetch({
      [line.auth]: signIn(["tok-1", "tok-2"], line),
      [CLAIM]: () => (++claims === 1
        ? json(401, { code: 401, message: "The request requires valid record authorization token.", data: {} })
        : json(200, { claimed: true, job: JOB, leaseToken: "L" })),
    });
    const c = client(f.fetchImpl);
    expect(c.authApi).toBeUndefined();
    expect(await c.claim("j1", "w")).toEqual({ claimed: true, job: JOB, leaseToken: "L", alreadyHeld: false });
    expect(sequence(f)).toEqual([
      ...line.firstSignIn.map((a) => `${a} -`), `${CLAIM} tok-1`, `${line.auth} -`, `${CLAIM} tok-2`,
    ]);
    // The sign-in sends the credentials as JSON and never a token.
    for (const s of f.seen.filter((s) => s.path.endsWith("/auth-with-password"))) {
      expect(s.body).toEqual({ identity: "a@x.io", password: "secret123" });
      expect(s.contentType).toBe("application/json");
    }
    expect(c.token).toBe("tok-2");
    expect(c.authApi).toBe(line.api);
  });

  it("the record API's 403 for a token it does not take (a guest's answer on this line) is handled like a 401", async () => {
    let writes = 0;
    const f = fakeFetch({
      [line.auth]: signIn(["old", "new"], line),
      [`PATCH ${RECORD_J1}`]: () => (++writes === 1 ? json(403, line.recordRefusal) : json(200, { ...JOB, result: { ok: true } })),
    });
    await client(f.fetchImpl).writeResult("j1", { ok: true });
    expect(sequence(f)).toEqual([
      ...line.firstSignIn.map((a) => `${a} -`), `PATCH ${RECORD_J1} old`, `${line.auth} -`, `PATCH ${RECORD_J1} new`,
    ]);
    expect(f.seen.at(-1)!.body).toEqual({ result: { ok: true } });
  });

  it("a given token is sent as it is and never probed for; its 401 (fleet) or 403 (record API) is a FleetAuthError at once", async () => {
    const f = fakeFetch({
      [CLAIM]: (req) => (req.auth === "good"
        ? json(200, { claimed: false })
        : json(401, { code: 401, message: "The request requires valid record authorization token.", data: {} })),
      [`GET ${RECORD_J1}`]: (req) => (req.auth === "good" ? json(200, JOB) : json(403, line.recordRefusal)),
    });
    const good = new FleetClient({ url: "http://fleet.test", token: "good", fetch: f.fetchImpl });
    expect(await good.claim("j1", "w")).toEqual({ claimed: false });
    expect(await good.getJob("j1")).toEqual(JOB);
    expect(good.authApi).toBeUndefined();

    const bad = new FleetClient({ url: "http://fleet.test", token: "stale", fetch: f.fetchImpl });
    const err = await bad.claim("j1", "w").catch((e) => e);
    expect(err).toBeInstanceOf(FleetAuthError);
    expect(err).toMatchObject({ status: 401, op: "claim" });
    expect(err.message).toContain("token-only client");
    await expect(bad.getJob("j1")).rejects.toMatchObject({ name: "FleetAuthError", status: 403, op: "getJob" });
    expect(err.message).toContain("cannot sign in again");
    // setToken cures a token-only client.
    bad.setToken("good");
    expect(await bad.getJob("j1")).toEqual(JOB);
    expect(sequence(f)).toEqual([
      `${CLAIM} good`, `GET ${RECORD_J1} good`, `${CLAIM} stale`, `GET ${RECORD_J1} stale`, `GET ${RECORD_J1} good`,
    ]);
  });

  it("throws FleetAuthError when the retry after signing in is refused again (no third try)", async () => {
    const f = fakeFetch({ [line.auth]: signIn(["t"], line), [CLAIM]: () => json(401, { message: "nope" }) });
    const err = await client(f.fetchImpl).claim("j1", "w").catch((e) => e);
    expect(err).toBeInstanceOf(FleetAuthError);
    expect(err).toMatchObject({ status: 401, op: "claim" });
    expect(err.message).toContain("again, right after signing in");
    expect(f.count(CLAIM)).toBe(2);
    expect(f.count(line.auth)).toBe(2);
  });

  it("wrong credentials are a FleetAuthError (HTTP 400) naming the sign-in, and the endpoint is still remembered", async () => {
    const f = fakeFetch({ [line.auth]: () => json(400, { code: 400, message: "Failed to authenticate.", data: {} }) });
    const c = client(f.fetchImpl);
    const err = await c.claim("j1", "w").catch((e) => e);
    expect(err).toBeInstanceOf(FleetAuthError);
    expect(err).toMatchObject({ status: 400, op: "authenticate" });
    expect(err.message).toMatch(/^authenticate: HTTP 400: Failed to authenticate\. \(the (admin|superuser) email or password was refused\)$/);
    expect(c.authApi).toBe(line.api);
    await c.claim("j1", "w").catch(() => undefined);
    expect(sequence(f)).toEqual([...line.firstSignIn, line.auth].map((a) => `${a} -`));
    expect(f.count(CLAIM)).toBe(0);
  });

  it("concurrent calls share one sign-in, and calls refused together share one sign-in again", async () => {
    let fresh = false;
    const f = fakeFetch({
      [line.auth]: signIn(["t1", "t2", "t3"], line),
      [CLAIM]: async (req) => {
        await new Promise((r) => setTimeout(r, 5));
        if (req.auth === "t1") return json(401, { message: "expired" });
        fresh = true;
        return json(200, { claimed: false });
      },
    });
    const c = client(f.fetchImpl);
    await Promise.all([c.claim("a", "w"), c.claim("b", "w"), c.claim("c", "w")]);
    expect(fresh).toBe(true);
    expect(f.count(line.auth)).toBe(2);
    expect(f.seen.filter((s) => s.path === "/api/fleet/claim").map((s) => s.auth)).toEqual(["t1", "t1", "t1", "t2", "t2", "t2"]);
  });

  it("a sign-in that asks for more than a password (0.23+ MFA, or password sign-in turned off) is a FleetAuthError of the sign-in", async () => {
    const f = fakeFetch({ [line.auth]: () => json(401, { code: 401, message: "Please complete the MFA.", data: {}, mfaId: "m" }) });
    const err = await client(f.fetchImpl).getJob("j1").catch((e) => e);
    expect(err).toBeInstanceOf(FleetAuthError);
    expect(err).toMatchObject({ status: 401, op: "authenticate" });
    expect(f.count(`GET ${RECORD_J1}`)).toBe(0);
  });
});

describe("FleetClient finding the line", () => {
  it("a server upgraded (or downgraded) under a running client: the remembered sign-in's 404 sends it to the other one", async () => {
    let line: Line = LINES[0]!;
    const routes = (): Record<string, Route> => ({
      [line.auth]: signIn([`${line.line}-token`], line),
      [CLAIM]: (req) => (req.auth === `${line.line}-token` ? json(200, { claimed: false }) : json(401, { message: "who?" })),
    });
    const f = fakeFetch({
      [ADMINS_AUTH]: (req, s) => (routes()[ADMINS_AUTH] ?? (() => json(404, NOT_FOUND)))(req, s),
      [SUPERUSERS_AUTH]: (req, s) => (routes()[SUPERUSERS_AUTH] ?? (() => json(404, NOT_FOUND)))(req, s),
      [CLAIM]: (req, s) => routes()[CLAIM]!(req, s),
    });
    const c = client(f.fetchImpl);
    await c.claim("j", "w");
    expect(c.authApi).toBe("admins");
    line = LINES[1]!; // PocketBase 0.23+ now serves this URL (its admins became superusers)
    await c.claim("j", "w");
    expect(c.authApi).toBe("superusers");
    expect(sequence(f)).toEqual([
      `${SUPERUSERS_AUTH} -`, `${ADMINS_AUTH} -`, `${CLAIM} 0.22-token`,
      `${CLAIM} 0.22-token`, `${ADMINS_AUTH} -`, `${SUPERUSERS_AUTH} -`, `${CLAIM} 0.23+-token`,
    ]);
  });

  it("no sign-in at either path is a FleetHttpError 404 naming both (not a PocketBase base URL?)", async () => {
    const f = fakeFetch({});
    const c = client(f.fetchImpl, { url: "http://fleet.test/wrong/" });
    const err = await c.claim("j1", "w").catch((e) => e);
    expect(err).toBeInstanceOf(FleetHttpError);
    expect(err).toMatchObject({ status: 404, op: "authenticate" });
    expect(err.message).toContain(AUTH_PATHS.superusers);
    expect(err.message).toContain(AUTH_PATHS.admins);
    expect(err.message).toContain("http://fleet.test/wrong");
    expect(c.authApi).toBeUndefined();
    expect(f.seen.map((s) => s.path)).toEqual([`/wrong${AUTH_PATHS.superusers}`, `/wrong${AUTH_PATHS.admins}`]);
  });

  it("a sign-in that got no answer finds out nothing: the next one probes again", async () => {
    let down = true;
    const f = fakeFetch({
      [ADMINS_AUTH]: () => (down
        ? Promise.reject(new TypeError("fetch failed", { cause: Object.assign(new Error("reset"), { code: "ECONNRESET" }) }))
        : json(200, LINES[0]!.signedIn("t"))),
      [`GET ${RECORD_J1}`]: () => json(200, JOB),
    });
    const c = client(f.fetchImpl);
    await expect(c.getJob("j1")).rejects.toMatchObject({ name: "FleetNetworkError", op: "authenticate" });
    expect(c.authApi).toBeUndefined();
    down = false;
    expect(await c.getJob("j1")).toEqual(JOB);
    expect(f.seen.map((s) => `${s.method} ${s.path}`)).toEqual([SUPERUSERS_AUTH, ADMINS_AUTH, SUPERUSERS_AUTH, ADMINS_AUTH, `GET ${RECORD_J1}`]);
  });

  it("a sign-in answer without a token is a FleetProtocolError", async () => {
    const f = fakeFetch({ [AUTH]: () => json(200, { record: {} }) });
    await expect(client(f.fetchImpl).claim("j", "w")).rejects.toMatchObject({ name: "FleetProtocolError", op: "authenticate" });
  });

  it("authenticate() on a token-only client is a FleetAuthError", async () => {
    const c = new FleetClient({ url: "http://fleet.test", token: "t", fetch: fakeFetch({}).fetchImpl });
    await expect(c.authenticate()).rejects.toBeInstanceOf(FleetAuthError);
  });

  it("needs credentials or a token", () => {
    expect(() => new FleetClient({ url: "http://x" })).toThrow(/email.*password.*token/);
    expect(() => new FleetClient({ url: "", token: "t" })).toThrow(/url/);
  });

  it("a base URL with a trailing slash or a path prefix is joined to every path", async () => {
    const f = fakeFetch({ "POST /pb/api/fleet/claim": () => json(200, { claimed: false }) });
    const c = new FleetClient({ url: "http://fleet.test/pb//", token: "t", fetch: f.fetchImpl });
    expect(c.url).toBe("http://fleet.test/pb");
    expect(await c.claim("j", "w")).toEqual({ claimed: false });
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

  it("a 2xx that is not JSON (say, a web page at that URL) is a FleetProtocolError quoting it", async () => {
    const f = fakeFetch({
      [AUTH]: signIn(["t"]),
      [CLAIM]: () => new Response("<html><body>Welcome</body></html>", { status: 200, headers: { "content-type": "text/html" } }),
      [`GET ${RECORD_J1}`]: () => new Response("", { status: 200 }),
    });
    const err = await client(f.fetchImpl).claim("j1", "w").catch((e) => e);
    expect(err).toBeInstanceOf(FleetProtocolError);
    expect(err.message).toBe("claim: answer is not JSON: <html><body>Welcome</body></html>");
    await expect(client(f.fetchImpl).getJob("j1")).rejects.toThrow("getJob: answer is not JSON: (empty)");
  });

  it("an error answer that is not JSON (a proxy's page) is a FleetHttpError with its text", async () => {
    const page = "<html>\n<h1>502 Bad Gateway</h1>\n</html>";
    const f = fakeFetch({ [AUTH]: signIn(["t"]), [`GET ${RECORD_J1}`]: () => new Response(page, { status: 502 }) });
    const err = await client(f.fetchImpl).getJob("j1").catch((e) => e);
    expect(err).toBeInstanceOf(FleetHttpError);
    expect(err).toMatchObject({ status: 502, body: page, message: "getJob: HTTP 502: <html> <h1>502 Bad Gateway</h1> </html>" });
  });

  it("record answers are checked too: a record without an id, a list without items", async () => {
    const f = fakeFetch({
      [AUTH]: signIn(["t"]),
      "POST /api/collections/probe_jobs/records": () => json(200, { probe_key: "k" }),
      "GET /api/collections/probe_jobs/records": () => json(200, { page: 1 }),
    });
    await expect(client(f.fetchImpl).enqueue("k")).rejects.toThrow("enqueue: answer is not a record");
    await expect(client(f.fetchImpl).listClaimable()).rejects.toThrow("listClaimable: answer has no `items` array");
  });
});

describe("FleetClient claims", () => {
  it("retries a claim whose answer was lost; the alreadyHeld answer is a win", async () => {
    let committed = false;
    const f = fakeFetch({
      [AUTH]: signIn(["t"]),
      [CLAIM]: (_req, signal) => {
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
    expect(f.seen.filter((s) => !s.path.endsWith("/auth-with-password")).map((s) => s.body)).toEqual([
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
    // The list a fallback claims from is listClaimable's on a server from before the queue (claim-next came
    // first, run_at after it): pending, or held under a passed lease, with no run_at to filter on.
    const at = /lease_expires_at < '(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z)'/.exec(filter)![1]!;
    expect(filter).toBe(`(${claimableRecordFilter(Date.parse(at.replace(" ", "T")), { hasRunAt: false })}) && probe_key ~ 'p/%'`);
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

describe("FleetClient listing", () => {
  const LIST = "GET /api/collections/probe_jobs/records";
  const row = (i: number, key = `p/${i}`) => ({ ...JOB, id: `r${i}`, probe_key: key, status: "pending" });

  it.each(LINES)("sends the same list request to PocketBase $line (paths, filter syntax and paging are one on both lines)", async (line) => {
    const f = fakeFetch({ [line.auth]: signIn(["t"], line), [LIST]: () => json(200, { items: [] }) });
    const now = Date.now();
    await client(f.fetchImpl).listExpiredLeases({ probeKeyPrefix: "p/", limit: 7 });
    const list = f.seen.find((s) => s.method === "GET")!;
    expect(Object.fromEntries(list.query)).toEqual({
      page: "1", perPage: "7", skipTotal: "true", sort: "lease_expires_at",
      filter: expect.stringMatching(/^\(\(status = 'claimed' \|\| status = 'running'\) && lease_expires_at < '(.+)'\) && probe_key ~ 'p\/%'$/),
    });
    const at = /lease_expires_at < '(.+?)'/.exec(list.query.get("filter")!)![1]!;
    expect(at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(at.replace(" ", "T")) - now)).toBeLessThan(5_000);
  });

  it("listJobs pages through every row of a prefix, oldest first, keeping only the exact prefix", async () => {
    const pages: Record<string, unknown[]> = {
      "1": Array.from({ length: 500 }, (_, i) => row(i)),
      "2": [row(500), row(501, "P/501"), row(502)],
    };
    const f = fakeFetch({ [AUTH]: signIn(["t"]), [LIST]: (req) => json(200, { items: pages[req.query.get("page")!] ?? [] }) });
    const rows = await client(f.fetchImpl).listJobs({ probeKeyPrefix: "p/" });
    expect(rows).toHaveLength(502);
    expect(rows.at(-1)!.id).toBe("r502");
    const lists = f.seen.filter((s) => s.method === "GET");
    expect(lists.map((s) => [s.query.get("page"), s.query.get("perPage"), s.query.get("sort"), s.query.get("filter")])).toEqual([
      ["1", "500", "created,id", "probe_key ~ 'p/%'"],
      ["2", "500", "created,id", "probe_key ~ 'p/%'"],
    ]);
  });

  it("listJobs by status, with a limit, and with nothing to narrow by", async () => {
    const f = fakeFetch({ [AUTH]: signIn(["t"]), [LIST]: () => json(200, { items: [row(1), row(2), row(3)] }) });
    const c = client(f.fetchImpl);
    expect((await c.listJobs({ status: ["done", "failed"], probeKeyPrefix: "it's/", limit: 2 })).map((r) => r.id)).toEqual([]);
    expect((await c.listJobs({ status: "pending", limit: 2 })).map((r) => r.id)).toEqual(["r1", "r2"]);
    expect((await c.listJobs()).map((r) => r.id)).toEqual(["r1", "r2", "r3"]);
    expect(await c.listJobs({ status: [] })).toEqual([]);
    expect(f.seen.filter((s) => s.method === "GET").map((s) => s.query.get("filter"))).toEqual([
      "(status = 'done' || status = 'failed') && probe_key ~ 'it\\'s/%'",
      "(status = 'pending')",
      null,
    ]);
  });

  it("pbFilter writes literals as PocketBase's filter syntax takes them on both lines", () => {
    expect(pbFilter("a = {:s} && b = {:n} && c = {:b} && d = {:z} && e = {:d} && f = {:s}", {
      s: "it's", n: 5, b: true, z: null, d: new Date(Date.UTC(2030, 0, 2, 3, 4, 5, 6)),
    })).toBe("a = 'it\\'s' && b = 5 && c = true && d = null && e = '2030-01-02 03:04:05.006Z' && f = 'it\\'s'");
    expect(pbFilter("x = {:missing}")).toBe("x = {:missing}");
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
