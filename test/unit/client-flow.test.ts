// FleetClient's side of flow control (docs/flow-control.md "The client") over a fake fetch:
// enqueue's queue, group, timeoutSeconds and startWithinSeconds (checked
// before any request, sent in the wire item), setFlow/getFlow (the request's
// checks and shape, the answer's check), renew and heartbeat answers with
// reason "timed_out", and release/complete with rateLimitedFor.
import { describe, expect, it } from "vitest";
import { FleetProtocolError } from "../../src/client/errors";
import { AUTH_PATHS, FleetClient } from "../../src/client/fleet-client";
import {
  MAX_FLOW_CONCURRENCY, MAX_GROUP_KEY_CHARS, MAX_PARK_SECONDS, MAX_RATE_LIMIT, MAX_RATE_LIMITED_FOR_SECONDS,
  MAX_RATE_PERIOD_SECONDS, MAX_START_WITHIN_SECONDS, MAX_TIMEOUT_SECONDS,
} from "../../src/lib/flow-limits";
import { fakeFetch, json, type Route } from "./support/route-fetch";

const AUTH = `POST ${AUTH_PATHS.superusers}`;
const ENQUEUE = "POST /api/fleet/enqueue";
const SET_FLOW = "POST /api/fleet/flow";
const GET_FLOW = "GET /api/fleet/flow";
const RENEW = "POST /api/fleet/renew";
const HEARTBEAT = "POST /api/fleet/heartbeat";
const RELEASE = "POST /api/fleet/release";
const COMPLETE = "POST /api/fleet/complete";

const signIn: Route = () => json(200, { token: "t", record: { id: "s1" } });

/** The fake fetch, and every URL it was asked for (route-fetch keeps paths only; getFlow's query matters here). */
function setup(routes: Record<string, Route>) {
  const f = fakeFetch({ [AUTH]: signIn, ...routes });
  const urls: string[] = [];
  const fetchImpl = ((input: RequestInfo | URL, init?: RequestInit) => {
    urls.push(String(input));
    return f.fetchImpl(input, init);
  }) as typeof fetch;
  const client = new FleetClient({ url: "http://fleet.test", email: "a@x.io", password: "secret123", fetch: fetchImpl });
  return { ...f, urls, client };
}

const enqueueRoute: Route = (req) =>
  json(200, { jobs: req.body.jobs.map((j: any, i: number) => ({ id: `q${i + 1}`, probeKey: j.probeKey, created: true })) });

const jobView = { id: "j1", probe_key: "k", status: "running", claimed_by: "w1", lease_expires_at: "2030-01-01 00:00:00.000Z", version: 2 };

