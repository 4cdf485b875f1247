import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatPbDate, LIVE_LEASE_SQL } from "../../src/lib/lease";
import {
  CLAIM_ORDER,
  compareClaimOrder,
  expiredLeaseWhere,
  firstInClaimOrder,
  LEVEL_ORDER,
  LIVE_UNIQUE_KEY_SQL,
  liveUniqueKeyQuery,
  pendingDueWhere,
  statsQuery,
  storedQueueValues,
  statsScanQuery,
  STATS_ROW_SHAPE,
  topPriorityQuery,
  type Candidate,
  UNREADABLE_LEASE_INDEX_WHERE,
  type WhereClause,
} from "../../src/lib/queries";
import { prefixUpperBound } from "../../src/lib/prefix";
import { NOW } from "./support/rows";

const NOW_TEXT = formatPbDate(NOW);
const HOSTILE_PREFIXES = ["x' OR 1=1 --", "a%b_c\\d", "'; DROP TABLE probe_jobs; --", "{:now}"];
/** Held, and not live by the one lease rule (its SQL half is tested against SQLite in the integration suite). */
/** Two index ranges propose (readable leases up to now, the partial index of unreadable ones); the rule decides. */
const EXPIRED = "rowid IN (SELECT rowid FROM probe_jobs WHERE status IN ('claimed', 'running') AND lease_expires_at <= {:now} " +
  `UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) AND +status IN ('claimed', 'running') AND NOT ${LIVE_LEASE_SQL}`;

/** Every `{:name}` in the SQL is bound, and every bound value is used. */
function expectPlaceholdersBound({ sql, params }: WhereClause) {
  const used = [...sql.matchAll(/\{:(\w+)\}/g)].map((m) => m[1]).sort();
  expect([...new Set(used)]).toEqual(Object.keys(params).sort());
}

/** SQLite's BINARY order of text: UTF-8 bytes, i.e. code points. */
const binaryLess = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0;

describe.each([
  ["expiredLeaseWhere", (prefix: string) => expiredLeaseWhere(NOW, prefix), EXPIRED, { now: NOW_TEXT }],
] as const)("%s", (_name, where, condition, baseParams) => {
  it("covers all jobs when the prefix is empty", () => {
    expect(where("")).toEqual({ sql: condition, params: baseParams });
  });

  it("narrows to a prefix as a key range (the (status, probe_key) index serves it; LIKE would ignore case)", () => {
    expect(where("A%b_")).toEqual({
      sql: `(${condition}) AND probe_key >= {:prefix} AND probe_key < {:prefixEnd}`,
      params: { ...baseParams, prefix: "A%b_", prefixEnd: "A%b`" },
    });
  });

  it("has no upper bound when none exists (a prefix of only U+10FFFF)", () => {
    expect(where("\u{10FFFF}").sql).toBe(`(${condition}) AND probe_key >= {:prefix}`);
  });

  it.each(HOSTILE_PREFIXES)("never puts a value into the SQL text (prefix %j)", (prefix) => {
    const clause = where(prefix);
    expect(clause.sql).not.toContain(NOW_TEXT);
    if (prefix !== "{:now}") expect(clause.sql).not.toContain(prefix);
    expect(clause.params["prefix"]).toBe(prefix);
    expectPlaceholdersBound(clause);
  });

  it("does not carry one call's prefix into the next", () => {
    where("a");
    expect(where("").params).toEqual(baseParams);
  });
});

describe("prefixUpperBound", () => {
  it.each<[string, string | null]>([
    ["a", "b"],
    ["probe/", "probe0"],
    ["az", "a{"],
    ["a\u{10FFFF}", "b"],
    ["\u{10FFFF}\u{10FFFF}", null],
    ["\uD7FF", "\uE000"],
    ["x\u{1F600}", "x\u{1F601}"],
  ])("%j -> %j", (prefix, end) => {
    expect(prefixUpperBound(prefix)).toBe(end);
  });

  it("bounds exactly the keys that start with the prefix, in SQLite's byte order", () => {
    const text = fc.string({ unit: "binary", maxLength: 6 }).filter((t) => t === Buffer.from(t).toString());
    fc.assert(
      fc.property(text.filter((p) => p.length > 0), text, (prefix, key) => {
        const end = prefixUpperBound(prefix);
        const inRange = !binaryLess(key, prefix) && (end === null || binaryLess(key, end));
        expect(inRange).toBe(key.startsWith(prefix));
      }),
      { numRuns: 2000 },
    );
  });
});

/** The filter form of a prefix (claim-next's level queries): `+probe_key` keeps SQLite on the claim-order index. */
const FILTER_RANGE = "+probe_key >= {:prefix} AND +probe_key < {:prefixEnd}";

