/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: an index for claim-next, sweep and stats narrowed to a probe_key
// prefix (`probe_key >= prefix AND probe_key < next`): without it a prefix query
// walks every pending row older than the family's own.
// (PocketBase 0.23 to 0.40; the same step as pb_migrations/'s for 0.22.)
const INDEX_NAME = "idx_probe_jobs_status_key";

migrate(
  (app) => {
    const collection = app.findCollectionByNameOrId("probe_jobs");
    if (collection.getIndex(INDEX_NAME)) return; // applied before
    // CREATE INDEX `idx_probe_jobs_status_key` ON `probe_jobs` (`status`, `probe_key`)
    collection.addIndex(INDEX_NAME, false, "`status`, `probe_key`", "");
    app.save(collection);
  },
  (app) => {
    let collection;
    try {
      collection = app.findCollectionByNameOrId("probe_jobs");
    } catch (_) {
      return; // the collection itself is already gone
    }
    if (!collection.getIndex(INDEX_NAME)) return;
    collection.removeIndex(INDEX_NAME);
    app.save(collection);
  },
);
