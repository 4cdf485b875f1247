/**
 * SQL fragments the handlers run through PocketBase's query builder, kept here
 * (like pg-boss's SQL builders) so they are read and tested apart from the code
 * that runs them. Values travel as bound parameters, never in the SQL text.
 */
import { formatPbDate, LIVE_LEASE_SQL } from "./lease.js";

export interface WhereClause {
  sql: string;
  params: Record<string, string | number>;
}

/**
 * claim-next's candidates come from two queries: pending rows, served in order
 * by the (status, created) index, and held rows whose lease has passed, found
 * through (status, lease_expires_at) and sorted (held rows are about as many as
 * jobs in flight). One query with OR sorts every claimable row on each call
 * (8 ms at 100k rows, against 0.01 ms for the two). decideClaim re-checks every
 * row inside the transaction.
 */
export function pendingWhere(probeKeyPrefix: string): WhereClause {
  return withPrefix("status = 'pending'", {}, probeKeyPrefix);
}

/**
 * Held rows whose lease has passed or is unreadable (isClaimable's held half,
 * in SQL): stealable by claim-next, and the sweeper's work.
 */
const EXPIRED_LEASE_SQL = `status IN ('claimed', 'running') AND NOT ${LIVE_LEASE_SQL}`;

export function expiredLeaseWhere(nowMs: number, probeKeyPrefix: string): WhereClause {
  return withPrefix(EXPIRED_LEASE_SQL, { now: formatPbDate(nowMs) }, probeKeyPrefix);
}

/**
 * Narrows a condition to jobs whose probe_key starts with a prefix ("" = all
 * jobs), as a range the (status, probe_key) index serves. Not LIKE: SQLite's
 * LIKE ignores ASCII case ("A-" would match "a-1") and needs % and _ escaped.
 */
function withPrefix(sql: string, params: WhereClause["params"], probeKeyPrefix: string): WhereClause {
  if (probeKeyPrefix === "") return { sql, params };
  params["prefix"] = probeKeyPrefix;
  let range = "probe_key >= {:prefix}";
  const end = prefixUpperBound(probeKeyPrefix);
  if (end !== null) {
    params["prefixEnd"] = end;
    range += " AND probe_key < {:prefixEnd}";
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

/** One job by id. */
export function jobByIdWhere(jobId: string): WhereClause {
  return { sql: "id = {:id}", params: { id: jobId } };
}

/** A claim-next candidate: a row and what orders it. */
export interface Candidate {
  created: string;
  id: string;
}

/** The `limit` oldest of the candidates of both claim-next queries: by created, then id. */
export function oldestFirst<T extends Candidate>(candidates: T[], limit: number): T[] {
  return candidates
    .slice()
    .sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, limit);
}

/** Oldest first; id breaks ties between rows created in the same millisecond. */
export const CLAIM_ORDER = ["created ASC", "id ASC"] as const;

/**
 * Everything GET /api/fleet/stats reports, in one pass over probe_jobs. A pending
 * job waits from its creation or its last re-queue, whichever is later.
 */
export function statsQuery(nowMs: number, orphanCap: number, probeKeyPrefix: string): WhereClause {
  const scope = withPrefix("1 = 1", { now: formatPbDate(nowMs), cap: orphanCap }, probeKeyPrefix);
  return {
    sql: `SELECT
  COALESCE(SUM(status = 'pending'), 0) AS pending,
  COALESCE(SUM(status = 'claimed'), 0) AS claimed,
  COALESCE(SUM(status = 'running'), 0) AS running,
  COALESCE(SUM(status = 'done'), 0) AS done,
  COALESCE(SUM(status = 'failed'), 0) AS failed,
  COUNT(*) AS total,
  COALESCE(MIN(CASE WHEN status = 'pending' THEN MAX(created, COALESCE(requeued_at, '')) END), '') AS oldest_pending,
  COALESCE(SUM(${EXPIRED_LEASE_SQL}), 0) AS expired_leases,
  COALESCE(SUM(consecutive_orphan_count >= {:cap}), 0) AS past_orphan_cap
FROM probe_jobs
WHERE ${scope.sql}`,
    params: scope.params,
  };
}

/** The row statsQuery answers. */
export interface StatsRow {
  pending: number;
  claimed: number;
  running: number;
  done: number;
  failed: number;
  total: number;
  oldest_pending: string;
  expired_leases: number;
  past_orphan_cap: number;
}

/** statsQuery's columns, each with a value of its type (what the database layer reads them into). */
export const STATS_ROW_SHAPE: StatsRow = {
  pending: 0, claimed: 0, running: 0, done: 0, failed: 0, total: 0,
  oldest_pending: "", expired_leases: 0, past_orphan_cap: 0,
};
