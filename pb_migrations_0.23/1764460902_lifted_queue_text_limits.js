/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: no length limit on the queue's text fields, as on 0.22 (see
// 1764460803, which does the same for probe_jobs' first text fields). An app
// that applied 1764460900/1764460901 on 0.22 does not run them again on 0.23+,
// and PocketBase's own upgrade turns their text fields into max 0, which 0.23+
// reads as 5000 characters: a longer worker error would then fail the release.
// A new app got these limits from those migrations already.
const NO_LIMIT = Number.MAX_SAFE_INTEGER;
const TEXT_FIELDS = {
  probe_jobs: ["last_error", "unique_key"],
  probe_schedules: ["name", "probe_key", "cron"],
};

migrate(
  (app) => {
    for (const name of Object.keys(TEXT_FIELDS)) {
      let collection;
      try {
        collection = app.findCollectionByNameOrId(name);
      } catch (_) {
        continue;
      }
      let lifted = false;
      for (const fieldName of TEXT_FIELDS[name]) {
        const field = collection.fields.getByName(fieldName);
        if (field && field.type() === "text" && field.max === 0) {
          field.max = NO_LIMIT;
          lifted = true;
        }
      }
      if (lifted) app.save(collection);
    }
  },
  (app) => {
    // Nothing to undo: the fields may have had no limit since they were made,
    // and a lower one could make stored rows fail to save.
  },
);
