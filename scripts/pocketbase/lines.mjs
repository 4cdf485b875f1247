// The one home of what differs between PocketBase's two JS hooks APIs ("lines"):
// which versions pb-fleet supports, which line a version belongs to, where that
// line's hooks bundle and migrations live in this package, and how its admins
// (0.22) or superusers (0.23+) are created and sign in. Plain data and pure
// functions, no I/O: the scripts, the installer, the build and the tests import it.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The package root (scripts/pocketbase/ is two levels down). */
export const PACKAGE_ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

export const DEFAULT_PB_VERSION = "0.22.21";
/** The newest 0.23+ version pb-fleet is tested on (its go.mod needs Go 1.27: see binary.mjs). */
export const NEWEST_TESTED_MODERN_VERSION = "0.40.4";

/** 0.22 is a closed line (0.23 renamed the JS API): v0.22.52 is its last release. */
const LAST_PATCH_OF_0_22 = 52;
/** The modern hooks API: 0.23.0 up to the newest minor pb-fleet is tested on. */
const FIRST_MODERN_MINOR = 23;
const LAST_MODERN_MINOR = 40;

/**
 * Each line's layout and auth facts. Directories are relative to the package
 * root; `dirSuffix` is what the Dockerfile and docker-compose.yml append to
 * pb_hooks, pb_migrations and docker/hooks (build arg PB_FLEET_DIR_SUFFIX).
 */
export const HOOKS_LINES = Object.freeze({
  "0.22": Object.freeze({
    line: "0.22",
    versions: "0.22.x",
    dirSuffix: "",
    hooksDir: "pb_hooks",
    migrationsDir: "pb_migrations",
    /** The Docker image's first-admin bootstrap hook (docker/hooks*). */
    dockerHooksDir: "docker/hooks",
    /** Test-only hook files of the integration suite (test/integration/support/hooks*). */
    testHooksDir: "test/integration/support/hooks",
    admin: Object.freeze({
      /** What PocketBase calls the accounts the fleet endpoints require. */
      noun: "admin",
      aNoun: "an admin",
      authPath: "/api/admins/auth-with-password",
      /** The key of the account in the auth answer ({ token, admin }). */
      authRecordKey: "admin",
      /** Lists the accounts (admin token). */
      listPath: "/api/admins",
      /** Creates one: anonymous while none exists (PocketBase 0.22), else admin only. */
      createPath: "/api/admins",
      anonymousFirstAdmin: true,
      /** `<binary> admin create EMAIL PASS`; it exits 0 even when it fails: the output says. */
      cliCreate: ["admin", "create"],
      cliCreated: /Successfully created new admin/,
      /**
       * The admin form's bounds (forms/admin_upsert.go: Length(10, 72) on a Go
       * string counts bytes). The CLI alone takes 8, but the admin UI and the
       * Docker bootstrap go through the form, so pb-fleet holds every admin to it.
       */
      password: Object.freeze({ min: 10, max: 72, unit: "bytes" }),
    }),
  }),
  "0.23": Object.freeze({
    line: "0.23",
    versions: `0.${FIRST_MODERN_MINOR}.x to 0.${LAST_MODERN_MINOR}.x`,
    dirSuffix: "_0.23",
    hooksDir: "pb_hooks_0.23",
    migrationsDir: "pb_migrations_0.23",
    dockerHooksDir: "docker/hooks_0.23",
    testHooksDir: "test/integration/support/hooks_0.23",
    admin: Object.freeze({
      noun: "superuser",
      aNoun: "a superuser",
      authPath: "/api/collections/_superusers/auth-with-password",
      authRecordKey: "record",
      listPath: "/api/collections/_superusers/records",
      createPath: "/api/collections/_superusers/records",
      // No anonymous route: a server without a superuser prints an installer
      // link holding a 30-minute token (apis/installer.go), for an account of
      // its own that counts as none (core.DefaultInstallerEmail).
      anonymousFirstAdmin: false,
      installerEmail: "__pbinstaller@example.com",
      cliCreate: ["superuser", "create"],
      cliCreated: /Successfully created new superuser/,
      /**
       * The `_superusers` password field: Min 8 (core/collection_model.go
       * initPasswordField) and Max 0, which means 71 (core/field_password.go),
       * counted in characters (runes), from v0.23.0 to v0.40.4. Its hash then
       * refuses more than 72 bytes: golang.org/x/crypto/bcrypt (v0.31.0 in
       * 0.23.12, v0.57.0 in 0.40.4) returns ErrPasswordTooLong, so 71 two-byte
       * characters pass the field and fail the save (checked on 0.23.12).
       */
      password: Object.freeze({ min: 8, max: 71, unit: "characters", maxBytes: 72 }),
    }),
  }),
});

