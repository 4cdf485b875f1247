/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: named queues (docs/flow-control.md "Fields on probe_jobs"): the `queue` field,
// backfilled to `default`, and the claim order's index within a queue, so a
// queue's claim stays index-backed whatever other queues hold (PocketBase 0.22).
// claim-next for queues: `queue = ? AND status = 'pending' ORDER BY priority
// DESC, run_at, created, enqueue_index, id` walks this index with no sort.
const QUEUE_CLAIM_INDEX =
  "CREATE INDEX `idx_probe_jobs_queue_claim` ON `probe_jobs` (`queue`, `status`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`)";

const isIndex = (index, name) => index.indexOf("`" + name + "`") !== -1;

migrate(
  (db) => {
    const dao = new Dao(db);
    const collection = dao.findCollectionByNameOrId("probe_jobs");
    let changed = false;
    if (!collection.schema.getFieldByName("queue")) {
      collection.schema.addField(
        new SchemaField({ name: "queue", type: "text", required: false, options: { min: null, max: null, pattern: "" } }),
      );
      changed = true;
    }
    if (!collection.indexes.some((index) => isIndex(index, "idx_probe_jobs_queue_claim"))) {
      collection.indexes.push(QUEUE_CLAIM_INDEX);
      changed = true;
    }
    if (changed) dao.saveCollection(collection);
    db.newQuery("UPDATE `probe_jobs` SET `queue` = 'default' WHERE `queue` = '' OR `queue` IS NULL").execute();
  },
  (db) => {
    const dao = new Dao(db);
    let collection;
    try {
      collection = dao.findCollectionByNameOrId("probe_jobs");
    } catch (_) {
      return; // the collection itself is already gone
    }
    collection.indexes = collection.indexes.filter((index) => !isIndex(index, "idx_probe_jobs_queue_claim"));
    const field = collection.schema.getFieldByName("queue");
    if (field) collection.schema.removeField(field.id);
    return dao.saveCollection(collection);
  },
);
