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
import { describe, expect, it } from "vitest";
import { completeByPlan, heartbeatByPlan, JITTER_STEPS } from "../../src/lib/batch-plans";
import { FLOW_COLLECTION } from "../../src/lib/flow";
import { formatPbDate } from "../../src/lib/lease";
import type { ReleaseTarget } from "../../src/lib/types";
import type { ReleaseRequestFields, RenewRequestFields } from "../../src/lib/validate";
import { prng } from "../../scripts/bench/queue.mjs";
import { modelComplete, modelHeartbeat, roundOrder, type StoredRow } from "../support/batch-model";
import { drawsOf, ownServerPlanDriver, randomJobRows } from "./support/plan-driver";

const SEED = Number(process.env["PB_FLEET_PLAN_SEED"] ?? 20261203);
const ROWS = 3000;
const BATCHES = 240;

const planDriver = ownServerPlanDriver();

describe("heartbeat and complete's SQL agree with the model", () => {
  it(`on ${ROWS} random rows and ${BATCHES} random batches (seed ${SEED})`, async () => {
    const db = planDriver();
    const d = drawsOf(prng(SEED));
    const { random, pick, int } = d;
    const baseMs = Date.UTC(2026, 11, 2, 12, 0, 0, 0);
    const workers = ["w1", "w2"];
    const tokens = ["tA", "tB", ""];
    const rows = randomJobRows(d, ROWS, { baseMs, stepMs: 250, batches: BATCHES, idPrefix: "plan", workers, tokens });
    const ids = rows.map((r) => r.id);
    await db.insertRows(rows);

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
      const before = await db.readRows([...new Set(chosen)]);
      const model = new Map([...before].map(([id, r]) => [id, { ...r }]));
      await db.sql(`DELETE FROM ${FLOW_COLLECTION}`);
      const label = `seed ${SEED} batch ${b} (${heartbeat ? "heartbeat" : "complete"} of ${size})`;

      if (heartbeat) {
        const leaseSeconds = pick([30, 1, 0.5, 2.0005, 3600, 7200, undefined]);
        const renewals: RenewRequestFields[] = chosen.map((jobId) => ({
          jobId, workerId, leaseSeconds, leaseToken: tokenFor(jobId, before),
          progress: random() < 0.3 ? { step: int(0, 9) } : undefined,
        }));
        const got = await db.drive((batch) => heartbeatByPlan(batch, renewals, nowMs));
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
        let drawn = 0;
        const got = await db.drive((batch) => completeByPlan(batch, releases, nowMs, () => draws[drawn++] as number), () => {
          drawn = 0;
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
        const parked = JSON.parse(await db.readValue(
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
      const after = await db.readRows([...before.keys()]);
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
