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
 * A second table, `probe_job_completions`, counts the jobs finished done and
 * failed per second of their finished_at, for GET /api/fleet/completions: its
 * cost follows the window's seconds, not the completions in it. The
 * maintenance tick keeps only the seconds the widest window can ask for.
 *
 * The migration (both lines, 1764461000_added_probe_job_counts.js) runs
 * JOB_COUNTS_SETUP word for word (test/unit/migrations-lines.test.ts checks
 * it); the maintenance tick re-runs it if the triggers are ever missing (a
 * restored or hand-edited database), rebuilding the counts in the same
 * transaction.
 */
import type { WhereClause } from "./queries.js";
import { COMPLETED_STATUSES, statusInSql } from "./job-schema.js";

export const JOB_COUNTS_TABLE = "probe_job_counts";
export const JOB_COMPLETIONS_TABLE = "probe_job_completions";

/** The triggers that keep the tables; stats and completions trust them only while all exist. */
export const JOB_COUNTS_TRIGGERS = [
  "probe_job_counts_on_insert",
  "probe_job_counts_on_update",
  "probe_job_counts_on_delete",
  "probe_job_completions_on_insert",
  "probe_job_completions_on_update",
] as const;
const JOB_COUNTS_TABLES = [JOB_COUNTS_TABLE, JOB_COMPLETIONS_TABLE] as const;

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

const [ON_INSERT, ON_UPDATE, ON_DELETE, COMPLETED_ON_INSERT, COMPLETED_ON_UPDATE] = JOB_COUNTS_TRIGGERS;

/** The whole second of a row's finished_at (PocketBase's layout), as SQL; NULL for text that is not a date. */
function finishedSecond(row: "NEW" | "probe_jobs"): string {
  const column = row === "NEW" ? "NEW.finished_at" : "finished_at";
  return `CAST(strftime('%s', substr(${column}, 1, 19)) AS INTEGER)`;
}

/** Whether a row just became done or failed at a readable finished_at: what the completions triggers count. */
const COUNTS_AS_COMPLETED = `${statusInSql(COMPLETED_STATUSES, "NEW.status")} AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL`;

const ADD_COMPLETION = `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) ` +
  `VALUES (${finishedSecond("NEW")}, NEW.status = 'done', NEW.status = 'failed') ` +
  "ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed;";
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
  // Completions are events, not rows: a job finished, retried and finished again counts twice, and deleting it later
  // takes nothing back.
  `CREATE TABLE IF NOT EXISTS ${JOB_COMPLETIONS_TABLE} (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_INSERT} AFTER INSERT ON probe_jobs WHEN ${COUNTS_AS_COMPLETED} ` +
    `BEGIN ${ADD_COMPLETION} END`,
  `CREATE TRIGGER IF NOT EXISTS ${COMPLETED_ON_UPDATE} AFTER UPDATE OF status ON probe_jobs ` +
    `WHEN OLD.status IS NOT NEW.status AND ${COUNTS_AS_COMPLETED} BEGIN ${ADD_COMPLETION} END`,
];

/** What the migration's down step and a repair run first: the triggers and the table gone. */
export const JOB_COUNTS_TEARDOWN: readonly string[] = [
  ...JOB_COUNTS_TRIGGERS.map((name) => `DROP TRIGGER IF EXISTS ${name}`),
  ...JOB_COUNTS_TABLES.map((name) => `DROP TABLE IF EXISTS ${name}`),
];

/**
 * How far back probe_job_completions is kept, seconds: the widest window
 * GET /api/fleet/completions takes (completions.ts MAX_WINDOW_SECONDS), and a
 * minute more for the bucket still filling. Here rather than imported, so
 * the migration's text stays this module's alone; completions.test.ts checks
 * they agree.
 */
export const JOB_COMPLETIONS_KEEP_SECONDS = 3600 + 60;

/** The counts recomputed from the rows (one pass; the migration and a repair run it once, in their transaction). */
export const JOB_COUNTS_REBUILD: readonly string[] = [
  `DELETE FROM ${JOB_COUNTS_TABLE}`,
  `INSERT INTO ${JOB_COUNTS_TABLE} (status, dead, tried, n) ` +
    "SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) " +
    "FROM probe_jobs GROUP BY 1, 2, 3",
  // The kept seconds from the rows (a range of the finished index): each finished row once.
  `DELETE FROM ${JOB_COMPLETIONS_TABLE}`,
  `INSERT INTO ${JOB_COMPLETIONS_TABLE} (second, done, failed) SELECT s, SUM(d), SUM(f) FROM ` +
    `(SELECT ${finishedSecond("probe_jobs")} AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs ` +
    `WHERE ${statusInSql(COMPLETED_STATUSES)} AND finished_at != '' AND ` +
    `finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-${JOB_COMPLETIONS_KEEP_SECONDS} seconds')) ` +
    "WHERE s IS NOT NULL GROUP BY s",
];

/** Deletes the completion seconds no window can ask for any more (the maintenance tick). */
export function pruneCompletionsStatement(nowMs: number): WhereClause {
  return {
    sql: `DELETE FROM ${JOB_COMPLETIONS_TABLE} WHERE second < {:before}`,
    params: { before: Math.floor(nowMs / 1000) - JOB_COMPLETIONS_KEEP_SECONDS },
  };
}

/** 1 when the table and every trigger exist (a read of sqlite_master: a few dozen rows). */
export const JOB_COUNTS_READY_SQL =
  `(SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'probe_jobs' AND type = 'trigger' AND name IN ` +
  `(${JOB_COUNTS_TRIGGERS.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TRIGGERS.length} ` +
  `AND (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ` +
  `(${JOB_COUNTS_TABLES.map((name) => `'${name}'`).join(", ")})) = ${JOB_COUNTS_TABLES.length}`;

export const JOB_COUNTS_READY_QUERY: WhereClause = { sql: `SELECT ${JOB_COUNTS_READY_SQL} AS ready`, params: {} };
export const JOB_COUNTS_READY_SHAPE = { ready: 0 };

/** The statements that put the counts right, in one transaction: drop, create, recount. */
export const JOB_COUNTS_REPAIR: readonly string[] = [...JOB_COUNTS_TEARDOWN, ...JOB_COUNTS_SETUP, ...JOB_COUNTS_REBUILD];

/** The sum of the buckets that a condition on (status, dead, tried) selects, as a scalar subquery. */
export function countsSum(condition: string): string {
  return `COALESCE((SELECT SUM(n) FROM ${JOB_COUNTS_TABLE} WHERE ${condition}), 0)`;
}
