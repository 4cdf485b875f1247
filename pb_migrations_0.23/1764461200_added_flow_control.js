/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: flow control (docs/flow-control.md). probe_jobs gains group_key,
// timeout_seconds and start_by; probe_schedules gains queue and group_key;
// the collection probe_flow keeps each scope's settings (superusers only,
// like probe_jobs); the plain table probe_flow_claims is the rate window's
// log (src/lib/flow.ts). Idempotent: each step checks first.
// (PocketBase 0.23 to 0.40; the same step as pb_migrations/'s for 0.22.)
// 0.22 sets no length limit on text; on 0.23+ max 0 means 5000 characters.
const NO_LIMIT = Number.MAX_SAFE_INTEGER;
// CREATE INDEX `idx_probe_jobs_group` ON `probe_jobs` (`group_key`, `status`, `lease_expires_at`) WHERE group_key != ''
// CREATE INDEX `idx_probe_jobs_start_by` ON `probe_jobs` (`status`, `start_by`) WHERE start_by != ''
// CREATE INDEX `idx_probe_jobs_pending_group` ON `probe_jobs` (`queue`, `group_key`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`) WHERE status = 'pending'
const INDEXES = [
  // A group's held and due counts: a range of this index whatever other groups hold.
  ["idx_probe_jobs_group", "`group_key`, `status`, `lease_expires_at`", "group_key != ''"],
  // The maintenance tick's start_by failures, without a scan of other rows.
  ["idx_probe_jobs_start_by", "`status`, `start_by`", "start_by != ''"],
  // claim-next around a held-back group's backlog: a queue's pending rows group by group, each in claim order.
  ["idx_probe_jobs_pending_group", "`queue`, `group_key`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`", "status = 'pending'"],
];
const CLAIMS_SETUP = [
  "CREATE TABLE IF NOT EXISTS probe_flow_claims (scope TEXT NOT NULL, name TEXT NOT NULL, at INTEGER NOT NULL, expires INTEGER NOT NULL)",
  "CREATE INDEX IF NOT EXISTS idx_probe_flow_claims_scope ON probe_flow_claims (scope, name, at)",
  "CREATE INDEX IF NOT EXISTS idx_probe_flow_claims_expires ON probe_flow_claims (expires)",
];

migrate(
  (app) => {
    const jobs = app.findCollectionByNameOrId("probe_jobs");
    let changed = false;
    if (!jobs.fields.getByName("group_key")) {
      jobs.fields.add(new TextField({ name: "group_key", required: false, max: NO_LIMIT }));
      changed = true;
    }
    if (!jobs.fields.getByName("timeout_seconds")) {
      jobs.fields.add(new NumberField({ name: "timeout_seconds", required: false, min: 0, onlyInt: true }));
      changed = true;
    }
    if (!jobs.fields.getByName("start_by")) {
      jobs.fields.add(new DateField({ name: "start_by", required: false }));
      changed = true;
    }
    for (const [name, columns, where] of INDEXES) {
      if (!jobs.getIndex(name)) {
        jobs.addIndex(name, false, columns, where);
        changed = true;
      }
    }
    if (changed) app.save(jobs);

    const schedules = app.findCollectionByNameOrId("probe_schedules");
    let schedulesChanged = false;
    for (const name of ["queue", "group_key"]) {
      if (!schedules.fields.getByName(name)) {
        schedules.fields.add(new TextField({ name, required: false, max: NO_LIMIT }));
        schedulesChanged = true;
      }
    }
    if (schedulesChanged) app.save(schedules);

    let hasFlow = true;
    try {
      app.findCollectionByNameOrId("probe_flow");
    } catch (_) {
      hasFlow = false;
    }
    if (!hasFlow) {
      app.save(new Collection({
        name: "probe_flow",
        type: "base",
        system: false,
        fields: [
          // "queue" or "group"
          { name: "scope", type: "text", required: true, max: NO_LIMIT },
          { name: "name", type: "text", required: true, max: NO_LIMIT },
          { name: "paused", type: "bool", required: false },
          // 0: unset (number fields are never `required`: PocketBase treats 0 as blank)
          { name: "concurrency", type: "number", required: false, min: 0, onlyInt: true },
          { name: "rate_limit", type: "number", required: false, min: 0, onlyInt: true },
          { name: "rate_period", type: "number", required: false, min: 0, onlyInt: true },
          { name: "parked_until", type: "date", required: false },
          // 0.22 gave every collection these; 0.23+ only declared autodate fields.
          { name: "created", type: "autodate", onCreate: true, onUpdate: false },
          { name: "updated", type: "autodate", onCreate: true, onUpdate: true },
        ],
        indexes: [
          "CREATE UNIQUE INDEX `idx_probe_flow_scope` ON `probe_flow` (`scope`, `name`)",
          // claim-next's paused and parked scopes (src/lib/flow.ts stoppedScopesQuery), without a scan
          "CREATE INDEX `idx_probe_flow_parked` ON `probe_flow` (`parked_until`) WHERE parked_until != ''",
          "CREATE INDEX `idx_probe_flow_paused` ON `probe_flow` (`scope`, `name`) WHERE paused = 1",
        ],
        listRule: null,
        viewRule: null,
        createRule: null,
        updateRule: null,
        deleteRule: null,
      }));
    }
    for (const statement of CLAIMS_SETUP) app.db().newQuery(statement).execute();
  },
  (app) => {
    app.db().newQuery("DROP TABLE IF EXISTS probe_flow_claims").execute();
    try {
      app.delete(app.findCollectionByNameOrId("probe_flow"));
    } catch (_) {
      // already gone
    }
    try {
      const schedules = app.findCollectionByNameOrId("probe_schedules");
      for (const name of ["queue", "group_key"]) if (schedules.fields.getByName(name)) schedules.fields.removeByName(name);
      app.save(schedules);
    } catch (_) {
      // already gone
    }
    let jobs;
    try {
      jobs = app.findCollectionByNameOrId("probe_jobs");
    } catch (_) {
      return;
    }
    for (const [name] of INDEXES) jobs.removeIndex(name);
    for (const name of ["group_key", "timeout_seconds", "start_by"]) if (jobs.fields.getByName(name)) jobs.fields.removeByName(name);
    app.save(jobs);
  },
);
