/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: the probe_jobs collection of the fleet protocol, for PocketBase
// 0.23 to 0.40 (pb_migrations/ holds the same steps, under the same names, for
// 0.22). All API rules are null (superusers only): workers act as superusers,
// and the only writes that must be atomic go through the /api/fleet/* transactions.
migrate(
  (app) => {
    // Re-applying (or applying to an app that already has probe_jobs, say from
    // PocketBase's own upgrade of a 0.22 app) must not touch the existing data.
    try {
      app.findCollectionByNameOrId("probe_jobs");
      return;
    } catch (_) {
      // not there yet: create it below
    }

    // 0.22 sets no length limit on text; on 0.23+ max 0 means 5000 characters,
    // so the largest value PocketBase accepts stands for none.
    const text = (name, required) => ({ name, type: "text", required: !!required, max: Number.MAX_SAFE_INTEGER });
    const date = (name) => ({ name, type: "date", required: false });
    // number fields are never `required`: PocketBase treats 0 as blank.
    const count = (name) => ({ name, type: "number", required: false, min: 0, onlyInt: true });

    const collection = new Collection({
      name: "probe_jobs",
      type: "base",
      system: false,
      fields: [
        text("probe_key", true),
        {
          name: "status",
          type: "select",
          required: true,
          maxSelect: 1,
          values: ["pending", "claimed", "running", "done", "failed"],
        },
        text("claimed_by"),
        date("lease_expires_at"),
        count("version"),
        date("claimed_at"),
        date("finished_at"),
        date("requeued_at"),
        count("reclaim_count"),
        count("consecutive_orphan_count"),
        { name: "result", type: "json", required: false, maxSize: 2000000 },
        // 0.22 gave every collection these; 0.23+ only declared autodate fields
        // (claim-next orders by created, stats read it).
        { name: "created", type: "autodate", onCreate: true, onUpdate: false },
        { name: "updated", type: "autodate", onCreate: true, onUpdate: true },
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
    });
    app.save(collection);
  },
  (app) => {
    let collection;
    try {
      collection = app.findCollectionByNameOrId("probe_jobs");
    } catch (_) {
      return; // already gone
    }
    app.delete(collection);
  },
);
