/**
 * Runs each hooks bundle the way its PocketBase does: each handler only as its
 * own source text, in a fresh runtime with nothing but that hooks API's globals
 * (stubbed in ./support/fake-pocketbase for 0.22 and
 * ./support/fake-pocketbase-modern for 0.23 to 0.40). A handler that leans on
 * anything from the file's top level fails here with "X is not defined", as it
 * would on the first real request that reaches it. The same cases run against
 * both bundles: they must answer alike.
 */
import { readFileSync } from "node:fs";
import vm from "node:vm";
import { beforeEach, describe, expect, it } from "vitest";
import { HOOKS_BUNDLES } from "../../esbuild.config.mjs";
import { CRONS, ROUTES } from "../../src/handlers/routes";
import { STATS_UNAVAILABLE } from "../../src/lib/stats";
import {
  ADMIN_ONLY_ANSWER,
  FAKE_POCKETBASE_0_22,
  FakeDb,
  pbDate,
  UNPARSEABLE_BODY,
  type CapturedRoute,
  type Caller,
  type FakePocketBase,
  type StoredRow,
} from "./support/fake-pocketbase";

/** A case that does not apply to this hooks line is not registered (rather than shown as skipped). */
const IT_DOES_NOT_APPLY = (_name: string, _fn: () => void): void => {};
import { FAKE_POCKETBASE_0_23 } from "./support/fake-pocketbase-modern";

const FAKES: Record<string, FakePocketBase> = { "0.22": FAKE_POCKETBASE_0_22, "0.23": FAKE_POCKETBASE_0_23 };
/** How long each adapter keeps probe_jobs' collection model in a pooled runtime (0: PocketBase 0.23+ caches it itself). */
const COLLECTION_CACHE_MS: Record<string, number> = { "0.22": 2000, "0.23": 0 };

const BUNDLES = HOOKS_BUNDLES.map((bundle: { api: string; output: string }) => {
  const fake = FAKES[bundle.api];
  if (fake === undefined) throw new Error(`no fake PocketBase for the ${bundle.api} bundle: add one to run it here`);
  return { name: `${bundle.output.split("/").slice(-2).join("/")} (hooks API ${bundle.api})`, api: bundle.api, output: bundle.output, fake };
});

