import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CLAIM_NEXT_ROUNDS, claimNext, duePending } from "../../src/lib/claim-next";
import type { JobRow } from "../../src/lib/job-row";
import { formatPbDate, isLeaseLive } from "../../src/lib/lease";
import { FAMILY_PROBE_LIMIT, LEVEL_ORDER } from "../../src/lib/queries";
import { MAX_ATTEMPTS_ERROR } from "../../src/lib/queue";
import { EXPIRED, held, LIVE, memoryBatch, NOW, row, type MemoryBatch } from "./support/rows";

const at = (n: number) => `2025-01-15 11:00:0${n}.000Z`;
const request = (limit: number, probeKeyPrefix = "", queues: readonly string[] | null = null) =>
  ({ workerId: "w1", leaseSeconds: 30, limit, probeKeyPrefix, queues });
let tokens = 0;
const newToken = () => `tok${++tokens}`;
const ids = (claimed: { row: JobRow }[]) => claimed.map((c) => c.row.id);
const seconds = (s: number) => formatPbDate(NOW + s * 1000);

/** The priority levels claim-next's level queries visited, in order (a find of pending due rows names its level). */
function levelsRead(batch: MemoryBatch): number[] {
  return batch.calls
    .filter((c) => c.op === "find" && c.query.params["priority"] !== undefined)
    .map((c) => c.query.params["priority"] as number);
}

describe("claimNext (the claim-next transaction's logic)", () => {
  it("claims the oldest claimable rows, pending and expired alike, up to the limit", () => {
    const batch = memoryBatch([
      row({ id: "p2", created: at(2) }),
      held("w-dead", EXPIRED, { id: "e1", created: at(1), consecutive_orphan_count: 0 }),
      held("w-live", LIVE, { id: "l0", created: at(0) }),
      row({ id: "p3", created: at(3) }),
    ]);
    expect(ids(claimNext(batch, request(2), NOW, 5, newToken))).toEqual(["e1", "p2"]);
  });

  it("fills the limit with later rows when a candidate is given up at the cap", () => {
    const batch = memoryBatch([
      held("w-dead", EXPIRED, { id: "poison", created: at(1), consecutive_orphan_count: 5 }),
      row({ id: "p2", created: at(2) }),
      row({ id: "p3", created: at(3) }),
    ]);
    expect(ids(claimNext(batch, request(2), NOW, 5, newToken))).toEqual(["p2", "p3"]);
    expect(batch.writes.find((w) => w.id === "poison")?.patch).toMatchObject({ status: "failed" });
  });

  it("stops after a bounded number of rounds even when every candidate is poison", () => {
    const poison = Array.from({ length: 50 }, (_, i) =>
      held("w-dead", EXPIRED, { id: `x${String(i).padStart(2, "0")}`, created: at(0), consecutive_orphan_count: 5 }));
    const batch = memoryBatch(poison);
    expect(claimNext(batch, request(1), NOW, 5, newToken)).toEqual([]);
    expect(batch.writes.length).toBe(CLAIM_NEXT_ROUNDS); // one give-up per round of limit 1
  });

  it("answers nothing, writing nothing, when nothing is claimable", () => {
    const batch = memoryBatch([
      held("w-live", LIVE),
      row({ id: "d", status: "done" }),
      row({ id: "c", status: "cancelled" }),
      row({ id: "future", run_at: seconds(1) }),
    ]);
    expect(claimNext(batch, request(3), NOW, 5, newToken)).toEqual([]);
    expect(batch.writes).toEqual([]);
  });

  it("orders by priority, then due time, then created, then enqueue order, then id; never a job not yet due", () => {
    const batch = memoryBatch([
      row({ id: "low-old", priority: -5, run_at: seconds(-900), created: at(0) }),
      row({ id: "high-future", priority: 9, run_at: seconds(1) }),
      // one enqueue call, saved in the same millisecond: request order
      row({ id: "high-b", priority: 9, run_at: seconds(-10), enqueue_index: 1, created: at(1) }),
      row({ id: "high-a", priority: 9, run_at: seconds(-10), enqueue_index: 0, created: at(1) }),
      // a later call's first item comes after an earlier call's second
      row({ id: "high-c", priority: 9, run_at: seconds(-10), enqueue_index: 0, created: at(2) }),
      row({ id: "high-early", priority: 9, run_at: seconds(-20), enqueue_index: 7, created: at(9) }),
      row({ id: "mid-2", priority: 0, run_at: seconds(-10), created: at(1) }),
      row({ id: "mid-1", priority: 0, run_at: seconds(-10), created: at(0) }),
      row({ id: "mid-0", priority: 0, run_at: seconds(-10), created: at(0) }),
      row({ id: "due-now", priority: 0, run_at: seconds(0), created: at(0) }),
    ]);
    expect(ids(claimNext(batch, request(100), NOW, 5, newToken))).toEqual([
      "high-early", "high-a", "high-b", "high-c", "mid-0", "mid-1", "mid-2", "due-now", "low-old",
    ]);
    expect(batch.row("high-future").status).toBe("pending");
  });

  it("bumps attempts on every win, a steal included", () => {
    const batch = memoryBatch([
      row({ id: "p", attempts: 2, max_attempts: 5 }),
      held("w-dead", EXPIRED, { id: "s", attempts: 1, consecutive_orphan_count: 0 }),
    ]);
    const claimed = claimNext(batch, request(2), NOW, 5, newToken);
    expect(claimed.map((c) => [c.row.id, c.patch.attempts])).toEqual([["p", 3], ["s", 2]]);
    expect(batch.row("p").attempts).toBe(3);
  });

  it("dead-letters a due job that used its attempts instead of handing it out, and claims the next in its place", () => {
    const batch = memoryBatch([
      row({ id: "spent", priority: 5, attempts: 3, max_attempts: 3, version: 4 }),
      row({ id: "next", priority: 0 }),
    ]);
    expect(ids(claimNext(batch, request(1), NOW, 5, newToken))).toEqual(["next"]);
    expect(batch.row("spent")).toMatchObject({
      status: "failed", claimed_by: "", lease_token: "", last_error: MAX_ATTEMPTS_ERROR,
      dead_lettered_at: formatPbDate(NOW), finished_at: formatPbDate(NOW), attempts: 3, version: 5,
    });
  });

  it("narrows to a prefix", () => {
    const batch = memoryBatch([
      row({ id: "b", probe_key: "b-1", priority: 10 }),
      row({ id: "a", probe_key: "a-1" }),
      held("w-dead", EXPIRED, { id: "b-held", probe_key: "b-2", consecutive_orphan_count: 0 }),
    ]);
    expect(ids(claimNext(batch, request(5, "a-"), NOW, 5, newToken))).toEqual(["a"]);
  });
});

