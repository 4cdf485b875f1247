/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: what the batch endpoints (claim-next, heartbeat, complete, sweep)
// changed. They write probe_jobs rows with one SQL statement per batch, which
// PocketBase's realtime does not see, and save one record here per
// transaction instead: subscribers of probe_job_events learn every change.
// All API rules are null (superusers only), as on probe_jobs.
// (PocketBase 0.23 to 0.40; the same step as pb_migrations/'s for 0.22.)
migrate(
  (app) => {
    // Re-applying must not touch an existing collection or its data.
    try {
      app.findCollectionByNameOrId("probe_job_events");
      return;
    } catch (_) {
      // not there yet: create it below
    }
    const collection = new Collection({
      name: "probe_job_events",
      type: "base",
      system: false,
      fields: [
        // the endpoint that wrote the batch: claim-next, heartbeat, complete, sweep
        { name: "source", type: "text", required: false, max: Number.MAX_SAFE_INTEGER },
        // [{ id, probe_key, status, claimed_by, lease_expires_at, version }]: each job as written
        { name: "changes", type: "json", required: false, maxSize: 2000000 },
        // 0.22 gave every collection these; 0.23+ only declared autodate fields.
        { name: "created", type: "autodate", onCreate: true, onUpdate: false },
        { name: "updated", type: "autodate", onCreate: true, onUpdate: true },
      ],
      // retention deletes by age
      indexes: ["CREATE INDEX `idx_probe_job_events_created` ON `probe_job_events` (`created`)"],
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
      collection = app.findCollectionByNameOrId("probe_job_events");
    } catch (_) {
      return; // already gone
    }
    app.delete(collection);
  },
);
