/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: what the batch endpoints (claim-next, heartbeat, complete, sweep)
// changed. They write probe_jobs rows with one SQL statement per batch, which
// PocketBase's realtime does not see, and save one record here per
// transaction instead: subscribers of probe_job_events learn every change
// (PocketBase 0.22). All API rules are null (admins only), as on probe_jobs.
migrate(
  (db) => {
    const dao = new Dao(db);
    // Re-applying must not touch an existing collection or its data.
    try {
      dao.findCollectionByNameOrId("probe_job_events");
      return;
    } catch (_) {
      // not there yet: create it below
    }
    const collection = new Collection({
      name: "probe_job_events",
      type: "base",
      system: false,
      schema: [
        // the endpoint that wrote the batch: claim-next, heartbeat, complete, sweep
        { name: "source", type: "text", required: false, options: { min: null, max: null, pattern: "" } },
        // [{ id, probe_key, status, claimed_by, lease_expires_at, version }]: each job as written
        { name: "changes", type: "json", required: false, options: { maxSize: 2000000 } },
      ],
      // retention deletes by age
      indexes: ["CREATE INDEX `idx_probe_job_events_created` ON `probe_job_events` (`created`)"],
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
      collection = dao.findCollectionByNameOrId("probe_job_events");
    } catch (_) {
      return; // already gone
    }
    return dao.deleteCollection(collection);
  },
);
