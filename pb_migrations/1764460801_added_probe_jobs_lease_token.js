/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: the fencing token of the current claim (`leaseToken` in the API).
// Renew and release refuse a token that is not the current claim's, so a stale
// copy of a worker cannot act on a job that has been claimed again since.
migrate(
  (db) => {
    const dao = new Dao(db);
    const collection = dao.findCollectionByNameOrId("probe_jobs");
    if (collection.schema.getFieldByName("lease_token")) return; // applied before
    collection.schema.addField(
      new SchemaField({
        name: "lease_token",
        type: "text",
        required: false,
        options: { min: null, max: null, pattern: "" },
      }),
    );
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
    const field = collection.schema.getFieldByName("lease_token");
    if (!field) return;
    collection.schema.removeField(field.id);
    return dao.saveCollection(collection);
  },
);
