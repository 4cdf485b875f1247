// Docker only, PocketBase 0.23 to 0.40 (baked into the image next to fleet.pb.js
// when it is built with PB_FLEET_DIR_SUFFIX=_0.23): creates the first superuser
// from PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD, since a scratch image has no shell
// to run `pocketbase superuser create`. When both are unset this file does
// nothing (PocketBase then prints an installer link, holding a 30-minute token,
// in the container's log). The 0.22 counterpart is docker/hooks/.
//
// It fails closed: a server that was asked for a superuser never serves without one.
//
// - Before any port opens, the pair is checked. At load (0.23+ loads hooks
//   before it opens the database): both or neither, and the email, by
//   PocketBase itself, through a form with the email rules of the `_superusers`
//   email field (Required, is.EmailFormat) and no database lookup. In
//   OnBootstrap, once the database is open and PocketBase's system migrations
//   have made `_superusers` (even on a new volume): the password, against that
//   collection's own password field, Min and Max as this binary defines them
//   (8 and 0, which means 71, counted in characters, from v0.23.0 to v0.40.4),
//   and against bcrypt's 72 bytes: PocketBase hashes with golang.org/x/crypto's
//   bcrypt, which refuses a longer password at save time (71 two-byte
//   characters pass the field and fail the save). A bad pair prints one
//   sentence and exits 2. We exit instead of throwing: a
//   throw stops PocketBase only with --hooksWatch=false; with --hooksWatch=true
//   PocketBase logs it and serves on.
//
// - The superuser is created in OnServe before `e.next()`: `serve` runs every
//   migration first and opens its listener only in OnServe's final handler,
//   which `e.next()` reaches. JS hooks have no global `onServe` (plugins/jsvm
//   excludes it), but `$app.onServe().bindFunc(fn)` registers fn (called once,
//   in this loader runtime, so it sees this file's variables). If the superuser
//   cannot be saved, the process stops with exit code 1 instead of serving;
//   Docker's restart policy retries and the log says why. Nothing runs per request.
(() => {
  const email = $os.getenv("PB_ADMIN_EMAIL");
  const password = $os.getenv("PB_ADMIN_PASSWORD");
  if (!email && !password) return;

  // PocketBase's own name for the account its installer makes while no superuser exists
  // (core.DefaultInstallerEmail; scripts/pocketbase/lines.mjs holds it for the scripts, a hook cannot import it).
  const INSTALLER_EMAIL = "__pbinstaller@example.com";

  const stop = (message, exitCode) => {
    console.error("pb-fleet: " + message);
    $os.exit(exitCode);
  };
  const detail = (err) => {
    const text = String(err && err.value !== undefined ? err.value : err);
    return text.replace(/^(GoError|Error): /, "");
  };

  if (!email || !password) {
    stop("set both PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD to create the first superuser, or neither (then follow the installer link PocketBase prints). PocketBase was not started.", 2);
  }

  const emailCheck = new TestEmailSendForm($app);
  emailCheck.email = email;
  emailCheck.template = "verification";
  try {
    emailCheck.validate();
  } catch (err) {
    stop("PB_ADMIN_EMAIL=" + JSON.stringify(email) + " is not accepted by PocketBase (" + detail(err) + "): set a valid email address. PocketBase was not started.", 2);
  }

  $app.onBootstrap().bindFunc((e) => {
    e.next(); // opens the database and runs PocketBase's system migrations (a failure throws, and stays PocketBase's)
    const passwordField = $app.findCollectionByNameOrId("_superusers").fields.getByName("password");
    const min = passwordField.min;
    const max = passwordField.max > 0 ? passwordField.max : 71; // core/field_password.go: 0 means bcrypt's 71
    const BCRYPT_MAX_BYTES = 72;
    let characters = 0;
    let bytes = 0;
    for (const ch of password) {
      // code points, as PocketBase counts runes; their UTF-8 bytes, as bcrypt counts
      const code = ch.codePointAt(0);
      characters++;
      bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    }
    if (characters < min || characters > max || bytes > BCRYPT_MAX_BYTES) {
      stop("PB_ADMIN_PASSWORD has " + characters + " characters (" + bytes + " UTF-8 bytes), but a PocketBase 0.23+ superuser password must have " + min + " to " + max + " characters and at most " + BCRYPT_MAX_BYTES + " bytes (bcrypt's limit): set one within those bounds. PocketBase was not started.", 2);
    }
  });

  $app.onServe().bindFunc((e) => {
    try {
      if ($app.countRecords("_superusers", $dbx.not($dbx.hashExp({ email: INSTALLER_EMAIL }))) > 0) {
        console.log("pb-fleet: a superuser exists already; PB_ADMIN_EMAIL/PB_ADMIN_PASSWORD were not used");
      } else {
        const superuser = new Record($app.findCollectionByNameOrId("_superusers"));
        superuser.setEmail(email);
        superuser.setPassword(password);
        $app.save(superuser);
        console.log("pb-fleet: created the first superuser " + email + " from PB_ADMIN_EMAIL");
      }
    } catch (err) {
      stop("could not create the first superuser " + email + " from PB_ADMIN_EMAIL/PB_ADMIN_PASSWORD (" + detail(err) + "). PocketBase stopped rather than serve without one.", 1);
    }
    return e.next();
  });
})();
