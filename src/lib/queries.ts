/**
 * SQL fragments the handlers run through PocketBase's query builder, kept here
 * (like pg-boss's SQL builders) so they are read and tested apart from the code
 * that runs them. Values travel as bound parameters, never in the SQL text.
 */
import { countsSum, JOB_COUNTS_READY_SQL } from "./job-counts.js";
import { formatPbDate, LIVE_LEASE_SQL, UNREADABLE_LEASE_SQL } from "./lease.js";
import { DEFAULT_QUEUE } from "./queue-names.js";
import { JOB_STATUSES } from "./types.js";
import { withPrefix, type PrefixUse } from "./prefix.js";
import { STARTABLE_SQL } from "./flow.js";
import { HELD_STATUSES, LIVE_STATUSES, statusInSql, TERMINAL_STATUSES } from "./job-schema.js";


export interface WhereClause {
  sql: string;
  params: Record<string, string | number>;
}

/**
 * claim-next's candidates come from pending rows that are due and from held
 * rows whose lease has passed. Pending rows are read one priority level at a
 * time through the (status, priority, run_at, created, enqueue_index, id)
 * index: the highest level first (topPriorityQuery, then nextPriorityQuery),
 * and within a level the due rows are a range of that index, already in claim
 * order. One query ordered by priority would walk past every future-dated row
 * of the higher levels on each call. Held rows whose lease passed are few
 * (about the jobs in flight) and are sorted. decideClaim re-checks every row
 * inside the transaction.
 */
export function pendingDueWhere(
  priority: number, nowMs: number, probeKeyPrefix: string, use: PrefixUse = "filter", queue?: string, held: HeldBack = NONE_HELD,
): WhereClause {
  const params: WhereClause["params"] = { priority, now: formatPbDate(nowMs) };
  return withPrefix(`${queueTerm(queue, params)}status = 'pending' AND ${levelTerms(use, "priority = {:priority} AND run_at <= {:now}")} ` +
    `AND ${STARTABLE_SQL}${heldBackTerms(held, params)}`,
    params, probeKeyPrefix, use);
}

/**
 * The distinct groups ("" = none) of one queue's pending rows, one seek of
 * the pending-group index each (a skip-scan), at most {:groupLimit}: the
 * groups a held-back group's backlog is walked around (pendingDueByGroupWhere).
 */
function pendingGroupsCte(params: WhereClause["params"], queue: string, groupLimit: number): string {
  params["groupQueue"] = queue;
  params["groupLimit"] = groupLimit;
  const next = "SELECT group_key FROM probe_jobs WHERE status = 'pending' AND queue = {:groupQueue}";
  return `WITH RECURSIVE grp(k) AS (SELECT (${next} ORDER BY group_key LIMIT 1) ` +
    `UNION ALL SELECT (${next} AND group_key > grp.k ORDER BY group_key LIMIT 1) FROM grp WHERE grp.k IS NOT NULL LIMIT {:groupLimit})`;
}

/** How many groups (up to `limit`) one queue's pending rows are in; read as COUNT_SHAPE. */
export function pendingGroupCountQuery(queue: string, limit: number): WhereClause {
  const params: WhereClause["params"] = {};
  return { sql: `${pendingGroupsCte(params, queue, limit + 1)} SELECT COUNT(*) AS n FROM grp WHERE k IS NOT NULL`, params };
}
/** Groups in a queue's pending rows up to which claim-next walks a held-back group's backlog around, group by group. */
export const MAX_GROUP_WALK = 4096;

/**
 * pendingDueWhere for a call with held-back groups: the first `want` due
 * rows of each other group at this level (each a range of the pending-group
 * index, already in claim order), so a held-back group's backlog in front
 * costs one seek, not a walk of its rows (the claim index has no group).
 * The caller orders the union by LEVEL_ORDER. For queues of at most
 * MAX_GROUP_WALK groups.
 */
