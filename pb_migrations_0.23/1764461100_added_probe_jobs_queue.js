/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: named queues (docs/flow-control.md "Fields on probe_jobs"): the `queue` field,
// backfilled to `default`, and the claim order's index within a queue, so a
// queue's claim stays index-backed whatever other queues hold.
// (PocketBase 0.23 to 0.40; the same step as pb_migrations/'s for 0.22.)
// 0.22 sets no length limit on text; on 0.23+ max 0 means 5000 characters.
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

migrate(
  (app) => {
    const collection = app.findCollectionByNameOrId("probe_jobs");
    let changed = false;
    if (!collection.fields.getByName("queue")) {
      collection.fields.add(new TextField({ name: "queue", required: false, max: NO_LIMIT }));
      changed = true;
    }
    if (!collection.getIndex("idx_probe_jobs_queue_claim")) {
      // claim-next for queues: `queue = ? AND status = 'pending' ORDER BY priority
      // DESC, run_at, created, enqueue_index, id` walks this index with no sort.
      // CREATE INDEX `idx_probe_jobs_queue_claim` ON `probe_jobs` (`queue`, `status`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`)
      collection.addIndex(
        "idx_probe_jobs_queue_claim", false, "`queue`, `status`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`", "",
      );
      changed = true;
    }
    if (changed) app.save(collection);
    app.db().newQuery("UPDATE `probe_jobs` SET `queue` = 'default' WHERE `queue` = '' OR `queue` IS NULL").execute();
  },
  (app) => {
    let collection;
    try {
      collection = app.findCollectionByNameOrId("probe_jobs");
    } catch (_) {
      return; // the collection itself is already gone
    }
    collection.removeIndex("idx_probe_jobs_queue_claim");
    if (collection.fields.getByName("queue")) collection.fields.removeByName("queue");
    app.save(collection);
  },
);
