// POST and GET /api/fleet/flow (docs/flow-control.md "Endpoints"): every validation rule
// of a setting and its 400, a 400 that writes nothing (GET reads the scope
// unchanged, a new scope stays absent), `null` clearing a setting, a setting
// not given keeping its value, the answer being what is stored (a park that
// has passed reads null); GET unfiltered, by queue, by group and by both,
// listing the queues with settings or unfinished jobs and the groups with
// settings, with their held / due / claimsInWindow figures; admins only (a
// worker identity gets 403, no token 401, and neither writes).
import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN_ONLY } from "../../src/lib/identity";
import { formatPbDate, parsePbDate } from "../../src/lib/lease";
import { createJob, enqueueOk, futureDate, get, pastDate, post, randomKey, type RequestOptions } from "./support/fleet-api";
import { claim, timed } from "./support/protocol";
import { sleep } from "./support/race";
import { createWorkerIdentity, type WorkerIdentity } from "./support/worker-identities";

const FLOW = "/api/fleet/flow";
const DAY_S = 86_400;

const setFlow = (body: unknown, opts?: RequestOptions) => post(FLOW, body, opts);
const getFlow = (query = "", opts?: RequestOptions) => get(`${FLOW}${query}`, opts);
const q = (name: string) => `?queue=${encodeURIComponent(name)}`;
const g = (name: string) => `?group=${encodeURIComponent(name)}`;

/** Names of this file's scopes; a leading "0" sorts them before other files' (random, lettered) names in unfiltered lists. */
const scopeName = (tag: string) => randomKey(`0fe-${tag}`);

const UNSET = { paused: false, concurrency: null, rateLimit: null, parkedUntil: null };

async function setOk(body: Record<string, unknown>): Promise<any> {
  const res = await setFlow(body);
  expect(res.status, `${JSON.stringify(body)} -> ${JSON.stringify(res.body)}`).toBe(200);
  return res.body.flow;
}

/** The one entry GET ?queue= / ?group= answers for a scope, or null when it is absent. */
async function entryOf(kind: "queue" | "group", name: string): Promise<any> {
  const res = await getFlow(kind === "queue" ? q(name) : g(name));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const list = kind === "queue" ? res.body.queues : res.body.groups;
  expect(kind === "queue" ? res.body.groups : res.body.queues).toEqual([]);
  expect(list.length).toBeLessThanOrEqual(1);
  return list[0] ?? null;
}

/** A scope's settings as GET reads them (the figures left out). */
async function settingsOf(kind: "queue" | "group", name: string): Promise<any> {
  const entry = await entryOf(kind, name);
  if (entry === null) return null;
  const { paused, concurrency, rateLimit, parkedUntil } = entry;
  return { paused, concurrency, rateLimit, parkedUntil };
}

