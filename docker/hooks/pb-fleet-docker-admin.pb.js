// Docker only (baked into the image next to fleet.pb.js): creates the first
// PocketBase admin from PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD, since a scratch
// image has no shell to run `pocketbase admin create`. When both are unset
// this file registers nothing. A bad pair stops PocketBase at start.
//
// Why a middleware: PocketBase 0.22 applies its migrations inside `serve`,
// after onAfterBootstrap (the admins table does not exist yet on a new volume)
// and JS hooks cannot use onBeforeServe. So the admin is created before the
// first request is handled; $app.store() remembers it for every pooled runtime.
const pbFleetAdminEmail = $os.getenv("PB_ADMIN_EMAIL");
const pbFleetAdminPassword = $os.getenv("PB_ADMIN_PASSWORD");
if (pbFleetAdminEmail || pbFleetAdminPassword) {
  if (!pbFleetAdminEmail || !pbFleetAdminPassword) {
    throw new Error("pb-fleet: set both PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD (or neither) to create the first admin");
  }
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(pbFleetAdminEmail)) {
    throw new Error("pb-fleet: PB_ADMIN_EMAIL " + JSON.stringify(pbFleetAdminEmail) + " is not an email address");
  }
  if (pbFleetAdminPassword.length < 8) {
    throw new Error("pb-fleet: PB_ADMIN_PASSWORD must be at least 8 characters");
  }
  routerUse((next) => (c) => {
    // Runs in a pooled runtime: only what is declared in here exists.
    const doneKey = "pbFleetDockerAdminChecked";
    if (!$app.store().has(doneKey)) {
      const email = $os.getenv("PB_ADMIN_EMAIL");
      const password = $os.getenv("PB_ADMIN_PASSWORD");
      try {
        if ($app.dao().totalAdmins() === 0) {
          const form = new AdminUpsertForm($app, new Admin());
          form.email = email;
          form.password = password;
          form.passwordConfirm = password;
          form.submit();
          console.log("pb-fleet: created the first admin " + email + " from PB_ADMIN_EMAIL");
        }
        $app.store().set(doneKey, true);
      } catch (err) {
        console.error("pb-fleet: could not create the first admin " + email + ": " + err);
      }
    }
    return next(c);
  });
}