describe("claimNext with queues (docs/flow-control.md, claim-next's `queue`)", () => {
  function rows() {
    return memoryBatch([
      row({ id: "e1", queue: "emails", created: at(1) }),
      row({ id: "r1", queue: "reports", created: at(0), priority: 9 }),
      row({ id: "d1", queue: "default", created: at(3) }),
      // written around enqueue and the create hook: the default queue
      row({ id: "d0", queue: "", created: at(2) }),
      held("w-dead", EXPIRED, { id: "e-stolen", queue: "emails", created: at(0), consecutive_orphan_count: 0 }),
      held("w-dead", EXPIRED, { id: "r-stolen", queue: "reports", created: at(0), consecutive_orphan_count: 0 }),
      held("w-live", LIVE, { id: "e-live", queue: "emails", created: at(0) }),
    ]);
  }

  it("takes any queue with queues null, in claim order", () => {
    expect(ids(claimNext(rows(), request(10), NOW, 5, newToken))).toEqual(["r1", "e-stolen", "r-stolen", "e1", "d0", "d1"]);
  });

  it("takes only the queues asked for, pending and expired alike, merged in claim order", () => {
    expect(ids(claimNext(rows(), request(10, "", ["emails"]), NOW, 5, newToken))).toEqual(["e-stolen", "e1"]);
    expect(ids(claimNext(rows(), request(10, "", ["emails", "reports"]), NOW, 5, newToken))).toEqual(["r1", "e-stolen", "r-stolen", "e1"]);
    expect(ids(claimNext(rows(), request(10, "", ["nothing-here"]), NOW, 5, newToken))).toEqual([]);
  });

  it("reads a row's empty queue as the default queue", () => {
    expect(ids(claimNext(rows(), request(10, "", ["default"]), NOW, 5, newToken))).toEqual(["d0", "d1"]);
  });

  it("keeps the limit over all the queues asked for, and narrows to a prefix too", () => {
    expect(ids(claimNext(rows(), request(2, "", ["emails", "default"]), NOW, 5, newToken))).toEqual(["e-stolen", "e1"]);
    const batch = memoryBatch([
      row({ id: "a", probe_key: "a-1", queue: "emails" }),
      row({ id: "b", probe_key: "b-1", queue: "emails", created: at(0) }),
      row({ id: "c", probe_key: "a-2", queue: "reports", created: at(0) }),
    ]);
    expect(ids(claimNext(batch, request(5, "a-", ["emails"]), NOW, 5, newToken))).toEqual(["a"]);
  });

  it("walks each queue through its own level queries, never another queue's rows", () => {
    const batch = rows();
    claimNext(batch, request(10, "", ["emails", "default"]), NOW, 5, newToken);
    const levelQueries = batch.calls.filter((c) => c.op === "queryOne" || (c.op === "find" && c.query.params["priority"] !== undefined));
    expect(levelQueries.length).toBeGreaterThan(0);
    // One walk per stored value: emails, then default and its "".
    expect([...new Set(levelQueries.map((c) => c.query.params["queue"]))]).toEqual(["emails", "default", ""]);
    for (const c of levelQueries) expect(c.query.sql).toMatch(/queue = \{:queue\} AND status = 'pending'/);
    // The expired leases: one query, the queues as an IN list.
    const expired = batch.calls.filter((c) => c.op === "find" && c.query.params["priority"] === undefined);
    expect(expired.map((c) => [c.query.params["queue0"], c.query.params["queue1"], c.query.params["queue2"]])).toEqual([["emails", "default", ""]]);
  });
});

