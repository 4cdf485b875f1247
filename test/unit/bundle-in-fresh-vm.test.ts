/**
 * Runs each hooks bundle the way its PocketBase does: each handler only as its
 * own source text, in a fresh runtime with nothing but that hooks API's globals
 * (stubbed in ./support/fake-pocketbase for 0.22 and
 * ./support/fake-pocketbase-modern for 0.23 to 0.40). A handler that leans on
 * anything from the file's top level fails here with "X is not defined", as it
 * would on the first real request that reaches it. The same cases run against
 * both bundles: they must answer alike.
 */
import { QUEUE_NAME_RULE } from "../../src/lib/validate";
import { readFileSync } from "node:fs";
import vm from "node:vm";
import { beforeEach, describe, expect, it } from "vitest";
import { HOOKS_BUNDLES } from "../../scripts/build/bundles.mjs";
import { CRONS, JOB_CREATE_HOOKS, ROUTES } from "../../src/handlers/routes";
import { LAST_SEEN_FAILED } from "../../src/adapter/contract";
import {
  ACCOUNT_REQUEST_REFUSED, ADMIN_ONLY, ENQUEUE_NOT_ALLOWED, LAST_SEEN_EVERY_MS, QUEUES_UNREADABLE, WORKER_DISABLED, type RouteAccess,
} from "../../src/lib/identity";
import { MAX_ATTEMPTS_ERROR, MAX_REQUEST_BODY_BYTES, REQUEST_TOO_LARGE, TRANSACTION_FAILED } from "../../src/lib/queue";
import { minuteStart, scheduleUniqueKey } from "../../src/lib/schedules";
import { STATS_UNAVAILABLE } from "../../src/lib/stats";
import {
  accountRequestHooksOf,
  ADMIN_ONLY_ANSWER,
  FAKE_POCKETBASE_0_22,
  FakeDb,
  FakeForbiddenError,
  runHookWith,
  pbDate,
  UNPARSEABLE_BODY,
  type CapturedRoute,
  type Caller,
  type FakeMiddleware,
  type FakePocketBase,
  type FakeResponse,
  type StoredRow,
} from "./support/fake-pocketbase";

/** A case that does not apply to this hooks line is not registered (rather than shown as skipped). */
const IT_DOES_NOT_APPLY = (_name: string, _fn: () => void): void => {};
import { FAKE_POCKETBASE_0_23 } from "./support/fake-pocketbase-modern";

const FAKES: Record<string, FakePocketBase> = { "0.22": FAKE_POCKETBASE_0_22, "0.23": FAKE_POCKETBASE_0_23 };
/** How long each adapter keeps probe_jobs' collection model in a pooled runtime (0: PocketBase 0.23+ caches it itself). */
const COLLECTION_CACHE_MS: Record<string, number> = { "0.22": 2000, "0.23": 0 };

const BUNDLES = HOOKS_BUNDLES.map((bundle: { api: string; output: string; jobCreateHook: string }) => {
  const fake = FAKES[bundle.api];
  if (fake === undefined) throw new Error(`no fake PocketBase for the ${bundle.api} bundle: add one to run it here`);
  return {
    name: `${bundle.output.split("/").slice(-2).join("/")} (hooks API ${bundle.api})`,
    api: bundle.api, output: bundle.output, createHook: bundle.jobCreateHook, fake,
  };
});

/** The routes a worker identity may call (README, "Worker identities"), and those only an admin may. */
const WORKER_ROUTES = [
  "/api/fleet/claim", "/api/fleet/renew", "/api/fleet/release", "/api/fleet/claim-next", "/api/fleet/heartbeat", "/api/fleet/complete",
] as const;
const ADMIN_ROUTES = [
  "/api/fleet/sweep", "/api/fleet/stats", "/api/fleet/completions", "/api/fleet/cancel", "/api/fleet/retry", "/api/fleet/maintenance",
  "/api/fleet/flow",
] as const;

