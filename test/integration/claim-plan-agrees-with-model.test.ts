// claim-next's set-based statements (src/lib/claim-plan.ts) on real SQLite
// agree with the model (claimNext's candidates and rounds, decideClaim row by
// row: test/support/batch-model.ts's modelClaimNext): thousands of random rows
// of every status, lease state, token, attempts, cap, orphan count, deadline,
// due time, start_by, queue and priority, and random claims (any queue or a
// list, every limit, lease, orphan cap and worker), each run by the plan's own
// code against PocketBase's SQLite at a fixed time and by the model on the
// rows as they were. Answers (in claim order, with their tokens), the jobs
// told to realtime, and every row of the table afterwards must be identical.
// Seeded: a failure names its seed and claim. Flow control pauses and parks
// random queues now and then (and leaves settings not in effect): the claims
// go through claimNextJobs, the endpoint's own dispatch, which must take the
// plan whenever no more than queues are held back, claiming from the others.
import { describe, expect, it } from "vitest";
import { answerClaims, claimNextJobs } from "../../src/lib/claim-plan";
import { formatPbDate } from "../../src/lib/lease";
import { prng } from "../../scripts/bench/queue.mjs";
import { modelClaimNext, type StoredRow } from "../support/batch-model";
import { drawsOf, ownServerPlanDriver, randomJobRows } from "./support/plan-driver";

const SEED = Number(process.env["PB_FLEET_PLAN_SEED"] ?? 20261207);
const ROWS = 2500;
const CLAIMS = 160;
const STEP_MS = 400;

const planDriver = ownServerPlanDriver();

