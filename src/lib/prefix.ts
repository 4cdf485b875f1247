/**
 * Narrowing to a family of jobs by a probe_key prefix, as an exact key range
 * (the planner can use an index on it; LIKE could not). Its own module: the
 * dashboard builds the same range for its record-API filters.
 */
import type { WhereClause } from "./queries.js";

/**
 * How a prefix narrows a query: as a range the (status, probe_key) index
 * serves, or as a filter on rows another index yields in order (`+probe_key`
 * keeps SQLite off the probe_key index). claim-next picks per call
 * (familyProbeQuery); stats, sweep and the expired-lease query use the range.
 */
export type PrefixUse = "range" | "filter";

/**
 * Narrows a condition to jobs whose probe_key starts with a prefix ("" = all
 * jobs). Not LIKE: SQLite's LIKE ignores ASCII case ("A-" would match "a-1")
 * and needs % and _ escaped.
 */
export function withPrefix(sql: string, params: WhereClause["params"], probeKeyPrefix: string, use: PrefixUse = "range"): WhereClause {
  if (probeKeyPrefix === "") return { sql, params };
  params["prefix"] = probeKeyPrefix;
  const column = use === "range" ? "probe_key" : "+probe_key";
  let range = `${column} >= {:prefix}`;
  const end = prefixUpperBound(probeKeyPrefix);
  if (end !== null) {
    params["prefixEnd"] = end;
    range += ` AND ${column} < {:prefixEnd}`;
  }
  return { sql: `(${sql}) AND ${range}`, params };
}

/**
 * The least string above every string that starts with `prefix`, in code point
 * order (which is SQLite's BINARY order of UTF-8 text), or null when there is
 * none (a prefix of only U+10FFFF).
 */
export function prefixUpperBound(prefix: string): string | null {
  const points = Array.from(prefix, (ch) => ch.codePointAt(0) as number);
  while (points.length > 0 && points[points.length - 1] === 0x10ffff) points.pop();
  const last = points.pop();
  if (last === undefined) return null;
  // Surrogates are not characters of text: after U+D7FF comes U+E000.
  points.push(last === 0xd7ff ? 0xe000 : last + 1);
  return String.fromCodePoint(...points);
}
