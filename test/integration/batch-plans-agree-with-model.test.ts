// Heartbeat and complete's set-based statements (src/lib/batch-plans.ts) on
// real SQLite agree with the model (transitions.ts's decideRenew and
// decideRelease, item by item: test/support/batch-model.ts): thousands of
// random rows of every status, lease state, token, attempts, cap, deadline
// and due time, and random batches of heartbeats and completes (repeated
// jobs, missing jobs, stale tokens, every target, results, errors,
// rateLimitedFor), each run by the plans' own code against PocketBase's
// SQLite at a fixed time and by the model on the rows as they were. Answers,
// rows afterwards (every column) and parked scopes must be identical. Seeded:
// a failure names its seed and batch. The endpoints run exactly this code
// (heartbeatByPlan, completeByPlan) inside their transaction.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { completeByPlan, heartbeatByPlan, JITTER_STEPS } from "../../src/lib/batch-plans";
import { FLOW_COLLECTION } from "../../src/lib/flow";
import type { JobBatch } from "../../src/lib/job-row";
import { formatPbDate } from "../../src/lib/lease";
import type { WhereClause } from "../../src/lib/queries";
import type { JobView, ReleaseTarget } from "../../src/lib/types";
import type { ReleaseRequestFields, RenewRequestFields } from "../../src/lib/validate";
import { prng } from "../../scripts/bench/queue.mjs";
import { modelComplete, modelHeartbeat, roundOrder, type StoredRow } from "../support/batch-model";
import { post, type RequestOptions } from "./support/fleet-api";
import { startOwnServer, type OwnServer } from "./support/own-server";

const SEED = Number(process.env["PB_FLEET_PLAN_SEED"] ?? 20261202);
const ROWS = 3000;
const BATCHES = 240;

/** Every column the rules read or write, with updated. */
const COLUMNS = [
  "id", "created", "updated", "probe_key", "status", "claimed_by", "lease_expires_at", "lease_token", "version", "reclaim_count",
  "consecutive_orphan_count", "attempts", "max_attempts", "timeout_seconds", "claimed_at", "start_by", "queue", "group_key", "progress",
  "result", "last_error", "run_at", "finished_at", "requeued_at", "dead_lettered_at", "priority", "payload",
] as const;

let server: OwnServer;
let opts: RequestOptions;
beforeAll(async () => {
  server = await startOwnServer({ testHooks: ["raw-sql.pb.js"] });
  opts = { baseUrl: server.url, token: server.token };
});
afterAll(async () => {
  await server?.stop();
});

async function sql(text: string, params: Record<string, unknown> = {}): Promise<void> {
  const res = await post("/api/test/sql", { sql: text, params }, opts);
  if (res.status !== 200) throw new Error(`SQL failed: HTTP ${res.status} ${JSON.stringify(res.body)}\n${text}`);
}

async function readValue(text: string, params: Record<string, unknown> = {}): Promise<string> {
  const res = await post("/api/test/sql", { sql: text, params, read: true }, opts);
  if (res.status !== 200) throw new Error(`SQL read failed: HTTP ${res.status} ${JSON.stringify(res.body)}\n${text}`);
  return String((res.body as { value: unknown }).value);
}

async function readRows(ids: readonly string[]): Promise<Map<string, StoredRow>> {
  const members = COLUMNS.map((c) => `'${c}', ${c}`).join(", ");
  const text = await readValue(
    `SELECT COALESCE(json_group_array(json_object(${members})), '[]') AS value FROM probe_jobs WHERE id IN (SELECT value FROM json_each({:ids}))`,
    { ids: JSON.stringify(ids) },
  );
  return new Map((JSON.parse(text) as StoredRow[]).map((r) => [r.id, r]));
}

/**
 * Runs a synchronous plan against the server: the plan is run again from the
 * start after each remote answer, replaying the answers it had (the plan is
 * deterministic given them), until it finishes. Each query or statement is
 * sent once.
 */
