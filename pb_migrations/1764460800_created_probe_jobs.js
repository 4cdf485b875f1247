/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: the probe_jobs collection of the fleet protocol (PocketBase 0.22).
// All API rules are null (admins only): workers act as admins, and the only
// writes that must be atomic go through the /api/fleet/* transactions.
migrate(
  (db) => {
    const dao = new Dao(db);
    // Re-applying (or applying to an app that already has probe_jobs, say from
    // an earlier hand-made collection) must not touch the existing data.
    try {
      dao.findCollectionByNameOrId("probe_jobs");
      return;
    } catch (_) {
      // not there yet: create it below
    }

    const text = (name, required) => ({
      name,
      type: "text",
      required: !!required,
      options: { min: null, max: null, pattern: "" },
    });
    const date = (name) => ({ name, type: "date", required: false, options: { min: "", max: "" } });
    // number fields are never `required`: PocketBase treats 0 as blank.
    const count = (name) => ({
      name,
      type: "number",
      required: false,
      options: { min: 0, max: null, noDecimal: true },
    });

    const collection = new Collection({
      name: "probe_jobs",
      type: "base",
      system: false,
      schema: [
        text("probe_key", true),
        {
          name: "status",
          type: "select",
          required: true,
          options: { maxSelect: 1, values: ["pending", "claimed", "running", "done", "failed"] },
        },
        text("claimed_by"),
        date("lease_expires_at"),
        count("version"),
        date("claimed_at"),
        date("finished_at"),
        date("requeued_at"),
        count("reclaim_count"),
        count("consecutive_orphan_count"),
        { name: "result", type: "json", required: false, options: { maxSize: 2000000 } },
      ],
      indexes: [
        // the sweeper: held rows whose lease has passed
        "CREATE INDEX `idx_probe_jobs_status_lease` ON `probe_jobs` (`status`, `lease_expires_at`)",
        // workers: the oldest claimable jobs first
        "CREATE INDEX `idx_probe_jobs_status_created` ON `probe_jobs` (`status`, `created`)",
        // the harness: jobs of one probe
        "CREATE INDEX `idx_probe_jobs_probe_key` ON `probe_jobs` (`probe_key`)",
      ],
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
      collection = dao.findCollectionByNameOrId("probe_jobs");
    } catch (_) {
      return; // already gone
    }
    return dao.deleteCollection(collection);
  },
);