/** A PocketBase version pb-fleet cannot run on; `exitCode` is what a CLI should exit with. */
export class UnsupportedPocketBaseVersion extends Error {
  constructor(message) {
    super(message);
    this.name = "UnsupportedPocketBaseVersion";
    this.exitCode = 2;
  }
}

export const SUPPORTED_VERSIONS_TEXT = `${HOOKS_LINES["0.22"].versions} and ${HOOKS_LINES["0.23"].versions}`;

/**
 * "0.40.4" or "v0.40.4" -> "0.40.4"; anything pb-fleet has no bundle for is refused
 * with a sentence. `subject` names where the text came from, for that sentence.
 * @returns {string}
 */
export function normalizePbVersion(input, subject = "PB_VERSION") {
  const text = String(input ?? "").trim();
  const match = /^v?(0\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2}))$/.exec(text);
  const minor = match ? Number(match[2]) : NaN;
  if (!match || !(minor === 22 || (minor >= FIRST_MODERN_MINOR && minor <= LAST_MODERN_MINOR))) {
    throw new UnsupportedPocketBaseVersion(
      `${subject} ${JSON.stringify(text)} is not supported: pb-fleet runs on PocketBase ${SUPPORTED_VERSIONS_TEXT} ` +
        `(for example "${DEFAULT_PB_VERSION}" or "${NEWEST_TESTED_MODERN_VERSION}").` +
        (subject === "PB_VERSION" ? ` Unset PB_VERSION to use ${DEFAULT_PB_VERSION}.` : ""),
    );
  }
  if (minor === 22 && Number(match[3]) > LAST_PATCH_OF_0_22) {
    throw new UnsupportedPocketBaseVersion(
      `${subject} ${JSON.stringify(text)} does not exist: the 0.22 line ends at v0.22.${LAST_PATCH_OF_0_22} ` +
        `(use 0.22.50, the newest one the Go module proxy serves, or the default ${DEFAULT_PB_VERSION}).`,
    );
  }
  return match[1];
}

/**
 * "0.22" for 0.22.x, "0.23" for 0.23.x to 0.40.x (throws UnsupportedPocketBaseVersion otherwise).
 * @returns {"0.22" | "0.23"}
 */
export function hooksLineOf(version) {
  const normalized = normalizePbVersion(version, "PocketBase version");
  return normalized.startsWith("0.22.") ? "0.22" : "0.23";
}

/**
 * The module an app's own hooks load with require(`${__hooks}/pb-fleet-enqueue.js`)
 * to enqueue in their transaction (src/handlers/enqueue-in-transaction.ts), one
 * per line next to its bundle. Not `*.pb.js`: PocketBase loads only those by itself.
 */
export const ENQUEUE_MODULE_NAME = "pb-fleet-enqueue.js";

/**
 * Where a line's files are, as absolute paths under `root` (the package by
 * default): { line, hooksDir, bundle, enqueueModule, migrationsDir, dockerHooksDir, testHooksDir, admin, ... }.
 * @param {"0.22" | "0.23"} line
 */
export function lineLayout(line, root = PACKAGE_ROOT) {
  const facts = HOOKS_LINES[line];
  if (!facts) throw new Error(`unknown hooks line ${JSON.stringify(line)}: "0.22" or "0.23"`);
  return {
    ...facts,
    relative: {
      hooksDir: facts.hooksDir,
      bundle: `${facts.hooksDir}/fleet.pb.js`,
      enqueueModule: `${facts.hooksDir}/${ENQUEUE_MODULE_NAME}`,
      migrationsDir: facts.migrationsDir,
    },
    hooksDir: join(root, facts.hooksDir),
    bundle: join(root, facts.hooksDir, "fleet.pb.js"),
    enqueueModule: join(root, facts.hooksDir, ENQUEUE_MODULE_NAME),
    migrationsDir: join(root, facts.migrationsDir),
    dockerHooksDir: join(root, facts.dockerHooksDir),
    testHooksDir: join(root, facts.testHooksDir),
  };
}

/** lineLayout of the line `version` belongs to. */
export function hooksLayout(version, root = PACKAGE_ROOT) {
  return lineLayout(hooksLineOf(version), root);
}

/**
 * Whether a password is within the line's admin/superuser bounds; null when it
 * is, else { length (in the line's unit), unit, min, max, bytes, maxBytes } for
 * the sentence that refuses it.
 */
export function adminPasswordProblem(line, password) {
  const { min, max, unit, maxBytes = null } = HOOKS_LINES[line].admin.password;
  const bytes = Buffer.byteLength(password, "utf8");
  const length = unit === "bytes" ? bytes : Array.from(password).length;
  const fits = length >= min && length <= max && (maxBytes === null || bytes <= maxBytes);
  return fits ? null : { length, unit, min, max, bytes, maxBytes };
}