async function drive<T>(plan: (batch: JobBatch) => T): Promise<{ result: T; noted: JobView[]; statements: number }> {
  const answers: unknown[] = [];
  for (;;) {
    let k = 0;
    let ask: { kind: "query" | "execute"; query: WhereClause; shape?: object } | null = null;
    const noted: JobView[] = [];
    const next = (kind: "query" | "execute", query: WhereClause, shape?: object): unknown => {
      if (k < answers.length) return answers[k++];
      ask = { kind, query, shape };
      throw ASKED;
    };
    const batch: JobBatch = {
      find: () => { throw new Error("the plans do not find"); },
      write: () => { throw new Error("the plans do not write"); },
      insert: () => { throw new Error("the plans do not insert"); },
      queryAll: () => { throw new Error("the plans do not queryAll"); },
      queryOne: (query, shape) => next("query", query, shape) as never,
      execute: (statement) => next("execute", statement) as number,
      noteWritten: (changes) => { noted.push(...changes); },
    };
    try {
      const result = plan(batch);
      return { result, noted, statements: answers.length };
    } catch (err) {
      if (err !== ASKED || ask === null) throw err;
    }
    const asked = ask as { kind: "query" | "execute"; query: WhereClause; shape?: object };
    if (asked.kind === "execute") {
      await sql(asked.query.sql, asked.query.params);
      answers.push(1);
    } else {
      const keys = Object.keys(asked.shape ?? {});
      const value = await readValue(
        `SELECT json_object(${keys.map((c) => `'${c}', ${c}`).join(", ")}) AS value FROM (${asked.query.sql})`, asked.query.params,
      );
      answers.push(JSON.parse(value));
    }
  }
}
const ASKED = Symbol("asked the server");