/** A pending row that may still be started (docs/flow-control.md: start_by guards the first start only). */
const STARTABLE = "(COALESCE(start_by, '') = '' OR attempts > 0 OR start_by > {:now})";

describe("pendingDueWhere", () => {
  const DUE = `status = 'pending' AND priority = {:priority} AND run_at <= {:now} AND ${STARTABLE}`;

  it("is one priority level's due pending rows", () => {
    expect(pendingDueWhere(-7, NOW, "")).toEqual({ sql: DUE, params: { priority: -7, now: NOW_TEXT } });
  });

  it("narrows to a prefix as a filter, not through the probe_key index", () => {
    expect(pendingDueWhere(3, NOW, "A%b_")).toEqual({
      sql: `(${DUE}) AND ${FILTER_RANGE}`,
      params: { priority: 3, now: NOW_TEXT, prefix: "A%b_", prefixEnd: "A%b`" },
    });
    expect(pendingDueWhere(3, NOW, "\u{10FFFF}").sql).toBe(`(${DUE}) AND +probe_key >= {:prefix}`);
  });

  it.each(HOSTILE_PREFIXES)("never puts a value into the SQL text (prefix %j)", (prefix) => {
    const clause = pendingDueWhere(1000, NOW, prefix);
    expect(clause.sql).not.toContain(NOW_TEXT);
    expect(clause.sql).not.toContain("1000");
    if (prefix !== "{:now}") expect(clause.sql).not.toContain(prefix);
    expectPlaceholdersBound(clause);
  });
});

describe("topPriorityQuery", () => {
  it("is one MAX over the pending rows, due or not", () => {
    expect(topPriorityQuery("")).toEqual({
      sql: "SELECT MAX(priority) IS NOT NULL AS found, COALESCE(MAX(priority), 0) AS priority FROM probe_jobs WHERE status = 'pending'",
      params: {},
    });
  });

  it("finds the next level down with `below`, and filters a prefix", () => {
    const query = topPriorityQuery("a-", -1000);
    expect(query.sql).toMatch(/WHERE \(status = 'pending' AND priority < \{:below\}\) AND \+probe_key >= \{:prefix\} AND \+probe_key < \{:prefixEnd\}$/);
    expect(query.params).toEqual({ below: -1000, prefix: "a-", prefixEnd: "a." });
    expectPlaceholdersBound(query);
  });

  it("answers the columns of PRIORITY_LEVEL_SHAPE", () => {
    expect([...topPriorityQuery("").sql.matchAll(/ AS (\w+)/g)].map((m) => m[1])).toEqual(["found", "priority"]);
  });
});

