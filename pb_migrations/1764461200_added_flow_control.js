/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: flow control (docs/flow-control.md) on PocketBase 0.22. probe_jobs gains
// group_key, timeout_seconds and start_by; probe_schedules gains queue and
// group_key; the collection probe_flow keeps each scope's settings (admins
// only, like probe_jobs); the plain table probe_flow_claims is the rate
// window's log (src/lib/flow.ts). Idempotent: each step checks first.
const INDEXES = {
  // A group's held and due counts: a range of this index whatever other groups hold.
  idx_probe_jobs_group: "CREATE INDEX `idx_probe_jobs_group` ON `probe_jobs` (`group_key`, `status`, `lease_expires_at`) WHERE group_key != ''",
  // The maintenance tick's start_by failures, without a scan of other rows.
  idx_probe_jobs_start_by: "CREATE INDEX `idx_probe_jobs_start_by` ON `probe_jobs` (`status`, `start_by`) WHERE start_by != ''",
  // claim-next around a held-back group's backlog: a queue's pending rows group by group, each in claim order.
  idx_probe_jobs_pending_group:
    "CREATE INDEX `idx_probe_jobs_pending_group` ON `probe_jobs` (`queue`, `group_key`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`) WHERE status = 'pending'",
};
const CLAIMS_SETUP = [
  "CREATE TABLE IF NOT EXISTS probe_flow_claims (scope TEXT NOT NULL, name TEXT NOT NULL, at INTEGER NOT NULL, expires INTEGER NOT NULL)",
  "CREATE INDEX IF NOT EXISTS idx_probe_flow_claims_scope ON probe_flow_claims (scope, name, at)",
  "CREATE INDEX IF NOT EXISTS idx_probe_flow_claims_expires ON probe_flow_claims (expires)",
];

const isIndex = (index, name) => index.indexOf("`" + name + "`") !== -1;
const text = (name) => new SchemaField({ name, type: "text", required: false, options: { min: null, max: null, pattern: "" } });

migrate(
  (db) => {
    const dao = new Dao(db);
    const jobs = dao.findCollectionByNameOrId("probe_jobs");
    let changed = false;
    if (!jobs.schema.getFieldByName("group_key")) {
      jobs.schema.addField(text("group_key"));
      changed = true;
    }
    if (!jobs.schema.getFieldByName("timeout_seconds")) {
      jobs.schema.addField(new SchemaField({
        name: "timeout_seconds", type: "number", required: false, options: { min: 0, max: null, noDecimal: true },
      }));
      changed = true;
    }
    if (!jobs.schema.getFieldByName("start_by")) {
      jobs.schema.addField(new SchemaField({ name: "start_by", type: "date", required: false, options: { min: "", max: "" } }));
      changed = true;
    }
    for (const name in INDEXES) {
      if (!jobs.indexes.some((index) => isIndex(index, name))) {
        jobs.indexes.push(INDEXES[name]);
        changed = true;
      }
    }
    if (changed) dao.saveCollection(jobs);

    const schedules = dao.findCollectionByNameOrId("probe_schedules");
    let schedulesChanged = false;
    for (const name of ["queue", "group_key"]) {
      if (!schedules.schema.getFieldByName(name)) {
        schedules.schema.addField(text(name));
        schedulesChanged = true;
      }
    }
    if (schedulesChanged) dao.saveCollection(schedules);

    let hasFlow = true;
    try {
      dao.findCollectionByNameOrId("probe_flow");
    } catch (_) {
      hasFlow = false;
    }
    if (!hasFlow) {
      dao.saveCollection(new Collection({
        name: "probe_flow",
        type: "base",
        system: false,
        schema: [
          // "queue" or "group"
          { name: "scope", type: "text", required: true, options: { min: null, max: null, pattern: "" } },
          { name: "name", type: "text", required: true, options: { min: null, max: null, pattern: "" } },
          { name: "paused", type: "bool", required: false, options: {} },
          // 0: unset (number fields are never `required`: PocketBase treats 0 as blank)
          { name: "concurrency", type: "number", required: false, options: { min: 0, max: null, noDecimal: true } },
          { name: "rate_limit", type: "number", required: false, options: { min: 0, max: null, noDecimal: true } },
          { name: "rate_period", type: "number", required: false, options: { min: 0, max: null, noDecimal: true } },
          { name: "parked_until", type: "date", required: false, options: { min: "", max: "" } },
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
        options: {},
      }));
    }
    for (const statement of CLAIMS_SETUP) db.newQuery(statement).execute();
  },
  (db) => {
    const dao = new Dao(db);
    db.newQuery("DROP TABLE IF EXISTS probe_flow_claims").execute();
    try {
      dao.deleteCollection(dao.findCollectionByNameOrId("probe_flow"));
    } catch (_) {
      // already gone
    }
    try {
      const schedules = dao.findCollectionByNameOrId("probe_schedules");
      for (const name of ["queue", "group_key"]) {
        const field = schedules.schema.getFieldByName(name);
        if (field) schedules.schema.removeField(field.id);
      }
      dao.saveCollection(schedules);
    } catch (_) {
      // already gone
    }
    let jobs;
    try {
      jobs = dao.findCollectionByNameOrId("probe_jobs");
    } catch (_) {
      return;
    }
    jobs.indexes = jobs.indexes.filter((index) => !Object.keys(INDEXES).some((name) => isIndex(index, name)));
    for (const name of ["group_key", "timeout_seconds", "start_by"]) {
      const field = jobs.schema.getFieldByName(name);
      if (field) jobs.schema.removeField(field.id);
    }
    return dao.saveCollection(jobs);
  },
);