const TOKEN = /^[A-Za-z0-9]{24}$/;
const PB_DATE_TEXT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(BUNDLES)("$name", ({ api, output, createHook, fake }) => {
  const SOURCE = readFileSync(output, "utf8");
  const hooks = fake.loadHooks(SOURCE);

  /** A route by its path (the first registered when two methods share it), or by method and path. */
  function route(path: string, method?: string): CapturedRoute {
    const found = hooks.routes.find((r) => r.path === path && (method === undefined || r.method === method));
    if (!found) throw new Error(`the bundle registers no ${method ?? ""} ${path}`);
    return found;
  }

  let db: FakeDb;
  beforeEach(() => {
    db = new FakeDb(fake.line);
    // Every insert runs the bundle's probe_jobs create hook, as PocketBase does.
    fake.installHooks(hooks, db);
  });

  const post = (path: string, body: unknown) => fake.runRoute(route(path), db, { body });
  const stats = (query: Record<string, string> = {}) => fake.runRoute(route("/api/fleet/stats"), db, { query });
  const live = (seconds = 60) => pbDate(Date.now() + seconds * 1000);
  const expired = (seconds = 60) => pbDate(Date.now() - seconds * 1000);

  /** Milliseconds from now to a stored date. */
  function msFromNow(text: string): number {
    expect(text).toMatch(PB_DATE_TEXT);
    return Date.parse(text.replace(" ", "T")) - Date.now();
  }

  /** The `job` object an answer must carry for a stored row. */
  function viewOf(row: StoredRow) {
    const { id, probe_key, status, claimed_by, lease_expires_at, version } = row;
    return { id, probe_key, status, claimed_by, lease_expires_at, version };
  }

  /** A JSON field's stored text as the value an answer shows. */
  const jsonOf = (text: string): unknown => (text === "" ? null : JSON.parse(text));

  /** The `job` object of pb-fleet's own answers (claim-next, cancel, retry): the reference's view plus the queue's fields. */
  function queueViewOf(row: StoredRow) {
    const { priority, run_at, attempts, max_attempts, last_error, dead_lettered_at, unique_key, group_key, timeout_seconds } = row;
    // docs/flow-control.md: a held attempt's deadline is its claim + timeout_seconds.
    const held = row.status === "claimed" || row.status === "running";
    const deadline = held && timeout_seconds > 0 && row.claimed_at !== ""
      ? pbDate(Date.parse(row.claimed_at.replace(" ", "T")) + timeout_seconds * 1000)
      : null;
    return {
      ...viewOf(row), payload: jsonOf(row.payload), priority, run_at, attempts, max_attempts, last_error, dead_lettered_at,
      unique_key, queue: row.queue === "" ? "default" : row.queue, progress: jsonOf(row.progress), group_key, timeout_seconds, deadline,
    };
  }

  function heldRow(workerId: string, lease: string, fields: Partial<StoredRow> = {}): StoredRow {
    return db.insert({ status: "claimed", claimed_by: workerId, lease_expires_at: lease, lease_token: "tok-current", version: 1, ...fields });
  }

  describe("loading the bundle", () => {
    it("registers one handler per route, create hook and cron of esbuild.config.mjs, each route's serve told who may call it", () => {
      expect(hooks.routes.map((r) => [r.method, r.path])).toEqual(ROUTES.map((r) => [r.method, r.path]));
      for (const r of hooks.routes) {
        // No auth middleware (0.22's requireAdminAuth would turn a worker identity away): serve decides.
        expect(r.middlewares.map((m) => (m as FakeMiddleware).middleware)).toEqual(fake.routeMiddlewares.map((m) => m.middleware));
        const entry = ROUTES.find((e) => e.path === r.path && e.method === r.method)!;
        expect(r.text, r.path).toContain(`serve(context, ${entry.handler}, ${JSON.stringify(entry.access)})`);
      }
      expect(hooks.crons.map((c) => c.id)).toEqual(CRONS.map((c) => c.id));
      // With this API's own create hook (the fake's loader defines no other), for probe_jobs only.
      expect(hooks.createHooks.map((h) => [h.registrar, h.collections])).toEqual(JOB_CREATE_HOOKS.map(() => [createHook, ["probe_jobs"]]));
    });

    it.each<[string, Record<string, string>, string]>([
      ["unset", {}, "* * * * *"],
      ["a schedule", { PB_FLEET_SWEEP_CRON: "*/5 * * * *" }, "*/5 * * * *"],
      ["off (registered; every tick does nothing)", { PB_FLEET_SWEEP_CRON: "off" }, "* * * * *"],
      ["a macro", { PB_FLEET_SWEEP_CRON: "@hourly" }, "@hourly"],
    ])("reads the sweeper's schedule when it loads (PB_FLEET_SWEEP_CRON %s)", (_name, env, schedule) => {
      expect(fake.loadHooks(SOURCE, env).crons[0]?.schedule).toBe(schedule);
    });

    it("would catch a handler that uses the file's top level (the harness can fail)", () => {
      const leaked = fake.loadHooks(
        `function helper() { return 1; }\n` +
          `routerAdd("POST", "/leak", (c) => c.json(200, { n: helper() }));`,
      );
      expect(() => fake.runRoute(leaked.routes[0]!, db)).toThrow(/helper is not defined/);
    });
  });

  describe("reserved worker ids", () => {
    it.each([
      ["/api/fleet/claim", { jobId: "x" }],
      ["/api/fleet/renew", { jobId: "x" }],
      ["/api/fleet/release", { jobId: "x", status: "done" }],
      ["/api/fleet/claim-next", {}],
    ])("%s answers 400 to workerId pb-fleet-sweeper, writing nothing", (path, body) => {
      const job = heldRow("pb-fleet-sweeper", live(), { status: "failed" });
      const request = { ...body, jobId: job.id, workerId: "pb-fleet-sweeper" };
      if (path === "/api/fleet/claim-next") delete (request as { jobId?: string }).jobId;
      expect(post(path, request)).toEqual({
        status: 400,
        body: { error: 'workerId "pb-fleet-sweeper" is reserved for pb-fleet\'s server sweeper: pick another id' },
      });
      expect(db.saves).toBe(0);
    });
  });

  describe("who may call", () => {
    it("declares every route's access: the worker's calls for worker identities, enqueue for those with can_enqueue, the rest for admins", () => {
      const paths = (access: RouteAccess) => ROUTES.filter((r) => r.access === access).map((r) => r.path);
      expect(ROUTES.map((r) => r.access).every((a) => ["worker", "enqueue", "admin"].includes(a))).toBe(true);
      // And the OpenAPI document: anyone who may call some route may read how (src/handlers/openapi.ts).
      expect(paths("worker")).toEqual([...WORKER_ROUTES, "/api/fleet/openapi.json"]);
      expect(paths("enqueue")).toEqual(["/api/fleet/enqueue"]);
      // /api/fleet/flow is an admin's by both of its methods (POST sets a scope's settings, GET reads them).
      expect(paths("admin")).toEqual([...ADMIN_ROUTES, "/api/fleet/flow"]);
      expect(ROUTES.filter((r) => r.path === "/api/fleet/flow").map((r) => [r.method, r.access])).toEqual([["POST", "admin"], ["GET", "admin"]]);
    });

    it.each<[string, Caller]>([
      ["no valid token", "none"],
      ["another auth collection's token", "user"],
    ])("answers every route 401 with PocketBase 0.22's admin-only answer for %s, writing nothing", (_what, caller) => {
      const job = heldRow("w1", live());
      const body = { jobId: job.id, workerId: "w1", status: "done" };
      for (const r of hooks.routes) {
        expect(fake.runRoute(r, db, { body, caller }), `${r.method} ${r.path}`).toEqual({ status: 401, body: ADMIN_ONLY_ANSWER });
      }
      expect(db.saves).toBe(0);
      expect(db.row(job.id)).toEqual(job);
    });
  });

  describe("PocketBase's account requests of a worker identity", () => {
    it("registers a refusal for each of email change, password reset and verification, for fleet_workers only", () => {
      expect(hooks.accountHooks.map((h) => h.registrar)).toEqual([...accountRequestHooksOf(api)]);
      for (const hook of hooks.accountHooks) {
        expect(hook.collections, hook.registrar).toEqual(["fleet_workers"]);
        // A fresh runtime, as PocketBase runs a hook: it throws PocketBase's 403 before any mail.
        const runtime = fake.pooledRuntime(new FakeDb(fake.line));
        let thrown: unknown = null;
        try {
          runHookWith(hook, runtime, { record: null, next: () => {
            throw new Error(`${hook.registrar} went on (e.next())`);
          } });
        } catch (err) {
          thrown = err;
        }
        expect(thrown, hook.registrar).toBeInstanceOf(FakeForbiddenError);
        expect((thrown as Error).message).toBe(ACCOUNT_REQUEST_REFUSED);
      }
    });
  });

  describe("worker identities (fleet_workers records)", () => {
    const call = (path: string, caller: Caller, body: unknown = {}, contentLength = 0) =>
      fake.runRoute(route(path), db, { body, caller, contentLength });
    type ClaimNextAnswer = { jobs: { job: { id: string; queue: string }; leaseToken: string }[] };
    const claimedIds = (answer: FakeResponse) => (answer.body as ClaimNextAnswer).jobs.map((j) => j.job.id);
    const notHolder = (id: string) =>
      `workerId must be this worker identity's id (${id}) or begin with "${id}/" (nothing was written)`;

    /** Everything a call could write: jobs, events, schedules, identities, and the write counters. */
    function written() {
      return {
        jobs: db.all(),
        events: [...db.events.values()].map((e) => ({ ...e })),
        schedules: [...db.schedules.values()].map((s) => ({ ...s })),
        workers: [...db.workers.values()].map((w) => ({ ...w })),
        flow: [...db.flow.values()].map((f) => ({ ...f })),
        flowClaims: db.flowClaims.map((c) => ({ ...c })),
        saves: db.saves,
        executes: db.executes,
      };
    }

    it("serves an identity on claim, renew, release, claim-next, heartbeat and complete, as its id or its id and /anything", () => {
      const w = db.addWorker();
      const [a, b, c, untouched] = [db.insert(), db.insert(), db.insert(), db.insert()];
      const claim = call("/api/fleet/claim", w, { jobId: a.id, workerId: w.id, leaseSeconds: 60 });
      expect(claim).toMatchObject({ status: 200, body: { claimed: true } });
      const token = (claim.body as { leaseToken: string }).leaseToken;
      expect(call("/api/fleet/renew", w, { jobId: a.id, workerId: w.id, leaseToken: token })).toMatchObject({ status: 200, body: { renewed: true } });
      expect(call("/api/fleet/release", w, { jobId: a.id, workerId: w.id, leaseToken: token, status: "done" }))
        .toMatchObject({ status: 200, body: { released: true } });
      expect(db.row(a.id)).toMatchObject({ status: "done", claimed_by: w.id });

      // One identity, several Worker instances: each names itself under the identity's id.
      const holder = `${w.id}/host-2`;
      const next = call("/api/fleet/claim-next", w, { workerId: holder, limit: 2 });
      expect(next.status).toBe(200);
      expect(claimedIds(next)).toEqual([b.id, c.id]);
      const [tb, tc] = (next.body as ClaimNextAnswer).jobs.map((j) => j.leaseToken);
      expect(call("/api/fleet/heartbeat", w, { workerId: holder, leases: [{ jobId: b.id, leaseToken: tb }, { jobId: c.id, leaseToken: tc }] }))
        .toMatchObject({ status: 200, body: { results: [{ jobId: b.id, renewed: true }, { jobId: c.id, renewed: true }] } });
      const complete = call("/api/fleet/complete", w, {
        workerId: holder, releases: [{ jobId: b.id, leaseToken: tb, status: "done" }, { jobId: c.id, leaseToken: tc, status: "failed" }],
      });
      expect(complete).toMatchObject({ status: 200, body: { results: [{ jobId: b.id, released: true }, { jobId: c.id, released: true }] } });
      expect([db.row(b.id), db.row(c.id)].map((r) => [r.status, r.claimed_by])).toEqual([["done", holder], ["failed", holder]]);
      expect(db.row(untouched.id)).toEqual(untouched);
    });

    it.each(ADMIN_ROUTES)("answers %s 403 to an identity (even one with can_enqueue), writing nothing", (path) => {
      db.env["PB_FLEET_MAX_ORPHANS"] = "1";
      const w = db.addWorker({ can_enqueue: true });
      // What each admin route would change: a sweep gives this up, cancel cancels the
      // pending job, retry brings the failed one back, maintenance enqueues the
      // schedule's job and deletes the old finished row.
      heldRow("w-dead", expired(), { consecutive_orphan_count: 1 });
      const failed = db.insert({ status: "failed", finished_at: expired(30 * 86_400) });
      const pending = db.insert();
      db.addSchedule({ name: "every-minute" });
      const body = { jobId: path === "/api/fleet/retry" ? failed.id : pending.id };
      const before = written();
      expect(call(path, w, body)).toEqual({ status: 403, body: { error: ADMIN_ONLY } });
      expect(written()).toEqual(before);
      // The same call from an admin is served (the identity, not the request, was refused).
      expect(post(path, body).status).not.toBe(403);
    });

    it("answers enqueue 403 to an identity without can_enqueue, writing nothing, and serves one with it", () => {
      const without = db.addWorker();
      const withIt = db.addWorker({ can_enqueue: true });
      const body = { jobs: [{ probeKey: "p" }, { probeKey: "q", queue: "emails" }] };
      expect(call("/api/fleet/enqueue", without, body)).toEqual({ status: 403, body: { error: ENQUEUE_NOT_ALLOWED } });
      expect(db.all()).toEqual([]);
      expect(db.saves).toBe(0);
      expect(call("/api/fleet/enqueue", withIt, body).status).toBe(200);
      expect(db.all().map((r) => [r.probe_key, r.queue])).toEqual([["p", "default"], ["q", "emails"]]);
    });

    it("refuses an identity's enqueue into a queue beyond its own, every item or none", () => {
      const w = db.addWorker({ can_enqueue: true, queues: '["emails"]' });
      expect(call("/api/fleet/enqueue", w, { jobs: [{ probeKey: "a", queue: "emails" }, { probeKey: "b" }] })).toEqual({
        status: 403, body: { error: "queue default is not among this worker identity's queues (nothing was written)" },
      });
      expect(db.all()).toEqual([]);
      expect(call("/api/fleet/enqueue", w, { jobs: [{ probeKey: "a", queue: "emails" }] }).status).toBe(200);
      expect(db.all().map((r) => r.queue)).toEqual(["emails"]);
    });

    it("answers a disabled identity 401 on every route, writing nothing (not even its last-seen stamp)", () => {
      const w = db.addWorker({ disabled: true, can_enqueue: true, last_seen_at: "" });
      const job = heldRow(w.id, live());
      const before = written();
      for (const r of hooks.routes) {
        const body = { jobId: job.id, workerId: w.id, status: "done", jobs: [{ probeKey: "p" }] };
        expect(fake.runRoute(r, db, { body, caller: w }), `${r.method} ${r.path}`).toEqual({ status: 401, body: WORKER_DISABLED });
      }
      expect(written()).toEqual(before);
    });

    it.each(['{"emails":true}', '"emails"', '["bad name"]', "[1]", "{not json"])(
      "fails closed on a queues field that is not a JSON array of queue names (%s): 403, nothing written",
      (queues) => {
        const w = db.addWorker({ queues, last_seen_at: "" });
        const job = db.insert();
        const before = written();
        for (const path of WORKER_ROUTES) {
          expect(call(path, w, { jobId: job.id, workerId: w.id }), path).toEqual({ status: 403, body: { error: QUEUES_UNREADABLE } });
        }
        expect(written()).toEqual(before);
      },
    );

    it("fails closed when the collection lacks a field: no `queues` is a 403, no `disabled` a 401 (not every queue, not enabled)", () => {
      const job = db.insert();
      const noQueues = db.addWorker({ queues: '["x"]', missing: ["queues"] });
      const noDisabled = db.addWorker({ missing: ["disabled"] });
      const before = written();
      for (const path of WORKER_ROUTES) {
        expect(call(path, noQueues, { jobId: job.id, workerId: noQueues.id }), path).toEqual({ status: 403, body: { error: QUEUES_UNREADABLE } });
        expect(call(path, noDisabled, { jobId: job.id, workerId: noDisabled.id }), path).toEqual({ status: 401, body: WORKER_DISABLED });
      }
      expect(written()).toEqual(before);
      // More queues than claim-next takes is unreadable too.
      const many = db.addWorker({ queues: JSON.stringify(Array.from({ length: 17 }, (_, i) => `q${i}`)) });
      expect(call("/api/fleet/claim-next", many, { workerId: many.id })).toEqual({ status: 403, body: { error: QUEUES_UNREADABLE } });
    });

    it.each<[string, (id: string) => string]>([
      ["another identity's id", () => "wrk000000000099"],
      ["another identity's id and a suffix", () => "wrk000000000099/host-1"],
      ["its id and more, without the slash", (id) => `${id}x`],
      ["its id cut short", (id) => id.slice(0, -1)],
      ["a slash and its id", (id) => `/${id}`],
    ])("answers 403 to a workerId that is %s, on every worker route, writing nothing", (_name, holderOf) => {
      const w = db.addWorker();
      const other = holderOf(w.id);
      const pending = db.insert();
      const theirs = heldRow(other, live());
      const before = written();
      const lease = { jobId: theirs.id, leaseToken: "tok-current" };
      const calls: [string, unknown][] = [
        ["/api/fleet/claim", { jobId: pending.id, workerId: other }],
        ["/api/fleet/renew", { ...lease, workerId: other }],
        ["/api/fleet/release", { ...lease, workerId: other, status: "done" }],
        ["/api/fleet/claim-next", { workerId: other }],
        ["/api/fleet/heartbeat", { workerId: other, leases: [lease] }],
        ["/api/fleet/complete", { workerId: other, releases: [{ ...lease, status: "done" }] }],
      ];
      for (const [path, body] of calls) expect(call(path, w, body), path).toEqual({ status: 403, body: { error: notHolder(w.id) } });
      expect(written()).toEqual(before);
      // An admin may name any holder.
      expect(post("/api/fleet/renew", { ...lease, workerId: other }).body).toMatchObject({ renewed: true });
    });

    it("narrows claim-next to the queues asked for; the default queue's rows include those whose queue is empty", () => {
      const emails = db.insert({ queue: "emails" });
      const plain = db.insert({ queue: "default" });
      const bare = db.insert({ queue: "" }); // written around enqueue and the create hook
      const reports = db.insert({ queue: "reports" });
      const stolen = heldRow("w-dead", expired(), { queue: "emails" });
      const claimNext = (queue: unknown) => post("/api/fleet/claim-next", { workerId: "w1", limit: 10, queue });

      const first = claimNext("emails");
      expect(claimedIds(first)).toEqual([emails.id, stolen.id]);
      expect((first.body as ClaimNextAnswer).jobs.map((j) => j.job.queue)).toEqual(["emails", "emails"]);
      expect([db.row(plain.id), db.row(bare.id), db.row(reports.id)]).toEqual([plain, bare, reports]);

      const second = claimNext(["default"]);
      expect(claimedIds(second)).toEqual([plain.id, bare.id]);
      // A row's "" reads as the default queue, in the answer too (the row keeps what it stored).
      expect((second.body as ClaimNextAnswer).jobs.map((j) => j.job.queue)).toEqual(["default", "default"]);
      expect(db.row(bare.id).queue).toBe("");

      expect(claimedIds(claimNext(["nothing-here", "reports"]))).toEqual([reports.id]);
      expect(claimedIds(claimNext(null))).toEqual([]);
      expect(claimNext(["bad name"]).status).toBe(400);
    });

    it("hands an identity only its own queues' jobs, and answers 403 to a queue beyond them, writing nothing", () => {
      const w = db.addWorker({ queues: '["emails","default"]' });
      const reports = db.insert({ queue: "reports" });
      const emails = db.insert({ queue: "emails" });
      const bare = db.insert({ queue: "" });
      const before = written();
      expect(call("/api/fleet/claim-next", w, { workerId: w.id, queue: ["emails", "reports"] })).toEqual({
        status: 403, body: { error: "queue reports is not among this worker identity's queues (nothing was written)" },
      });
      expect(written()).toEqual(before);
      expect(claimedIds(call("/api/fleet/claim-next", w, { workerId: w.id, queue: "emails", limit: 10 }))).toEqual([emails.id]);
      expect(claimedIds(call("/api/fleet/claim-next", w, { workerId: w.id, limit: 10 }))).toEqual([bare.id]);
      expect(db.row(reports.id)).toEqual(reports);
      // An identity with no queues takes every queue.
      const any = db.addWorker();
      expect(claimedIds(call("/api/fleet/claim-next", any, { workerId: any.id, limit: 10 }))).toEqual([reports.id]);
    });

    it("answers an identity's claim by id of another queue's job { claimed: false, reason: queue_not_allowed }, writing nothing", () => {
      const w = db.addWorker({ queues: '["emails"]' });
      const reports = db.insert({ queue: "reports" });
      const expiredReports = heldRow("w-dead", expired(), { queue: "reports" });
      const before = written();
      for (const job of [reports, expiredReports]) {
        expect(call("/api/fleet/claim", w, { jobId: job.id, workerId: w.id })).toEqual({ status: 200, body: { claimed: false, reason: "queue_not_allowed" } });
      }
      expect(written()).toEqual(before);
      // Its own queue's job it wins; an unknown job is refused as for anyone, without a reason.
      const emails = db.insert({ queue: "emails" });
      expect(call("/api/fleet/claim", w, { jobId: emails.id, workerId: w.id }).body).toMatchObject({ claimed: true });
      expect(call("/api/fleet/claim", w, { jobId: "nosuchjob", workerId: w.id })).toEqual({ status: 200, body: { claimed: false } });
      // An identity of the default queue takes a row whose queue is "" as its own; an admin takes any queue.
      const d = db.addWorker({ queues: '["default"]' });
      const bare = db.insert({ queue: "" });
      expect(call("/api/fleet/claim", d, { jobId: bare.id, workerId: d.id }).body).toMatchObject({ claimed: true });
      expect(post("/api/fleet/claim", { jobId: reports.id, workerId: "admin-run" }).body).toMatchObject({ claimed: true });
    });

    it("stamps an identity's last_seen_at when it was never set, is a minute old or lies ahead, outside the call's transaction", () => {
      const never = db.addWorker({ last_seen_at: "" });
      const old = db.addWorker({ last_seen_at: pbDate(Date.now() - LAST_SEEN_EVERY_MS - 1000) });
      const ahead = db.addWorker({ last_seen_at: pbDate(Date.now() + 3_600_000) });
      const fresh = db.addWorker({ last_seen_at: pbDate(Date.now() - 5000) });
      for (const w of [never, old, ahead, fresh]) {
        expect(call("/api/fleet/claim-next", w, { workerId: w.id }), w.id).toEqual({ status: 200, body: { jobs: [] } });
      }
      for (const w of [never, old, ahead]) expect(Math.abs(msFromNow(db.worker(w.id).last_seen_at)), w.id).toBeLessThan(5000);
      expect(db.worker(fresh.id)).toEqual(fresh);
      // Three stamps, the only writes (claim-next found nothing). An admin's call stamps nothing.
      expect(db.executes).toBe(3);
      post("/api/fleet/claim-next", { workerId: "w1" });
      expect(db.executes).toBe(3);
    });

    it("logs a failed stamp and serves the call anyway", () => {
      const w = db.addWorker({ last_seen_at: "" });
      const job = db.insert();
      db.failExecute(1);
      expect(call("/api/fleet/claim", w, { jobId: job.id, workerId: w.id }).body).toMatchObject({ claimed: true });
      expect(db.row(job.id)).toMatchObject({ status: "claimed", claimed_by: w.id });
      expect(db.worker(w.id).last_seen_at).toBe("");
      expect(db.logs).toMatchObject([{ level: "error", message: LAST_SEEN_FAILED }]);
    });

    it("answers a body over the limit 413 to an identity on its routes, and 401 to a disabled one", () => {
      const w = db.addWorker({ can_enqueue: true });
      const off = db.addWorker({ disabled: true });
      for (const path of [...WORKER_ROUTES, "/api/fleet/enqueue"]) {
        expect(call(path, w, {}, MAX_REQUEST_BODY_BYTES + 1), path).toEqual({ status: 413, body: { error: REQUEST_TOO_LARGE } });
        expect(call(path, off, {}, MAX_REQUEST_BODY_BYTES + 1), path).toEqual({ status: 401, body: WORKER_DISABLED });
      }
      expect(db.saves + db.executes).toBe(0);
    });

    // Known gap on 0.23+: the route middleware that answers a declared length over
    // the limit (refuseOversizedBody) asks authorize() with the worker routes'
    // access whatever the route, so an identity's oversized call to an admin
    // route, or to enqueue without can_enqueue, gets the 413 where 0.22's serve
    // answers the 403 first. When the middleware is told its route's access, make
    // this an it() for both lines.
    it("answers an identity's body over the limit on a route it may not call 403, as for any body", () => {
      const w = db.addWorker();
      for (const path of ADMIN_ROUTES.filter((p) => route(p).method === "POST")) {
        expect(call(path, w, {}, MAX_REQUEST_BODY_BYTES + 1), path).toEqual({ status: 403, body: { error: ADMIN_ONLY } });
      }
      expect(call("/api/fleet/enqueue", w, {}, MAX_REQUEST_BODY_BYTES + 1)).toEqual({ status: 403, body: { error: ENQUEUE_NOT_ALLOWED } });
    });
  });

  describe("a body over PocketBase's limit", () => {
    it("is answered 413 with a sentence on every route, before anything is read or written; smaller bodies go on", () => {
      const job = heldRow("w1", live());
      const body = { jobId: job.id, workerId: "w1", status: "done" };
      for (const r of hooks.routes.filter((route) => route.method === "POST")) {
        expect(fake.runRoute(r, db, { body, contentLength: MAX_REQUEST_BODY_BYTES + 1 }), r.path)
          .toEqual({ status: 413, body: { error: REQUEST_TOO_LARGE } });
      }
      expect(db.saves).toBe(0);
      expect(db.row(job.id)).toEqual(job);
      expect(fake.runRoute(route("/api/fleet/release"), db, { body, contentLength: MAX_REQUEST_BODY_BYTES }).status).toBe(200);
    });

    it("is still a 401 for anyone but an admin", () => {
      for (const caller of ["none", "user"] as const) {
        expect(fake.runRoute(route("/api/fleet/complete"), db, { body: {}, caller, contentLength: MAX_REQUEST_BODY_BYTES + 1 }))
          .toEqual({ status: 401, body: ADMIN_ONLY_ANSWER });
      }
    });
  });

  describe("a body PocketBase cannot parse (invalid JSON, a top-level array, another content type)", () => {
    it.each(["/api/fleet/claim", "/api/fleet/renew", "/api/fleet/release"])("%s answers it as a body without ids, as on 0.22", (path) => {
      heldRow("w1", live());
      expect(post(path, UNPARSEABLE_BODY)).toEqual({ status: 400, body: { error: "jobId and workerId are required" } });
      expect(db.saves).toBe(0);
    });
  });

  describe("POST /api/fleet/claim", () => {
    it("wins a pending job: claimed, new lease and token, version + 1, claimed_at stamped", () => {
      const job = db.insert();
      const answer = post("/api/fleet/claim", { jobId: job.id, workerId: "w1", leaseSeconds: 60 });
      const after = db.row(job.id);
      expect(after).toMatchObject({ status: "claimed", claimed_by: "w1", version: 1, reclaim_count: 0 });
      expect(after.lease_token).toMatch(TOKEN);
      expect(msFromNow(after.lease_expires_at)).toBeGreaterThan(55_000);
      expect(msFromNow(after.lease_expires_at)).toBeLessThanOrEqual(60_000);
      expect(Math.abs(msFromNow(after.claimed_at))).toBeLessThan(5000);
      expect(answer).toEqual({ status: 200, body: { claimed: true, job: viewOf(after), leaseToken: after.lease_token } });
    });

    it("refuses a job another worker holds on a live lease, writing nothing", () => {
      const job = heldRow("w-other", live());
      expect(post("/api/fleet/claim", { jobId: job.id, workerId: "w1" })).toEqual({ status: 200, body: { claimed: false } });
      expect(db.row(job.id)).toEqual(job);
    });

    it("answers an unknown job with a refusal", () => {
      expect(post("/api/fleet/claim", { jobId: "nosuchjob", workerId: "w1" })).toEqual({ status: 200, body: { claimed: false } });
    });

    it("tells the holder retrying on a live lease that it holds the job, with its token, writing nothing", () => {
      const job = db.insert();
      const first = post("/api/fleet/claim", { jobId: job.id, workerId: "w1" });
      const claimed = db.row(job.id);
      const saves = db.saves;
      const retry = post("/api/fleet/claim", { jobId: job.id, workerId: "w1", leaseSeconds: 3600 });
      expect(retry).toEqual({
        status: 200,
        body: { claimed: true, alreadyHeld: true, job: viewOf(claimed), leaseToken: (first.body as { leaseToken: string }).leaseToken },
      });
      expect(db.saves).toBe(saves);
      expect(db.row(job.id)).toEqual(claimed); // the lease was not extended
    });

    it("steals a job whose lease expired: reclaim_count + 1, new holder and token", () => {
      const job = heldRow("w-dead", expired(), { status: "running", reclaim_count: 2, consecutive_orphan_count: 1 });
      const answer = post("/api/fleet/claim", { jobId: job.id, workerId: "w2" });
      const after = db.row(job.id);
      expect(after).toMatchObject({ status: "claimed", claimed_by: "w2", version: 2, reclaim_count: 3, consecutive_orphan_count: 1 });
      expect(after.lease_token).not.toBe("tok-current");
      expect(answer.body).toEqual({ claimed: true, job: viewOf(after), leaseToken: after.lease_token });
    });

    it.each<[string, unknown, string]>([
      ["numbers for both ids", { jobId: 5, workerId: 7 }, "workerId must be a string"],
      ["no ids", {}, "jobId and workerId are required"],
      ["a numeric jobId", { jobId: 5, workerId: "w" }, "jobId must be a string"],
    ])("answers 400 for %s", (_name, body, error) => {
      expect(post("/api/fleet/claim", body)).toEqual({ status: 400, body: { error } });
      expect(db.saves).toBe(0);
    });

    it("answers a failed save with a refusal, not an exception, and rolls back", () => {
      const job = db.insert();
      db.failSave();
      expect(post("/api/fleet/claim", { jobId: job.id, workerId: "w1" })).toEqual({ status: 200, body: { claimed: false } });
      expect(db.row(job.id)).toEqual(job);
    });
  });

  describe("POST /api/fleet/renew", () => {
    it("renews the holder's live lease with its token: running, longer lease, version + 1", () => {
      const job = heldRow("w1", live(10));
      const answer = post("/api/fleet/renew", { jobId: job.id, workerId: "w1", leaseSeconds: 120, leaseToken: "tok-current" });
      const after = db.row(job.id);
      expect(after).toMatchObject({ status: "running", version: 2, lease_token: "tok-current", claimed_by: "w1" });
      expect(msFromNow(after.lease_expires_at)).toBeGreaterThan(115_000);
      expect(answer).toEqual({ status: 200, body: { renewed: true, job: viewOf(after) } });
    });

    it("renews without a token (an unfenced client)", () => {
      const job = heldRow("w1", live());
      expect(post("/api/fleet/renew", { jobId: job.id, workerId: "w1" }).body).toMatchObject({ renewed: true });
    });

    it.each<[string, () => StoredRow, Record<string, unknown>]>([
      ["a stale token", () => heldRow("w1", live()), { workerId: "w1", leaseToken: "tok-old" }],
      ["another worker", () => heldRow("w-other", live()), { workerId: "w1" }],
      ["an expired lease", () => heldRow("w1", expired()), { workerId: "w1" }],
      ["a done job", () => heldRow("w1", live(), { status: "done" }), { workerId: "w1" }],
    ])("refuses %s, writing nothing", (_name, seed, fields) => {
      const job = seed();
      expect(post("/api/fleet/renew", { jobId: job.id, ...fields })).toEqual({ status: 200, body: { renewed: false } });
      expect(db.row(job.id)).toEqual(job);
    });

    it("refuses an unknown job", () => {
      expect(post("/api/fleet/renew", { jobId: "nosuchjob", workerId: "w1" }).body).toEqual({ renewed: false });
    });

    it("answers 400 for an empty leaseToken", () => {
      const job = heldRow("w1", live());
      expect(post("/api/fleet/renew", { jobId: job.id, workerId: "w1", leaseToken: "" })).toEqual({
        status: 400,
        body: { error: "leaseToken must be a non-empty string when given" },
      });
    });

    it("answers a failed save with a refusal and rolls back", () => {
      const job = heldRow("w1", live());
      db.failSave();
      expect(post("/api/fleet/renew", { jobId: job.id, workerId: "w1" })).toEqual({ status: 200, body: { renewed: false } });
      expect(db.row(job.id)).toEqual(job);
    });
  });

  describe("POST /api/fleet/release", () => {
    it.each(["done", "failed"])("finishes the holder's job as %s: finished_at, orphan streak reset, holder and token kept", (status) => {
      const job = heldRow("w1", live(), { status: "running", consecutive_orphan_count: 2, reclaim_count: 3 });
      const answer = post("/api/fleet/release", { jobId: job.id, workerId: "w1", status, leaseToken: "tok-current" });
      const after = db.row(job.id);
      expect(after).toMatchObject({
        status, claimed_by: "w1", lease_token: "tok-current", lease_expires_at: job.lease_expires_at,
        consecutive_orphan_count: 0, reclaim_count: 3, version: 2, requeued_at: "",
      });
      expect(Math.abs(msFromNow(after.finished_at))).toBeLessThan(5000);
      expect(answer).toEqual({ status: 200, body: { released: true, job: viewOf(after) } });
    });

    it("re-queues an expired job to pending: owner and token cleared, counters + 1, lease kept as a marker", () => {
      const job = heldRow("w1", expired(), { reclaim_count: 3, consecutive_orphan_count: 1 });
      const answer = post("/api/fleet/release", { jobId: job.id, workerId: "w1", status: "pending" });
      const after = db.row(job.id);
      expect(after).toMatchObject({
        status: "pending", claimed_by: "", lease_token: "", lease_expires_at: job.lease_expires_at,
        reclaim_count: 4, consecutive_orphan_count: 2, version: 2, finished_at: "",
      });
      expect(Math.abs(msFromNow(after.requeued_at))).toBeLessThan(5000);
      expect(answer).toEqual({ status: 200, body: { released: true, job: viewOf(after) } });
    });

    it.each<[string, () => StoredRow | null, Record<string, unknown>, string]>([
      ["an unknown job", () => null, { workerId: "w1", status: "done" }, "refused_not_holder"],
      ["another worker's job", () => heldRow("w-other", live()), { workerId: "w1", status: "done" }, "refused_not_holder"],
      ["done on an expired lease", () => heldRow("w1", expired()), { workerId: "w1", status: "done" }, "refused_not_holder"],
      ["the caller's own finished job", () => heldRow("w1", live(), { status: "done" }), { workerId: "w1", status: "done" }, "refused_terminal_same_holder"],
      ["pending on a live lease", () => heldRow("w1", live()), { workerId: "w1", status: "pending" }, "refused_lease_live"],
      ["a stale token on a held job", () => heldRow("w1", live()), { workerId: "w1", status: "done", leaseToken: "tok-old" }, "refused_stale_token"],
      ["a stale token on the caller's finished job", () => heldRow("w1", live(), { status: "failed" }), { workerId: "w1", status: "failed", leaseToken: "tok-old" }, "refused_stale_token"],
    ])("refuses %s (%s), writing nothing", (_name, seed, fields, reason) => {
      const job = seed();
      const answer = post("/api/fleet/release", { jobId: job?.id ?? "nosuchjob", ...fields });
      expect(answer).toEqual({ status: 200, body: { released: false, reason } });
      if (job) expect(db.row(job.id)).toEqual(job);
      expect(db.saves).toBe(0);
    });

    it.each<[string, Record<string, unknown>, string]>([
      ["a missing status", {}, "status is required (done|failed|pending)"],
      ["an unknown status", { status: "claimed" }, "status must be done|failed|pending"],
    ])("answers 400 for %s", (_name, fields, error) => {
      const job = heldRow("w1", live());
      expect(post("/api/fleet/release", { jobId: job.id, workerId: "w1", ...fields })).toEqual({ status: 400, body: { error } });
    });

    it("answers a failed save with refused_not_holder and rolls back", () => {
      const job = heldRow("w1", live());
      db.failSave();
      expect(post("/api/fleet/release", { jobId: job.id, workerId: "w1", status: "done" })).toEqual({
        status: 200,
        body: { released: false, reason: "refused_not_holder" },
      });
      expect(db.row(job.id)).toEqual(job);
    });
  });

  describe("POST /api/fleet/claim-next", () => {
    it("claims the oldest claimable jobs under a prefix, up to the limit, each with its own token", () => {
      const a1 = db.insert({ probe_key: "a-1" });
      db.insert({ probe_key: "b-1" });
      const a2 = heldRow("w-dead", expired(), { probe_key: "a-2", reclaim_count: 1 });
      heldRow("w-other", live(), { probe_key: "a-3" });
      db.insert({ probe_key: "a-4", status: "done" });
      const a5 = db.insert({ probe_key: "a-5" });

      const first = post("/api/fleet/claim-next", { workerId: "w9", limit: 2, probeKeyPrefix: "a-", leaseSeconds: 90 });
      const [after1, after2] = [db.row(a1.id), db.row(a2.id)];
      expect(first).toEqual({
        status: 200,
        body: { jobs: [{ job: queueViewOf(after1), leaseToken: after1.lease_token }, { job: queueViewOf(after2), leaseToken: after2.lease_token }] },
      });
      expect(after1).toMatchObject({ status: "claimed", claimed_by: "w9", version: 1, reclaim_count: 0, attempts: 1 });
      expect(after2).toMatchObject({ status: "claimed", claimed_by: "w9", version: 2, reclaim_count: 2, attempts: 1 }); // a steal
      expect(after1.lease_token).toMatch(TOKEN);
      expect(after1.lease_token).not.toBe(after2.lease_token);
      expect(msFromNow(after1.lease_expires_at)).toBeGreaterThan(85_000);

      const second = post("/api/fleet/claim-next", { workerId: "w9", limit: 100, probeKeyPrefix: "a-" });
      expect((second.body as { jobs: { job: { id: string } }[] }).jobs.map((j) => j.job.id)).toEqual([a5.id]);
      expect(post("/api/fleet/claim-next", { workerId: "w9", probeKeyPrefix: "a-" }).body).toEqual({ jobs: [] });
    });

    it("claims one job by default, from all jobs when no prefix is given", () => {
      const oldest = db.insert({ probe_key: "z-1" });
      db.insert({ probe_key: "a-1" });
      const answer = post("/api/fleet/claim-next", { workerId: "w1" });
      expect((answer.body as { jobs: { job: { id: string } }[] }).jobs.map((j) => j.job.id)).toEqual([oldest.id]);
    });

    it("matches the prefix literally and case-sensitively", () => {
      db.insert({ probe_key: "pX1" });
      db.insert({ probe_key: "P_1" });
      const literal = db.insert({ probe_key: "p_1" });
      const answer = post("/api/fleet/claim-next", { workerId: "w1", limit: 10, probeKeyPrefix: "p_" });
      expect((answer.body as { jobs: { job: { id: string } }[] }).jobs.map((j) => j.job.id)).toEqual([literal.id]);
    });

    it("answers 400 for a bad limit", () => {
      expect(post("/api/fleet/claim-next", { workerId: "w1", limit: 0 })).toEqual({
        status: 400,
        body: { error: "limit must be an integer from 1 to 100" },
      });
    });

    it("counts a steal of an expired lease as an orphaning, unlike claim by id", () => {
      const stolen = heldRow("w-dead", expired(), { consecutive_orphan_count: 2, reclaim_count: 4 });
      post("/api/fleet/claim-next", { workerId: "w1" });
      expect(db.row(stolen.id)).toMatchObject({ status: "claimed", claimed_by: "w1", reclaim_count: 5, consecutive_orphan_count: 3 });
    });

    it("gives up a job at the orphan cap instead of handing it out, and claims the next one in its place", () => {
      db.env["PB_FLEET_MAX_ORPHANS"] = "3";
      const poison = heldRow("w-dead", expired(), { consecutive_orphan_count: 3, version: 7 });
      const next = db.insert();
      const answer = post("/api/fleet/claim-next", { workerId: "w1" });
      expect((answer.body as { jobs: { job: { id: string } }[] }).jobs.map((j) => j.job.id)).toEqual([next.id]);
      const gaveUp = db.row(poison.id);
      // The shape of the sweeper's give-up.
      expect(gaveUp).toMatchObject({ status: "failed", claimed_by: "pb-fleet-sweeper", lease_token: "", consecutive_orphan_count: 3, version: 8 });
      expect(JSON.parse(gaveUp.result)).toMatchObject({ reason: "orphan_cap", lastHolder: "w-dead" });
      // The dead holder's late release cannot take the give-up for its own.
      expect(post("/api/fleet/release", { jobId: poison.id, workerId: "w-dead", status: "done" }).body)
        .toEqual({ released: false, reason: "refused_not_holder" });
    });

    it("answers no jobs when every candidate was given up", () => {
      db.env["PB_FLEET_MAX_ORPHANS"] = "1";
      const poison = heldRow("w-dead", expired(), { consecutive_orphan_count: 1 });
      expect(post("/api/fleet/claim-next", { workerId: "w1", limit: 5 }).body).toEqual({ jobs: [] });
      expect(db.row(poison.id).status).toBe("failed");
    });

    it.each<[string, (db: FakeDb) => void]>([
      ["the batch's write fails", (d) => d.failExecute(1)],
      ["its probe_job_events record cannot be saved", (d) => d.failSave(1)],
    ])("rolls every claim back when %s, answering no jobs", (_name, arm) => {
      const first = db.insert();
      const second = db.insert();
      arm(db);
      expect(post("/api/fleet/claim-next", { workerId: "w1", limit: 2 })).toEqual({ status: 200, body: { jobs: [] } });
      expect([db.row(first.id), db.row(second.id)]).toEqual([first, second]);
      expect(db.events.size).toBe(0);
      expect(db.logs).toMatchObject([{ level: "error", message: "pb-fleet: transaction rolled back" }]);
    });

    it("saves one probe_job_events record listing every job as written", () => {
      const first = db.insert({ probe_key: "a" });
      const second = db.insert({ probe_key: "b" });
      post("/api/fleet/claim-next", { workerId: "w1", limit: 5 });
      const events = [...db.events.values()];
      expect(events).toHaveLength(1);
      expect(events[0]!.source).toBe("claim-next");
      expect(JSON.parse(events[0]!.changes)).toEqual([viewOf(db.row(first.id)), viewOf(db.row(second.id))]);
    });
  });

  describe("the sweeper (POST /api/fleet/sweep and the cron job)", () => {
    function seedSweepable() {
      return {
        requeue: heldRow("w-dead", expired(), { probe_key: "a-1", consecutive_orphan_count: 1, reclaim_count: 1 }),
        giveUp: heldRow("w-dead", expired(), { probe_key: "b-1", status: "running", consecutive_orphan_count: 3 }),
        alive: heldRow("w-alive", live(), { probe_key: "a-2" }),
        pending: db.insert({ probe_key: "a-3", lease_expires_at: expired() }),
      };
    }

    it("re-queues expired jobs below the cap and gives up on those at it", () => {
      db.env["PB_FLEET_MAX_ORPHANS"] = "3";
      const rows = seedSweepable();
      expect(post("/api/fleet/sweep", {})).toEqual({
        status: 200,
        body: {
          requeued: 1,
          gaveUp: 1,
          timedOut: 0,
          jobs: [
            { id: rows.requeue.id, outcome: "requeued", claimedBy: "w-dead", consecutiveOrphanCount: 2 },
            { id: rows.giveUp.id, outcome: "gave_up", claimedBy: "w-dead", consecutiveOrphanCount: 3 },
          ],
        },
      });
      expect(db.row(rows.requeue.id)).toMatchObject({
        status: "pending", claimed_by: "", lease_token: "", reclaim_count: 2, consecutive_orphan_count: 2, version: 2,
      });
      const gaveUp = db.row(rows.giveUp.id);
      expect(gaveUp).toMatchObject({ status: "failed", claimed_by: "pb-fleet-sweeper", lease_token: "", consecutive_orphan_count: 3, version: 2 });
      expect(JSON.parse(gaveUp.result)).toMatchObject({ reason: "orphan_cap", lastHolder: "w-dead" });
      expect(Math.abs(msFromNow(gaveUp.finished_at))).toBeLessThan(5000);
      // a dead letter too, with its own reason
      expect(gaveUp.dead_lettered_at).toBe(gaveUp.finished_at);
      expect(gaveUp.last_error).toBe("pb-fleet gave up: the lease of this job expired 4 times in a row without a release");
      expect(db.row(rows.alive.id)).toEqual(rows.alive);
      expect(db.row(rows.pending.id)).toEqual(rows.pending);
    });

    it("sweeps only the jobs under a prefix when given one", () => {
      db.env["PB_FLEET_MAX_ORPHANS"] = "3";
      const rows = seedSweepable();
      expect(post("/api/fleet/sweep", { probeKeyPrefix: "b-" }).body).toMatchObject({ requeued: 0, gaveUp: 1, jobs: [{ id: rows.giveUp.id }] });
      expect(db.row(rows.requeue.id)).toEqual(rows.requeue);
    });

    it("answers 400 for a non-string prefix", () => {
      expect(post("/api/fleet/sweep", { probeKeyPrefix: 5 })).toEqual({ status: 400, body: { error: "probeKeyPrefix must be a string" } });
    });

    it("answers a failed write with nothing swept and rolls back", () => {
      const rows = seedSweepable();
      db.failExecute(1);
      expect(post("/api/fleet/sweep", {})).toEqual({ status: 200, body: { requeued: 0, gaveUp: 0, timedOut: 0, jobs: [] } });
      expect(db.row(rows.requeue.id)).toEqual(rows.requeue);
    });

    it("runs the same sweep on a cron tick, and logs what it did", () => {
      const rows = seedSweepable(); // default cap 5: both expired rows are re-queued
      fake.runCron(hooks.crons[0]!, db);
      expect(db.row(rows.requeue.id).status).toBe("pending");
      expect(db.row(rows.giveUp.id).status).toBe("pending");
      expect(db.logs).toEqual([{ level: "info", message: "pb-fleet sweep", attrs: ["requeued", 2, "gaveUp", 0, "timedOut", 0] }]);
    });

    it("does nothing on a cron tick when PB_FLEET_SWEEP_CRON=off", () => {
      db.env["PB_FLEET_SWEEP_CRON"] = "off";
      const rows = seedSweepable();
      fake.runCron(hooks.crons[0]!, db);
      expect(db.row(rows.requeue.id)).toEqual(rows.requeue);
      expect(db.saves).toBe(0);
      expect(db.logs).toEqual([]);
    });

    it("logs a failed cron sweep instead of throwing, and rolls back", () => {
      const rows = seedSweepable();
      db.failSave();
      fake.runCron(hooks.crons[0]!, db);
      expect(db.row(rows.requeue.id)).toEqual(rows.requeue);
      expect(db.logs).toHaveLength(1);
      expect(db.logs[0]).toMatchObject({ level: "error", message: "pb-fleet: transaction rolled back" });
    });
  });

  describe("GET /api/fleet/stats", () => {
    function seedStats() {
      db.insert({ probe_key: "a-1", created: pbDate(Date.now() - 120_000) });
      db.insert({ probe_key: "a-2", requeued_at: pbDate(Date.now() - 30_000), created: pbDate(Date.now() - 600_000) });
      heldRow("w1", expired(), { probe_key: "a-3" });
      heldRow("w1", live(), { probe_key: "b-1", status: "running", consecutive_orphan_count: 5 });
      db.insert({ probe_key: "b-2", status: "done" });
    }

    beforeEach(() => {
      fake.loadHooks(SOURCE, db.env, db); // as PocketBase loads the file: the sweeper's state is recorded
    });

    it("answers the counts as JSON", () => {
      seedStats();
      const answer = stats();
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        counts: { pending: 2, claimed: 1, running: 1, done: 1, failed: 0, cancelled: 0 },
        total: 5,
        scheduled: 0,
        retrying: 0,
        deadLettered: 0,
        oldestPendingAgeSeconds: expect.closeTo(120, -1),
        expiredLeases: 1,
        pastOrphanCap: 1,
        orphanCap: 5,
        sweeper: { scheduled: true, schedule: "* * * * *" },
      });
    });

    it("narrows to a prefix, and reports a null age when nothing is pending", () => {
      seedStats();
      db.env["PB_FLEET_MAX_ORPHANS"] = "7";
      expect(stats({ probeKeyPrefix: "b-" }).body).toEqual({
        counts: { pending: 0, claimed: 0, running: 1, done: 1, failed: 0, cancelled: 0 },
        total: 2,
        scheduled: 0,
        retrying: 0,
        deadLettered: 0,
        oldestPendingAgeSeconds: null,
        expiredLeases: 0,
        pastOrphanCap: 0,
        orphanCap: 7,
        sweeper: { scheduled: true, schedule: "* * * * *" },
      });
    });

    it("counts cancelled, scheduled, retrying and dead-lettered jobs", () => {
      db.insert({ status: "cancelled" });
      db.insert({ run_at: live(60) });
      db.insert({ attempts: 2, run_at: live(5) });
      db.insert({ attempts: 1, created: expired(30) });
      db.insert({ status: "failed", dead_lettered_at: expired() });
      expect(stats().body).toMatchObject({
        counts: { pending: 3, cancelled: 1, failed: 1 },
        scheduled: 2,
        retrying: 2,
        deadLettered: 1,
        // only the due pending job waits
        oldestPendingAgeSeconds: expect.closeTo(30, -1),
      });
    });

    it("answers Prometheus text for format=prometheus", () => {
      seedStats();
      const answer = stats({ format: "prometheus" });
      expect(answer.status).toBe(200);
      expect(answer.text).toContain('# TYPE pb_fleet_jobs gauge\npb_fleet_jobs{status="pending"} 2\n');
      expect(answer.text).toMatch(/\npb_fleet_oldest_pending_age_seconds \d+(\.\d+)?\n/);
      expect(answer.text).toContain("\npb_fleet_orphan_cap 5\n");
    });

    it("answers 400 for an unknown format and 503 when the query fails", () => {
      expect(stats({ format: "xml" })).toEqual({ status: 400, body: { error: "format must be json or prometheus" } });
      db.failQueries = true;
      // The database's own text goes to the log, never to the caller: the counted
      // read failed, then the read of the rows it falls back to.
      expect(stats()).toEqual({ status: 503, body: { error: STATS_UNAVAILABLE } });
      const failed = { level: "error", message: "pb-fleet: query failed", attrs: ["error", expect.stringContaining("database is locked")] };
      expect(db.logs).toEqual([failed, failed]);
    });

    it.each<[string, Record<string, string>, object]>([
      ["scheduled", { PB_FLEET_SWEEP_CRON: "*/5 * * * *" }, { scheduled: true, schedule: "*/5 * * * *" }],
      ["off", { PB_FLEET_SWEEP_CRON: "off" }, { scheduled: false, schedule: "off" }],
    ])("says whether the server sweeper runs, and on what schedule (%s)", (_name, env, sweeper) => {
      const fresh = new FakeDb(fake.line);
      fresh.env = env;
      fake.loadHooks(SOURCE, env, fresh);
      expect(fake.runRoute(route("/api/fleet/stats"), fresh).body).toMatchObject({ sweeper });
    });

    it("says the sweeper is not running when its schedule failed to load (PocketBase with --hooksWatch serves on)", () => {
      const fresh = new FakeDb(fake.line);
      fresh.env = { PB_FLEET_SWEEP_CRON: "61 * * * *" };
      expect(() => fake.loadHooks(SOURCE, fresh.env, fresh)).toThrow(/pb-fleet-sweeper: PB_FLEET_SWEEP_CRON="61 \* \* \* \*" is not a valid/);
      expect(fresh.logs).toMatchObject([{ level: "error", message: "pb-fleet-sweeper is not scheduled" }]);
      expect(fake.runRoute(route("/api/fleet/stats"), fresh).body).toMatchObject({
        sweeper: { scheduled: false, schedule: "61 * * * *", error: expect.stringMatching(/^PB_FLEET_SWEEP_CRON="61 \* \* \* \*" is not a valid 5-field cron expression .*minute field "61"/) },
      });
    });

    it("says the sweeper is not running when the hooks never recorded it", () => {
      expect(fake.runRoute(route("/api/fleet/stats"), new FakeDb(fake.line)).body).toMatchObject({
        sweeper: { scheduled: false, schedule: "* * * * *", error: expect.stringContaining("did not register the sweeper") },
      });
    });
  });

  describe("the probe_jobs create hook", () => {
    it("gives a row created through the record API its creation time as its due time", () => {
      const before = Date.now();
      const created = db.createRecord({ probe_key: "api-1", status: "pending" });
      expect(created.id).toMatch(/^[a-z0-9]{15}$/);
      expect(created.run_at).toMatch(PB_DATE_TEXT);
      expect(Date.parse(created.run_at.replace(" ", "T"))).toBeGreaterThanOrEqual(before - 1);
      expect(Math.abs(msFromNow(created.run_at))).toBeLessThan(5000);
      // ...so claim-next hands it out at once.
      expect((post("/api/fleet/claim-next", { workerId: "w1" }).body as { jobs: { job: { id: string } }[] }).jobs.map((j) => j.job.id))
        .toEqual([created.id]);
    });

    it("leaves a due time that was given", () => {
      const later = live(3600);
      expect(db.createRecord({ probe_key: "api-2", status: "pending", run_at: later }).run_at).toBe(later);
    });

    it("puts a row created without a queue in the default queue, and leaves a queue that was given", () => {
      expect(db.createRecord({ probe_key: "api-3", status: "pending" }).queue).toBe("default");
      expect(db.createRecord({ probe_key: "api-4", status: "pending", queue: "emails" }).queue).toBe("emails");
    });
  });

  describe("POST /api/fleet/enqueue", () => {
    type Enqueued = { jobs: { id: string; probeKey: string; created: boolean }[] };

    it("writes the jobs in one call, in request order, with every field, and answers their ids", () => {
      const answer = post("/api/fleet/enqueue", {
        jobs: [
          { probeKey: "a", payload: { x: [1, "é"] }, priority: 5, maxAttempts: 3, uniqueKey: "k", delaySeconds: 60 },
          { probeKey: "b", payload: "123" },
          { probeKey: "c", runAt: "2099-01-01T01:00:00+01:00" },
        ],
      });
      expect(answer.status).toBe(200);
      const jobs = (answer.body as Enqueued).jobs;
      expect(jobs.map((j) => [j.probeKey, j.created])).toEqual([["a", true], ["b", true], ["c", true]]);
      const [a, b, c] = jobs.map((j) => db.row(j.id));
      expect(a).toMatchObject({
        probe_key: "a", status: "pending", payload: '{"x":[1,"é"]}', priority: 5, max_attempts: 3, unique_key: "k",
        enqueue_index: 0, attempts: 0, claimed_by: "", last_error: "", dead_lettered_at: "",
      });
      // enqueue's due time, not the create hook's stamp
      expect(msFromNow(a!.run_at)).toBeGreaterThan(55_000);
      // A JSON string payload stays a string (PocketBase would re-parse a bare "123" as a number).
      expect(b).toMatchObject({ payload: '"123"', priority: 0, max_attempts: 25, unique_key: "", enqueue_index: 1 });
      expect(Math.abs(msFromNow(b!.run_at))).toBeLessThan(5000);
      expect(c).toMatchObject({ run_at: "2099-01-01 00:00:00.000Z", payload: "null", enqueue_index: 2 });
      expect(db.all()).toHaveLength(3);
      // Without a queue: the default one, written by enqueue (not left to the create hook).
      expect([a, b, c].map((r) => r!.queue)).toEqual(["default", "default", "default"]);
    });

    it("writes each job's queue, and answers 400 for a bad one, writing nothing", () => {
      const answer = post("/api/fleet/enqueue", { jobs: [{ probeKey: "a", queue: "emails" }, { probeKey: "b", queue: null }] });
      expect((answer.body as Enqueued).jobs.map((j) => db.row(j.id).queue)).toEqual(["emails", "default"]);
      const saves = db.saves;
      expect(post("/api/fleet/enqueue", { jobs: [{ probeKey: "c" }, { probeKey: "d", queue: "" }] })).toEqual({
        status: 400, body: { error: expect.stringMatching(/^jobs\[1\]: queue must be a queue name/) },
      });
      expect(db.saves).toBe(saves);
      expect(db.all()).toHaveLength(2);
    });

    it.each<[string, unknown, string]>([
      ["no jobs", {}, "jobs must be an array of 1 to 1000 jobs"],
      ["a bad second item", { jobs: [{ probeKey: "a" }, { probeKey: "" }] }, "jobs[1]: probeKey must be a non-empty string"],
      ["runAt without a zone", { jobs: [{ probeKey: "a", runAt: "2099-01-01T00:00:00" }] }, "jobs[0]: runAt must be an ISO-8601 time with a zone"],
      ["runAt with delaySeconds", { jobs: [{ probeKey: "a", runAt: "2099-01-01T00:00:00Z", delaySeconds: 1 }] }, "jobs[0]: give runAt or delaySeconds, not both"],
    ])("answers 400 for %s, writing nothing", (_name, body, error) => {
      const answer = post("/api/fleet/enqueue", body);
      expect(answer.status).toBe(400);
      expect((answer.body as { error: string }).error.startsWith(error)).toBe(true);
      expect(db.saves).toBe(0);
    });

    it("answers a live job's unique key with that job, and an earlier item's key with that item", () => {
      const live = db.insert({ status: "running", unique_key: "k1" });
      db.insert({ status: "done", unique_key: "k2" });
      const jobs = (post("/api/fleet/enqueue", {
        jobs: [{ probeKey: "x", uniqueKey: "k1" }, { probeKey: "y", uniqueKey: "k2" }, { probeKey: "z", uniqueKey: "k2" }],
      }).body as Enqueued).jobs;
      expect(jobs.map((j) => [j.probeKey, j.created])).toEqual([["x", false], ["y", true], ["z", false]]);
      expect(jobs[0]!.id).toBe(live.id);
      expect(jobs[2]!.id).toBe(jobs[1]!.id);
      expect(db.all()).toHaveLength(3);
      expect(db.saves).toBe(1);
    });

    it("writes all or nothing: a failed save answers 503 and rolls every item back", () => {
      db.failSave(2);
      expect(post("/api/fleet/enqueue", { jobs: [{ probeKey: "a" }, { probeKey: "b" }] })).toEqual({ status: 503, body: { error: TRANSACTION_FAILED } });
      expect(db.all()).toEqual([]);
    });

    it("hands one call's jobs to claim-next in request order, with payload, attempts and maxAttempts", () => {
      const ids = (post("/api/fleet/enqueue", {
        jobs: [{ probeKey: "p-3", payload: { n: 3 } }, { probeKey: "p-1", payload: "123" }, { probeKey: "p-2", maxAttempts: 0 }],
      }).body as Enqueued).jobs.map((j) => j.id);
      const claimed = (post("/api/fleet/claim-next", { workerId: "w1", limit: 5 }).body as { jobs: { job: Record<string, unknown> }[] }).jobs;
      expect(claimed.map((c) => c.job["id"])).toEqual(ids);
      expect(claimed.map((c) => [c.job["payload"], c.job["attempts"], c.job["max_attempts"]])).toEqual([
        [{ n: 3 }, 1, 25], ["123", 1, 25], [null, 1, 0],
      ]);
    });
  });

  describe("POST /api/fleet/claim-next: the queue's order", () => {
    it("claims by priority, then due time, and never a job not yet due", () => {
      const low = db.insert({ probe_key: "low", priority: -1 });
      const future = db.insert({ probe_key: "future", priority: 100, run_at: live(60) });
      const high = db.insert({ probe_key: "high", priority: 10 });
      const laterDue = db.insert({ probe_key: "mid-b", run_at: pbDate(Date.now() - 1000) });
      const earlierDue = db.insert({ probe_key: "mid-a", run_at: pbDate(Date.now() - 5000) });
      const answer = post("/api/fleet/claim-next", { workerId: "w1", limit: 10 });
      const claimed = (answer.body as { jobs: { job: { id: string } }[] }).jobs.map((j) => j.job.id);
      expect(claimed).toEqual([high.id, earlierDue.id, laterDue.id, low.id]);
      expect(db.row(future.id)).toEqual(future);
      expect(post("/api/fleet/claim", { jobId: future.id, workerId: "w1" }).body).toEqual({ claimed: false });
    });

    it("dead-letters a job at max attempts instead of handing it out", () => {
      const spent = db.insert({ attempts: 3, max_attempts: 3, lease_token: "old" });
      const next = db.insert();
      const claimed = (post("/api/fleet/claim-next", { workerId: "w1" }).body as { jobs: { job: { id: string } }[] }).jobs;
      expect(claimed.map((j) => j.job.id)).toEqual([next.id]);
      const after = db.row(spent.id);
      expect(after).toMatchObject({ status: "failed", claimed_by: "", lease_token: "", last_error: MAX_ATTEMPTS_ERROR, attempts: 3, version: 1 });
      expect(after.dead_lettered_at).toBe(after.finished_at);
      expect(Math.abs(msFromNow(after.dead_lettered_at))).toBeLessThan(5000);
    });
  });

  describe("POST /api/fleet/release: result, error and retry", () => {
    it("stores result and error with a done release, in the same write", () => {
      const job = heldRow("w1", live());
      const answer = post("/api/fleet/release", { jobId: job.id, workerId: "w1", status: "done", result: { rows: 2 }, error: "1 warning" });
      const after = db.row(job.id);
      expect(after).toMatchObject({ status: "done", result: '{"rows":2}', last_error: "1 warning" });
      expect(db.saves).toBe(1);
      expect(answer).toEqual({ status: 200, body: { released: true, job: viewOf(after) } });
    });

    it("keeps a JSON string result a string", () => {
      const job = heldRow("w1", live());
      post("/api/fleet/release", { jobId: job.id, workerId: "w1", status: "failed", result: "42" });
      expect(db.row(job.id).result).toBe('"42"');
    });

    it("sends a retry back to pending after its backoff: no holder, orphan count 0, progress cleared", () => {
      const job = heldRow("w1", live(), {
        status: "running", attempts: 1, max_attempts: 5, consecutive_orphan_count: 2, reclaim_count: 3, progress: '{"p":1}',
      });
      const answer = post("/api/fleet/release", { jobId: job.id, workerId: "w1", status: "retry", leaseToken: "tok-current", error: "timeout" });
      const after = db.row(job.id);
      expect(after).toMatchObject({
        status: "pending", claimed_by: "", lease_token: "", lease_expires_at: "", consecutive_orphan_count: 0,
        reclaim_count: 3, requeued_at: "", progress: "null", last_error: "timeout", attempts: 1, version: 2,
      });
      // after the first attempt: 1 s, plus at most 25% jitter
      expect(msFromNow(after.run_at)).toBeGreaterThan(500);
      expect(msFromNow(after.run_at)).toBeLessThanOrEqual(1250);
      expect(answer).toEqual({ status: 200, body: { released: true, job: viewOf(after) } });
      expect(post("/api/fleet/claim-next", { workerId: "w2" }).body).toEqual({ jobs: [] }); // not due yet
    });

    it("dead-letters a retry at max attempts, keeping the worker's error", () => {
      const job = heldRow("w1", live(), { attempts: 2, max_attempts: 2 });
      const answer = post("/api/fleet/release", { jobId: job.id, workerId: "w1", status: "retry", error: "disk full" });
      const after = db.row(job.id);
      expect(after).toMatchObject({ status: "failed", claimed_by: "", lease_token: "", last_error: "disk full" });
      expect(after.dead_lettered_at).toMatch(PB_DATE_TEXT);
      expect(answer.body).toMatchObject({ released: true, job: { status: "failed" } });
    });

    it("answers 400 for a non-string error, writing nothing", () => {
      const job = heldRow("w1", live());
      expect(post("/api/fleet/release", { jobId: job.id, workerId: "w1", status: "done", error: 5 }))
        .toEqual({ status: 400, body: { error: "error must be a string when given" } });
      expect(db.saves).toBe(0);
    });
  });

  describe("POST /api/fleet/renew: progress", () => {
    it("stores progress with a successful renew", () => {
      const job = heldRow("w1", live());
      expect(post("/api/fleet/renew", { jobId: job.id, workerId: "w1", progress: { step: 2, of: 5 } }).body).toMatchObject({ renewed: true });
      expect(db.row(job.id).progress).toBe('{"step":2,"of":5}');
    });

    it("stores nothing on a refused renew, and answers 400 for progress over 4096 bytes", () => {
      const job = heldRow("w-other", live());
      expect(post("/api/fleet/renew", { jobId: job.id, workerId: "w1", progress: { step: 2 } }).body).toEqual({ renewed: false });
      expect(post("/api/fleet/renew", { jobId: job.id, workerId: "w-other", progress: "x".repeat(4095) }))
        .toEqual({ status: 400, body: { error: "progress must be at most 4096 bytes as JSON" } });
      expect(db.row(job.id)).toEqual(job);
    });
  });

  describe("POST /api/fleet/cancel", () => {
    it("cancels a held job; its holder's renew and release are refused from then on", () => {
      const job = heldRow("w1", live(), { payload: '{"a":1}' });
      const answer = post("/api/fleet/cancel", { jobId: job.id });
      const after = db.row(job.id);
      expect(after).toMatchObject({ status: "cancelled", lease_token: "", claimed_by: "w1", version: 2 });
      expect(Math.abs(msFromNow(after.finished_at))).toBeLessThan(5000);
      expect(answer).toEqual({ status: 200, body: { cancelled: true, job: queueViewOf(after) } });
      expect(post("/api/fleet/renew", { jobId: job.id, workerId: "w1", leaseToken: "tok-current" }).body).toEqual({ renewed: false });
      expect(post("/api/fleet/release", { jobId: job.id, workerId: "w1", status: "done", leaseToken: "tok-current" }).body)
        .toEqual({ released: false, reason: "refused_not_holder" });
    });

    it("refuses a finished or unknown job, writing nothing, and answers 400 without a jobId", () => {
      const done = db.insert({ status: "done" });
      expect(post("/api/fleet/cancel", { jobId: done.id })).toEqual({ status: 200, body: { cancelled: false } });
      expect(post("/api/fleet/cancel", { jobId: "nosuchjob" })).toEqual({ status: 200, body: { cancelled: false } });
      expect(post("/api/fleet/cancel", {})).toEqual({ status: 400, body: { error: "jobId is required" } });
      expect(db.saves).toBe(0);
    });
  });

  describe("POST /api/fleet/retry", () => {
    it("brings a dead-lettered job back: pending, due now, attempts 0, last_error kept", () => {
      const job = db.insert({
        status: "failed", attempts: 25, max_attempts: 25, dead_lettered_at: expired(), finished_at: expired(),
        last_error: MAX_ATTEMPTS_ERROR, run_at: expired(3600), version: 30,
      });
      const answer = post("/api/fleet/retry", { jobId: job.id });
      const after = db.row(job.id);
      expect(after).toMatchObject({
        status: "pending", attempts: 0, finished_at: "", dead_lettered_at: "", last_error: MAX_ATTEMPTS_ERROR, version: 31,
      });
      expect(Math.abs(msFromNow(after.run_at))).toBeLessThan(5000);
      expect(answer).toEqual({ status: 200, body: { retried: true, job: queueViewOf(after) } });
    });

    it("refuses a job whose unique key another live job now holds, and a job that is not failed or cancelled", () => {
      const old = db.insert({ status: "cancelled", unique_key: "k" });
      db.insert({ status: "pending", unique_key: "k" });
      const pending = db.insert();
      expect(post("/api/fleet/retry", { jobId: old.id }).body).toEqual({ retried: false, reason: "unique_key_taken" });
      expect(post("/api/fleet/retry", { jobId: pending.id }).body).toEqual({ retried: false });
      expect(db.saves).toBe(0);
    });
  });

  describe("POST /api/fleet/maintenance and its cron job", () => {
    type Tick = { schedules: { enqueued: { schedule: string; jobId: string; created: boolean }[]; errors: string[] }; retention: unknown };

    it("enqueues a due schedule's job once per minute", () => {
      const schedule = db.addSchedule({ name: "tick", probe_key: "report", payload: '{"a":1}', priority: 2, max_attempts: 4 });
      // One pooled runtime with its clock held mid-minute: both ticks fall in the same minute.
      const runtime = fake.pooledRuntime(db);
      const at = minuteStart(Date.now()) + 30_000;
      vm.runInContext(`Date.now = () => ${at};`, runtime);
      const tick = () => fake.runRoute(route("/api/fleet/maintenance"), db, { body: {} }, runtime);
      const first = tick();
      expect(first.status).toBe(200);
      const enqueued = (first.body as Tick).schedules.enqueued;
      expect(enqueued).toEqual([{ schedule: "tick", jobId: expect.any(String), created: true }]);
      expect(db.row(enqueued[0]!.jobId)).toMatchObject({
        probe_key: "report", payload: '{"a":1}', priority: 2, max_attempts: 4, status: "pending",
        unique_key: scheduleUniqueKey("tick", at), run_at: pbDate(minuteStart(at)),
      });
      expect(db.schedule(schedule.id).last_enqueued_for).toBe(pbDate(minuteStart(at)));
      expect((tick().body as Tick).schedules).toEqual({ enqueued: [], errors: [] });
      expect(db.all()).toHaveLength(1);
    });

    it("deletes finished rows past their keep time", () => {
      db.env["PB_FLEET_KEEP_FAILED"] = "1d";
      const oldDone = db.insert({ status: "done", finished_at: expired(8 * 86_400) });
      const newDone = db.insert({ status: "done", finished_at: expired(86_400) });
      const oldFailed = db.insert({ status: "failed", finished_at: expired(2 * 86_400) });
      const answer = post("/api/fleet/maintenance", {});
      expect(answer).toEqual({
        status: 200,
        body: {
          countsRepaired: false,
          leaseIndexRepaired: false,
          schedules: { enqueued: [], errors: [] },
          retention: { deleted: { done: 1, failed: 1 }, events: 0, errors: [], batches: 1, drained: true, rolledBack: false },
          // Flow control's upkeep (docs/flow-control.md): nothing to do here.
          flow: { notStarted: 0, claims: 0, parks: 0 },
        },
      });
      expect(db.all().map((r) => r.id)).toEqual([newDone.id]);
      expect([oldDone.id, oldFailed.id].some((id) => db.rows.has(id))).toBe(false);
    });

    it("runs the same tick from cron, and logs what it did", () => {
      db.addSchedule({ name: "every-minute" });
      db.insert({ status: "cancelled", finished_at: expired(30 * 86_400) });
      const cron = hooks.crons.find((c) => c.id === "pb-fleet-maintenance")!;
      expect(cron.schedule).toBe("* * * * *");
      fake.runCron(cron, db);
      expect(db.all().map((r) => r.probe_key)).toEqual(["scheduled-every-minute"]);
      expect(db.logs).toEqual([{
        level: "info", message: "pb-fleet maintenance",
        attrs: ["enqueued", 1, "deleted", 1, "events", 0, "batches", 1, "drained", true],
      }]);
    });
  });

  describe("flow control (docs/flow-control.md): /api/fleet/flow and the limits on every path", () => {
    const getFlow = (query: Record<string, string> = {}, caller: Caller = "superuser") =>
      fake.runRoute(route("/api/fleet/flow", "GET"), db, { query, caller });
    const setFlow = (body: unknown, caller: Caller = "superuser") => fake.runRoute(route("/api/fleet/flow", "POST"), db, { body, caller });
    const UNSET = { paused: false, concurrency: null, rateLimit: null, parkedUntil: null };

    it("stores a scope's settings and answers them as stored; a setting not given keeps its value, null clears it", () => {
      expect(setFlow({ queue: "emails", concurrency: 3 })).toEqual({ status: 200, body: { flow: { queue: "emails", ...UNSET, concurrency: 3 } } });
      expect(setFlow({ queue: "emails", rateLimit: { limit: 10, periodSeconds: 60 }, paused: true }).body).toEqual({
        flow: { queue: "emails", paused: true, concurrency: 3, rateLimit: { limit: 10, periodSeconds: 60 }, parkedUntil: null },
      });
      expect(setFlow({ queue: "emails", concurrency: null, paused: null }).body).toEqual({
        flow: { queue: "emails", ...UNSET, rateLimit: { limit: 10, periodSeconds: 60 } },
      });
      const parked = setFlow({ group: "host-a", parkSeconds: 60 }).body as { flow: { parkedUntil: string } };
      expect(parked.flow).toMatchObject({ group: "host-a", paused: false });
      expect(msFromNow(parked.flow.parkedUntil)).toBeGreaterThan(55_000);
      expect(setFlow({ group: "host-a", parkUntil: null }).body).toEqual({ flow: { group: "host-a", ...UNSET } });
      // One row per scope.
      expect([...db.flow.values()].map((f) => [f.scope, f.name]).sort()).toEqual([["group", "host-a"], ["queue", "emails"]]);
    });

    it("answers 400 for a bad body, writing nothing, and 503 when its transaction fails", () => {
      expect(setFlow({ queue: "emails", group: "g", paused: true })).toEqual({ status: 400, body: { error: "give exactly one of queue and group" } });
      expect(setFlow({ queue: "emails", concurrency: 0 }).status).toBe(400);
      expect(getFlow({ queue: "bad name" })).toEqual({ status: 400, body: { error: `queue must be a queue name (${QUEUE_NAME_RULE})` } });
      expect(db.flow.size).toBe(0);
      db.failExecute(1);
      expect(setFlow({ queue: "emails", paused: true })).toEqual({ status: 503, body: { error: TRANSACTION_FAILED } });
      expect(db.flow.size).toBe(0);
    });

    it("answers both methods 403 to a worker identity, writing nothing", () => {
      const w = db.addWorker({ can_enqueue: true });
      expect(setFlow({ queue: "emails", paused: true }, w)).toEqual({ status: 403, body: { error: ADMIN_ONLY } });
      expect(getFlow({}, w)).toEqual({ status: 403, body: { error: ADMIN_ONLY } });
      expect(db.flow.size).toBe(0);
    });

    it("lists the queues with settings or unfinished jobs and the groups with settings, with their figures", () => {
      db.insert({ queue: "emails", group_key: "host-a" });
      db.insert({ queue: "emails", status: "pending", run_at: live(600) });
      heldRow("w1", live(), { queue: "emails", group_key: "host-a" });
      db.insert({ queue: "old", status: "done" });
      db.insert({ queue: "" });
      setFlow({ group: "host-a", concurrency: 2 });
      setFlow({ queue: "quiet", paused: true });
      const state = getFlow();
      expect(state.status).toBe(200);
      expect(state.body).toEqual({
        queues: [
          { name: "default", ...UNSET, held: 0, due: 1, claimsInWindow: 0 },
          { name: "emails", ...UNSET, held: 1, due: 1, claimsInWindow: 0 },
          { name: "quiet", ...UNSET, paused: true, held: 0, due: 0, claimsInWindow: 0 },
        ],
        groups: [{ name: "host-a", ...UNSET, concurrency: 2, held: 1, due: 1, claimsInWindow: 0 }],
      });
      expect(getFlow({ queue: "emails" }).body).toEqual({ queues: [{ name: "emails", ...UNSET, held: 1, due: 1, claimsInWindow: 0 }], groups: [] });
      expect(getFlow({ queue: "old" }).body).toEqual({ queues: [], groups: [] });
      expect(getFlow({ group: "host-a" }).body).toMatchObject({ queues: [], groups: [{ name: "host-a" }] });
    });

    it("answers a claim by id that a limit holds back { claimed: false, reason }, writing nothing; the three endpoints answer as today otherwise", () => {
      const job = db.insert({ queue: "emails", group_key: "host-a" });
      setFlow({ group: "host-a", paused: true });
      const before = db.row(job.id);
      expect(post("/api/fleet/claim", { jobId: job.id, workerId: "w1" })).toEqual({ status: 200, body: { claimed: false, reason: "paused" } });
      expect(db.row(job.id)).toEqual(before);
      setFlow({ group: "host-a", paused: false, concurrency: 1 });
      heldRow("w9", live(), { group_key: "host-a" });
      expect(post("/api/fleet/claim", { jobId: job.id, workerId: "w1" }).body).toEqual({ claimed: false, reason: "concurrency_limit" });
      setFlow({ group: "host-a", concurrency: null, rateLimit: { limit: 1, periodSeconds: 60 } });
      const other = db.insert({ group_key: "host-a" });
      expect(post("/api/fleet/claim", { jobId: other.id, workerId: "w2" }).body).toMatchObject({ claimed: true });
      expect(db.flowClaims).toMatchObject([{ scope: "group", name: "host-a" }]);
      expect(post("/api/fleet/claim", { jobId: job.id, workerId: "w1" }).body).toEqual({ claimed: false, reason: "rate_limit" });
      expect(db.row(job.id)).toEqual(before);
      // A job no limit applies to: as the reference answers.
      const plain = db.insert();
      expect(Object.keys(post("/api/fleet/claim", { jobId: plain.id, workerId: "w1" }).body as object).sort()).toEqual(["claimed", "job", "leaseToken"]);
    });

    it("parks the job's group on a retry release with rateLimitedFor, the attempt given back", () => {
      const job = heldRow("w1", live(), { group_key: "host-a", attempts: 1, max_attempts: 1 });
      const answer = post("/api/fleet/release", { jobId: job.id, workerId: "w1", leaseToken: "tok-current", status: "retry", rateLimitedFor: 120, error: "429" });
      expect(answer.body).toMatchObject({ released: true, job: { status: "pending" } });
      const after = db.row(job.id);
      expect(after).toMatchObject({ status: "pending", attempts: 0, last_error: "429", claimed_by: "" });
      expect(msFromNow(after.run_at)).toBeGreaterThan(115_000);
      expect(msFromNow(db.flowOf("group", "host-a")!.parked_until)).toBeGreaterThan(115_000);
      expect(post("/api/fleet/release", { jobId: job.id, workerId: "w1", status: "done", rateLimitedFor: 5 }))
        .toEqual({ status: 400, body: { error: "rateLimitedFor is only for status retry" } });
    });

    it("has claim-next skip a paused queue's jobs and hand out the rest; a parked group's too", () => {
      const paused = db.insert({ queue: "emails" });
      const parked = db.insert({ group_key: "host-a" });
      const free = db.insert();
      setFlow({ queue: "emails", paused: true });
      setFlow({ group: "host-a", parkSeconds: 60 });
      const answer = post("/api/fleet/claim-next", { workerId: "w1", limit: 5 });
      expect((answer.body as { jobs: { job: { id: string } }[] }).jobs.map((j) => j.job.id)).toEqual([free.id]);
      expect([db.row(paused.id).status, db.row(parked.id).status]).toEqual(["pending", "pending"]);
    });

    it("tells a timed-out holder's renew and heartbeat item timed_out, writing nothing, and has the sweep write the timeout", () => {
      // Claimed 20 s ago with a 10 s timeout: its lease ended at the deadline.
      const job = heldRow("w1", expired(10), { claimed_at: expired(20), timeout_seconds: 10, attempts: 1, max_attempts: 3 });
      const before = db.row(job.id);
      expect(post("/api/fleet/renew", { jobId: job.id, workerId: "w1", leaseToken: "tok-current" }))
        .toEqual({ status: 200, body: { renewed: false, reason: "timed_out" } });
      expect(post("/api/fleet/heartbeat", { workerId: "w1", leases: [{ jobId: job.id, leaseToken: "tok-current" }] }).body)
        .toEqual({ results: [{ jobId: job.id, renewed: false, reason: "timed_out" }] });
      expect(post("/api/fleet/renew", { jobId: job.id, workerId: "w2" }).body).toEqual({ renewed: false });
      expect(db.row(job.id)).toEqual(before);
      expect(post("/api/fleet/sweep", {}).body).toEqual({
        requeued: 0, gaveUp: 0, timedOut: 1,
        jobs: [{ id: job.id, outcome: "timed_out", claimedBy: "w1", consecutiveOrphanCount: 0 }],
      });
      expect(db.row(job.id)).toMatchObject({ status: "pending", claimed_by: "", attempts: 1, last_error: "timed out after 10 s" });
    });

    it("has the maintenance tick fail a never-started job past its start_by, and drop a passed park", () => {
      const late = db.insert({ start_by: expired(5) });
      db.addFlow({ scope: "group", name: "host-a", parked_until: expired(1) });
      const answer = post("/api/fleet/maintenance", {});
      expect(answer.status).toBe(200);
      expect((answer.body as { flow: unknown }).flow).toEqual({ notStarted: 1, claims: 0, parks: 1 });
      expect(db.row(late.id)).toMatchObject({ status: "failed", last_error: `not started by ${late.start_by}`, dead_lettered_at: "" });
      expect(db.flow.size).toBe(0);
    });
  });

  describe("a pooled runtime serving request after request", () => {
    const cacheMs = COLLECTION_CACHE_MS[api] ?? 0;

    (cacheMs > 0 ? it : IT_DOES_NOT_APPLY)("looks probe_jobs' collection up once for a burst, and again after a rolled-back transaction", () => {
      const runtime = fake.pooledRuntime(db);
      const claim = (jobId: string, workerId: string) =>
        fake.runRoute(route("/api/fleet/claim"), db, { body: { jobId, workerId } }, runtime);
      const job = db.insert();
      for (const workerId of ["w1", "w2", "w1"]) claim(job.id, workerId);
      expect(db.collectionLookups).toBe(1);

      const other = db.insert();
      db.failSave(1);
      expect(claim(other.id, "w3").body).toEqual({ claimed: false });
      claim(other.id, "w3");
      expect(db.collectionLookups).toBe(2);
    });

    (cacheMs > 0 ? it : IT_DOES_NOT_APPLY)("looks the collection up again once the cache has aged past COLLECTION_CACHE_MS", () => {
      const runtime = fake.pooledRuntime(db);
      const job = db.insert();
      const claim = () => fake.runRoute(route("/api/fleet/claim"), db, { body: { jobId: job.id, workerId: "w1" } }, runtime);
      claim();
      claim();
      expect(db.collectionLookups).toBe(1);
      // The runtime is its own realm: move its clock, not the test's.
      vm.runInContext(`{ const realNow = Date.now; Date.now = () => realNow() + ${cacheMs + 1}; }`, runtime);
      claim();
      expect(db.collectionLookups).toBe(2);
    });

    (cacheMs === 0 ? it : IT_DOES_NOT_APPLY)("finds records by collection name (PocketBase 0.23+ caches collections itself): no look-up of its own", () => {
      const runtime = fake.pooledRuntime(db);
      const job = db.insert();
      for (const workerId of ["w1", "w2", "w1"]) {
        fake.runRoute(route("/api/fleet/claim"), db, { body: { jobId: job.id, workerId } }, runtime);
      }
      expect(db.row(job.id).claimed_by).toBe("w1");
      expect(db.collectionLookups).toBe(0);
    });
  });
});
