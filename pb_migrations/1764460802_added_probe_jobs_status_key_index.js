/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: an index for claim-next, sweep and stats narrowed to a probe_key
// prefix (`probe_key >= prefix AND probe_key < next`): without it a prefix query
// walks every pending row older than the family's own.
const INDEX = "CREATE INDEX `idx_probe_jobs_status_key` ON `probe_jobs` (`status`, `probe_key`)";

migrate(
  (db) => {
    const dao = new Dao(db);
    const collection = dao.findCollectionByNameOrId("probe_jobs");
    if (collection.indexes.some((index) => index.indexOf("idx_probe_jobs_status_key") !== -1)) return;
    collection.indexes.push(INDEX);
    return dao.saveCollection(collection);
  },
  (db) => {
    const dao = new Dao(db);
    let collection;
    try {
      collection = dao.findCollectionByNameOrId("probe_jobs");
    } catch (_) {
      return; // the collection itself is already gone
    }
    collection.indexes = collection.indexes.filter((index) => index.indexOf("idx_probe_jobs_status_key") === -1);
    return dao.saveCollection(collection);
  },
);