describe("duePending (pending rows, level by level)", () => {
  it("with a prefix, walks a small family through the probe_key index and filters a large one out of the claim order", () => {
    const family = (n: number) => Array.from({ length: n }, (_, i) => row({ id: `f${i}`, probe_key: `fam/${i}` }));
    const others = Array.from({ length: 5 }, (_, i) => row({ id: `o${i}`, probe_key: `other/${i}`, created: at(-1) }));
    const small = memoryBatch([...others, ...family(3)]);
    expect(duePending(small, NOW, "fam/", 2).map((r) => r.id)).toEqual(["f0", "f1"]);
    const smallFind = small.calls.find((c) => c.op === "find")!;
    expect(smallFind.query.sql).toContain("+priority = {:priority}");
    expect(smallFind.query.sql).toMatch(/ probe_key >= \{:prefix\}/);

    const large = memoryBatch([...others, ...family(FAMILY_PROBE_LIMIT)]);
    expect(duePending(large, NOW, "fam/", 2).map((r) => r.probe_key)).toEqual(["fam/0", "fam/1"]);
    const largeFind = large.calls.find((c) => c.op === "find")!;
    expect(largeFind.query.sql).toContain("+probe_key >= {:prefix}");
    expect(largeFind.query.sql).not.toContain("+priority");
  });

  it("walks the levels from the highest, skipping a level of future rows, and stops once it has enough", () => {
    const batch = memoryBatch([
      row({ id: "top-future", priority: 5, run_at: seconds(60) }),
      row({ id: "mid", priority: 3 }),
      row({ id: "low", priority: 1 }),
    ]);
    expect(duePending(batch, NOW, "", 1).map((r) => r.id)).toEqual(["mid"]);
    expect(levelsRead(batch)).toEqual([5, 3]);
  });

  it("reads each level for only what is still wanted, in LEVEL_ORDER, and ends when no level is left", () => {
    const batch = memoryBatch([
      row({ id: "a1", priority: 2, created: at(1) }),
      row({ id: "a2", priority: 2, created: at(2) }),
      row({ id: "b1", priority: -1 }),
    ]);
    expect(duePending(batch, NOW, "", 10).map((r) => r.id)).toEqual(["a1", "a2", "b1"]);
    const finds = batch.calls.filter((c) => c.op === "find");
    expect(finds.map((c) => [c.query.params["priority"], c.limit])).toEqual([[2, 10], [-1, 8]]);
    for (const f of finds) expect(f.order).toEqual(LEVEL_ORDER);
    // The top, the level below 2, the level below -1 (none).
    expect(batch.calls.filter((c) => c.op === "queryOne").map((c) => c.query.params["below"])).toEqual([undefined, 2, -1]);
  });

  it("answers nothing without a query per row when nothing is pending", () => {
    const batch = memoryBatch([held("w", LIVE), row({ id: "d", status: "done" })]);
    expect(duePending(batch, NOW, "", 5)).toEqual([]);
    expect(batch.calls.map((c) => c.op)).toEqual(["queryOne"]);
  });
});

