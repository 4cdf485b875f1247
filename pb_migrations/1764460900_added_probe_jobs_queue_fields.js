/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: the queue fields of docs/queue.md on probe_jobs (payload, due time,
// priority, retries, dead letter, dedupe, progress), the `cancelled` status,
// the claim order's index and the dedupe index (PocketBase 0.22).
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
const OLD_ORDER_INDEX = "CREATE INDEX `idx_probe_jobs_status_created` ON `probe_jobs` (`status`, `created`)";
// claim-next: `status = 'pending' ORDER BY priority DESC, run_at, created,
// enqueue_index, id` walks this index with no sort (priority is stored descending).
const CLAIM_ORDER_INDEX =
  "CREATE INDEX `idx_probe_jobs_claim_order` ON `probe_jobs` (`status`, `priority` DESC, `run_at`, `created`, `enqueue_index`, `id`)";
// At most one non-terminal job per non-empty key. No parentheses: PocketBase's
// index parser would cut the WHERE at them. A lookup must repeat these terms
// word for word, or SQLite does not use the index.
const UNIQUE_KEY_INDEX =
  "CREATE UNIQUE INDEX `idx_probe_jobs_unique_key` ON `probe_jobs` (`unique_key`) " +
  "WHERE unique_key != '' AND status != 'done' AND status != 'failed' AND status != 'cancelled'";

const isIndex = (index, name) => index.indexOf("`" + name + "`") !== -1;
const hasIndex = (collection, name) => collection.indexes.some((index) => isIndex(index, name));

migrate(
  (db) => {
    const dao = new Dao(db);
    const collection = dao.findCollectionByNameOrId("probe_jobs");
    const schema = collection.schema;
    let changed = false;

    const text = (name) => ({ name, type: "text", required: false, options: { min: null, max: null, pattern: "" } });
    const date = (name) => ({ name, type: "date", required: false, options: { min: "", max: "" } });
    const json = (name) => ({ name, type: "json", required: false, options: { maxSize: 2000000 } });
    // number fields are never `required`: PocketBase treats 0 as blank.
    const count = (name) => ({ name, type: "number", required: false, options: { min: 0, max: null, noDecimal: true } });
    const fields = [
      json("payload"),
      date("run_at"),
      { name: "priority", type: "number", required: false, options: { min: -1000, max: 1000, noDecimal: true } },
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
      if (schema.getFieldByName(field.name)) continue; // applied before
      schema.addField(new SchemaField(field));
      changed = true;
    }

    // addField with the existing id replaces the field in place (same column).
    const status = schema.getFieldByName("status");
    if (status.options.values.indexOf("cancelled") === -1) {
      schema.addField(
        new SchemaField({
          id: status.id,
          name: "status",
          type: "select",
          required: true,
          options: { maxSelect: 1, values: STATUS_VALUES },
        }),
      );
      changed = true;
    }

    if (hasIndex(collection, "idx_probe_jobs_status_created")) {
      collection.indexes = collection.indexes.filter((index) => !isIndex(index, "idx_probe_jobs_status_created"));
      changed = true;
    }
    if (!hasIndex(collection, "idx_probe_jobs_claim_order")) {
      collection.indexes.push(CLAIM_ORDER_INDEX);
      changed = true;
    }
    if (!hasIndex(collection, "idx_probe_jobs_unique_key")) {
      collection.indexes.push(UNIQUE_KEY_INDEX);
      changed = true;
    }
    if (changed) dao.saveCollection(collection);

    // Every row has a due time: rows from before this step are due since they
    // were created. New number columns need nothing: PocketBase adds them as
    // `NUMERIC DEFAULT 0 NOT NULL`, so existing rows already read 0.
    db.newQuery("UPDATE `probe_jobs` SET `run_at` = `created` WHERE `run_at` = '' OR `run_at` IS NULL").execute();
  },
  (db) => {
    const dao = new Dao(db);
    let collection;
    try {
      collection = dao.findCollectionByNameOrId("probe_jobs");
    } catch (_) {
      return; // the collection itself is already gone
    }
    const schema = collection.schema;

    // The old schema has no `cancelled`: such rows become `failed`, the other
    // terminal status it knows, rather than rows no old hook can handle.
    db.newQuery("UPDATE `probe_jobs` SET `status` = 'failed' WHERE `status` = 'cancelled'").execute();
    const status = schema.getFieldByName("status");
    if (status && status.options.values.indexOf("cancelled") !== -1) {
      schema.addField(
        new SchemaField({
          id: status.id,
          name: "status",
          type: "select",
          required: true,
          options: { maxSelect: 1, values: OLD_STATUS_VALUES },
        }),
      );
    }

    // PocketBase drops the old indexes before the columns, so the order is free.
    collection.indexes = collection.indexes.filter(
      (index) => !isIndex(index, "idx_probe_jobs_claim_order") && !isIndex(index, "idx_probe_jobs_unique_key"),
    );
    if (!hasIndex(collection, "idx_probe_jobs_status_created")) collection.indexes.push(OLD_ORDER_INDEX);
    for (const name of NEW_FIELDS) {
      const field = schema.getFieldByName(name);
      if (field) schema.removeField(field.id);
    }
    return dao.saveCollection(collection);
  },
);
