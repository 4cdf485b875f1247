/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: periodic jobs (docs/queue.md). The server cron enqueues a probe_jobs row
// for each enabled schedule once per due minute (PocketBase 0.22). All API
// rules are null (admins only), as on probe_jobs.
migrate(
  (db) => {
    const dao = new Dao(db);
    // Re-applying must not touch an existing collection or its data.
    try {
      dao.findCollectionByNameOrId("probe_schedules");
      return;
    } catch (_) {
      // not there yet: create it below
    }

    const text = (name) => ({ name, type: "text", required: true, options: { min: null, max: null, pattern: "" } });
    const collection = new Collection({
      name: "probe_schedules",
      type: "base",
      system: false,
      schema: [
        text("name"),
        text("probe_key"),
        // PocketBase's cron syntax, minute resolution
        text("cron"),
        { name: "payload", type: "json", required: false, options: { maxSize: 2000000 } },
        // number fields are never `required`: PocketBase treats 0 as blank.
        { name: "priority", type: "number", required: false, options: { min: -1000, max: 1000, noDecimal: true } },
        { name: "max_attempts", type: "number", required: false, options: { min: 0, max: null, noDecimal: true } },
        { name: "enabled", type: "bool", required: false, options: {} },
        // the minute the server last enqueued for: its compare-and-set against double enqueues
        { name: "last_enqueued_for", type: "date", required: false, options: { min: "", max: "" } },
      ],
      indexes: ["CREATE UNIQUE INDEX `idx_probe_schedules_name` ON `probe_schedules` (`name`)"],
      listRule: null,
      viewRule: null,
      createRule: null,
      updateRule: null,
      deleteRule: null,
      options: {},
    });
    return dao.saveCollection(collection);
  },
  (db) => {
    const dao = new Dao(db);
    let collection;
    try {
      collection = dao.findCollectionByNameOrId("probe_schedules");
    } catch (_) {
      return; // already gone
    }
    return dao.deleteCollection(collection);
  },
);
