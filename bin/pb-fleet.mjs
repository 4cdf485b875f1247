#!/usr/bin/env node
// npx pb-fleet install <pb_dir> [--force] [--binary <path>]
// npx pb-fleet worker create|list|disable|enable|revoke|rotate ... (bin/worker-commands.mjs)
// Asks the PocketBase binary in <pb_dir> for its version and copies the
// matching hooks bundle, in-transaction enqueue module and migrations of this
// package (PocketBase 0.22 or 0.23+, see scripts/pocketbase/lines.mjs) into <pb_dir>/pb_hooks and
// <pb_dir>/pb_migrations, and the dashboard page (the same for both lines)
// into <pb_dir>/pb_public/fleet. Nothing is written when any target file
// differs and --force is not given, or when the version is not supported.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { verifyPocketBaseBinary } from "../scripts/pocketbase/binary.mjs";
import { ENQUEUE_MODULE_NAME, HOOKS_LINES, SUPPORTED_VERSIONS_TEXT, lineLayout } from "../scripts/pocketbase/lines.mjs";
import { WORKER_HELP, WORKER_SYNOPSIS, WORKER_VALUE_FLAGS, WorkerCommandError, parseWorkerArguments, runWorkerCommand } from "./worker-commands.mjs";

// The package root, from this file's location: npx runs it from anywhere.
const packageRoot = dirname(dirname(fileURLToPath(import.meta.url)));
const packageVersion = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")).version;

/**
 * The PocketBase binary in <pb_dir>: the release archives name it pocketbase
 * (pocketbase.exe on Windows), `go install github.com/pocketbase/pocketbase/examples/base` names it base.
 */
const BINARY_NAMES = process.platform === "win32" ? ["pocketbase.exe", "base.exe"] : ["pocketbase", "base"];

/**
 * The dashboard (built by esbuild.config.mjs into pb_public/fleet/), installed
 * into <pb_dir>/pb_public/fleet/: PocketBase serves --publicDir, by default
 * pb_public beside its binary, so the page is at /fleet/ with no flag.
 */
const DASHBOARD_DIR = join(packageRoot, "pb_public", "fleet");

const USAGE = `pb-fleet ${packageVersion}: exactly-one-winner job claims for PocketBase ${SUPPORTED_VERSIONS_TEXT}

Usage:
  npx pb-fleet install <pb_dir> [--force] [--binary <path>]
${WORKER_SYNOPSIS}

Asks the PocketBase binary in <pb_dir> for its version (\`--version\`) and copies
the matching bundle and migrations into <pb_dir>/pb_hooks and <pb_dir>/pb_migrations:
${Object.values(HOOKS_LINES).map((l) => `  PocketBase ${l.versions.padEnd(18)}${l.hooksDir}/fleet.pb.js, ${l.hooksDir}/${ENQUEUE_MODULE_NAME}, ${l.migrationsDir}/*.js`).join("\n")}
and the fleet dashboard into <pb_dir>/pb_public/fleet (served at /fleet/).
<pb_dir> is the folder of your PocketBase binary, where its pb_data lives; the
binary is found there as ${BINARY_NAMES.join(", then ")} (the release archive's name, then
\`go install .../examples/base\`'s). A file that already exists with other
content is left alone unless --force is given; identical files are left as
they are. Then restart PocketBase; the migrations run on start.

Options:
  --force          overwrite target files whose content differs
  --binary <path>  the PocketBase binary to ask, when it is not in <pb_dir> under one of those names
  --help           this text

${WORKER_HELP}`;

class UsageError extends Error {}

/** The index of the first word that is neither a flag nor a flag's value when it is "worker", else -1. */
function workerCommandIndex(argv) {
  for (let i = 0; i < argv.length; i++) {
    if ([...WORKER_VALUE_FLAGS, "--binary"].includes(argv[i])) i++;
    else if (!argv[i].startsWith("-")) return argv[i] === "worker" ? i : -1;
  }
  return -1;
}