export function pendingDueByGroupWhere(
  priority: number, nowMs: number, probeKeyPrefix: string, queue: string, heldGroups: readonly string[], want: number,
): WhereClause {
  const params: WhereClause["params"] = { priority, now: formatPbDate(nowMs), groupWant: want };
  const held = heldGroups.map((group, i) => {
    params[`heldGroup${i}`] = group;
    return `{:heldGroup${i}}`;
  });
  const inGroup = withPrefix(
    `status = 'pending' AND queue = {:groupQueue} AND group_key = grp.k AND priority = {:priority} AND run_at <= {:now} AND ${STARTABLE_SQL}`,
    params, probeKeyPrefix, "filter");
  const cte = pendingGroupsCte(params, queue, MAX_GROUP_WALK + 1);
  return {
    sql: `id IN (${cte} SELECT r.id FROM grp, probe_jobs r WHERE grp.k IS NOT NULL AND grp.k NOT IN (${held.join(", ")}) ` +
      `AND r.id IN (SELECT id FROM probe_jobs WHERE ${inGroup.sql} ORDER BY ${LEVEL_ORDER.join(", ")} LIMIT {:groupWant}))`,
    params: inGroup.params,
  };
}

/**
 * Scopes flow control holds back for the rest of a claim-next call (paused,
 * parked, at a limit): their jobs are left out of the candidates, so they
 * never block other work (docs/flow-control.md: no head-of-line blocking).
 */
export interface HeldBack {
  queues: readonly string[];
  groups: readonly string[];
}
export const NONE_HELD: HeldBack = { queues: [], groups: [] };

function heldBackTerms(held: HeldBack, params: WhereClause["params"]): string {
  let terms = "";
  if (held.queues.length > 0) {
    const names = storedQueueValues(held.queues).map((queue, i) => {
      params[`heldQueue${i}`] = queue;
      return `{:heldQueue${i}}`;
    });
    terms += ` AND queue NOT IN (${names.join(", ")})`;
  }
  if (held.groups.length > 0) {
    const names = held.groups.map((group, i) => {
      params[`heldGroup${i}`] = group;
      return `{:heldGroup${i}}`;
    });
    terms += ` AND group_key NOT IN (${names.join(", ")})`;
  }
  return terms;
}

/**
 * Narrowing to one queue's rows, as stored (the caller asks for "" too for
 * the default queue): an equality the (queue, status, priority, ...) index
 * serves, so a queue's claim does not walk other queues' rows.
 */
function queueTerm(queue: string | undefined, params: WhereClause["params"]): string {
  if (queue === undefined) return "";
  params["queue"] = queue;
  return "queue = {:queue} AND ";
}

/** One queue's rows as stored ("" too for the default queue). */
function queueInTerm(queue: string, params: WhereClause["params"]): string {
  const names = storedQueueValues([queue]).map((value, i) => {
    params[`statsQueue${i}`] = value;
    return `{:statsQueue${i}}`;
  });
  return `queue IN (${names.join(", ")})`;
}

/**
 * The unfinished jobs per queue and status (Prometheus's per-queue gauges):
 * the live rows only, through the claim index that starts with status, so
 * the cost follows the backlog, not the finished rows. At most `limit` rows.
 */
export function liveCountsByQueueQuery(limit: number): WhereClause {
  return {
    sql: "SELECT CASE WHEN COALESCE(queue, '') = '' THEN {:defaultQueue} ELSE queue END AS queue, status, COUNT(*) AS n " +
      `FROM probe_jobs WHERE ${statusInSql(LIVE_STATUSES)} GROUP BY 1, 2 ORDER BY 1, 2 LIMIT {:limit}`,
    params: { defaultQueue: DEFAULT_QUEUE, limit },
  };
}
export const LIVE_COUNT_SHAPE = { queue: "", status: "", n: 0 };
/** Rows of liveCountsByQueueQuery a scrape reads at most (a queue has up to 3): the answer stays bounded. */
export const MAX_QUEUE_GAUGE_ROWS = 1500;

/** The stored values of some queues: the default queue is also a row's "" (docs/flow-control.md). */
export function storedQueueValues(queues: readonly string[]): string[] {
  return queues.indexOf(DEFAULT_QUEUE) === -1 ? queues.slice() : queues.concat([""]);
}

/**
 * With the prefix used as a range (a small family: see familyProbeQuery),
 * `+` keeps SQLite off the claim-order index, so it walks the family through
 * the (status, probe_key) index and sorts it.
 */
function levelTerms(use: PrefixUse, terms: string): string {
  return use === "range" ? terms.replace(/\b(priority|run_at) /g, "+$1 ") : terms;
}