describe("named queues in the claim queries (docs/flow-control.md)", () => {
  const DUE = `status = 'pending' AND priority = {:priority} AND run_at <= {:now} AND ${STARTABLE}`;

  it("storedQueueValues asks for a row's \"\" too where the default queue is asked for", () => {
    expect(storedQueueValues(["emails"])).toEqual(["emails"]);
    expect(storedQueueValues(["emails", "default"])).toEqual(["emails", "default", ""]);
    expect(storedQueueValues(["default"])).toEqual(["default", ""]);
    const asked = ["default"];
    storedQueueValues(asked);
    expect(asked).toEqual(["default"]);
  });

  it("pendingDueWhere narrows a level to one queue by an equality first, which (queue, status, priority, ...) serves", () => {
    expect(pendingDueWhere(2, NOW, "", "filter", "emails")).toEqual({
      sql: `queue = {:queue} AND ${DUE}`, params: { queue: "emails", priority: 2, now: NOW_TEXT },
    });
    expect(pendingDueWhere(2, NOW, "", "filter", "")).toMatchObject({ params: { queue: "" } });
    const withPrefix = pendingDueWhere(2, NOW, "a-", "filter", "emails");
    expect(withPrefix.sql).toBe(`(queue = {:queue} AND ${DUE}) AND ${FILTER_RANGE}`);
    expectPlaceholdersBound(withPrefix);
    // Without a queue, the query is as before.
    expect(pendingDueWhere(2, NOW, "", "filter", undefined)).toEqual(pendingDueWhere(2, NOW, ""));
  });

  it("topPriorityQuery finds one queue's levels", () => {
    const top = topPriorityQuery("", undefined, "filter", "emails");
    expect(top.sql).toMatch(/ WHERE queue = \{:queue\} AND status = 'pending'$/);
    expect(top.params).toEqual({ queue: "emails" });
    const below = topPriorityQuery("a-", 5, "filter", "emails");
    expect(below.sql).toMatch(/WHERE \(queue = \{:queue\} AND status = 'pending' AND priority < \{:below\}\) AND \+probe_key >= /);
    expect(below.params).toEqual({ queue: "emails", below: 5, prefix: "a-", prefixEnd: "a." });
    expectPlaceholdersBound(below);
    expect(topPriorityQuery("", 5, "filter", undefined)).toEqual(topPriorityQuery("", 5));
  });

  it("expiredLeaseWhere narrows to the queues as stored (null: any), each value bound", () => {
    expect(expiredLeaseWhere(NOW, "", null)).toEqual(expiredLeaseWhere(NOW, ""));
    expect(expiredLeaseWhere(NOW, "", ["emails", "default"])).toEqual({
      sql: `${EXPIRED} AND queue IN ({:queue0}, {:queue1}, {:queue2})`,
      params: { now: NOW_TEXT, queue0: "emails", queue1: "default", queue2: "" },
    });
    const prefixed = expiredLeaseWhere(NOW, "a-", ["emails"]);
    expect(prefixed.sql).toBe(`(${EXPIRED} AND queue IN ({:queue0})) AND probe_key >= {:prefix} AND probe_key < {:prefixEnd}`);
    expectPlaceholdersBound(prefixed);
  });

  it("leaves out the scopes flow control holds back (docs/flow-control.md), each name bound; the default queue's \"\" too", () => {
    const held = { queues: ["default", "emails"], groups: ["host-a"] };
    expect(pendingDueWhere(2, NOW, "", "filter", undefined, held)).toEqual({
      sql: `${DUE} AND queue NOT IN ({:heldQueue0}, {:heldQueue1}, {:heldQueue2}) AND group_key NOT IN ({:heldGroup0})`,
      params: { priority: 2, now: NOW_TEXT, heldQueue0: "default", heldQueue1: "emails", heldQueue2: "", heldGroup0: "host-a" },
    });
    expect(pendingDueWhere(2, NOW, "", "filter", "q", { queues: [], groups: ["g1", "g2"] }).sql)
      .toBe(`queue = {:queue} AND ${DUE} AND group_key NOT IN ({:heldGroup0}, {:heldGroup1})`);
    expect(expiredLeaseWhere(NOW, "", null, { queues: ["emails"], groups: [] })).toEqual({
      sql: `${EXPIRED} AND queue NOT IN ({:heldQueue0})`, params: { now: NOW_TEXT, heldQueue0: "emails" },
    });
    const both = expiredLeaseWhere(NOW, "a-", ["emails"], { queues: [], groups: ["h"] });
    expect(both.sql).toBe(`(${EXPIRED} AND queue IN ({:queue0}) AND group_key NOT IN ({:heldGroup0})) AND probe_key >= {:prefix} AND probe_key < {:prefixEnd}`);
    expectPlaceholdersBound(both);
    // Nothing held back: the queries as without flow control.
    expect(pendingDueWhere(2, NOW, "", "filter", undefined, { queues: [], groups: [] })).toEqual(pendingDueWhere(2, NOW, ""));
    expect(expiredLeaseWhere(NOW, "", null, { queues: [], groups: [] })).toEqual(expiredLeaseWhere(NOW, ""));
  });

  it.each(["x' OR 1=1 --", "{:now}", "emails"])("never puts a queue name into the SQL text (%j)", (queue) => {
    const held = { queues: [queue], groups: [queue] };
    for (const clause of [
      pendingDueWhere(0, NOW, "", "filter", queue), topPriorityQuery("", 0, "filter", queue), expiredLeaseWhere(NOW, "", [queue]),
      pendingDueWhere(0, NOW, "", "filter", undefined, held), expiredLeaseWhere(NOW, "", null, held),
    ]) {
      if (queue !== "{:now}") expect(clause.sql).not.toContain(queue);
      expectPlaceholdersBound(clause);
    }
  });
});

describe("liveUniqueKeyQuery", () => {
  it("repeats the partial unique index's condition word for word, the key bound", () => {
    const query = liveUniqueKeyQuery("k' OR 1=1");
    expect(query.sql).toBe(`SELECT id, queue FROM probe_jobs WHERE unique_key = {:uniqueKey} AND ${LIVE_UNIQUE_KEY_SQL} LIMIT 1`);
    expect(query.params).toEqual({ uniqueKey: "k' OR 1=1" });
    expect(LIVE_UNIQUE_KEY_SQL).toBe("unique_key != '' AND status != 'done' AND status != 'failed' AND status != 'cancelled'");
  });
});