describe("claim-next's SQL agrees with the model", () => {
  it(`on ${ROWS} random rows and ${CLAIMS} random claims (seed ${SEED})`, async () => {
    const db = planDriver();
    const d = drawsOf(prng(SEED));
    const { random, pick, int } = d;
    const baseMs = Date.UTC(2026, 11, 7, 12, 0, 0, 0);
    const workers = ["w1", "w2", "w3"];
    const rows = randomJobRows(d, ROWS, { baseMs, stepMs: STEP_MS, batches: CLAIMS, idPrefix: "claim", workers, tokens: ["tA", "tB", ""] });
    await db.insertRows(rows);

    const seen: Record<string, number> = {};
    const count = (what: string, n = 1) => {
      seen[what] = (seen[what] ?? 0) + n;
    };
    let model: Map<string, StoredRow> = await db.readRows(null);
    // Now and then new flow settings: each queue paused, parked (until a past or a future time), or free; a group's
    // row with nothing in effect. Answers the queues held back at nowMs.
    let heldQueues: string[] = [];
    const setQueueFlow = async (nowMs: number): Promise<string[]> => {
      await db.sql("DELETE FROM probe_flow");
      const held: string[] = [];
      for (const name of ["default", "q2", "q3"]) {
        const paused = random() < 0.2 ? 1 : 0;
        const parkedUntil = pick(["", "", formatPbDate(nowMs - 5_000), formatPbDate(nowMs + 5_000)]);
        if (paused === 0 && parkedUntil === "" && random() < 0.5) continue;
        await db.sql("INSERT INTO probe_flow (scope, name, paused, parked_until) VALUES ('queue', {:name}, {:paused}, {:parkedUntil})",
          { name, paused, parkedUntil });
        if (paused === 1 || parkedUntil > formatPbDate(nowMs)) held.push(name);
      }
      if (random() < 0.5) await db.sql("INSERT INTO probe_flow (scope, name, parked_until) VALUES ('group', 'g1', {:past})", { past: formatPbDate(nowMs - 1) });
      return held;
    };
    expect(model.size).toBe(ROWS);
    for (let c = 0; c < CLAIMS; c++) {
      const nowMs = baseMs + c * STEP_MS + (random() < 0.5 ? 0 : int(1, STEP_MS - 1));
      const req = {
        workerId: pick(workers),
        leaseSeconds: pick([30, 1, 0.5, 2.0005, 3600, 7200, undefined]),
        limit: pick([1, 2, 3, 10, 50, 100]),
        queues: pick([null, null, ["default"], ["q2"], ["q2", "q3"], ["q3", "default", "q2"], ["nothing-here"]]),
      };
      const orphanCap = pick([0, 1, 2, 3, 5]);
      if (c % 4 === 0) heldQueues = await setQueueFlow(nowMs);
      const label = `seed ${SEED} claim ${c} (${JSON.stringify(req)}, orphan cap ${orphanCap}, held queues ${JSON.stringify(heldQueues)})`;
      let drawn = 0;
      const got = await db.drive((batch) => {
        const taken = claimNextJobs(batch, { ...req, probeKeyPrefix: "" }, nowMs, orphanCap, () => `tok-${c}-${drawn++}`);
        return { byPlan: "rowTexts" in taken, answers: answerClaims(taken) };
      }, () => {
        drawn = 0;
      });
      expect(got.result.byPlan, label).toBe(true);
      if (heldQueues.length > 0) count("with queues held back");
      const before = new Map([...model].map(([id, r]) => [id, { ...r }]));
      let modelDrawn = 0;
      const want = modelClaimNext(model, req, nowMs, orphanCap, () => `tok-${c}-${modelDrawn++}`, heldQueues);
      expect(got.result.answers, label).toEqual(want.answers);
      expect(got.noted.map((v) => v.id).sort(), label).toEqual([...want.written].sort());
      const after = await db.readRows(null);
      for (const [id, row] of model) expect(after.get(id), `${label}: row ${id}`).toEqual(row);
      expect(after.size, label).toBe(ROWS);
      model = after;
      count("claimed", want.answers.length);
      count("written, not claimed", want.written.length - want.answers.length);
      if (want.answers.length === req.limit) count("filled the limit");
      if (want.answers.length === 0) count("claimed nothing");
      for (const a of want.answers) {
        if (a.job.attempts > 1) count("attempt past the first");
        if (a.job.deadline !== null) count("with a deadline");
      }
      // What each written row became, so every rule is seen at work.
      for (const id of want.written) {
        const was = before.get(id) as StoredRow;
        const now = after.get(id) as StoredRow;
        if (now["status"] === "claimed") count(was["status"] === "pending" ? "wrote: claim" : "wrote: steal");
        else if (now["status"] === "pending") count("wrote: timeout retry");
        else if (String(now["result"]).includes("orphan_cap")) count("wrote: orphan cap");
        else if (String(now["last_error"]).startsWith("timed out")) count("wrote: timeout dead letter");
        else count("wrote: dead letter");
      }
      // Now and then the queue fills again: some finished or held rows back to pending and due, so claims keep finding work.
      if (c % 10 === 9) {
        await db.sql(
          "UPDATE probe_jobs SET status = 'pending', lease_expires_at = '', run_at = {:due} WHERE id IN " +
            "(SELECT id FROM probe_jobs WHERE status != 'pending' ORDER BY id LIMIT 150 OFFSET {:from})",
          { due: formatPbDate(nowMs - 1000), from: int(0, ROWS - 200) },
        );
        model = await db.readRows(null);
      }
    }
    console.log(`[claim-plan] seed ${SEED}: ${JSON.stringify(seen)}`);
    // The random claims reached every outcome there is (a generator that stopped reaching one would prove nothing about it).
    for (const outcome of [
      "claimed", "written, not claimed", "filled the limit", "claimed nothing", "attempt past the first", "with a deadline", "with queues held back",
      "wrote: claim", "wrote: steal", "wrote: timeout retry", "wrote: orphan cap", "wrote: timeout dead letter", "wrote: dead letter",
    ]) {
      expect(seen[outcome] ?? 0, outcome).toBeGreaterThan(0);
    }
  }, 600_000);
});