function parseArguments(argv) {
  if (argv.length === 0) throw new UsageError("no command given. Run `npx pb-fleet install <pb_dir>` or `npx pb-fleet worker list` (or --help).");
  const worker = workerCommandIndex(argv);
  if (worker !== -1) return parseWorkerArguments([...argv.slice(0, worker), ...argv.slice(worker + 1)]);
  const flags = [];
  const words = [];
  let binary = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--binary" || arg.startsWith("--binary=")) {
      const value = arg === "--binary" ? argv[++i] : arg.slice("--binary=".length);
      if (value === undefined || value === "" || value.startsWith("-")) throw new UsageError("--binary needs the path of a PocketBase binary, for example --binary ./pb/pocketbase.");
      binary = value;
    } else if (arg.startsWith("-")) flags.push(arg);
    else words.push(arg);
  }
  if (flags.includes("--help") || flags.includes("-h") || words[0] === "help") return { command: "help" };
  const [command, ...rest] = words;
  if (command !== "install") {
    throw new UsageError(`unknown command ${JSON.stringify(command ?? flags[0])}. The commands are \`install <pb_dir>\` and \`worker create|list|disable|enable|revoke|rotate\` (see --help).`);
  }
  const unknown = flags.filter((f) => f !== "--force");
  if (unknown.length) throw new UsageError(`unknown option ${unknown.map((f) => JSON.stringify(f)).join(", ")}. Only --force, --binary and --help are known.`);
  if (rest.length === 0) throw new UsageError("install needs the PocketBase folder: `npx pb-fleet install <pb_dir>`.");
  if (rest.length > 1) throw new UsageError(`install takes one folder, got ${rest.length}: ${rest.map((w) => JSON.stringify(w)).join(" ")}.`);
  return { command: "install", pbDir: rest[0], force: flags.includes("--force"), binary };
}

/** Every file a line installs, as [path relative to <pb_dir>, absolute source]. */
function packageFiles(line) {
  const layout = lineLayout(line, packageRoot);
  for (const built of [layout.bundle, layout.enqueueModule]) {
    if (!existsSync(built)) throw new Error(`${built} is missing from the package: run \`npm run build\` in ${packageRoot} first.`);
  }
  const migrations = existsSync(layout.migrationsDir) ? readdirSync(layout.migrationsDir).filter((name) => name.endsWith(".js")).sort() : [];
  if (migrations.length === 0) throw new Error(`${layout.migrationsDir} has no migrations: the package is incomplete.`);
  const dashboard = existsSync(DASHBOARD_DIR) ? readdirSync(DASHBOARD_DIR).sort() : [];
  if (!dashboard.includes("index.html")) throw new Error(`${DASHBOARD_DIR} has no dashboard: run \`npm run build\` in ${packageRoot} first.`);
  return [
    ["pb_hooks/fleet.pb.js", layout.bundle],
    // Loaded by the app's own hooks with require(`${__hooks}/pb-fleet-enqueue.js`), not by PocketBase itself.
    [`pb_hooks/${ENQUEUE_MODULE_NAME}`, layout.enqueueModule],
    ...migrations.map((name) => [`pb_migrations/${name}`, join(layout.migrationsDir, name)]),
    ...dashboard.map((name) => [`pb_public/fleet/${name}`, join(DASHBOARD_DIR, name)]),
  ];
}

function findBinary(target, given) {
  if (given) {
    const path = resolve(given);
    if (!existsSync(path)) throw new UsageError(`--binary ${given}: ${path} does not exist.`);
    return path;
  }
  const found = BINARY_NAMES.map((name) => join(target, name)).find((path) => existsSync(path) && statSync(path).isFile());
  if (!found) {
    throw new UsageError(
      `${target} has no PocketBase binary (looked for ${BINARY_NAMES.join(" and ")}), so pb-fleet cannot tell which bundle fits. ` +
        "Put the binary there, or name it with --binary <path>. Nothing was copied.",
    );
  }
  return found;
}

/** The binary's version and hooks line, or a refusal that says why (unsupported versions included). */
async function pocketBaseOf(binary) {
  const check = await verifyPocketBaseBinary(binary, null);
  if (!check.ok) {
    throw new UsageError(`${check.reason}. pb-fleet runs on PocketBase ${SUPPORTED_VERSIONS_TEXT}. Nothing was copied.`);
  }
  return check;
}