/**
 * How claim-next narrows to a prefix: count the family's pending rows, up to
 * FAMILY_PROBE_LIMIT, through the (status, probe_key) index. A small family
 * is walked whole through that index ("range"); a large one is found by
 * walking the claim-order index and filtering ("filter"), where its rows come
 * soon. (Measured: filtering a 10-row family out of 100,000 due rows cost 23
 * ms a call; walking a 100,000-row family through the probe_key index cost
 * 2.5 ms per 10,000 rows.)
 */
export function familyProbeQuery(probeKeyPrefix: string): WhereClause {
  const family = withPrefix("status = 'pending'", {}, probeKeyPrefix);
  return {
    sql: `SELECT COUNT(*) AS n FROM (SELECT 1 FROM probe_jobs WHERE ${family.sql} LIMIT ${FAMILY_PROBE_LIMIT})`,
    params: family.params,
  };
}
export const FAMILY_PROBE_LIMIT = 5000;
export const FAMILY_PROBE_SHAPE = { n: 0 };

/** A priority level of pending rows: `priority` is its value when `found` is 1. */
export interface PriorityLevel {
  found: number;
  priority: number;
}
export const PRIORITY_LEVEL_SHAPE: PriorityLevel = { found: 0, priority: 0 };

/**
 * The highest priority among pending rows (due or not), or among those below
 * `below`. One MAX over the index: SQLite seeks it, it does not scan.
 */
export function topPriorityQuery(probeKeyPrefix: string, below?: number, use: PrefixUse = "filter", queue?: string): WhereClause {
  const params: WhereClause["params"] = below === undefined ? {} : { below };
  const pending = `${queueTerm(queue, params)}status = 'pending'`;
  const where = below === undefined
    ? withPrefix(pending, params, probeKeyPrefix, use)
    : withPrefix(`${pending} AND ${levelTerms(use, "priority < {:below}")}`, params, probeKeyPrefix, use);
  return {
    sql: `SELECT MAX(priority) IS NOT NULL AS found, COALESCE(MAX(priority), 0) AS priority FROM probe_jobs WHERE ${where.sql}`,
    params: where.params,
  };
}

/**
 * Within a priority level: due time, then age, then the item's position in its
 * enqueue call, then id. Records of one call share a due time and get
 * non-decreasing `created`; those saved in the same millisecond keep request
 * order by enqueue_index. (enqueue_index before created would interleave two
 * calls with the same due time.)
 */
export const LEVEL_ORDER = ["run_at ASC", "created ASC", "enqueue_index ASC", "id ASC"] as const;
/** The whole claim order (docs/queue.md): higher priority first, then LEVEL_ORDER. */
export const CLAIM_ORDER = ["priority DESC", ...LEVEL_ORDER] as const;

/** The partial index on held rows whose lease text is unreadable (UNREADABLE_LEASE_SQL); the migrations create UNREADABLE_LEASE_INDEX. */
export const UNREADABLE_LEASE_INDEX_NAME = "idx_probe_jobs_unreadable_lease";
export const UNREADABLE_LEASE_INDEX_COLUMNS = "`status`, `lease_expires_at`";
/** Its WHERE: a query repeats it word for word, or SQLite does not use the index. */
export const UNREADABLE_LEASE_INDEX_WHERE = `${statusInSql(HELD_STATUSES)} AND ${UNREADABLE_LEASE_SQL}`;
/** As sqlite_master keeps it. Made by raw SQL (the migrations, and the maintenance tick when missing): 0.22 cannot parse this WHERE among a collection's indexes. */
export const UNREADABLE_LEASE_INDEX =
  `CREATE INDEX \`${UNREADABLE_LEASE_INDEX_NAME}\` ON \`probe_jobs\` (${UNREADABLE_LEASE_INDEX_COLUMNS}) WHERE ${UNREADABLE_LEASE_INDEX_WHERE}`;
export const UNREADABLE_LEASE_INDEX_SETUP = UNREADABLE_LEASE_INDEX.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ");
/** Whether it exists, read as { n }. */
export const UNREADABLE_LEASE_INDEX_PRESENT: WhereClause = {
  sql: "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'index' AND name = {:name}",
  params: { name: UNREADABLE_LEASE_INDEX_NAME },
};

/**
 * Held rows whose lease has passed or is unreadable (isClaimable's held half,
 * in SQL): stealable by claim-next, and the sweeper's work. Read without the
 * live leases: the rows come from two index ranges, the readable leases up to
 * now (texts in the layout compare as times) and the unreadable ones (their
 * partial index), and are then judged by the rule itself. `+status` keeps
 * SQLite from walking the held rows by a status index instead.
 */