describe("POST /api/fleet/flow validation: every rule is a 400 that writes nothing", () => {
  const qv = scopeName("qv");
  const gv = scopeName("gv");
  const stored = { paused: false, concurrency: 7, rateLimit: { limit: 3, periodSeconds: 30 }, parkedUntil: null };
  const soon = () => new Date(Date.now() + 60_000).toISOString();

  // [what, body, the rule its error names]; each body but the scope errors' also carries a valid change (paused: true)
  // that a partial write would leave behind.
  const cases: [string, () => unknown, RegExp][] = [
    ["an empty body", () => ({}), /exactly one of queue and group/],
    ["no scope", () => ({ paused: true }), /exactly one of queue and group/],
    ["both queue and group", () => ({ queue: qv, group: gv, paused: true }), /exactly one of queue and group/],
    ["queue \"\"", () => ({ queue: "", paused: true }), /queue must be a queue name/],
    ["queue null", () => ({ queue: null, paused: true }), /queue/],
    ["queue starting with -", () => ({ queue: "-x", paused: true }), /queue must be a queue name/],
    ["queue with a space", () => ({ queue: "a b", paused: true }), /queue must be a queue name/],
    ["queue of 65 characters", () => ({ queue: "q".repeat(65), paused: true }), /queue must be a queue name/],
    ["queue a number", () => ({ queue: 5, paused: true }), /queue must be a queue name/],
    ["group \"\"", () => ({ group: "", paused: true }), /group must be a group name/],
    ["group with a C0 control", () => ({ group: `${gv}\u0001`, paused: true }), /group must be a group name/],
    ["group with DEL", () => ({ group: `${gv}\u007f`, paused: true }), /group must be a group name/],
    ["group with a C1 control", () => ({ group: `${gv}\u0085`, paused: true }), /group must be a group name/],
    ["group of 201 code points", () => ({ group: "\u{1F600}".repeat(201), paused: true }), /group must be a group name/],
    ["group a number", () => ({ group: 7, paused: true }), /group must be a group name/],
    ["no setting", () => ({ queue: qv }), /at least one setting/],
    ["only an unknown setting", () => ({ queue: qv, concurrent: 3 }), /at least one setting/],
    ["paused a string", () => ({ queue: qv, paused: "true", concurrency: 1 }), /paused must be/],
    ["paused 1", () => ({ queue: qv, paused: 1, concurrency: 1 }), /paused must be/],
    ...([0, -1, 100_001, 1.5, "3", true, {}] as unknown[]).map((v): [string, () => unknown, RegExp] =>
      [`concurrency ${JSON.stringify(v)}`, () => ({ queue: qv, paused: true, concurrency: v }), /concurrency must be an integer from 1 to 100000/]),
    ...([
      5, "1/s", [], [1, 1], {}, { limit: 1 }, { periodSeconds: 1 }, { limit: 0, periodSeconds: 1 }, { limit: 100_001, periodSeconds: 1 },
      { limit: 1, periodSeconds: 0 }, { limit: 1, periodSeconds: 86_401 }, { limit: 1.5, periodSeconds: 1 }, { limit: 1, periodSeconds: 0.5 },
      { limit: "1", periodSeconds: 1 }, { limit: 1, periodSeconds: 1, burst: 2 },
    ] as unknown[]).map((v): [string, () => unknown, RegExp] =>
      [`rateLimit ${JSON.stringify(v)}`, () => ({ queue: qv, paused: true, rateLimit: v }), /rateLimit must be/]),
    ...([-1, -0.001, 604_801, "5", true] as unknown[]).map((v): [string, () => unknown, RegExp] =>
      [`parkSeconds ${JSON.stringify(v)}`, () => ({ queue: qv, paused: true, parkSeconds: v }), /parkSeconds must be a number from 0 to 604800/]),
    ["parkUntil without a zone", () => ({ queue: qv, paused: true, parkUntil: soon().replace("Z", "") }), /parkUntil must be a date with a zone/],
    ["parkUntil in the past", () => ({ queue: qv, paused: true, parkUntil: new Date(Date.now() - 5_000).toISOString() }), /parkUntil must be/],
    ["parkUntil now-ish (not after now)", () => ({ queue: qv, paused: true, parkUntil: new Date(Date.now() - 1).toISOString() }), /parkUntil must be/],
    ["parkUntil 7 days and a minute ahead", () => ({ queue: qv, paused: true, parkUntil: new Date(Date.now() + 7 * DAY_S * 1000 + 60_000).toISOString() }), /parkUntil must be/],
    ["parkUntil garbage", () => ({ queue: qv, paused: true, parkUntil: "tomorrow" }), /parkUntil must be/],
    ["parkUntil a number", () => ({ queue: qv, paused: true, parkUntil: Date.now() + 60_000 }), /parkUntil must be/],
    ["parkUntil \"\"", () => ({ queue: qv, paused: true, parkUntil: "" }), /parkUntil must be/],
    ["parkSeconds and parkUntil", () => ({ queue: qv, paused: true, parkSeconds: 5, parkUntil: soon() }), /parkSeconds or parkUntil, not both/],
    ["parkSeconds 0 and parkUntil null", () => ({ queue: qv, paused: true, parkSeconds: 0, parkUntil: null }), /parkSeconds or parkUntil, not both/],
    // the same rules for a group scope (and one that has no row yet: it must stay absent)
    ["a group's bad concurrency", () => ({ group: gv, paused: true, concurrency: 0 }), /concurrency must be/],
    ["a group's bad rateLimit", () => ({ group: gv, paused: true, rateLimit: { limit: 1 } }), /rateLimit must be/],
    ["a group's past parkUntil", () => ({ group: gv, paused: true, parkUntil: "2020-01-01T00:00:00Z" }), /parkUntil must be/],
  ];

  beforeAll(async () => {
    expect(await setOk({ queue: qv, concurrency: 7, rateLimit: { limit: 3, periodSeconds: 30 } })).toEqual({ queue: qv, ...stored });
  });

  it.each(cases)("%s", async (_what, body, rule) => {
    const res = await setFlow(body());
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toEqual({ error: expect.stringMatching(rule) });
    expect(await settingsOf("queue", qv)).toEqual(stored);
    expect(await entryOf("group", gv)).toBeNull();
  });

  it("a body that is not an object is a 400", async () => {
    for (const raw of ["[]", "[{\"queue\":\"x\",\"paused\":true}]", "\"paused\"", "7"]) {
      const res = await post(FLOW, undefined, { rawBody: raw });
      expect(res.status, `${raw} -> ${JSON.stringify(res.body)}`).toBe(400);
    }
    expect(await settingsOf("queue", qv)).toEqual(stored);
  });

  it("the bounds themselves are accepted, and the answer is what is stored", async () => {
    const qb = scopeName("qb");
    expect(await setOk({ queue: qb, concurrency: 1 })).toEqual({ queue: qb, ...UNSET, concurrency: 1 });
    expect(await setOk({ queue: qb, concurrency: 100_000 })).toMatchObject({ concurrency: 100_000 });
    expect(await setOk({ queue: qb, rateLimit: { limit: 1, periodSeconds: 1 } })).toMatchObject({ rateLimit: { limit: 1, periodSeconds: 1 } });
    expect(await setOk({ queue: qb, rateLimit: { limit: 100_000, periodSeconds: 86_400 } })).toMatchObject({ rateLimit: { limit: 100_000, periodSeconds: 86_400 } });

    // parkSeconds: a number (not only an integer), up to 7 days
    let { result: res, t0, t1 } = await timed(() => setFlow({ queue: qb, parkSeconds: 604_800 }));
    expect(res.status).toBe(200);
    let until = parsePbDate(res.body.flow.parkedUntil)!;
    expect(until).toBeGreaterThanOrEqual(t0 + 604_800_000 - 5);
    expect(until).toBeLessThanOrEqual(t1 + 604_800_000 + 5);
    ({ result: res, t0, t1 } = await timed(() => setFlow({ queue: qb, parkSeconds: 90.5 })));
    until = parsePbDate(res.body.flow.parkedUntil)!;
    expect(until).toBeGreaterThanOrEqual(t0 + 90_500 - 5);
    expect(until).toBeLessThanOrEqual(t1 + 90_500 + 5);
    expect(res.body.flow.parkedUntil).toBe(formatPbDate(until));

    // parkUntil: with Z or an offset, or PocketBase's layout; stored as the instant, in PocketBase's layout
    const at = Date.now() + 7 * DAY_S * 1000 - 60_000;
    const iso = new Date(at).toISOString();
    expect(await setOk({ queue: qb, parkUntil: iso })).toMatchObject({ parkedUntil: formatPbDate(at) });
    const inTwoHours = Math.floor((Date.now() + 2 * 3600_000) / 1000) * 1000;
    const plusTwo = new Date(inTwoHours + 2 * 3600_000).toISOString().replace(/\.\d{3}Z$/, "+02:00");
    expect(await setOk({ queue: qb, parkUntil: plusTwo })).toMatchObject({ parkedUntil: formatPbDate(inTwoHours) });
    expect(await setOk({ queue: qb, parkUntil: formatPbDate(at) })).toMatchObject({ parkedUntil: formatPbDate(at) });

    // a group of 200 code points (400 UTF-16 units), with characters of every plane but controls
    const long = "\u{1F600}".repeat(199) + "é";
    expect(await setOk({ group: long, paused: true })).toEqual({ group: long, ...UNSET, paused: true });
    expect(await settingsOf("group", long)).toEqual({ ...UNSET, paused: true });
    const q64 = `0${"q".repeat(56)}${randomKey("").slice(-7)}`;
    expect(q64).toHaveLength(64);
    expect(await setOk({ queue: q64, paused: false })).toEqual({ queue: q64, ...UNSET });
    expect(await settingsOf("queue", qb)).toEqual({ paused: false, concurrency: 100_000, rateLimit: { limit: 100_000, periodSeconds: 86_400 }, parkedUntil: formatPbDate(at) });
  });
});