/** The other line's files of this package that sit in <pb_dir> unchanged: leftovers of an install for another PocketBase. */
function otherLineLeftovers(target, line) {
  const other = line === "0.22" ? "0.23" : "0.22";
  let files;
  try {
    files = packageFiles(other);
  } catch {
    return [];
  }
  const mine = new Set(packageFiles(line).map(([rel]) => rel));
  return files
    .filter(([rel, source]) => !mine.has(rel) && existsSync(join(target, rel)) && readFileSync(join(target, rel)).equals(readFileSync(source)))
    .map(([rel]) => ({ rel, other }));
}

async function install({ pbDir, force, binary: givenBinary }) {
  const target = resolve(pbDir);
  if (!existsSync(target)) throw new UsageError(`${target} does not exist. Give the folder that holds your PocketBase binary (create it first for a new install).`);
  if (!statSync(target).isDirectory()) throw new UsageError(`${target} is not a folder. Give the folder that holds your PocketBase binary.`);
  const binary = findBinary(target, givenBinary);
  const pocketbase = await pocketBaseOf(binary);
  const facts = HOOKS_LINES[pocketbase.line];
  const shownBinary = binary.startsWith(target + sep) ? `./${relative(target, binary)}` : binary;
  const versionText = pocketbase.version ? `PocketBase ${pocketbase.version}` : `PocketBase ${facts.versions} (the binary reports no version; its commands say which line)`;

  // Decide everything before writing anything, so a refusal leaves no half-install.
  const plan = packageFiles(pocketbase.line).map(([relative, source]) => {
    const destination = join(target, relative);
    if (!existsSync(destination)) return { relative, source, destination, state: "new" };
    if (!statSync(destination).isFile()) return { relative, source, destination, state: "blocked" };
    const same = readFileSync(destination).equals(readFileSync(source));
    return { relative, source, destination, state: same ? "same" : "differs" };
  });
  const blocked = plan.filter((p) => p.state === "blocked");
  if (blocked.length) throw new Error(`${blocked.map((p) => p.destination).join(", ")} exists and is not a file; remove it and run again. Nothing was copied.`);
  const differing = plan.filter((p) => p.state === "differs");
  if (differing.length && !force) {
    throw new Error(
      [
        `these files already exist in ${target} with other content:`,
        ...differing.map((p) => `  ${p.relative}`),
        "Nothing was copied. Run again with --force to overwrite them (keep a copy if you edited them).",
      ].join("\n"),
    );
  }

  console.log(`pb-fleet ${packageVersion}: installing the bundle for ${versionText} (${shownBinary}) into ${target}`);
  for (const step of plan) {
    if (step.state === "same") {
      console.log(`  ${"already up to date".padEnd(20)}${step.relative}`);
      continue;
    }
    mkdirSync(dirname(step.destination), { recursive: true });
    copyFileSync(step.source, step.destination);
    console.log(`  ${(step.state === "new" ? "copied" : "overwrote (--force)").padEnd(20)}${step.relative}`);
  }
  for (const { rel, other } of otherLineLeftovers(target, pocketbase.line)) {
    console.log(`  note: ${rel} is pb-fleet's file for PocketBase ${HOOKS_LINES[other].versions}, which ${versionText.split(" (")[0]} cannot load: delete it.`);
  }
  if (plan.every((p) => p.state === "same")) {
    console.log("Everything is already up to date: nothing to restart.");
  } else {
    console.log(`Now restart PocketBase from ${target}: \`${shownBinary} serve\`; the migrations run on start.`);
    console.log(`The fleet endpoints (POST /api/fleet/claim, ...) need ${facts.admin.aNoun} token.`);
  }
  // PocketBase's default --publicDir is pb_public beside the binary it runs.
  const servedHere = dirname(binary) === target;
  console.log(
    `The dashboard is at http://127.0.0.1:8090/fleet/ (sign in as ${facts.admin.aNoun})` +
      (servedHere ? "." : `: start PocketBase with --publicDir ${join(target, "pb_public")}, or it serves pb_public beside ${shownBinary}.`),
  );
}

try {
  const args = parseArguments(process.argv.slice(2));
  if (args.command === "help") console.log(args.topic === "worker" ? `Usage:\n${WORKER_SYNOPSIS}\n\n${WORKER_HELP}` : USAGE);
  else if (args.command === "worker") await runWorkerCommand(args);
  else await install(args);
} catch (error) {
  console.error(`pb-fleet: ${error.message}`);
  process.exit(error instanceof WorkerCommandError ? error.exitCode : error instanceof UsageError ? 2 : 1);
}
