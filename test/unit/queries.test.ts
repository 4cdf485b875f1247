import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatPbDate, LIVE_LEASE_SQL } from "../../src/lib/lease";
import {
  CLAIM_ORDER,
  expiredLeaseWhere,
  oldestFirst,
  pendingWhere,
  prefixUpperBound,
  statsQuery,
  type WhereClause,
} from "../../src/lib/queries";
import { NOW } from "./support/rows";

const NOW_TEXT = formatPbDate(NOW);
const HOSTILE_PREFIXES = ["x' OR 1=1 --", "a%b_c\\d", "'; DROP TABLE probe_jobs; --", "{:now}"];
/** Held, and not live by the one lease rule (its SQL half is tested against SQLite in the integration suite). */
const EXPIRED = `status IN ('claimed', 'running') AND NOT ${LIVE_LEASE_SQL}`;

/** Every `{:name}` in the SQL is bound, and every bound value is used. */
function expectPlaceholdersBound({ sql, params }: WhereClause) {
  const used = [...sql.matchAll(/\{:(\w+)\}/g)].map((m) => m[1]).sort();
  expect([...new Set(used)]).toEqual(Object.keys(params).sort());
}

/** SQLite's BINARY order of text: UTF-8 bytes, i.e. code points. */
const binaryLess = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0;

describe.each([
  ["pendingWhere", (prefix: string) => pendingWhere(prefix), "status = 'pending'", {}],
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

describe("oldestFirst", () => {
  it("merges both queries' candidates by created, then id, and keeps the limit", () => {
    const c = (id: string, created: string) => ({ id, created });
    const merged = oldestFirst([c("p2", "2026-01-02"), c("p1", "2026-01-01"), c("s2", "2026-01-01"), c("s1", "2026-01-03")], 3);
    expect(merged.map((x) => x.id)).toEqual(["p1", "s2", "p2"]);
  });

  it("does not reorder its input", () => {
    const input = [{ id: "b", created: "2" }, { id: "a", created: "1" }];
    oldestFirst(input, 2);
    expect(input.map((x) => x.id)).toEqual(["b", "a"]);
  });
});

describe("CLAIM_ORDER", () => {
  it("is oldest first, id breaking ties", () => {
    expect(CLAIM_ORDER).toEqual(["created ASC", "id ASC"]);
  });
});

describe("statsQuery", () => {
  it("binds now and the orphan cap, over all jobs", () => {
    const query = statsQuery(NOW, 5, "");
    expect(query.params).toEqual({ now: NOW_TEXT, cap: 5 });
    expect(query.sql).toMatch(/FROM probe_jobs\nWHERE 1 = 1$/);
    expect(query.sql).not.toContain(NOW_TEXT);
    expectPlaceholdersBound(query);
  });

  it("answers every StatsRow column", () => {
    const columns = [...statsQuery(NOW, 5, "").sql.matchAll(/ AS (\w+)/g)].map((m) => m[1]);
    expect(columns).toEqual([
      "pending", "claimed", "running", "done", "failed", "total", "oldest_pending", "expired_leases", "past_orphan_cap",
    ]);
  });

  it.each(HOSTILE_PREFIXES)("narrows to a bound prefix range (%j)", (prefix) => {
    const query = statsQuery(NOW, 3, prefix);
    expect(query.params).toEqual({ now: NOW_TEXT, cap: 3, prefix, prefixEnd: prefixUpperBound(prefix) });
    expect(query.sql).toMatch(/WHERE \(1 = 1\) AND probe_key >= \{:prefix\} AND probe_key < \{:prefixEnd\}$/);
    if (prefix !== "{:now}") expect(query.sql).not.toContain(prefix);
    expectPlaceholdersBound(query);
  });
});
