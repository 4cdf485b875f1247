/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: what keeps a fleet's steady state cheap however many finished
// rows are retained (docs/protocol-decisions.md, "Counts" and "Retention"):
// - probe_job_counts, a table of exact counts per (status, dead-lettered,
//   tried), kept by SQLite triggers on probe_jobs in the same statement as
//   every write (record API, bulk batch writes, retention deletes alike);
//   GET /api/fleet/stats reads it instead of scanning; and
//   probe_job_completions, jobs finished done and failed per second, which
//   GET /api/fleet/completions reads. The statements are
//   src/lib/job-counts.ts's, word for word (test/unit/migrations-lines.test.ts).
// - an index on (status, finished_at) of finished rows only (a claim, which
//   leaves finished_at empty, does not touch it), which retention's deletes
//   and the completions chart read as ranges;
// - a partial index on rows with orphaned leases, for stats' past-orphan-cap count.
// (PocketBase 0.22; pb_migrations_0.23/ has the same step for 0.23 to 0.40.)
const JOB_COUNTS_SETUP = [
  "CREATE TABLE IF NOT EXISTS probe_job_counts (status TEXT NOT NULL, dead INTEGER NOT NULL, tried INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, dead, tried)) WITHOUT ROWID",
  "CREATE TRIGGER IF NOT EXISTS probe_job_counts_on_insert AFTER INSERT ON probe_jobs BEGIN INSERT INTO probe_job_counts (status, dead, tried, n) VALUES (COALESCE(NEW.status, ''), (COALESCE(NEW.dead_lettered_at, '') != ''), (COALESCE(NEW.attempts, 0) > 0), 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1; END",
  "CREATE TRIGGER IF NOT EXISTS probe_job_counts_on_update AFTER UPDATE OF status, dead_lettered_at, attempts ON probe_jobs WHEN COALESCE(OLD.status, '') != COALESCE(NEW.status, '') OR (COALESCE(OLD.dead_lettered_at, '') != '') != (COALESCE(NEW.dead_lettered_at, '') != '') OR (COALESCE(OLD.attempts, 0) > 0) != (COALESCE(NEW.attempts, 0) > 0) BEGIN UPDATE probe_job_counts SET n = n - 1 WHERE status = COALESCE(OLD.status, '') AND dead = (COALESCE(OLD.dead_lettered_at, '') != '') AND tried = (COALESCE(OLD.attempts, 0) > 0); INSERT INTO probe_job_counts (status, dead, tried, n) VALUES (COALESCE(NEW.status, ''), (COALESCE(NEW.dead_lettered_at, '') != ''), (COALESCE(NEW.attempts, 0) > 0), 1) ON CONFLICT (status, dead, tried) DO UPDATE SET n = n + 1; END",
  "CREATE TRIGGER IF NOT EXISTS probe_job_counts_on_delete AFTER DELETE ON probe_jobs BEGIN UPDATE probe_job_counts SET n = n - 1 WHERE status = COALESCE(OLD.status, '') AND dead = (COALESCE(OLD.dead_lettered_at, '') != '') AND tried = (COALESCE(OLD.attempts, 0) > 0); END",
  "CREATE TABLE IF NOT EXISTS probe_job_completions (second INTEGER PRIMARY KEY, done INTEGER NOT NULL, failed INTEGER NOT NULL)",
  "CREATE TRIGGER IF NOT EXISTS probe_job_completions_on_insert AFTER INSERT ON probe_jobs WHEN NEW.status IN ('done', 'failed') AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL BEGIN INSERT INTO probe_job_completions (second, done, failed) VALUES (CAST(strftime('%s', substr(NEW.finished_at, 1, 19)) AS INTEGER), NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed; END",
  "CREATE TRIGGER IF NOT EXISTS probe_job_completions_on_update AFTER UPDATE OF status ON probe_jobs WHEN OLD.status IS NOT NEW.status AND NEW.status IN ('done', 'failed') AND strftime('%s', substr(COALESCE(NEW.finished_at, ''), 1, 19)) IS NOT NULL BEGIN INSERT INTO probe_job_completions (second, done, failed) VALUES (CAST(strftime('%s', substr(NEW.finished_at, 1, 19)) AS INTEGER), NEW.status = 'done', NEW.status = 'failed') ON CONFLICT (second) DO UPDATE SET done = done + excluded.done, failed = failed + excluded.failed; END",
];
const JOB_COUNTS_REBUILD = [
  "DELETE FROM probe_job_counts",
  "INSERT INTO probe_job_counts (status, dead, tried, n) SELECT COALESCE(status, ''), COALESCE(dead_lettered_at, '') != '', COALESCE(attempts, 0) > 0, COUNT(*) FROM probe_jobs GROUP BY 1, 2, 3",
  "DELETE FROM probe_job_completions",
  "INSERT INTO probe_job_completions (second, done, failed) SELECT s, SUM(d), SUM(f) FROM (SELECT CAST(strftime('%s', substr(finished_at, 1, 19)) AS INTEGER) AS s, status = 'done' AS d, status = 'failed' AS f FROM probe_jobs WHERE status IN ('done', 'failed') AND finished_at != '' AND finished_at >= strftime('%Y-%m-%d %H:%M:%S', 'now', '-3660 seconds')) WHERE s IS NOT NULL GROUP BY s",
];
const JOB_COUNTS_TEARDOWN = [
  "DROP TRIGGER IF EXISTS probe_job_counts_on_insert",
  "DROP TRIGGER IF EXISTS probe_job_counts_on_update",
  "DROP TRIGGER IF EXISTS probe_job_counts_on_delete",
  "DROP TRIGGER IF EXISTS probe_job_completions_on_insert",
  "DROP TRIGGER IF EXISTS probe_job_completions_on_update",
  "DROP TABLE IF EXISTS probe_job_counts",
  "DROP TABLE IF EXISTS probe_job_completions",
];
const INDEXES = {
  idx_probe_jobs_finished: "CREATE INDEX `idx_probe_jobs_finished` ON `probe_jobs` (`status`, `finished_at`) WHERE finished_at != ''",
  idx_probe_jobs_orphaned: "CREATE INDEX `idx_probe_jobs_orphaned` ON `probe_jobs` (`consecutive_orphan_count`) WHERE consecutive_orphan_count > 0",
};

const isIndex = (index, name) => index.indexOf("`" + name + "`") !== -1;
const hasIndex = (collection, name) => collection.indexes.some((index) => isIndex(index, name));

migrate(
  (db) => {
    const dao = new Dao(db);
    const collection = dao.findCollectionByNameOrId("probe_jobs");
    let changed = false;
    for (const name of Object.keys(INDEXES)) {
      if (hasIndex(collection, name)) continue; // applied before
      collection.indexes.push(INDEXES[name]);
      changed = true;
    }
    if (changed) dao.saveCollection(collection);
    // Re-applying is harmless: IF NOT EXISTS, and the counts are recomputed from the rows.
    for (const statement of JOB_COUNTS_SETUP.concat(JOB_COUNTS_REBUILD)) db.newQuery(statement).execute();
  },
  (db) => {
    for (const statement of JOB_COUNTS_TEARDOWN) db.newQuery(statement).execute();
    const dao = new Dao(db);
    let collection;
    try {
      collection = dao.findCollectionByNameOrId("probe_jobs");
    } catch (_) {
      return; // the collection itself is already gone
    }
    collection.indexes = collection.indexes.filter((index) => !Object.keys(INDEXES).some((name) => isIndex(index, name)));
    return dao.saveCollection(collection);
  },
);
