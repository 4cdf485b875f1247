/// <reference path="../pb_data/types.d.ts" />
// pb-fleet: worker identities (docs in the README, "Worker identities"). An
// auth collection whose records sign in with their username and password and
// call /api/fleet/* within what the hooks allow them (src/lib/identity.ts).
// Every API rule is null and so is manageRule: only superusers list, view,
// create, change or delete them, a worker not even itself. authRule keeps a
// disabled identity from signing in or refreshing its token. No email, OTP,
// OAuth2, MFA or login alerts: a machine signs in with a password only.
// (PocketBase 0.23 to 0.40; the same step as pb_migrations/'s for 0.22, whose
// built-in `username` this line declares as a field.)
migrate(
  (app) => {
    // Re-applying must not touch an existing collection or its records.
    try {
      app.findCollectionByNameOrId("fleet_workers");
      return;
    } catch (_) {
      // not there yet: create it below
    }
    const collection = new Collection({
      name: "fleet_workers",
      type: "auth",
      system: false,
      fields: [
        // 0.22's username rule: 3 to 150 word characters, dots and dashes
        { name: "username", type: "text", required: true, min: 3, max: 150, pattern: "^[\\w][\\w\\.\\-]*$" },
        { name: "email", type: "email", required: false, system: true },
        // 0.22's minPasswordLength: 12 (PocketBase's own default here is 8)
        { name: "password", type: "password", required: true, system: true, hidden: true, min: 12 },
        // the queues its claims may take jobs of; empty: every queue
        { name: "queues", type: "json", required: false, maxSize: 65536 },
        { name: "can_enqueue", type: "bool", required: false },
        // a disabled identity's next call is a 401
        { name: "disabled", type: "bool", required: false },
        // stamped by the hooks at most once a minute (LAST_SEEN_EVERY_MS)
        { name: "last_seen_at", type: "date", required: false },
        // 0.22 gave every collection these; 0.23+ only declared autodate fields.
        { name: "created", type: "autodate", onCreate: true, onUpdate: false },
        { name: "updated", type: "autodate", onCreate: true, onUpdate: true },
      ],
      indexes: ["CREATE UNIQUE INDEX `idx_fleet_workers_username` ON `fleet_workers` (`username`)"],
      listRule: null,
      viewRule: null,
      createRule: null,
      updateRule: null,
      deleteRule: null,
      manageRule: null,
      authRule: "disabled = false",
      passwordAuth: { enabled: true, identityFields: ["username"] },
      oauth2: { enabled: false },
      otp: { enabled: false },
      mfa: { enabled: false },
      authAlert: { enabled: false },
    });
    app.save(collection);
  },
  (app) => {
    let collection;
    try {
      collection = app.findCollectionByNameOrId("fleet_workers");
    } catch (_) {
      return; // already gone
    }
    app.delete(collection);
  },
);