describe("heartbeat and complete's SQL agree with the model", () => {
  it(`on ${ROWS} random rows and ${BATCHES} random batches (seed ${SEED})`, async () => {
    const random = prng(SEED);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
    const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
    const baseMs = Date.UTC(2026, 11, 2, 12, 0, 0, 0);
    const workers = ["w1", "w2"];
    const tokens = ["tA", "tB", ""];
    const ids: string[] = [];

    const rowAt = (n: number, nowMs: number): StoredRow => {
      const at = (spreadMs: number) => formatPbDate(nowMs + int(-spreadMs, spreadMs));
      // Live for the whole run (its batches span a minute), unless a heartbeat caps it at a deadline.
      const live = () => formatPbDate(nowMs + int(90_000, 600_000));
      // Exactly some batch's time (half the batches run on the grid): the `>` and `>=` of the lease and deadline rules.
      const onGrid = (minusMs = 0) => formatPbDate(baseMs + int(0, BATCHES - 1) * 250 - minusMs);
      const timeout = pick([0, 0, 0, 5, 60, 90]);
      const id = `plan${String(n).padStart(11, "0")}`;
      ids.push(id);
      const held = random() < 0.6;
      return {
        id,
        created: formatPbDate(baseMs - 3_600_000 + n), updated: formatPbDate(baseMs - 3_600_000),
        probe_key: `plan-${SEED}-${n}`,
        status: held ? pick(["claimed", "running"]) : pick(["pending", "done", "failed", "cancelled", "odd"]),
        claimed_by: pick([...workers, ...workers, ""]),
        // Live, expired, exactly now, unreadable, in the layout but not a calendar instant, empty.
        lease_expires_at: pick([
          live(), live(), live(), at(120_000), at(3_000), onGrid(), onGrid(), "", "soon", "2026-02-30 10:00:00.000Z", "2026-12-02T12:00:00Z",
        ]),
        lease_token: pick(tokens),
        version: int(0, 9), reclaim_count: int(0, 3), consecutive_orphan_count: int(0, 4),
        // Past 13 attempts the backoff reaches its one-hour cap.
        attempts: random() < 0.8 ? int(0, 6) : int(10, 40), max_attempts: pick([0, 1, 3, 5, 25, 50]),
        timeout_seconds: timeout,
        claimed_at: timeout > 0 && random() < 0.4 ? onGrid(timeout * 1000) : pick([at(90_000), "", "bad"]),
        start_by: pick(["", "", at(60_000)]),
        queue: pick(["", "default", "q2"]), group_key: pick(["", "", "g1", "g2"]),
        progress: pick(["null", "{\"pct\":5}", ""]), result: pick(["null", "", "{\"ok\":1}"]),
        last_error: pick(["", "earlier"]), run_at: at(60_000), finished_at: pick(["", at(60_000)]), requeued_at: "", dead_lettered_at: "",
        priority: int(-2, 2), payload: "{}",
      };
    };

    // Rows, inserted as they are (past the record API's normalisation).
    const rows = Array.from({ length: ROWS }, (_, n) => rowAt(n, baseMs));
    for (let i = 0; i < rows.length; i += 500) {
      const chunk = rows.slice(i, i + 500);
      await sql(
        `INSERT INTO probe_jobs (${COLUMNS.join(", ")}) SELECT ${COLUMNS.map((c) => `json_extract(value, '$.${c}')`).join(", ")} ` +
          "FROM json_each({:rows})",
        { rows: JSON.stringify(chunk) },
      );
    }

    const seen: Record<string, number> = {};
    const count = (what: string) => {
      seen[what] = (seen[what] ?? 0) + 1;
    };
    for (let b = 0; b < BATCHES; b++) {
      const nowMs = baseMs + b * 250 + (random() < 0.5 ? 0 : int(1, 249));
      // A window of rows, so items meet held rows of their worker, repeated jobs and missing ones.
      const from = int(0, ROWS - 60);
      // Now and then a job that does not exist, under names a plain object would inherit too.
      const jobIds = () => (random() < 0.05 ? pick(["plan-missing", "__proto__", "constructor", "toString"]) : (ids[from + int(0, 59)] as string));
      const size = pick([1, 2, 5, 20, 60, 100]);
      const workerId = pick(workers);
      const tokenFor = (id: string, before: Map<string, StoredRow>) => {
        const r = random();
        if (r < 0.5) return String(before.get(id)?.["lease_token"] ?? "tA");
        if (r < 0.6) return pick(tokens);
        return undefined;
      };
      const heartbeat = b % 2 === 0;
      const chosen = Array.from({ length: size }, jobIds);
      const before = await readRows([...new Set(chosen)]);
      const model = new Map([...before].map(([id, r]) => [id, { ...r }]));
      await sql(`DELETE FROM ${FLOW_COLLECTION}`);
      const label = `seed ${SEED} batch ${b} (${heartbeat ? "heartbeat" : "complete"} of ${size})`;

      if (heartbeat) {
        const leaseSeconds = pick([30, 1, 0.5, 2.0005, 3600, 7200, undefined]);
        const renewals: RenewRequestFields[] = chosen.map((jobId) => ({
          jobId, workerId, leaseSeconds, leaseToken: tokenFor(jobId, before),
          progress: random() < 0.3 ? { step: int(0, 9) } : undefined,
        }));
        const got = await drive((batch) => heartbeatByPlan(batch, renewals, nowMs));
        const want = modelHeartbeat(model, renewals, nowMs);
        expect(got.result, label).toEqual(want.answers);
        expect(JSON.stringify(got.result), `${label}: key order`).toBe(JSON.stringify(want.answers));
        expect(got.noted.map((v) => v.id).sort(), label).toEqual([...want.written].sort());
        for (const a of want.answers) count(`heartbeat: ${a.renewed ? "renewed" : a.reason ?? "refused"}`);
      } else {
        const releases: ReleaseRequestFields[] = chosen.map((jobId) => {
          const target = pick(["done", "failed", "pending", "retry", "retry"] as ReleaseTarget[]);
          return {
            jobId, workerId, target, leaseToken: tokenFor(jobId, before),
            result: random() < 0.4 ? { n: int(0, 99), s: "r\u00e9sum\u00e9 \"q\"" } : undefined,
            error: random() < 0.3 ? pick(["boom", "", "x".repeat(50)]) : undefined,
            rateLimitedFor: target === "retry" && random() < 0.3 ? pick([1, 2.5, 0.0015, 60]) : undefined,
          };
        });
        const draws = Array.from({ length: releases.length }, () => random());
        let d = 0;
        const got = await drive((batch) => {
          d = 0;
          return completeByPlan(batch, releases, nowMs, () => draws[d++] as number);
        });
        // Draw k went to item order[k] (round by round).
        const order = roundOrder(releases);
        const steps: number[] = new Array(releases.length);
        order.forEach((n, k) => {
          steps[n] = Math.min(JITTER_STEPS - 1, Math.floor((draws[k] as number) * JITTER_STEPS));
        });
        const want = modelComplete(model, releases, nowMs, steps);
        expect(got.result, label).toEqual(want.answers);
        expect(JSON.stringify(got.result), `${label}: key order`).toBe(JSON.stringify(want.answers));
        expect(got.noted.map((v) => v.id).sort(), label).toEqual([...want.written].sort());
        // Parked scopes: each at the latest until of its items.
        const parked = JSON.parse(await readValue(
          `SELECT COALESCE(json_group_array(json_object('scope', scope, 'name', name, 'until', parked_until)), '[]') AS value FROM ${FLOW_COLLECTION}`,
        )) as { scope: string; name: string; until: string }[];
        const wantParks = new Map<string, string>();
        for (const p of want.parks) {
          const key = `${p.scope.scope}/${p.scope.name}`;
          const until = formatPbDate(p.untilMs);
          if ((wantParks.get(key) ?? "") < until) wantParks.set(key, until);
        }
        expect(new Map(parked.map((p) => [`${p.scope}/${p.name}`, p.until])), `${label}: parks`).toEqual(wantParks);
        for (const a of want.answers) count(`complete: ${a.released ? `released (${a.job.status})` : a.reason}`);
        // What each job's first release wrote (by the row before and after), so every rule is seen at work.
        const firsts = new Set<string>();
        releases.forEach((r, n) => {
          const answer = want.answers[n];
          if (firsts.has(r.jobId) || answer === undefined || !answer.released) return;
          firsts.add(r.jobId);
          const was = before.get(r.jobId) as StoredRow;
          const now = model.get(r.jobId) as StoredRow;
          if (chosen.filter((id) => id === r.jobId).length > 1) return;
          const timedOut = String(now["last_error"]).startsWith("timed out") && was["last_error"] !== now["last_error"];
          if (now["requeued_at"] !== was["requeued_at"]) count("wrote: requeue");
          else if (timedOut) count(now["status"] === "failed" ? "wrote: timeout dead letter" : "wrote: timeout retry");
          else if (now["dead_lettered_at"] !== was["dead_lettered_at"]) count("wrote: dead letter");
          else if (r.rateLimitedFor !== undefined) count("wrote: rate limited");
          else if (now["status"] === "pending") count(Number(was["attempts"]) >= 13 ? "wrote: retry at the backoff cap" : "wrote: retry");
          else count(`wrote: ${String(now["status"])}`);
        });
        for (const _ of want.parks) count("parks");
      }
      const after = await readRows([...before.keys()]);
      for (const [id, row] of model) expect(after.get(id), `${label}: row ${id}`).toEqual(row);
    }
    console.log(`[batch-plans] seed ${SEED}: ${JSON.stringify(seen)}`);
    // The random batches reached every answer there is (a generator that stopped reaching one would prove nothing about it).
    for (const outcome of [
      "heartbeat: renewed", "heartbeat: timed_out", "heartbeat: refused", "complete: released (done)", "complete: released (failed)",
      "complete: released (pending)", "complete: refused_not_holder",
      "complete: refused_stale_token", "complete: refused_terminal_same_holder", "complete: refused_lease_live",
      "wrote: requeue", "wrote: timeout retry", "wrote: timeout dead letter", "wrote: dead letter", "wrote: rate limited", "wrote: retry",
      "wrote: retry at the backoff cap", "wrote: done", "wrote: failed",
    ]) expect(seen[outcome] ?? 0, outcome).toBeGreaterThan(0);
    expect(seen["parks"] ?? 0).toBeGreaterThan(0);
  }, 600_000);
});