describe("POST /api/fleet/flow: what is kept, what null clears", () => {
  it("a setting not given keeps its value; null clears it; rateLimit is replaced whole; GET reads what the answer says", async () => {
    const qk = scopeName("qk");
    const { result: first, t0, t1 } = await timed(() =>
      setFlow({ queue: qk, paused: true, concurrency: 3, rateLimit: { limit: 2, periodSeconds: 10 }, parkSeconds: 60 }));
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const parkedUntil = first.body.flow.parkedUntil as string;
    expect(parsePbDate(parkedUntil)).toBeGreaterThanOrEqual(t0 + 60_000 - 5);
    expect(parsePbDate(parkedUntil)).toBeLessThanOrEqual(t1 + 60_000 + 5);
    let expected: any = { paused: true, concurrency: 3, rateLimit: { limit: 2, periodSeconds: 10 }, parkedUntil };
    expect(first.body).toEqual({ flow: { queue: qk, ...expected } });
    expect(await settingsOf("queue", qk)).toEqual(expected);

    const steps: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ concurrency: 4 }, { concurrency: 4 }],
      [{ rateLimit: { limit: 5, periodSeconds: 20 } }, { rateLimit: { limit: 5, periodSeconds: 20 } }],
      [{ paused: false }, { paused: false }],
      [{ paused: true }, { paused: true }],
      [{ concurrency: null }, { concurrency: null }],
      [{ rateLimit: null }, { rateLimit: null }],
      [{ paused: null }, { paused: false }],
      [{ concurrency: 9, parkUntil: null }, { concurrency: 9, parkedUntil: null }],
      [{ parkSeconds: 30 }, {}], // parkedUntil checked below
      [{ parkSeconds: 0 }, { parkedUntil: null }],
    ];
    for (const [change, effect] of steps) {
      const res = await setFlow({ queue: qk, ...change });
      expect(res.status, JSON.stringify(change)).toBe(200);
      expected = { ...expected, ...effect };
      if (change["parkSeconds"] === 30) {
        expect(parsePbDate(res.body.flow.parkedUntil)).toBeGreaterThan(Date.now() + 25_000);
        expected.parkedUntil = res.body.flow.parkedUntil;
      }
      expect(res.body, `after ${JSON.stringify(change)}`).toEqual({ flow: { queue: qk, ...expected } });
      expect(await settingsOf("queue", qk), `GET after ${JSON.stringify(change)}`).toEqual(expected);
    }
    expect(expected).toEqual({ paused: false, concurrency: 9, rateLimit: null, parkedUntil: null });
  });

  it("a park that has passed reads null, in the next answer and in GET", async () => {
    const gp = scopeName("gp");
    const parked = await setOk({ group: gp, parkSeconds: 2 });
    expect(parked.parkedUntil).not.toBeNull();
    expect(await settingsOf("group", gp)).toEqual({ ...UNSET, parkedUntil: parked.parkedUntil });
    await sleep(parsePbDate(parked.parkedUntil)! - Date.now() + 50);
    expect(await setOk({ group: gp, concurrency: 2 })).toEqual({ group: gp, ...UNSET, concurrency: 2 });
    expect(await settingsOf("group", gp)).toEqual({ ...UNSET, concurrency: 2 });
  });
});

