// claim-next by the set-based plan (src/lib/claim-plan.ts) on SQLite (the
// in-memory batch): which path a call takes, what a round costs, and that the
// plan claims, steals, times out and gives up exactly as claimNext (the flow
// path and the model) does on the same random rows. The differential test on
// real PocketBase is test/integration/claim-plan-agrees-with-model.test.ts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { claimNext } from "../../src/lib/claim-next";
import { answerClaims, claimNextByPlan as planTaken, claimNextJobs as jobsTaken } from "../../src/lib/claim-plan";
import { queueJobView, type JobRow } from "../../src/lib/job-row";
import { formatPbDate } from "../../src/lib/lease";
import type { ClaimedJob } from "../../src/lib/types";
import type { StoredFlow } from "./support/fake-pocketbase";
import { enqueued, EXPIRED, held, LIVE, memoryBatch, NOW, type MemoryRow } from "./support/rows";

// Each call answered as the handlers answer it (answerClaims, after the transaction).
const claimNextByPlan = (...args: Parameters<typeof planTaken>) => answerClaims(planTaken(...args));
const claimNextJobs = (...args: Parameters<typeof jobsTaken>) => answerClaims(jobsTaken(...args));
const at = (offsetMs: number) => formatPbDate(NOW + offsetMs);
const request = (limit: number, probeKeyPrefix = "", queues: readonly string[] | null = null) =>
  ({ workerId: "w1", leaseSeconds: 30, limit, probeKeyPrefix, queues });
const tokens = () => {
  let n = 0;
  return () => `tok${++n}`;
};
const ids = (claimed: ClaimedJob[]) => claimed.map((c) => c.job.id);
const pending = (n: number, fields: Partial<JobRow> = {}) =>
  enqueued({ id: `p${String(n).padStart(4, "0")}`, probe_key: `k-${n}`, created: at(-100_000 + n), run_at: at(-100_000 + n), ...fields });

function flowRow(fields: Partial<StoredFlow> & { scope: string; name: string }): StoredFlow {
  return {
    id: `f-${fields.scope}-${fields.name}`, paused: 0, concurrency: 0, rate_limit: 0, rate_period: 0, parked_until: "",
    created: at(-60_000), updated: at(-60_000), ...fields,
  };
}