const TOKEN = /^[A-Za-z0-9]{24}$/;
const PB_DATE_TEXT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(BUNDLES)("$name", ({ api, output, fake }) => {
  const SOURCE = readFileSync(output, "utf8");
  const hooks = fake.loadHooks(SOURCE);

  function route(path: string): CapturedRoute {
    const found = hooks.routes.find((r) => r.path === path);
    if (!found) throw new Error(`the bundle registers no ${path}`);
    return found;
  }

  let db: FakeDb;
  beforeEach(() => {
    db = new FakeDb();
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

  function heldRow(workerId: string, lease: string, fields: Partial<StoredRow> = {}): StoredRow {
    return db.insert({ status: "claimed", claimed_by: workerId, lease_expires_at: lease, lease_token: "tok-current", version: 1, ...fields });
  }

  describe("loading the bundle", () => {
    it("registers one handler per route and cron of esbuild.config.mjs, every route behind admin auth", () => {
      expect(hooks.routes.map((r) => [r.method, r.path])).toEqual(ROUTES.map((r) => [r.method, r.path]));
      for (const r of hooks.routes) expect(r.middlewares).toEqual(fake.routeMiddlewares);
      expect(hooks.crons.map((c) => c.id)).toEqual(CRONS.map((c) => c.id));
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
        body: { jobs: [{ job: viewOf(after1), leaseToken: after1.lease_token }, { job: viewOf(after2), leaseToken: after2.lease_token }] },
      });
      expect(after1).toMatchObject({ status: "claimed", claimed_by: "w9", version: 1, reclaim_count: 0 });
      expect(after2).toMatchObject({ status: "claimed", claimed_by: "w9", version: 2, reclaim_count: 2 }); // a steal
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

    it("rolls every claim back when one save fails, answering no jobs", () => {
      const first = db.insert();
      const second = db.insert();
      db.failSave(2);
      expect(post("/api/fleet/claim-next", { workerId: "w1", limit: 2 })).toEqual({ status: 200, body: { jobs: [] } });
      expect(db.saves).toBe(2);
      expect([db.row(first.id), db.row(second.id)]).toEqual([first, second]);
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

    it("answers a failed save with nothing swept and rolls back", () => {
      const rows = seedSweepable();
      db.failSave(2);
      expect(post("/api/fleet/sweep", {})).toEqual({ status: 200, body: { requeued: 0, gaveUp: 0, jobs: [] } });
      expect(db.row(rows.requeue.id)).toEqual(rows.requeue);
    });

    it("runs the same sweep on a cron tick, and logs what it did", () => {
      const rows = seedSweepable(); // default cap 5: both expired rows are re-queued
      fake.runCron(hooks.crons[0]!, db);
      expect(db.row(rows.requeue.id).status).toBe("pending");
      expect(db.row(rows.giveUp.id).status).toBe("pending");
      expect(db.logs).toEqual([{ level: "info", message: "pb-fleet sweep", attrs: ["requeued", 2, "gaveUp", 0] }]);
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
        counts: { pending: 2, claimed: 1, running: 1, done: 1, failed: 0 },
        total: 5,
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
        counts: { pending: 0, claimed: 0, running: 1, done: 1, failed: 0 },
        total: 2,
        oldestPendingAgeSeconds: null,
        expiredLeases: 0,
        pastOrphanCap: 0,
        orphanCap: 7,
        sweeper: { scheduled: true, schedule: "* * * * *" },
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
      // The database's own text goes to the log, never to the caller.
      expect(stats()).toEqual({ status: 503, body: { error: STATS_UNAVAILABLE } });
      expect(db.logs).toEqual([{
        level: "error", message: "pb-fleet: query failed", attrs: ["error", expect.stringContaining("database is locked")],
      }]);
    });

    it.each<[string, Record<string, string>, object]>([
      ["scheduled", { PB_FLEET_SWEEP_CRON: "*/5 * * * *" }, { scheduled: true, schedule: "*/5 * * * *" }],
      ["off", { PB_FLEET_SWEEP_CRON: "off" }, { scheduled: false, schedule: "off" }],
    ])("says whether the server sweeper runs, and on what schedule (%s)", (_name, env, sweeper) => {
      const fresh = new FakeDb();
      fresh.env = env;
      fake.loadHooks(SOURCE, env, fresh);
      expect(fake.runRoute(route("/api/fleet/stats"), fresh).body).toMatchObject({ sweeper });
    });

    it("says the sweeper is not running when its schedule failed to load (PocketBase with --hooksWatch serves on)", () => {
      const fresh = new FakeDb();
      fresh.env = { PB_FLEET_SWEEP_CRON: "61 * * * *" };
      expect(() => fake.loadHooks(SOURCE, fresh.env, fresh)).toThrow(/pb-fleet-sweeper: PB_FLEET_SWEEP_CRON="61 \* \* \* \*" is not a valid/);
      expect(fresh.logs).toMatchObject([{ level: "error", message: "pb-fleet-sweeper is not scheduled" }]);
      expect(fake.runRoute(route("/api/fleet/stats"), fresh).body).toMatchObject({
        sweeper: { scheduled: false, schedule: "61 * * * *", error: expect.stringMatching(/^PB_FLEET_SWEEP_CRON="61 \* \* \* \*" is not a valid 5-field cron expression .*minute field "61"/) },
      });
    });

    it("says the sweeper is not running when the hooks never recorded it", () => {
      expect(fake.runRoute(route("/api/fleet/stats"), new FakeDb()).body).toMatchObject({
        sweeper: { scheduled: false, schedule: "* * * * *", error: expect.stringContaining("did not register the sweeper") },
      });
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