/** The claim order (docs/queue.md; created before enqueue_index: one call's rows share a due time and have non-decreasing created), written out on its own. */
function claimOrder(a: JobRow, b: JobRow): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.run_at !== b.run_at) return a.run_at < b.run_at ? -1 : 1;
  if (a.created !== b.created) return a.created < b.created ? -1 : 1;
  if (a.enqueue_index !== b.enqueue_index) return a.enqueue_index - b.enqueue_index;
  return a.id < b.id ? -1 : 1;
}

const arbitraryRow = fc.record({
  priority: fc.constantFrom(-1000, -3, 0, 0, 0, 1, 2, 1000),
  dueIn: fc.option(fc.integer({ min: -3600, max: 3600 }), { nil: undefined, freq: 8 }),
  state: fc.constantFrom("pending", "pending", "pending", "live", "expired", "done", "failed", "cancelled"),
  enqueueIndex: fc.integer({ min: 0, max: 2 }),
  createdAgo: fc.integer({ min: 0, max: 5 }),
  family: fc.constantFrom("a-", "b-"),
  // "": a row written around enqueue and the create hook (the default queue)
  queue: fc.constantFrom("default", "default", "", "emails", "reports"),
});

describe("claimNext against a model", () => {
  it("claims the first `limit` claimable jobs in claim order, never one not yet due", () => {
    fc.assert(
      fc.property(
        fc.array(arbitraryRow, { maxLength: 25 }),
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom("", "a-"),
        fc.constantFrom<readonly string[] | null>(null, null, ["emails"], ["default"], ["emails", "default"], ["reports", "emails"]),
        (specs, limit, prefix, queues) => {
          const rows = specs.map((s, i) => {
            const held = s.state === "live" || s.state === "expired";
            return row({
              id: `r${String(i).padStart(2, "0")}`,
              probe_key: `${s.family}${i}`,
              status: held ? "running" : s.state,
              claimed_by: held ? "w-other" : "",
              lease_expires_at: s.state === "live" ? LIVE : s.state === "expired" ? EXPIRED : "",
              priority: s.priority,
              // undefined: a row no hook stamped (due)
              run_at: s.dueIn === undefined ? "" : seconds(s.dueIn),
              enqueue_index: s.enqueueIndex,
              created: at(s.createdAgo),
              consecutive_orphan_count: 0,
              queue: s.queue,
            });
          });
          const claimable = rows.filter((r) =>
            r.probe_key.startsWith(prefix) &&
            (queues === null || queues.includes(r.queue === "" ? "default" : r.queue)) &&
            ((r.status === "pending" && r.run_at <= formatPbDate(NOW)) ||
              (r.status === "running" && !isLeaseLive(r.lease_expires_at, NOW))));
          const expected = claimable.sort(claimOrder).slice(0, limit).map((r) => r.id);

          const batch = memoryBatch(rows);
          const claimed = claimNext(batch, request(limit, prefix, queues), NOW, 5, newToken);
          expect(ids(claimed)).toEqual(expected);
          // Each claimed once, bumped once; nothing else written.
          expect(batch.writes.map((w) => w.id)).toEqual(expected);
          for (const c of claimed) expect(c.patch).toMatchObject({ status: "claimed", claimed_by: "w1", attempts: c.row.attempts + 1 });
          // The level queries never ask for more than is wanted (per queue).
          for (const call of batch.calls) if (call.op === "find") expect(call.limit).toBeLessThanOrEqual(limit);
        },
      ),
      { numRuns: 300 },
    );
  });
});
