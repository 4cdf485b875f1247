/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: the expired leases without reading the live ones (issue 21). A
// partial index holds the held rows whose lease text is unreadable (never live:
// src/lib/lease.ts UNREADABLE_LEASE_SQL); with the (status, lease_expires_at)
// index's range up to now, claim-next, the sweeper and stats find every
// expired lease in two index ranges (src/lib/queries.ts EXPIRED_LEASE_SQL),
// whatever the number of live ones. Made by raw SQL, as the counting
// triggers are, and not listed in the collection's indexes: 0.22 cannot
// parse a WHERE with parentheses there. Collection saves leave it alone (they
// drop and make only the listed ones); the maintenance tick makes it again if
// it is ever missing. The text is src/lib/queries.ts UNREADABLE_LEASE_INDEX
// (test/unit/migrations-lines.test.ts checks).
// (PocketBase 0.23 to 0.40; the same step as pb_migrations/'s for 0.22.)
const SETUP = "CREATE INDEX IF NOT EXISTS `idx_probe_jobs_unreadable_lease` ON `probe_jobs` (`status`, `lease_expires_at`) WHERE status IN ('claimed', 'running') AND NOT COALESCE(lease_expires_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z' AND strftime('%Y-%m-%d %H:%M:%S', substr(lease_expires_at, 1, 19), '+0 seconds') = substr(lease_expires_at, 1, 19), 0)";

migrate(
  (app) => {
    app.db().newQuery(SETUP).execute();
  },
  (app) => {
    app.db().newQuery("DROP INDEX IF EXISTS idx_probe_jobs_unreadable_lease").execute();
  },
);