const EXPIRED_LEASE_SQL =
  `rowid IN (SELECT rowid FROM probe_jobs WHERE ${statusInSql(HELD_STATUSES)} AND lease_expires_at <= {:now} ` +
  `UNION ALL SELECT rowid FROM probe_jobs WHERE ${UNREADABLE_LEASE_INDEX_WHERE}) ` +
  `AND ${statusInSql(HELD_STATUSES, "+status")} AND NOT ${LIVE_LEASE_SQL}`;

export function expiredLeaseWhere(
  nowMs: number, probeKeyPrefix: string, queues: readonly string[] | null = null, held: HeldBack = NONE_HELD,
): WhereClause {
  const params: WhereClause["params"] = { now: formatPbDate(nowMs) };
  if (queues === null) return withPrefix(`${EXPIRED_LEASE_SQL}${heldBackTerms(held, params)}`, params, probeKeyPrefix);
  const names = storedQueueValues(queues).map((queue, i) => {
    params[`queue${i}`] = queue;
    return `{:queue${i}}`;
  });
  return withPrefix(`${EXPIRED_LEASE_SQL} AND queue IN (${names.join(", ")})${heldBackTerms(held, params)}`, params, probeKeyPrefix);
}

/** One job by id. */
export function jobByIdWhere(jobId: string): WhereClause {
  return { sql: "id = {:id}", params: { id: jobId } };
}

/** The jobs of some ids (a batch's rows, read with one query). */
export function jobsByIdsWhere(ids: readonly string[]): WhereClause {
  const params: WhereClause["params"] = {};
  const names = ids.map((id, i) => {
    params[`id${i}`] = id;
    return `{:id${i}}`;
  });
  return { sql: `id IN (${names.join(", ")})`, params };
}

/** A claim-next candidate: a row and what orders it. */
export interface Candidate {
  priority: number;
  run_at: string;
  enqueue_index: number;
  created: string;
  id: string;
}

/** CLAIM_ORDER as a comparison, for merging claim-next's two candidate lists. */
export function compareClaimOrder(a: Candidate, b: Candidate): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.run_at !== b.run_at) return a.run_at < b.run_at ? -1 : 1;
  if (a.created !== b.created) return a.created < b.created ? -1 : 1;
  if (a.enqueue_index !== b.enqueue_index) return a.enqueue_index - b.enqueue_index;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The first `limit` of the candidates in claim order. */
export function firstInClaimOrder<T extends Candidate>(candidates: T[], limit: number): T[] {
  return candidates.slice().sort(compareClaimOrder).slice(0, limit);
}

/**
 * A live (non-terminal) job holding a unique key. The terms repeat the
 * partial unique index's WHERE word for word, or SQLite would not use it.
 */
export function liveUniqueKeyQuery(uniqueKey: string): WhereClause {
  return {
    sql: `SELECT id, queue FROM probe_jobs WHERE unique_key = {:uniqueKey} AND ${LIVE_UNIQUE_KEY_SQL} LIMIT 1`,
    params: { uniqueKey },
  };
}
export const ID_SHAPE = { id: "" };
/** liveUniqueKeyQuery's columns: the job holding the key, and its queue as stored. */
export const LIVE_KEY_SHAPE = { id: "", queue: "" };

/** The partial unique index's condition (the migration creates it with this text). */
export const LIVE_UNIQUE_KEY_SQL = ["unique_key != ''", ...TERMINAL_STATUSES.map((s) => `status != '${s}'`)].join(" AND ");

/**
 * GET /api/fleet/stats without a prefix, in time that does not grow with the
 * finished rows (job-counts.ts): the counts by status, the total, retrying
 * and dead-lettered come from probe_job_counts; what depends on the clock
 * or the orphan cap is read from the live rows only, each through an index:
 * pending rows (the claim-order index, which starts with status), held rows,
 * and rows with orphaned leases (a partial index on consecutive_orphan_count
 * > 0, whose term is repeated word for word so SQLite uses it). A due pending
 * job waits from the latest of its creation, its last re-queue and its due
 * time. `counts_ready` is 0 when the counting triggers are missing: the
 * caller then answers from statsScanQuery instead (and the maintenance tick
 * repairs them).
 */