describe("enqueue with flow control's options", () => {
  it("sends queue, group, timeoutSeconds and startWithinSeconds in the wire item", async () => {
    const { client, of } = setup({ [ENQUEUE]: enqueueRoute });
    const job = await client.enqueue("probe/a", {
      queue: "emails", group: "smtp.example.com:25", timeoutSeconds: 30, startWithinSeconds: 3_600, payload: { to: "x" },
    });
    expect(job).toEqual({ id: "q1", probeKey: "probe/a", created: true });
    expect(of(ENQUEUE).map((s) => s.body)).toEqual([{
      jobs: [{ probeKey: "probe/a", payload: { to: "x" }, queue: "emails", group: "smtp.example.com:25", timeoutSeconds: 30, startWithinSeconds: 3_600 }],
    }]);
  });

  it("takes the bounds themselves, and a group of 200 code points (not UTF-16 units)", async () => {
    const { client, of } = setup({ [ENQUEUE]: enqueueRoute });
    const group = "🦊".repeat(MAX_GROUP_KEY_CHARS); // 400 UTF-16 units
    await client.enqueue("k", { group, timeoutSeconds: MAX_TIMEOUT_SECONDS, startWithinSeconds: MAX_START_WITHIN_SECONDS });
    await client.enqueue("k", { timeoutSeconds: 1, startWithinSeconds: 1 });
    expect(of(ENQUEUE).map((s) => s.body.jobs[0])).toEqual([
      { probeKey: "k", group, timeoutSeconds: MAX_TIMEOUT_SECONDS, startWithinSeconds: MAX_START_WITHIN_SECONDS },
      { probeKey: "k", timeoutSeconds: 1, startWithinSeconds: 1 },
    ]);
  });

  it("a group of null or \"\" is no group: left out of the item", async () => {
    const { client, of } = setup({ [ENQUEUE]: enqueueRoute });
    await client.enqueue("k", { group: null, priority: 1 });
    await client.enqueueMany([{ probeKey: "a", group: "" }, { probeKey: "b", group: "tenant-7" }]);
    expect(of(ENQUEUE).map((s) => s.body.jobs)).toEqual([
      [{ probeKey: "k", priority: 1 }],
      [{ probeKey: "a" }, { probeKey: "b", group: "tenant-7" }],
    ]);
  });

  it.each([
    ["timeoutSeconds", { timeoutSeconds: 0 }, `an integer from 1 to ${MAX_TIMEOUT_SECONDS}`],
    ["timeoutSeconds", { timeoutSeconds: MAX_TIMEOUT_SECONDS + 1 }, `an integer from 1 to ${MAX_TIMEOUT_SECONDS}`],
    ["timeoutSeconds", { timeoutSeconds: 1.5 }, "an integer"],
    ["timeoutSeconds", { timeoutSeconds: "30" }, "an integer"],
    ["startWithinSeconds", { startWithinSeconds: 0 }, `an integer from 1 to ${MAX_START_WITHIN_SECONDS}`],
    ["startWithinSeconds", { startWithinSeconds: MAX_START_WITHIN_SECONDS + 1 }, `to ${MAX_START_WITHIN_SECONDS}`],
    ["startWithinSeconds", { startWithinSeconds: Number.NaN }, "an integer"],
    ["group", { group: "a\u0000b" }, "no control characters"],
    ["group", { group: "tab\there" }, "no control characters"],
    ["group", { group: "\u0085" }, "no control characters"],
    ["group", { group: "x".repeat(MAX_GROUP_KEY_CHARS + 1) }, `1 to ${MAX_GROUP_KEY_CHARS} characters`],
    ["group", { group: 7 }, "a group is"],
    ["queue", { queue: "" }, "a queue name"],
    ["queue", { queue: "has space" }, "a queue name"],
  ] as const)("refuses a bad `%s` with a TypeError naming it, before any request (%#)", async (name, options, says) => {
    const { client, seen } = setup({ [ENQUEUE]: enqueueRoute });
    const err = await client.enqueue("k", options as any).catch((e) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toContain(`\`${name}\``);
    expect(err.message).toContain(says);
    expect(seen).toEqual([]);
  });

  it("enqueueMany checks every job's flow options before the first request, naming the job", async () => {
    const { client, seen } = setup({ [ENQUEUE]: enqueueRoute });
    await expect(client.enqueueMany([{ probeKey: "a", timeoutSeconds: 5 }, { probeKey: "b", timeoutSeconds: -5 }]))
      .rejects.toThrow(/enqueueMany: jobs\[1\]: `timeoutSeconds` must be an integer from 1/);
    expect(seen).toEqual([]);
  });
});

describe("FleetClient.setFlow", () => {
  const stored = { paused: true, concurrency: 3, rateLimit: { limit: 10, periodSeconds: 60 }, parkedUntil: null };

  it("posts the scope and the settings given (null clears, undefined is left out) and answers the flow as stored", async () => {
    const { client, of } = setup({ [SET_FLOW]: (req) => json(200, { flow: { queue: req.body.queue, ...stored } }) });
    const flow = await client.setFlow({
      queue: "emails", paused: true, concurrency: 3, rateLimit: { limit: 10, periodSeconds: 60 }, parkUntil: null, parkSeconds: undefined,
    });
    expect(flow).toEqual({ queue: "emails", ...stored });
    expect(of(SET_FLOW).map((s) => s.body)).toEqual([
      { queue: "emails", paused: true, concurrency: 3, rateLimit: { limit: 10, periodSeconds: 60 }, parkUntil: null },
    ]);
  });

  it("a group's scope; a Date parkUntil goes as ISO text; parkSeconds 0 and the bounds themselves are taken", async () => {
    const { client, of } = setup({ [SET_FLOW]: (req) => json(200, { flow: { group: req.body.group, ...stored } }) });
    await client.setFlow({ group: "api.example.com:443", parkUntil: new Date("2030-01-02T03:04:05.000Z") });
    await client.setFlow({ group: "g", parkSeconds: 0, concurrency: null, rateLimit: null, paused: null });
    await client.setFlow({
      group: "g", parkSeconds: MAX_PARK_SECONDS, concurrency: MAX_FLOW_CONCURRENCY,
      rateLimit: { limit: MAX_RATE_LIMIT, periodSeconds: MAX_RATE_PERIOD_SECONDS },
    });
    expect(of(SET_FLOW).map((s) => s.body)).toEqual([
      { group: "api.example.com:443", parkUntil: "2030-01-02T03:04:05.000Z" },
      { group: "g", parkSeconds: 0, concurrency: null, rateLimit: null, paused: null },
      {
        group: "g", parkSeconds: MAX_PARK_SECONDS, concurrency: MAX_FLOW_CONCURRENCY,
        rateLimit: { limit: MAX_RATE_LIMIT, periodSeconds: MAX_RATE_PERIOD_SECONDS },
      },
    ]);
  });

  it.each([
    [{ paused: true }, /exactly one of `queue` and `group`/],
    [{ queue: "q", group: "g", paused: true }, /exactly one of `queue` and `group`/],
    [{ queue: "q" }, /at least one setting/],
    [{ queue: "q", paused: undefined }, /at least one setting/],
    [{ queue: "bad name", paused: true }, /`queue` must be a queue name/],
    [{ group: "", paused: true }, /`group` must be a group name/],
    [{ queue: "q", paused: "yes" }, /`paused` must be a boolean/],
    [{ queue: "q", concurrency: 0 }, new RegExp(`\`concurrency\` must be an integer from 1 to ${MAX_FLOW_CONCURRENCY}`)],
    [{ queue: "q", concurrency: MAX_FLOW_CONCURRENCY + 1 }, /`concurrency` must be/],
    [{ queue: "q", rateLimit: { limit: 10 } }, /`rateLimit` must be \{ limit/],
    [{ queue: "q", rateLimit: { limit: 10, periodSeconds: MAX_RATE_PERIOD_SECONDS + 1 } }, /`rateLimit` must be/],
    [{ queue: "q", rateLimit: { limit: 10, periodSeconds: 5, burst: 2 } }, /`rateLimit` must be/],
    [{ queue: "q", parkSeconds: 10, parkUntil: "2030-01-01T00:00:00Z" }, /`parkSeconds` or `parkUntil`, not both/],
    [{ queue: "q", parkSeconds: MAX_PARK_SECONDS + 1 }, /`parkSeconds` must be a number of seconds from 0/],
    [{ queue: "q", parkSeconds: -1 }, /`parkSeconds` must be/],
    [{ queue: "q", parkUntil: "2030-01-01T00:00:00" }, /`parkUntil` must be a Date, ISO-8601 text with a zone/],
    [{ queue: "q", parkUntil: new Date(Number.NaN) }, /`parkUntil` must be/],
    [{ queue: "q", pause: true }, /unknown field `pause`/],
  ] as const)("refuses %j with a TypeError before any request", async (request, says) => {
    const { client, seen } = setup({ [SET_FLOW]: () => json(200, { flow: { queue: "q", ...stored } }) });
    const err = await client.setFlow(request as any).catch((e) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toMatch(says);
    expect(seen).toEqual([]);
  });

  it.each([
    ["no `flow`", { queue: "q", ...stored }],
    ["another scope's flow", { flow: { queue: "other", ...stored } }],
    ["a group's flow for a queue", { flow: { group: "q", ...stored } }],
    ["paused not a boolean", { flow: { queue: "q", ...stored, paused: null } }],
    ["rateLimit without its period", { flow: { queue: "q", ...stored, rateLimit: { limit: 3 } } }],
    ["parkedUntil a number", { flow: { queue: "q", ...stored, parkedUntil: 5 } }],
  ])("an answer with %s is a FleetProtocolError", async (_what, body) => {
    const { client } = setup({ [SET_FLOW]: () => json(200, body) });
    await expect(client.setFlow({ queue: "q", paused: true })).rejects.toBeInstanceOf(FleetProtocolError);
  });
});

describe("FleetClient.getFlow", () => {
  const state = {
    name: "emails", paused: false, concurrency: null, rateLimit: { limit: 5, periodSeconds: 1 }, parkedUntil: null,
    held: 2, due: 10, claimsInWindow: 4,
  };

  it("without a filter: GET /api/fleet/flow with no query, answered as is", async () => {
    const answer = { queues: [state], groups: [{ ...state, name: "api.example.com", parkedUntil: "2030-01-01 00:00:00.000Z" }] };
    const { client, urls, of } = setup({ [GET_FLOW]: () => json(200, answer) });
    expect(await client.getFlow()).toEqual(answer);
    expect(of(GET_FLOW)).toHaveLength(1);
    expect(urls.at(-1)).toBe("http://fleet.test/api/fleet/flow");
  });

  it("the filter's names go URL-encoded in the query", async () => {
    const { client, urls } = setup({ [GET_FLOW]: () => json(200, { queues: [], groups: [] }) });
    await client.getFlow({ queue: "emails" });
    await client.getFlow({ group: "tenant a/b&c=d" });
    await client.getFlow({ queue: "q:1", group: "h" });
    const queries = urls.filter((u) => u.includes("/api/fleet/flow")).map((u) => Object.fromEntries(new URL(u).searchParams));
    expect(queries).toEqual([{ queue: "emails" }, { group: "tenant a/b&c=d" }, { queue: "q:1", group: "h" }]);
    expect(urls.some((u) => u.includes("group=tenant+a%2Fb%26c%3Dd"))).toBe(true);
  });

  it.each([
    [{ queue: "bad name" }, /`queue` must be a queue name/],
    [{ group: "x\ny" }, /`group` must be a group name/],
    [{ groups: "x" }, /unknown filter `groups`/],
  ] as const)("refuses the filter %j with a TypeError before any request", async (filter, says) => {
    const { client, seen } = setup({ [GET_FLOW]: () => json(200, { queues: [], groups: [] }) });
    await expect(client.getFlow(filter as any)).rejects.toThrow(says);
    expect(seen).toEqual([]);
  });

  it.each([
    ["no `groups`", { queues: [] }],
    ["an entry without `held`", { queues: [{ ...state, held: undefined }], groups: [] }],
    ["an entry without a name", { queues: [], groups: [{ ...state, name: 5 }] }],
    ["a negative count", { queues: [{ ...state, due: -1 }], groups: [] }],
  ])("an answer with %s is a FleetProtocolError", async (_what, body) => {
    const { client } = setup({ [GET_FLOW]: () => json(200, body) });
    await expect(client.getFlow()).rejects.toBeInstanceOf(FleetProtocolError);
  });
});

describe("renew and heartbeat: a refusal's reason", () => {
  it("renew answers { renewed: false, reason: \"timed_out\" } as the server sent it", async () => {
    const { client } = setup({ [RENEW]: () => json(200, { renewed: false, reason: "timed_out" }) });
    const answer = await client.renew("j1", "w1", 30, "tok");
    expect(answer).toEqual({ renewed: false, reason: "timed_out" });
    // Typed: the reason narrows to RenewRefusal.
    if (!answer.renewed) expect(answer.reason satisfies "timed_out" | undefined).toBe("timed_out");
  });

  it("renew leaves out a reason it does not know, and keeps the reference's bare refusal and success", async () => {
    const answers = [{ renewed: false, reason: "mystery" }, { renewed: false }, { renewed: true, job: jobView }];
    const { client } = setup({ [RENEW]: () => json(200, answers.shift()) });
    expect(await client.renew("j1", "w1")).toEqual({ renewed: false });
    expect(await client.renew("j1", "w1")).toEqual({ renewed: false });
    expect(await client.renew("j1", "w1")).toEqual({ renewed: true, job: jobView });
  });

  it("heartbeat keeps a refused item's reason \"timed_out\" and leaves out unknown ones", async () => {
    const { client } = setup({
      [HEARTBEAT]: () => json(200, {
        results: [
          { jobId: "a", renewed: false, reason: "timed_out" },
          { jobId: "b", renewed: true, job: jobView },
          { jobId: "c", renewed: false, reason: "mystery" },
        ],
      }),
    });
    const { results } = await client.heartbeat("w1", [{ jobId: "a" }, { jobId: "b" }, { jobId: "c" }]);
    expect(results).toEqual([
      { jobId: "a", renewed: false, reason: "timed_out" },
      { jobId: "b", renewed: true, job: jobView },
      { jobId: "c", renewed: false },
    ]);
  });
});

describe("release and complete with rateLimitedFor", () => {
  const released = { released: true, job: { ...jobView, status: "pending" } };

  it("release sends rateLimitedFor with status retry", async () => {
    const { client, of } = setup({ [RELEASE]: () => json(200, released) });
    await client.release("j1", "w1", "retry", "tok", { error: "429 from upstream", rateLimitedFor: 12.5 });
    await client.release("j1", "w1", "retry", "tok", { rateLimitedFor: MAX_RATE_LIMITED_FOR_SECONDS });
    expect(of(RELEASE).map((s) => s.body)).toEqual([
      { jobId: "j1", workerId: "w1", status: "retry", leaseToken: "tok", error: "429 from upstream", rateLimitedFor: 12.5 },
      { jobId: "j1", workerId: "w1", status: "retry", leaseToken: "tok", rateLimitedFor: MAX_RATE_LIMITED_FOR_SECONDS },
    ]);
  });

  it.each([
    ["done", 10, /`rateLimitedFor` goes only with status "retry" \(got status "done"\)/],
    ["failed", 10, /only with status "retry"/],
    ["pending", 10, /only with status "retry"/],
    ["retry", 0.5, new RegExp(`\`rateLimitedFor\` must be a number of seconds from 1 to ${MAX_RATE_LIMITED_FOR_SECONDS}`)],
    ["retry", MAX_RATE_LIMITED_FOR_SECONDS + 1, /`rateLimitedFor` must be a number of seconds/],
    ["retry", Number.POSITIVE_INFINITY, /`rateLimitedFor` must be a number of seconds/],
  ] as const)("release refuses status %s with rateLimitedFor %s before any request", async (status, rateLimitedFor, says) => {
    const { client, seen } = setup({ [RELEASE]: () => json(200, released) });
    const err = await client.release("j1", "w1", status, "tok", { rateLimitedFor }).catch((e) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toMatch(says);
    expect(seen).toEqual([]);
  });

  it("complete sends an item's rateLimitedFor with retry, and refuses it with another status naming the item", async () => {
    const { client, of, seen } = setup({
      [COMPLETE]: (req) => json(200, { results: req.body.releases.map((r: any) => ({ jobId: r.jobId, released: true, job: jobView })) }),
    });
    await client.complete("w1", [{ jobId: "a", status: "retry", rateLimitedFor: 30, error: "slow down" }, { jobId: "b", status: "done" }]);
    expect(of(COMPLETE)[0]!.body.releases).toEqual([
      { jobId: "a", status: "retry", rateLimitedFor: 30, error: "slow down" },
      { jobId: "b", status: "done" },
    ]);
    const before = seen.length;
    await expect(client.complete("w1", [{ jobId: "a", status: "retry" }, { jobId: "b", status: "failed", rateLimitedFor: 30 }]))
      .rejects.toThrow(/complete: releases\[1\]: `rateLimitedFor` goes only with status "retry"/);
    expect(seen.length).toBe(before);
  });
});