describe("GET /api/fleet/flow", () => {
  // q: settings and jobs of every kind; g: a group with settings, its jobs in q;
  // qJobs: unfinished jobs, no settings; qDone: only finished jobs; qSet: settings, no jobs; gBare: jobs, no settings.
  const qs = { q: scopeName("q"), qJobs: scopeName("qjobs"), qDone: scopeName("qdone"), qSet: scopeName("qset") };
  const gs = { g: scopeName("g"), gBare: scopeName("gbare") };
  let expectedQ: any;
  let expectedG: any;
  let expectedQJobs: any;
  let expectedQSet: any;

  beforeAll(async () => {
    const prefix = randomKey("fe-get") + "/";
    const rate = { limit: 10, periodSeconds: 60 };
    await setOk({ queue: qs.q, concurrency: 5, rateLimit: rate });
    await setOk({ group: gs.g, rateLimit: rate });
    await setOk({ queue: qs.qSet, paused: true });
    const jobs = await enqueueOk([
      { probeKey: `${prefix}a1`, queue: qs.q, group: gs.g },
      { probeKey: `${prefix}a2`, queue: qs.q },
      { probeKey: `${prefix}a3`, queue: qs.q },
      { probeKey: `${prefix}a4`, queue: qs.q, group: gs.g },
      { probeKey: `${prefix}future`, queue: qs.q, group: gs.g, delaySeconds: 3600 },
      { probeKey: `${prefix}bare`, queue: qs.qJobs, group: gs.gBare },
      { probeKey: `${prefix}bare2`, queue: qs.qJobs, group: gs.gBare, delaySeconds: 3600 },
    ]);
    const [a1, a2] = jobs;
    // held: two winning claims (one of them in g), each counted in the rate windows
    expect((await claim(a1!.id, "fe-w1", { leaseSeconds: 60 })).body).toMatchObject({ claimed: true });
    expect((await claim(a2!.id, "fe-w2", { leaseSeconds: 60 })).body).toMatchObject({ claimed: true });
    // rows of other states, through the record API
    await createJob({ probe_key: `${prefix}expired`, queue: qs.q, group_key: gs.g, status: "running", claimed_by: "gone", lease_expires_at: pastDate(5_000) } as any);
    await createJob({ probe_key: `${prefix}late`, queue: qs.q, group_key: gs.g, status: "pending", start_by: pastDate(5_000), attempts: 0 } as any);
    await createJob({ probe_key: `${prefix}started`, queue: qs.q, status: "pending", start_by: pastDate(5_000), attempts: 1 } as any);
    await createJob({ probe_key: `${prefix}done`, queue: qs.q, group_key: gs.g, status: "done", claimed_by: "x" } as any);
    await createJob({ probe_key: `${prefix}fin1`, queue: qs.qDone, status: "done", claimed_by: "x" } as any);
    await createJob({ probe_key: `${prefix}fin2`, queue: qs.qDone, status: "failed", claimed_by: "x", lease_expires_at: futureDate() } as any);
    await createJob({ probe_key: `${prefix}fin3`, queue: qs.qDone, status: "cancelled" } as any);

    // q: held a1, a2 (not the expired lease); due a3, a4 and the started row (not the future one, not the one past its start_by)
    expectedQ = { name: qs.q, paused: false, concurrency: 5, rateLimit: rate, parkedUntil: null, held: 2, due: 3, claimsInWindow: 2 };
    // g: held a1; due a4 (the future and late rows are not due); a1's claim counted
    expectedG = { name: gs.g, paused: false, concurrency: null, rateLimit: rate, parkedUntil: null, held: 1, due: 1, claimsInWindow: 1 };
    expectedQJobs = { name: qs.qJobs, ...UNSET, held: 0, due: 1, claimsInWindow: 0 };
    expectedQSet = { name: qs.qSet, ...UNSET, paused: true, held: 0, due: 0, claimsInWindow: 0 };
  });

  it("unfiltered: every queue with settings or unfinished jobs, every group with settings, with their figures", async () => {
    const res = await getFlow();
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["groups", "queues"]);
    const byName = (list: any[], name: string) => list.filter((e) => e.name === name);
    expect(byName(res.body.queues, qs.q)).toEqual([expectedQ]);
    expect(byName(res.body.queues, qs.qJobs)).toEqual([expectedQJobs]);
    expect(byName(res.body.queues, qs.qSet)).toEqual([expectedQSet]);
    expect(byName(res.body.queues, qs.qDone)).toEqual([]);
    expect(byName(res.body.groups, gs.g)).toEqual([expectedG]);
    expect(byName(res.body.groups, gs.gBare)).toEqual([]);
    // each scope once, and every entry of the documented shape
    for (const list of [res.body.queues, res.body.groups]) {
      const names = list.map((e: any) => e.name);
      expect(new Set(names).size).toBe(names.length);
      for (const e of list) expect(Object.keys(e).sort()).toEqual(["claimsInWindow", "concurrency", "due", "held", "name", "parkedUntil", "paused", "rateLimit"]);
    }
  });

  it("?queue=: at most that queue, no groups; absent without settings or unfinished jobs", async () => {
    expect((await getFlow(q(qs.q))).body).toEqual({ queues: [expectedQ], groups: [] });
    expect((await getFlow(q(qs.qJobs))).body).toEqual({ queues: [expectedQJobs], groups: [] });
    expect((await getFlow(q(qs.qSet))).body).toEqual({ queues: [expectedQSet], groups: [] });
    expect((await getFlow(q(qs.qDone))).body).toEqual({ queues: [], groups: [] });
    expect((await getFlow(q(scopeName("nowhere")))).body).toEqual({ queues: [], groups: [] });
  });

  it("?group=: at most that group, no queues; absent without settings", async () => {
    expect((await getFlow(g(gs.g))).body).toEqual({ queues: [], groups: [expectedG] });
    expect((await getFlow(g(gs.gBare))).body).toEqual({ queues: [], groups: [] });
  });

  it("?queue=&group=: each list narrowed", async () => {
    const both = (qn: string, gn: string) => getFlow(`${q(qn)}&group=${encodeURIComponent(gn)}`);
    expect((await both(qs.q, gs.g)).body).toEqual({ queues: [expectedQ], groups: [expectedG] });
    expect((await both(qs.qJobs, gs.gBare)).body).toEqual({ queues: [expectedQJobs], groups: [] });
    expect((await both(qs.qDone, gs.g)).body).toEqual({ queues: [], groups: [expectedG] });
  });

  it("a bad filter is a 400", async () => {
    for (const query of ["?queue=-bad", `?queue=${"q".repeat(65)}`, "?queue=a%20b", "?group=a%01b", `?group=${"x".repeat(201)}`]) {
      const res = await getFlow(query);
      expect(res.status, query).toBe(400);
      expect(res.body, query).toEqual({ error: expect.any(String) });
    }
  });
});