describe("CLAIM_ORDER and compareClaimOrder", () => {
  it("is priority first, then due time, age, enqueue order and id", () => {
    // Rows of one call share a due time and get non-decreasing created; enqueue_index orders those of one millisecond.
    expect(LEVEL_ORDER).toEqual(["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"]);
    expect(CLAIM_ORDER).toEqual(["priority DESC", ...LEVEL_ORDER]);
  });

  const c = (id: string, fields: Partial<Candidate> = {}): Candidate =>
    ({ id, priority: 0, run_at: "2026-01-01 00:00:00.000Z", enqueue_index: 0, created: "2026-01-01 00:00:00.000Z", ...fields });

  it.each<[string, Candidate, Candidate]>([
    ["higher priority, even due later and younger", c("z", { priority: 1, run_at: "2026-02-01 00:00:00.000Z", created: "2027" }), c("a")],
    ["a negative priority after zero", c("z"), c("a", { priority: -1 })],
    ["earlier run_at, even enqueued later", c("z", { run_at: "2025-12-31 23:59:59.999Z", enqueue_index: 9 }), c("a")],
    ["an empty run_at (a row no hook stamped) before any date", c("z", { run_at: "" }), c("a")],
    ["older created, even with a higher enqueue_index (an earlier call)", c("z", { created: "2025", enqueue_index: 5 }), c("a")],
    ["lower enqueue_index at the same created (one call, one millisecond)", c("z"), c("a", { enqueue_index: 1 })],
    ["lower id", c("a"), c("b")],
  ])("puts %s first", (_name, first, second) => {
    expect(compareClaimOrder(first, second)).toBeLessThan(0);
    expect(compareClaimOrder(second, first)).toBeGreaterThan(0);
    expect(compareClaimOrder(first, { ...first })).toBe(0);
  });

  it("firstInClaimOrder merges both queries' candidates, keeps the limit, and does not reorder its input", () => {
    const input = [c("p2", { priority: 1 }), c("s1", { priority: 2 }), c("p1", { priority: 1, run_at: "2025" }), c("s2")];
    expect(firstInClaimOrder(input, 3).map((x) => x.id)).toEqual(["s1", "p1", "p2"]);
    expect(input.map((x) => x.id)).toEqual(["p2", "s1", "p1", "s2"]);
  });
});

describe("statsQuery (counted) and statsScanQuery", () => {
  const COLUMNS = [
    "pending", "claimed", "running", "done", "failed", "cancelled", "total", "retrying", "dead_lettered",
    "scheduled", "oldest_pending", "expired_leases", "past_orphan_cap", "counts_ready",
  ];
  /** A query's own output columns: the ` AS name` at the top level of its select list. */
  const outputColumns = (sql: string) => [...sql.split(/\nFROM /)[0]!.matchAll(/ AS (\w+)(?:,|$)/gm)].map((m) => m[1]);

  it("binds now and the orphan cap; the counted one reads the finished rows' numbers from probe_job_counts, never a scan", () => {
    const query = statsQuery(NOW, 5);
    expect(query.params).toEqual({ now: NOW_TEXT, cap: 5 });
    expect(query.sql).not.toContain(NOW_TEXT);
    expectPlaceholdersBound(query);
    // Every read of probe_jobs is narrowed by an indexed term: pending, held or orphaned rows only, or the rowids of
    // held rows those propose (the expired leases: two index ranges).
    const reads = query.sql.split("FROM probe_jobs").slice(1).map((after) => after.trimStart());
    expect(reads.every((after) => after.startsWith("WHERE "))).toBe(true);
    expect(reads.length).toBe(5);
    expect(reads.every((after) =>
      /^WHERE (status = 'pending'|status IN \('claimed', 'running'\)|consecutive_orphan_count > 0|rowid IN \(SELECT rowid $)/.test(after)))
      .toBe(true);
    expect(query.sql).toContain("FROM probe_job_counts");
  });

  it("both answer every StatsRow column", () => {
    expect(new Set(outputColumns(statsQuery(NOW, 5).sql))).toEqual(new Set(COLUMNS));
    expect(new Set(outputColumns(statsScanQuery(NOW, 5, "").sql))).toEqual(new Set(COLUMNS));
    expect(Object.keys(STATS_ROW_SHAPE).sort()).toEqual([...COLUMNS].sort());
  });

  it("the scan without a prefix reads every row once (the fallback while the triggers are missing)", () => {
    const query = statsScanQuery(NOW, 5, "");
    expect(query.params).toEqual({ now: NOW_TEXT, cap: 5 });
    expect(query.sql).toMatch(/FROM probe_jobs\nWHERE 1 = 1$/);
    expectPlaceholdersBound(query);
  });

  it.each(HOSTILE_PREFIXES)("the scan narrows to a bound prefix range per status, which the (status, probe_key) index serves (%j)", (prefix) => {
    const query = statsScanQuery(NOW, 3, prefix);
    expect(query.params).toEqual({ now: NOW_TEXT, cap: 3, prefix, prefixEnd: prefixUpperBound(prefix) });
    expect(query.sql).toMatch(
      /WHERE \(status IN \('pending', 'claimed', 'running', 'done', 'failed', 'cancelled'\)\) AND probe_key >= \{:prefix\} AND probe_key < \{:prefixEnd\}$/);
    if (prefix !== "{:now}") expect(query.sql).not.toContain(prefix);
    expectPlaceholdersBound(query);
  });
});
