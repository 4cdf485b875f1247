/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: the fencing token of the current claim (`leaseToken` in the API).
// Renew and release refuse a token that is not the current claim's, so a stale
// copy of a worker cannot act on a job that has been claimed again since.
// (PocketBase 0.23 to 0.40; the same step as pb_migrations/'s for 0.22.)
migrate(
  (app) => {
    const collection = app.findCollectionByNameOrId("probe_jobs");
    if (collection.fields.getByName("lease_token")) return; // applied before
    // No length limit, as on 0.22 (max 0 would mean 5000 characters).
    collection.fields.add(new TextField({ name: "lease_token", required: false, max: Number.MAX_SAFE_INTEGER }));
    app.save(collection);
  },
  (app) => {
    let collection;
    try {
      collection = app.findCollectionByNameOrId("probe_jobs");
    } catch (_) {
      return; // the collection itself is already gone
    }
    if (!collection.fields.getByName("lease_token")) return;
    collection.fields.removeByName("lease_token");
    app.save(collection);
  },
);
