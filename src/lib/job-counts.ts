/**
 * Exact job counts that cost the same at 1,000 rows and at 10,000,000: a small
 * table `probe_job_counts` holding how many probe_jobs rows sit in each bucket
 * (status, dead-lettered or not, tried or not), kept by SQLite triggers on
 * probe_jobs. A trigger runs inside the statement that changes the row, so
 * the counts commit or roll back with it: they stay exact across crashes,
 * retention deletes, record-API and admin-UI writes, and the bulk UPDATE of
 * the batch endpoints (which bypasses PocketBase's record hooks but not
 * SQLite's triggers). GET /api/fleet/stats reads them instead of scanning the
 * finished rows, which are what grows (docs/protocol-decisions.md, "Counts").
 *
 * The migration (both lines, 1764461000_added_probe_job_counts.js) runs
 * JOB_COUNTS_SETUP word for word (test/unit/migrations-lines.test.ts checks
 * it); the maintenance tick re-runs it if the triggers are ever missing (a
 * restored or hand-edited database), rebuilding the counts in the same
 * transaction.
 */
import type { WhereClause } from "./queries.js";

export const JOB_COUNTS_TABLE = "probe_job_counts";

/** The triggers that keep the table; stats trusts the counts only while all exist. */
export const JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
] as const;

/** A row's bucket, from NEW or OLD: its status, whether it is dead-lettered, whether it was ever claimed. */
function bucket(row: "NEW" | "OLD"): { status: string; dead: string; tried: string } {
  return {
    status: `COALESCE(${row}.status, '')`,
    dead: `(COALESCE(${row}.dead_lettered_at, '') != '')`,
    tried: `(COALESCE(${row}.attempts, 0) > 0)`,
  };
}

function addTo(row: "NEW" | "OLD"): string {
  const b = bucket(row);
  return `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) VALUES (${b.status}, ${b.dead}, ${b.tried}, 1) ` +
    "ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1;";
}

function takeFrom(row: "NEW" | "OLD"): string {
  const b = bucket(row);
  return `UPDATE ${JOB_COUNTS_TABLE} SET n = n - 1 WHERE status = ${b.status} AND dead = ${b.dead} AND tried = ${b.tried};`;
}

const [ON_INSERT, ON_UPDATE, ON_DELETE] = JOB_COUNTS_TRIGGERS;
const OLD_BUCKET = bucket("OLD");
const NEW_BUCKET = bucket("NEW");

/**
 * The table and its triggers, created if absent. The update trigger fires
 * only for statements that set one of the bucket's columns (a heartbeat's
 * bulk write sets none), and does nothing when the bucket did not change.
 */
export const JOB_COUNTS_SETUP: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ${JOB_COUNTS_TABLE} (status TEXT NOT NULL, dead INTEGER NOT NULL, ` +
    "tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID",
  `CREATE TRIGGER IF NOT EXISTS ${ON_INSERT} AFTER INSERT ON probe_jobs BEGIN ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_UPDATE} AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs ` +
    `WHEN ${OLD_BUCKET.status} != ${NEW_BUCKET.status} OR ${OLD_BUCKET.dead} != ${NEW_BUCKET.dead} ` +
    `OR ${OLD_BUCKET.tried} != ${NEW_BUCKET.tried} BEGIN ${takeFrom("OLD")} ${addTo("NEW")} END`,
  `CREATE TRIGGER IF NOT EXISTS ${ON_DELETE} AFTER DELETE ON probe_jobs BEGIN ${takeFrom("OLD")} END`,
];

/** What the migration's down step and a repair run first: the triggers and the table gone. */
export const JOB_COUNTS_TEARDOWN: readonly string[] = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  `DROP TABLE IF EXISTS ${JOB_COUNTS_TABLE}`,
];

/** The counts recomputed from the rows (one pass; the migration and a repair run it once, in their transaction). */
export const JOB_COUNTS_REBUILD: readonly string[] = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) ` +
    "SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) " +
    "FROM probe_jobs GROUP BY 1, 2, 3",
];

/** 1 when the table and every trigger exist (a read of sqlite_master: a few dozen rows). */
export const JOB_COUNTS_READY_SQL =
  `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN ` +
  `(${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} ` +
  `AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '${JOB_COUNTS_TABLE}') = 1`;

export const JOB_COUNTS_READY_QUERY: WhereClause = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
export const JOB_COUNTS_READY_SHAPE = { ready: 0 };

/** The statements that put the counts right, in one transaction: drop, create, recount. */
export const JOB_COUNTS_REPAIR: readonly string[] = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

/** The sum of the buckets that a condition on (status, dead, tried) selects, as a scalar subquery. */
export function countsSum(condition: string): string {
  return `COALESCE((SELECT SUM(n) FROM ${JOB_COUNTS_TABLE} WHERE ${condition}), 0)`;
}