describe("claim-next by the plan", () => {
  it("claims a whole limit in claim order by one statement, and tells realtime of each job", () => {
    const batch = memoryBatch(Array.from({ length: 120 }, (_, n) => pending(n)));
    const claimed = claimNextJobs(batch, request(100), NOW, 5, tokens());
    expect(ids(claimed)).toEqual(Array.from({ length: 100 }, (_, n) => `p${String(n).padStart(4, "0")}`));
    expect(claimed.map((c) => c.leaseToken).slice(0, 3)).toEqual(["tok1", "tok2", "tok3"]);
    expect(claimed[0]?.job).toMatchObject({ status: "claimed", claimed_by: "w1", attempts: 1, lease_expires_at: at(30_000), version: 1 });
    // The flow check, then the round: one statement, read for the rows it wrote.
    expect(batch.calls.map((c) => c.op)).toEqual(["queryOne", "queryAll"]);
    expect(batch.noted.map((v) => v.id)).toEqual(ids(claimed));
    expect(batch.row("p0000")).toMatchObject({ status: "claimed", lease_token: "tok1", claimed_at: at(0) });
    expect(batch.row("p0100").status).toBe("pending");
  });

  it("fills the limit past a job given up at the orphan cap, in a second round", () => {
    const batch = memoryBatch([
      held("w-dead", EXPIRED, { id: "poison", created: at(-200_000), run_at: at(-200_000), consecutive_orphan_count: 5 }),
      pending(1), pending(2),
    ]);
    expect(ids(claimNextJobs(batch, request(2), NOW, 5, tokens()))).toEqual(["p0001", "p0002"]);
    expect(batch.row("poison")).toMatchObject({ status: "failed", claimed_by: "pb-fleet-sweeper" });
    expect(batch.calls.filter((c) => c.op === "queryAll")).toHaveLength(2);
  });

  it("takes the plan while only queues are held back, and claims from the other queues", () => {
    const batch = memoryBatch([pending(1), pending(2, { queue: "other" }), pending(3, { queue: "parked" })], {
      flow: [flowRow({ scope: "queue", name: "default", paused: 1 }), flowRow({ scope: "queue", name: "parked", parked_until: at(60_000) })],
    });
    expect(ids(claimNextJobs(batch, request(5), NOW, 5, tokens()))).toEqual(["p0002"]);
    expect(batch.calls.some((c) => c.op === "find")).toBe(false);
    // A caller's list loses its held-back queues.
    const listed = memoryBatch([pending(1), pending(2, { queue: "other" })], { flow: [flowRow({ scope: "queue", name: "default", paused: 1 })] });
    expect(ids(claimNextJobs(listed, request(5, "", ["default", "other"]), NOW, 5, tokens()))).toEqual(["p0002"]);
    expect(listed.calls.some((c) => c.op === "find")).toBe(false);
  });

  it.each([
    ["a paused group", { scope: "group", name: "g1", paused: 1 }],
    ["a parked group", { scope: "group", name: "g1", parked_until: at(60_000) }],
    ["a concurrency limit", { scope: "queue", name: "other", concurrency: 3 }],
    ["a rate limit", { scope: "group", name: "g9", rate_limit: 5, rate_period: 60 }],
  ] as const)("takes claimNext's path while %s is set, which it counts per candidate", (_name, flow) => {
    const batch = memoryBatch([pending(1, { group_key: "g1" }), pending(2)], { flow: [flowRow(flow)] });
    expect(ids(claimNextJobs(batch, request(5), NOW, 5, tokens()))).toEqual(flow.name === "g1" ? ["p0002"] : ["p0001", "p0002"]);
    expect(batch.calls.some((c) => c.op === "find")).toBe(true);
  });

  it("takes the plan when the only flow rows have no setting in effect (a park that is over)", () => {
    const batch = memoryBatch([pending(1)], { flow: [flowRow({ scope: "queue", name: "default", parked_until: at(-1) })] });
    expect(ids(claimNextJobs(batch, request(5), NOW, 5, tokens()))).toEqual(["p0001"]);
    expect(batch.calls.some((c) => c.op === "find")).toBe(false);
  });

  it("takes claimNext's path for a probe_key prefix", () => {
    const batch = memoryBatch([pending(1), pending(2, { probe_key: "a-2" })]);
    expect(ids(claimNextJobs(batch, request(5, "a-"), NOW, 5, tokens()))).toEqual(["p0002"]);
    expect(batch.calls.some((c) => c.op === "find")).toBe(true);
  });

  it("claims each job once when a queue is named twice", () => {
    const batch = memoryBatch([pending(1), pending(2), pending(3, { queue: "" })]);
    const claimed = claimNextByPlan(batch, request(5, "", ["default", "default"]), NOW, 5, tokens());
    expect(ids(claimed)).toEqual(["p0001", "p0002", "p0003"]);
    expect(claimed.map((c) => c.leaseToken)).toEqual(["tok1", "tok2", "tok3"]);
  });

  it("answers nothing for an empty list of queues, and writes nothing", () => {
    const batch = memoryBatch([pending(1)]);
    expect(claimNextByPlan(batch, request(5, "", []), NOW, 5, tokens())).toEqual([]);
    expect(batch.calls).toEqual([]);
  });

  it("claims, steals, times out and gives up as claimNext does, on random rows", () => {
    const leases = [LIVE, EXPIRED, at(0), "", "soon", "2025-02-30 10:00:00.000Z"];
    const stored = fc.record({
      status: fc.constantFrom("pending", "pending", "claimed", "running", "done", "failed"),
      lease: fc.constantFrom(...leases),
      claimed_by: fc.constantFrom("w1", "w2", ""),
      attempts: fc.integer({ min: 0, max: 6 }),
      max_attempts: fc.constantFrom(0, 1, 3, 5),
      consecutive_orphan_count: fc.integer({ min: 0, max: 4 }),
      timeout_seconds: fc.constantFrom(0, 0, 5, 60),
      claimed_at: fc.constantFrom("", at(-70_000), at(-3_000), "bad"),
      start_by: fc.constantFrom("", "", at(-1_000), at(60_000)),
      priority: fc.integer({ min: -1, max: 1 }),
      run: fc.integer({ min: -5, max: 2 }),
      queue: fc.constantFrom("default", "", "q2"),
    });
    fc.assert(fc.property(
      fc.array(stored, { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 1, max: 12 }),
      fc.constantFrom<readonly string[] | null>(null, ["default"], ["q2", "default"]),
      fc.integer({ min: 0, max: 4 }),
      (specs, limit, queues, cap) => {
        const rows = specs.map((s, n): JobRow => ({
          ...enqueued({ id: `r${String(n).padStart(3, "0")}`, probe_key: `k-${n}`, created: at(-50_000 + (n % 7)), enqueue_index: n % 3 }),
          status: s.status, lease_expires_at: s.lease, claimed_by: s.claimed_by, attempts: s.attempts, max_attempts: s.max_attempts,
          consecutive_orphan_count: s.consecutive_orphan_count, timeout_seconds: s.timeout_seconds, claimed_at: s.claimed_at,
          start_by: s.start_by, priority: s.priority, run_at: at(s.run * 1000), queue: s.queue, lease_token: "old",
        }));
        const byPlan = memoryBatch(rows);
        const byModel = memoryBatch(rows);
        const req = request(limit, "", queues);
        const planned = claimNextByPlan(byPlan, req, NOW, cap, tokens());
        const modelled = claimNext(byModel, req, NOW, cap, tokens());
        // Tokens are drawn differently (the plan: a round's worth at its start), so they are compared apart.
        expect(planned.map((c) => c.job)).toEqual(modelled.map(({ row, patch }) => queueJobView(row, patch)));
        expect(new Set(planned.map((c) => c.leaseToken)).size).toBe(planned.length);
        const withoutToken = (m: Map<string, MemoryRow>) => [...m.values()].map(({ lease_token: _t, ...r }) => r);
        expect(withoutToken(byPlan.jobs)).toEqual(withoutToken(byModel.jobs));
        expect(byPlan.noted.map((v) => v.id).sort()).toEqual([...new Set(byModel.writes.map((w) => w.id))].sort());
      },
    ), { numRuns: 200, seed: 20261207 });
  }, 60_000);
});
