/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: worker identities (docs in the README, "Worker identities"). An
// auth collection whose records sign in with their username and password and
// call /api/fleet/* within what the hooks allow them (src/lib/identity.ts).
// Every API rule is null and so is manageRule: only admins list, view, create,
// change or delete them, a worker not even itself; PocketBase's own
// auth-with-password and auth-refresh need no rule (PocketBase 0.22).
migrate(
  (db) => {
    const dao = new Dao(db);
    // Re-applying must not touch an existing collection or its records.
    try {
      dao.findCollectionByNameOrId("fleet_workers");
      return;
    } catch (_) {
      // not there yet: create it below
    }
    const collection = new Collection({
      name: "fleet_workers",
      type: "auth",
      system: false,
      schema: [
        // the queues its claims may take jobs of; empty: every queue
        { name: "queues", type: "json", required: false, options: { maxSize: 65536 } },
        { name: "can_enqueue", type: "bool", required: false, options: {} },
        // a disabled identity's next call is a 401
        { name: "disabled", type: "bool", required: false, options: {} },
        // stamped by the hooks at most once a minute (LAST_SEEN_EVERY_MS)
        { name: "last_seen_at", type: "date", required: false, options: { min: "", max: "" } },
      ],
      indexes: [],
      listRule: null,
      viewRule: null,
      createRule: null,
      updateRule: null,
      deleteRule: null,
      options: {
        allowEmailAuth: false,
        allowOAuth2Auth: false,
        allowUsernameAuth: true,
        exceptEmailDomains: null,
        manageRule: null,
        minPasswordLength: 12,
        onlyEmailDomains: null,
        onlyVerified: false,
        requireEmail: false,
      },
    });
    return dao.saveCollection(collection);
  },
  (db) => {
    const dao = new Dao(db);
    let collection;
    try {
      collection = dao.findCollectionByNameOrId("fleet_workers");
    } catch (_) {
      return; // already gone
    }
    return dao.deleteCollection(collection);
  },
);
