/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: periodic jobs (docs/queue.md). The server cron enqueues a probe_jobs row
// for each enabled schedule once per due minute. All API rules are null
// (superusers only), as on probe_jobs.
// (PocketBase 0.23 to 0.40; the same step as pb_migrations/'s for 0.22.)
migrate(
  (app) => {
    // Re-applying must not touch an existing collection or its data.
    try {
      app.findCollectionByNameOrId("probe_schedules");
      return;
    } catch (_) {
      // not there yet: create it below
    }

    // 0.22 sets no length limit on text; on 0.23+ max 0 means 5000 characters.
    const text = (name) => ({ name, type: "text", required: true, max: Number.MAX_SAFE_INTEGER });
    const collection = new Collection({
      name: "probe_schedules",
      type: "base",
      system: false,
      fields: [
        text("name"),
        text("probe_key"),
        // PocketBase's cron syntax, minute resolution
        text("cron"),
        { name: "payload", type: "json", required: false, maxSize: 2000000 },
        // number fields are never `required`: PocketBase treats 0 as blank.
        { name: "priority", type: "number", required: false, min: -1000, max: 1000, onlyInt: true },
        { name: "max_attempts", type: "number", required: false, min: 0, onlyInt: true },
        { name: "enabled", type: "bool", required: false },
        // the minute the server last enqueued for: its compare-and-set against double enqueues
        { name: "last_enqueued_for", type: "date", required: false },
        // 0.22 gave every collection these; 0.23+ only declared autodate fields.
        { name: "created", type: "autodate", onCreate: true, onUpdate: false },
        { name: "updated", type: "autodate", onCreate: true, onUpdate: true },
      ],
      indexes: ["CREATE UNIQUE INDEX `idx_probe_schedules_name` ON `probe_schedules` (`name`)"],
      listRule: null,
      viewRule: null,
      createRule: null,
      updateRule: null,
      deleteRule: null,
    });
    app.save(collection);
  },
  (app) => {
    let collection;
    try {
      collection = app.findCollectionByNameOrId("probe_schedules");
    } catch (_) {
      return; // already gone
    }
    app.delete(collection);
  },
);