describe("/api/fleet/flow is for admins", () => {
  let worker: WorkerIdentity;
  beforeAll(async () => {
    worker = await createWorkerIdentity({ canEnqueue: true, queues: [] });
  });

  it("a worker identity gets 403 on POST and GET, and its POST writes nothing", async () => {
    const qa = scopeName("qa");
    const ga = scopeName("ga");
    await setOk({ queue: qa, concurrency: 2 });
    for (const body of [{ queue: qa, paused: true }, { group: ga, paused: true }]) {
      const res = await setFlow(body, { token: worker.token });
      expect(res).toEqual({ status: 403, body: { error: ADMIN_ONLY } });
    }
    expect(await getFlow(q(qa), { token: worker.token })).toEqual({ status: 403, body: { error: ADMIN_ONLY } });
    expect((await getFlow("", { token: worker.token })).status).toBe(403);
    expect(await settingsOf("queue", qa)).toEqual({ ...UNSET, concurrency: 2 });
    expect(await entryOf("group", ga)).toBeNull();
  });

  it("no token gets 401 on POST and GET, and writes nothing", async () => {
    const qn = scopeName("qn");
    const res = await setFlow({ queue: qn, paused: true }, { token: null });
    expect(res.status).toBe(401);
    expect((await getFlow("", { token: null })).status).toBe(401);
    expect((await getFlow(q(qn), { token: null })).status).toBe(401);
    expect(await entryOf("queue", qn)).toBeNull();
  });
});
