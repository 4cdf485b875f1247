/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: no length limit on probe_jobs' text fields, as on 0.22. PocketBase
// 0.23's own upgrade of a 0.22 app turns them into text fields with max 0,
// which 0.23+ reads as 5000 characters: a claim by a longer workerId would then
// fail to save. A new app got these limits from the first migration already.
const NO_LIMIT = Number.MAX_SAFE_INTEGER;
const TEXT_FIELDS = ["probe_key", "claimed_by", "lease_token"];

migrate(
  (app) => {
    const collection = app.findCollectionByNameOrId("probe_jobs");
    let lifted = false;
    for (const name of TEXT_FIELDS) {
      const field = collection.fields.getByName(name);
      if (field && field.type() === "text" && field.max === 0) {
        field.max = NO_LIMIT;
        lifted = true;
      }
    }
    if (lifted) app.save(collection);
  },
  (app) => {
    // Nothing to undo: the fields may have had no limit since the first
    // migration, and a lower one could make stored rows fail to save.
  },
);
