// Docker only (baked into the image next to fleet.pb.js): creates the first
// PocketBase admin from PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD, since a scratch
// image has no shell to run `pocketbase admin create`. When both are unset
// this file does nothing (create the admin in the admin UI instead).
//
// It fails closed. PocketBase 0.22 lets ANYONE create an admin with
// `POST /api/admins` while there is none, so a server that was asked for an
// admin must never serve without one:
//
// - At load (before PocketBase opens its data or a port) the pair is checked
//   against PocketBase's own admin form rules (forms/admin_upsert.go at
//   v0.22.21): email Required, 1-255 bytes, is.EmailFormat (checked here by
//   PocketBase itself, through a form with the same email rules and no
//   database lookup); password 10-72 bytes (ozzo-validation's Length counts
//   the bytes of a Go string). A bad pair prints one sentence and exits 2.
//   We exit instead of throwing: a throw stops PocketBase only with
//   --hooksWatch=false (as a Go panic with a stack trace); with
//   --hooksWatch=true PocketBase logs it and serves on, without an admin.
//
// - The admin is created in OnBeforeServe: `serve` triggers it after the
//   system and app migrations (the admins table exists even on a new volume)
//   and before the HTTP listener opens. JS hooks have no global
//   `onBeforeServe` (plugins/jsvm/binds.go excludes it), but `$app` is the Go
//   app, and `$app.onBeforeServe().add(fn)` registers fn (called once, in this
//   loader runtime, so it sees this file's variables). onAfterBootstrap would
//   be too early: it runs before the migrations. If the admin cannot be
//   created (any failure of the form's submit), the process stops with exit
//   code 1 instead of serving an open admin-creation route; Docker's restart
//   policy retries and the log says why. Nothing runs per request, so the
//   steady-state cost is nil (the old version was a JS middleware that took a
//   pooled runtime on every request for the life of the server).
(() => {
  const email = $os.getenv("PB_ADMIN_EMAIL");
  const password = $os.getenv("PB_ADMIN_PASSWORD");
  if (!email && !password) return;

  const stop = (message, exitCode) => {
    console.error("pb-fleet: " + message);
    $os.exit(exitCode);
  };
  const detail = (err) => {
    const text = String(err && err.value !== undefined ? err.value : err);
    return text.replace(/^(GoError|Error): /, "");
  };

  if (!email || !password) {
    stop("set both PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD to create the first admin, or neither (then create it in the admin UI at /_/). PocketBase was not started.", 2);
  }

  const emailCheck = new TestEmailSendForm($app);
  emailCheck.email = email;
  emailCheck.template = "verification";
  try {
    emailCheck.validate();
  } catch (err) {
    stop("PB_ADMIN_EMAIL=" + JSON.stringify(email) + " is not accepted by PocketBase (" + detail(err) + "): set a valid email address. PocketBase was not started.", 2);
  }

  let bytes = 0;
  for (const ch of password) {
    const code = ch.codePointAt(0);
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  if (bytes < 10 || bytes > 72) {
    stop("PB_ADMIN_PASSWORD has " + bytes + " bytes, but a PocketBase 0.22 admin password must have 10 to 72 (UTF-8 bytes; characters for plain ASCII): set one within those bounds. PocketBase was not started.", 2);
  }

  $app.onBeforeServe().add(() => {
    try {
      if ($app.dao().totalAdmins() > 0) {
        console.log("pb-fleet: an admin exists already; PB_ADMIN_EMAIL/PB_ADMIN_PASSWORD were not used");
        return;
      }
      const form = new AdminUpsertForm($app, new Admin());
      form.email = email;
      form.password = password;
      form.passwordConfirm = password;
      form.submit();
      console.log("pb-fleet: created the first admin " + email + " from PB_ADMIN_EMAIL");
    } catch (err) {
      stop("could not create the first admin " + email + " from PB_ADMIN_EMAIL/PB_ADMIN_PASSWORD (" + detail(err) + "). PocketBase stopped rather than serve without an admin, since PocketBase 0.22 lets anyone create the first one.", 1);
    }
  });
})();
