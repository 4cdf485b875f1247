#!/usr/bin/env node
// npx pb-fleet install <pb_dir> [--force]
// Copies this package's hooks bundle and migrations into an existing PocketBase
// 0.22 folder (<pb_dir>/pb_hooks, <pb_dir>/pb_migrations). Nothing is written
// when any target file differs and --force is not given.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// The package root, from this file's location: npx runs it from anywhere.
const packageRoot = dirname(dirname(fileURLToPath(import.meta.url)));
const packageVersion = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")).version;

const USAGE = `pb-fleet ${packageVersion}: exactly-one-winner job claims for PocketBase 0.22

Usage:
  npx pb-fleet install <pb_dir> [--force]

Copies pb_hooks/fleet.pb.js and pb_migrations/*.js into <pb_dir>/pb_hooks and
<pb_dir>/pb_migrations (<pb_dir> is the folder of your PocketBase 0.22 binary,
where its pb_data lives). A file that already exists with other content is
left alone unless --force is given; identical files are left as they are.
Then restart PocketBase; the migration runs on start.

Options:
  --force   overwrite target files whose content differs
  --help    this text`;

class UsageError extends Error {}

function parseArguments(argv) {
  if (argv.length === 0) throw new UsageError("no command given. Run `npx pb-fleet install <pb_dir>` (or --help).");
  const flags = argv.filter((a) => a.startsWith("-"));
  const words = argv.filter((a) => !a.startsWith("-"));
  if (flags.includes("--help") || flags.includes("-h") || words[0] === "help") return { command: "help" };
  const [command, ...rest] = words;
  if (command !== "install") {
    throw new UsageError(`unknown command ${JSON.stringify(command ?? flags[0])}. The only command is \`install <pb_dir>\` (see --help).`);
  }
  const unknown = flags.filter((f) => f !== "--force");
  if (unknown.length) throw new UsageError(`unknown option ${unknown.map((f) => JSON.stringify(f)).join(", ")}. Only --force and --help are known.`);
  if (rest.length === 0) throw new UsageError("install needs the PocketBase folder: `npx pb-fleet install <pb_dir>`.");
  if (rest.length > 1) throw new UsageError(`install takes one folder, got ${rest.length}: ${rest.map((w) => JSON.stringify(w)).join(" ")}.`);
  return { command: "install", pbDir: rest[0], force: flags.includes("--force") };
}

/** Every file the package installs, as [relative path, absolute source]. */
function packageFiles() {
  const bundle = join(packageRoot, "pb_hooks", "fleet.pb.js");
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing from the package: run \`npm run build\` in ${packageRoot} first.`);
  const migrationsDir = join(packageRoot, "pb_migrations");
  const migrations = readdirSync(migrationsDir).filter((name) => name.endsWith(".js")).sort();
  if (migrations.length === 0) throw new Error(`${migrationsDir} has no migrations: the package is incomplete.`);
  return [["pb_hooks/fleet.pb.js", bundle], ...migrations.map((name) => [`pb_migrations/${name}`, join(migrationsDir, name)])];
}

function install({ pbDir, force }) {
  const target = resolve(pbDir);
  if (!existsSync(target)) throw new UsageError(`${target} does not exist. Give the folder that holds your PocketBase binary (create it first for a new install).`);
  if (!statSync(target).isDirectory()) throw new UsageError(`${target} is not a folder. Give the folder that holds your PocketBase binary.`);

  // Decide everything before writing anything, so a refusal leaves no half-install.
  const plan = packageFiles().map(([relative, source]) => {
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

  console.log(`pb-fleet ${packageVersion}: installing into ${target}`);
  for (const step of plan) {
    if (step.state === "same") {
      console.log(`  ${"already up to date".padEnd(20)}${step.relative}`);
      continue;
    }
    mkdirSync(dirname(step.destination), { recursive: true });
    copyFileSync(step.source, step.destination);
    console.log(`  ${(step.state === "new" ? "copied" : "overwrote (--force)").padEnd(20)}${step.relative}`);
  }
  if (plan.every((p) => p.state === "same")) {
    console.log("Everything is already up to date: nothing to restart.");
  } else {
    console.log(`Now restart PocketBase from ${target}: \`./pocketbase serve\`; the migration runs on start.`);
    console.log("The fleet endpoints (POST /api/fleet/claim, ...) need an admin token.");
  }
}

try {
  const args = parseArguments(process.argv.slice(2));
  if (args.command === "help") console.log(USAGE);
  else install(args);
} catch (error) {
  console.error(`pb-fleet: ${error.message}`);
  process.exit(error instanceof UsageError ? 2 : 1);
}
