#!/usr/bin/env node
// npm run get-pocketbase [-- --version 0.22.50] [--print-path] [--docker-context]
// Gets a PocketBase 0.22.x binary (see scripts/pocketbase/binary.mjs) and,
// with --docker-context, copies it to .pb/docker/pocketbase for the Dockerfile.
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

const repoRoot = dirname(dirname(fileURLToPath(import.meta.url)));
const DOCKER_CONTEXT_BINARY = join(repoRoot, ".pb", "docker", "pocketbase");

const USAGE = `Usage: npm run get-pocketbase [-- --version 0.22.21] [--print-path] [--docker-context]

Finds or builds a PocketBase 0.22.x binary: POCKETBASE_BIN if set, else the
cache (~/.cache/pb-fleet, PB_FLEET_CACHE overrides), else \`go install\` from
the Go module proxy, else the official release archive.

  --version V        0.22.x to get (default: PB_VERSION, else ${DEFAULT_PB_VERSION})
  --print-path       print only the binary's path on stdout
  --docker-context   also copy it to .pb/docker/pocketbase for \`docker build\`
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
      if (i + 1 >= argv.length || argv[i + 1].startsWith("--")) fail("--version needs a value, for example --version 0.22.50.");
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
    fail("--docker-context needs a Linux binary, and this machine builds for " + process.platform + ". Run it on Linux, or put a static linux PocketBase 0.22 binary at .pb/docker/pocketbase yourself.", 2);
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
