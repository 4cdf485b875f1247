/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: the queue fields of docs/queue.md on probe_jobs (payload, due time,
// priority, retries, dead letter, dedupe, progress), the `cancelled` status,
// the claim order's index and the dedupe index.
// (PocketBase 0.23 to 0.40; the same step as pb_migrations/'s for 0.22.)
const STATUS_VALUES = ["pending", "claimed", "running", "done", "failed", "cancelled"];
const OLD_STATUS_VALUES = ["pending", "claimed", "running", "done", "failed"];
const NEW_FIELDS = [
  "payload",
  "run_at",
  "priority",
  "attempts",
  "max_attempts",
  "last_error",
  "dead_lettered_at",
  "unique_key",
  "progress",
  "enqueue_index",
];
// 0.22 sets no length limit on text; on 0.23+ max 0 means 5000 characters.
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

migrate(
  (app) => {
    const collection = app.findCollectionByNameOrId("probe_jobs");
    let changed = false;

    const text = (name) => new TextField({ name, required: false, max: NO_LIMIT });
    const date = (name) => new DateField({ name, required: false });
    const json = (name) => new JSONField({ name, required: false, maxSize: 2000000 });
    // number fields are never `required`: PocketBase treats 0 as blank.
    const count = (name) => new NumberField({ name, required: false, min: 0, onlyInt: true });
    const fields = [
      json("payload"),
      date("run_at"),
      new NumberField({ name: "priority", required: false, min: -1000, max: 1000, onlyInt: true }),
      count("attempts"),
      count("max_attempts"),
      text("last_error"),
      date("dead_lettered_at"),
      text("unique_key"),
      json("progress"),
      // the item's position within its enqueue call: the claim order's tie-breaker
      count("enqueue_index"),
    ];
    for (const field of fields) {
      if (collection.fields.getByName(field.name)) continue; // applied before
      collection.fields.add(field);
      changed = true;
    }

    // A field added without an id replaces the one of that name in place (same column).
    if (collection.fields.getByName("status").values.indexOf("cancelled") === -1) {
      collection.fields.add(new SelectField({ name: "status", required: true, maxSelect: 1, values: STATUS_VALUES }));
      changed = true;
    }

    if (collection.getIndex("idx_probe_jobs_status_created")) {
      collection.removeIndex("idx_probe_jobs_status_created");
      changed = true;
    }
    if (!collection.getIndex("idx_probe_jobs_claim_order")) {
      // claim-next: `status = 'pending' ORDER BY priority DESC, run_at, created,
      // enqueue_index, id` walks this index with no sort (priority is stored descending).
      // CREATE INDEX `idx_probe_jobs_claim_order` ON `probe_jobs` (`status`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`)
      collection.addIndex("idx_probe_jobs_claim_order", false, "`status`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`", "");
      changed = true;
    }
    if (!collection.getIndex("idx_probe_jobs_unique_key")) {
      // At most one non-terminal job per non-empty key. No parentheses: PocketBase's
      // index parser would cut the WHERE at them. A lookup must repeat these terms
      // word for word, or SQLite does not use the index.
      collection.addIndex(
        "idx_probe_jobs_unique_key",
        true,
        "`unique_key`",
        "unique_key != '' AND status != 'done' AND status != 'failed' AND status != 'cancelled'",
      );
      changed = true;
    }
    if (changed) app.save(collection);

    // Every row has a due time: rows from before this step are due since they
    // were created. New number columns need nothing: PocketBase adds them as
    // `NUMERIC DEFAULT 0 NOT NULL`, so existing rows already read 0.
    app.db().newQuery("UPDATE `probe_jobs` SET `run_at` = `created` WHERE `run_at` = '' OR `run_at` IS NULL").execute();
  },
  (app) => {
    let collection;
    try {
      collection = app.findCollectionByNameOrId("probe_jobs");
    } catch (_) {
      return; // the collection itself is already gone
    }

    // The old schema has no `cancelled`: such rows become `failed`, the other
    // terminal status it knows, rather than rows no old hook can handle.
    app.db().newQuery("UPDATE `probe_jobs` SET `status` = 'failed' WHERE `status` = 'cancelled'").execute();
    const status = collection.fields.getByName("status");
    if (status && status.values.indexOf("cancelled") !== -1) {
      collection.fields.add(new SelectField({ name: "status", required: true, maxSelect: 1, values: OLD_STATUS_VALUES }));
    }

    // PocketBase drops the old indexes before the columns, so the order is free.
    collection.removeIndex("idx_probe_jobs_claim_order");
    collection.removeIndex("idx_probe_jobs_unique_key");
    if (!collection.getIndex("idx_probe_jobs_status_created")) {
      // CREATE INDEX `idx_probe_jobs_status_created` ON `probe_jobs` (`status`, `created`)
      collection.addIndex("idx_probe_jobs_status_created", false, "`status`, `created`", "");
    }
    for (const name of NEW_FIELDS) {
      if (collection.fields.getByName(name)) collection.fields.removeByName(name);
    }
    app.save(collection);
  },
);
