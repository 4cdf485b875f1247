#!/usr/bin/env node
// npm run get-pocketbase [-- --version 0.40.4] [--print-path] [--docker-context]
// Gets a PocketBase binary of either hooks line (see scripts/pocketbase/binary.mjs)
// and, with --docker-context, copies it to .pb/docker/pocketbase for the
// Dockerfile and writes .pb/docker/compose.env, which tells docker-compose the
// line's bundle and migrations (PB_FLEET_DIR_SUFFIX) and the version.
import { writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import {
  DEFAULT_PB_VERSION,
  PocketBaseBinaryError,
  elfInterpreter,
  ensurePocketBase,
  installBinaryCopy,
  normalizePbVersion,
  sameFileContent,
} from "./pocketbase/binary.mjs";
import { SUPPORTED_VERSIONS_TEXT, lineLayout } from "./pocketbase/lines.mjs";

const repoRoot = dirname(dirname(fileURLToPath(import.meta.url)));
const DOCKER_CONTEXT_BINARY = join(repoRoot, ".pb", "docker", "pocketbase");
/** docker-compose --env-file: the line's directory suffix and the version, for docker-compose.yml. */
const DOCKER_COMPOSE_ENV = join(repoRoot, ".pb", "docker", "compose.env");

const USAGE = `Usage: npm run get-pocketbase [-- --version 0.40.4] [--print-path] [--docker-context]

Finds or builds a PocketBase binary (${SUPPORTED_VERSIONS_TEXT}): POCKETBASE_BIN
if set, else the cache (~/.cache/pb-fleet, PB_FLEET_CACHE overrides), else
\`go install\` from the Go module proxy (0.40.x through GOTOOLCHAIN=go1.27.3
when the local Go is older), else the official release archive.

  --version V        the version to get (default: PB_VERSION, else ${DEFAULT_PB_VERSION})
  --print-path       print only the binary's path on stdout
  --docker-context   also copy it to .pb/docker/pocketbase for \`docker build\`, and
                     write .pb/docker/compose.env for
                     \`docker-compose --env-file .pb/docker/compose.env up -d --build\`
  --help             this text`;

function fail(message, exitCode = 2) {
  console.error(`get-pocketbase: ${message}`);
  process.exit(exitCode);
}

function parseArguments(argv) {
  const options = { version: process.env.PB_VERSION || DEFAULT_PB_VERSION, printPath: false, dockerContext: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") options.help = true;
    else if (arg === "--print-path") options.printPath = true;
    else if (arg === "--docker-context") options.dockerContext = true;
    else if (arg === "--version") {
      if (i + 1 >= argv.length || argv[i + 1].startsWith("--")) fail("--version needs a value, for example --version 0.40.4.");
      options.version = argv[++i];
    } else if (arg.startsWith("--version=")) options.version = arg.slice("--version=".length);
    else fail(`unknown argument ${JSON.stringify(arg)}. Run with --help for the options.`);
  }
  return options;
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  if (options.help) {
    console.log(USAGE);
    return;
  }
  let version;
  try {
    version = normalizePbVersion(options.version);
  } catch (error) {
    fail(error.message, 2);
  }
  if (options.dockerContext && process.platform !== "linux") {
    fail("--docker-context needs a Linux binary, and this machine builds for " + process.platform + ". Run it on Linux, or put a static linux PocketBase binary at .pb/docker/pocketbase yourself.", 2);
  }

  const binary = await ensurePocketBase({ version, log: (message) => console.error(message) });

  if (options.dockerContext) {
    // A scratch image has no dynamic loader: refuse a dynamically linked binary here, not at `docker run`.
    const interpreter = await elfInterpreter(binary.path);
    if (interpreter) {
      fail(`${binary.path} is dynamically linked (it needs ${interpreter}) and cannot run in the scratch image. Build it with CGO_ENABLED=0 or unset POCKETBASE_BIN.`, 1);
    }
    if (await sameFileContent(binary.path, DOCKER_CONTEXT_BINARY)) {
      console.error(`get-pocketbase: ${relative(repoRoot, DOCKER_CONTEXT_BINARY)} is already this binary`);
    } else {
      await installBinaryCopy(binary.path, DOCKER_CONTEXT_BINARY);
      console.error(`get-pocketbase: copied ${binary.path} -> ${relative(repoRoot, DOCKER_CONTEXT_BINARY)} (for docker build)`);
    }
    const layout = lineLayout(binary.line);
    writeFileSync(
      DOCKER_COMPOSE_ENV,
      [
        `# Written by npm run get-pocketbase -- --docker-context for PocketBase ${binary.version} (.pb/docker/pocketbase).`,
        `# docker-compose --env-file .pb/docker/compose.env up -d --build`,
        `PB_VERSION=${binary.version}`,
        `# "" for PocketBase 0.22 (pb_hooks/, pb_migrations/), "_0.23" for 0.23+ (pb_hooks_0.23/, pb_migrations_0.23/)`,
        `PB_FLEET_DIR_SUFFIX=${layout.dirSuffix}`,
        "",
      ].join("\n"),
    );
    console.error(
      `get-pocketbase: wrote ${relative(repoRoot, DOCKER_COMPOSE_ENV)} (PocketBase ${binary.version}: ${layout.relative.bundle} and ${layout.relative.migrationsDir}/). ` +
        "Start it with: docker-compose --env-file .pb/docker/compose.env up -d --build",
    );
  }

  if (options.printPath) console.log(binary.path);
  else console.log(`PocketBase ${binary.version} (${binary.source}): ${binary.path}`);
}

try {
  await main();
} catch (error) {
  if (error instanceof PocketBaseBinaryError) fail(error.message, error.exitCode);
  throw error;
}