export function statsQuery(nowMs: number, orphanCap: number): WhereClause {
  const statusCounts = JOB_STATUSES.map((status) => `${countsSum(`status = '${status}'`)} AS ${status}`).join(",\n  ");
  return {
    sql: `SELECT
  ${statusCounts},
  ${countsSum("1 = 1")} AS total,
  ${countsSum("status = 'pending' AND tried = 1")} AS retrying,
  ${countsSum("dead = 1")} AS dead_lettered,
  live.scheduled AS scheduled,
  live.oldest_pending AS oldest_pending,
  (SELECT COUNT(*) FROM probe_jobs WHERE ${EXPIRED_LEASE_SQL}) AS expired_leases,
  (SELECT COUNT(*) FROM probe_jobs WHERE ${ORPHANED_SQL} AND consecutive_orphan_count >= {:cap}) AS past_orphan_cap,
  ${JOB_COUNTS_READY_SQL} AS counts_ready
FROM (SELECT COALESCE(SUM(run_at > {:now}), 0) AS scheduled,
    COALESCE(MIN(CASE WHEN run_at <= {:now} THEN MAX(created, COALESCE(requeued_at, ''), run_at) END), '') AS oldest_pending
  FROM probe_jobs WHERE status = 'pending') AS live`,
    params: { now: formatPbDate(nowMs), cap: orphanCap },
  };
}

/** The partial index on orphaned rows (the migration creates it with this text as its WHERE). */
export const ORPHANED_SQL = "consecutive_orphan_count > 0";
/**
 * The partial (status, finished_at) index's WHERE: finished rows only, so the
 * claims and renews of the hot path never touch it. A query repeats this term
 * word for word, or SQLite does not use the index (retention, completions).
 */
export const FINISHED_SQL = "finished_at != ''";

/**
 * The same numbers by reading the rows: for a probe_key prefix (a range of
 * the (status, probe_key) index per status, so the cost follows the family,
 * not the table), and as the fallback while the counting triggers are
 * missing (every row, once).
 */
export function statsScanQuery(nowMs: number, orphanCap: number, probeKeyPrefix: string, queue: string | null = null): WhereClause {
  const statuses = JOB_STATUSES.map((status) => `'${status}'`).join(", ");
  const params: WhereClause["params"] = { now: formatPbDate(nowMs), cap: orphanCap };
  // One queue (docs/flow-control.md): a range of its claim index per status, so the cost follows the queue, not the table.
  const inQueue = queue === null ? "" : `${queueInTerm(queue, params)} AND `;
  const scope = probeKeyPrefix === "" && queue === null
    ? { sql: "1 = 1", params }
    : withPrefix(`${inQueue}status IN (${statuses})`, params, probeKeyPrefix, queue === null ? "range" : "filter");
  const statusCounts = JOB_STATUSES.map((status) => `COALESCE(SUM(status = '${status}'), 0) AS ${status}`).join(",\n  ");
  return {
    sql: `SELECT
  ${statusCounts},
  COUNT(*) AS total,
  COALESCE(SUM(status = 'pending' AND run_at > {:now}), 0) AS scheduled,
  COALESCE(SUM(status = 'pending' AND attempts > 0), 0) AS retrying,
  COALESCE(SUM(COALESCE(dead_lettered_at, '') != ''), 0) AS dead_lettered,
  COALESCE(MIN(CASE WHEN status = 'pending' AND run_at <= {:now}
    THEN MAX(created, COALESCE(requeued_at, ''), run_at) END), '') AS oldest_pending,
  COALESCE(SUM(${EXPIRED_LEASE_SQL}), 0) AS expired_leases,
  COALESCE(SUM(consecutive_orphan_count >= {:cap}), 0) AS past_orphan_cap,
  1 AS counts_ready
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
  cancelled: number;
  total: number;
  scheduled: number;
  retrying: number;
  dead_lettered: number;
  oldest_pending: string;
  expired_leases: number;
  past_orphan_cap: number;
  /** 1 when the numbers are to be trusted; 0: statsQuery found the counting triggers missing. */
  counts_ready: number;
}

/** statsQuery's columns, each with a value of its type (what the database layer reads them into). */
export const STATS_ROW_SHAPE: StatsRow = {
  pending: 0, claimed: 0, running: 0, done: 0, failed: 0, cancelled: 0, total: 0,
  scheduled: 0, retrying: 0, dead_lettered: 0, oldest_pending: "", expired_leases: 0, past_orphan_cap: 0,
  counts_ready: 0,
};
