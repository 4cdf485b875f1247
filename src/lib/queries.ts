/**
 * SQL fragments the handlers run through PocketBase's query builder, kept here
 * (like pg-boss's SQL builders) so they are read and tested apart from the code
 * that runs them. Values travel as bound parameters, never in the SQL text.
 */
import { formatPbDate } from "./lease";

export interface WhereClause {
  sql: string;
  params: Record<string, string | number>;
}

/**
 * Claimable rows: pending, or held with a lease that has passed. Stored dates are
 * `YYYY-MM-DD HH:MM:SS.sssZ` text, which sorts as time; an empty lease sorts
 * first and so counts as expired, like an unreadable one. decideClaim re-checks
 * every row inside the transaction, so this only has to be a superset.
 */
export function claimableWhere(nowMs: number, probeKeyPrefix: string): WhereClause {
  return withPrefix(
    "(status = 'pending' OR (status IN ('claimed', 'running') AND lease_expires_at < {:now}))",
    { now: formatPbDate(nowMs) },
    probeKeyPrefix,
  );
}

/** Held rows whose lease has passed: the sweeper's work. */
export function expiredLeaseWhere(nowMs: number, probeKeyPrefix: string): WhereClause {
  return withPrefix(
    "status IN ('claimed', 'running') AND lease_expires_at < {:now}",
    { now: formatPbDate(nowMs) },
    probeKeyPrefix,
  );
}

/**
 * Narrows a condition to jobs whose probe_key starts with a prefix ("" = all
 * jobs). Not LIKE: SQLite's LIKE ignores ASCII case, so "A-" would match "a-1";
 * and comparing a substring needs no escaping of % and _.
 */
function withPrefix(sql: string, params: WhereClause["params"], probeKeyPrefix: string): WhereClause {
  if (probeKeyPrefix === "") return { sql, params };
  params["prefix"] = probeKeyPrefix;
  return { sql: `(${sql}) AND substr(probe_key, 1, length({:prefix})) = {:prefix}`, params };
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
  COALESCE(SUM(status IN ('claimed', 'running') AND lease_expires_at < {:now}), 0) AS expired_leases,
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
