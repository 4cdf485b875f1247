import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatPbDate } from "../../src/lib/lease";
import {
  CLAIM_ORDER,
  claimableWhere,
  expiredLeaseWhere,
  statsQuery,
  type WhereClause,
} from "../../src/lib/queries";
import { NOW } from "./support/rows";

const NOW_TEXT = formatPbDate(NOW);
const HOSTILE_PREFIXES = ["x' OR 1=1 --", "a%b_c\\d", "'; DROP TABLE probe_jobs; --", "{:now}"];

/** Every `{:name}` in the SQL is bound, and every bound value is used. */
function expectPlaceholdersBound({ sql, params }: WhereClause) {
  const used = [...sql.matchAll(/\{:(\w+)\}/g)].map((m) => m[1]).sort();
  expect([...new Set(used)]).toEqual(Object.keys(params).sort());
}

describe.each([
  ["claimableWhere", claimableWhere, "(status = 'pending' OR (status IN ('claimed', 'running') AND lease_expires_at < {:now}))"],
  ["expiredLeaseWhere", expiredLeaseWhere, "status IN ('claimed', 'running') AND lease_expires_at < {:now}"],
] as const)("%s", (_name, where, condition) => {
  it("binds now as PocketBase's date text, all jobs when the prefix is empty", () => {
    expect(where(NOW, "")).toEqual({ sql: condition, params: { now: NOW_TEXT } });
  });

  it("narrows to a prefix by comparing the key's first characters (not LIKE: it ignores case and needs escaping)", () => {
    const clause = where(NOW, "A%b_c\\d");
    expect(clause).toEqual({
      sql: `(${condition}) AND substr(probe_key, 1, length({:prefix})) = {:prefix}`,
      params: { now: NOW_TEXT, prefix: "A%b_c\\d" },
    });
  });

  it.each(HOSTILE_PREFIXES)("never puts a value into the SQL text (prefix %j)", (prefix) => {
    const clause = where(NOW, prefix);
    expect(clause.sql).not.toContain(NOW_TEXT);
    if (prefix !== "{:now}") expect(clause.sql).not.toContain(prefix);
    expect(clause.sql.match(/\{:\w+\}/g)).toEqual(["{:now}", "{:prefix}", "{:prefix}"]);
    expect(clause.params["prefix"]).toBe(prefix);
    expectPlaceholdersBound(clause);
  });

  it("does not carry one call's prefix into the next", () => {
    where(NOW, "a");
    expect(where(NOW, "").params).toEqual({ now: NOW_TEXT });
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

  it.each(HOSTILE_PREFIXES)("narrows to a bound prefix (%j)", (prefix) => {
    const query = statsQuery(NOW, 3, prefix);
    expect(query.params).toEqual({ now: NOW_TEXT, cap: 3, prefix });
    expect(query.sql).toMatch(/WHERE \(1 = 1\) AND substr\(probe_key, 1, length\(\{:prefix\}\)\) = \{:prefix\}$/);
    if (prefix !== "{:now}") expect(query.sql).not.toContain(prefix);
    expectPlaceholdersBound(query);
  });
});
