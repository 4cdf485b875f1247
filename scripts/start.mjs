#!/usr/bin/env node
// npm start: build the hooks and the dashboard, get PocketBase (PB_VERSION, either hooks line),
// migrate, make sure an admin (0.22) or superuser (0.23+) exists, serve on
// 127.0.0.1:8090 until Ctrl-C. Data lives in ./pb_data and is reused by the
// next start.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PocketBaseBinaryError, ensurePocketBase, normalizePbVersion, DEFAULT_PB_VERSION } from "./pocketbase/binary.mjs";
import { HOOKS_LINES, adminPasswordProblem, hooksLineOf, lineLayout } from "./pocketbase/lines.mjs";
import { logTail, portIsFree, startPocketBase } from "./pocketbase/server.mjs";

const repoRoot = dirname(dirname(fileURLToPath(import.meta.url)));
const CREDENTIALS_FILE = "pb-fleet-admin.json";
/** PocketBase's --publicDir: the dashboard the build writes to pb_public/fleet/ is served at /fleet/. */
const PUBLIC_DIR = join(repoRoot, "pb_public");
const BUILD_TIMEOUT_MS = 120_000;
/**
 * The build (esbuild, src/) is in a checkout of the repository only: an
 * installed package (npm pack's files) ships the built bundles, the dashboard
 * and openapi.json instead, and starts from those.
 */
const BUILD_SCRIPT = join(repoRoot, "esbuild.config.mjs");
const FROM_SOURCE = existsSync(BUILD_SCRIPT);
const GENERATED_ADMIN_EMAIL = "admin@pb-fleet.local";
/**
 * PocketBase's JS runtime pool. Its default (25) is exhausted by 25 requests
 * waiting for the writer at once, and every request past it builds a one-off
 * runtime: the benchmark measured 1.4x the lifecycle throughput with 100 at W=50.
 */
const DEFAULT_HOOKS_POOL = 100;

function exitWith(message, code) {
  console.error(`pb-fleet start: ${message}`);
  process.exit(code);
}

/** Reads and checks the environment; every problem is one sentence and exit 2. */
function readStartConfig(env) {
  const problems = [];
  let host = "127.0.0.1";
  let port = 8090;
  if (env.PB_HTTP) {
    const match = /^([A-Za-z0-9.-]+):(\d{1,5})$/.exec(env.PB_HTTP.trim());
    if (!match) problems.push(`PB_HTTP=${JSON.stringify(env.PB_HTTP)} must look like 127.0.0.1:8090.`);
    else {
      host = match[1];
      port = Number(match[2]);
    }
  } else if (env.PORT) {
    if (!/^\d{1,5}$/.test(env.PORT.trim())) problems.push(`PORT=${JSON.stringify(env.PORT)} must be a number from 1 to 65535.`);
    else port = Number(env.PORT.trim());
  }
  if (!(port >= 1 && port <= 65535)) problems.push(`port ${port} is out of range: use 1 to 65535.`);

  const email = env.PB_ADMIN_EMAIL?.trim() || "";
  const password = env.PB_ADMIN_PASSWORD ?? "";
  if (email && !password) problems.push("PB_ADMIN_EMAIL is set but PB_ADMIN_PASSWORD is not: set both, or neither to get a generated admin.");
  if (password && !email) problems.push("PB_ADMIN_PASSWORD is set but PB_ADMIN_EMAIL is not: set both, or neither to get a generated admin.");
  if (email && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) problems.push(`PB_ADMIN_EMAIL=${JSON.stringify(email)} is not an email address.`);

  let hooksPool = DEFAULT_HOOKS_POOL;
  if (env.PB_HOOKS_POOL) {
    hooksPool = Number(env.PB_HOOKS_POOL.trim());
    if (!(Number.isInteger(hooksPool) && hooksPool >= 1 && hooksPool <= 10_000)) {
      problems.push(`PB_HOOKS_POOL=${JSON.stringify(env.PB_HOOKS_POOL)} must be a whole number from 1 to 10000.`);
    }
  }

  let version = DEFAULT_PB_VERSION;
  try {
    version = normalizePbVersion(env.PB_VERSION || DEFAULT_PB_VERSION);
    const bounds = password && passwordBoundsProblem(hooksLineOf(version), password);
    if (bounds) problems.push(bounds);
  } catch (error) {
    problems.push(error.message);
  }
  return {
    problems,
    host,
    port,
    hooksPool,
    version,
    dataDir: env.PB_DATA_DIR ? resolve(env.PB_DATA_DIR) : join(repoRoot, "pb_data"),
    admin: email ? { email, password } : null,
  };
}

/**
 * The same pair feeds the Docker image's bootstrap hook and the admin UI, so it
 * is held to the line's own bounds: 0.22's admin form (10-72 bytes), 0.23+'s
 * `_superusers` password field (8-71 characters) and bcrypt (72 bytes).
 */
function passwordBoundsProblem(line, password) {
  const problem = adminPasswordProblem(line, password);
  if (!problem) return null;
  if (problem.unit === "bytes") {
    return `PB_ADMIN_PASSWORD has ${problem.length} bytes, but a PocketBase 0.22 admin password must have ${problem.min} to ${problem.max} (UTF-8 bytes; characters for plain ASCII): set one within those bounds.`;
  }
  return (
    `PB_ADMIN_PASSWORD has ${problem.length} characters (${problem.bytes} UTF-8 bytes), but a PocketBase 0.23+ superuser password ` +
    `must have ${problem.min} to ${problem.max} characters and at most ${problem.maxBytes} bytes (bcrypt's limit): set one within those bounds.`
  );
}

/** The fleet routes for the banner: the route table in a checkout, else the shipped openapi.json's paths. */
async function routeList() {
  if (FROM_SOURCE) return (await (await import("./build/build.mjs")).routeTable()).ROUTES;
  const { paths } = JSON.parse(readFileSync(join(repoRoot, "openapi.json"), "utf8"));
  return Object.entries(paths).flatMap(([path, operations]) =>
    Object.keys(operations)
      .filter((method) => method === "get" || method === "post")
      .map((method) => ({ method: method.toUpperCase(), path })),
  );
}

function runBuild() {
  return new Promise((resolveBuild, reject) => {
    const child = spawn(process.execPath, [BUILD_SCRIPT], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), BUILD_TIMEOUT_MS);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolveBuild();
      else reject(new Error(`the hooks build (node esbuild.config.mjs) failed (exit ${code ?? signal}); fix the error above and run npm start again.`));
    });
  });
}

/**
 * The admin to create or log in as: from the environment, else the one this
 * script generated earlier (stored in the data dir), else a new generated one.
 */
function chooseAdmin(config) {
  const file = join(config.dataDir, CREDENTIALS_FILE);
  if (config.admin) return { ...config.admin, origin: "env", file };
  if (existsSync(file)) {
    try {
      const stored = JSON.parse(readFileSync(file, "utf8"));
      if (typeof stored.email === "string" && typeof stored.password === "string") return { ...stored, origin: "stored", file };
    } catch {
      /* unreadable: say so below */
    }
    exitWith(`${file} is not readable JSON with email and password. Fix or delete it, or set PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD.`, 2);
  }
  const generated = { email: GENERATED_ADMIN_EMAIL, password: randomBytes(15).toString("base64url") };
  // Stored before PocketBase starts so a crash between creating the admin and printing it loses nothing.
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(file, JSON.stringify({ ...generated, note: "written by npm start (scripts/start.mjs); admin of this pb_data" }, null, 2) + "\n", { mode: 0o600 });
  return { ...generated, origin: "generated", file };
}

function shellQuote(text) {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function printBanner({ pb, version, admin, routes }) {
  const where = (path) => {
    const near = relative(process.cwd(), path);
    return near && !near.startsWith("..") ? near : path;
  };
  const { admin: account } = HOOKS_LINES[pb.line];
  const lines = [
    "",
    `pb-fleet is running on PocketBase ${version}: ${pb.url}`,
    `  data      ${where(pb.dataDir)} (PocketBase log: ${where(pb.logFile)})`,
    `  admin UI  ${pb.url}/_/`,
    `  dashboard ${pb.url}/fleet/ (sign in as the ${account.noun} below)`,
    `  health    ${pb.url}/api/health`,
    ...routes.map((r) => `  ${r.method.padEnd(4)}      ${pb.url}${r.path}`),
  ];
  const label = account.noun.padEnd(10);
  if (admin.origin === "generated" && pb.adminCreated) {
    lines.push(`  ${label}${admin.email}  password: ${admin.password}`, `            (shown once; saved in ${where(admin.file)})`);
  } else if (admin.origin === "env") {
    lines.push(`  ${label}${admin.email} (password from PB_ADMIN_PASSWORD)`);
  } else {
    lines.push(`  ${label}${admin.email} (password in ${where(admin.file)})`);
  }
  const json = "-H 'Content-Type: application/json'";
  lines.push(
    "",
    `Try it: create a pending job, then claim it (PB_TOKEN is ${account.aNoun} token; a new one: POST ${pb.url}${account.authPath} {"identity","password"}):`,
    `  export PB_TOKEN=${shellQuote(pb.token)}`,
    `  JOB_ID=$(curl -s -X POST ${pb.url}/api/collections/probe_jobs/records -H "Authorization: $PB_TOKEN" ${json} -d '{"probe_key":"demo","status":"pending"}' | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).id')`,
    `  curl -s -X POST ${pb.url}/api/fleet/claim -H "Authorization: $PB_TOKEN" ${json} -d "{\\"jobId\\":\\"$JOB_ID\\",\\"workerId\\":\\"worker-1\\"}"`,
    "",
    "Ctrl-C stops PocketBase.",
  );
  console.log(lines.join("\n"));
}

async function main() {
  const config = readStartConfig(process.env);
  if (config.problems.length) exitWith(config.problems.join("\n"), 2);

  // Checked again by startPocketBase; this early look just saves the build when the port is taken.
  if (!(await portIsFree(config.port, config.host))) {
    exitWith(`port ${config.port} on ${config.host} is already in use (is another PocketBase running?). Stop it or choose another port, for example: PORT=${config.port === 8090 ? 8091 : config.port + 1} npm start`, 1);
  }

  if (FROM_SOURCE) {
    console.log("pb-fleet start: building the hooks bundles (node esbuild.config.mjs)");
    await runBuild();
  } else {
    console.log(`pb-fleet start: using the package's built hooks bundles (${repoRoot} has no esbuild.config.mjs: an installed package)`);
  }

  const binary = await ensurePocketBase({ version: config.version, log: (message) => console.log(message) });
  // POCKETBASE_BIN may be of the other line than PB_VERSION: its own line decides.
  const layout = lineLayout(binary.line);
  const bounds = config.admin && passwordBoundsProblem(binary.line, config.admin.password);
  if (bounds) exitWith(bounds, 2);
  if (!existsSync(layout.bundle)) {
    exitWith(`${layout.relative.bundle}, the bundle for PocketBase ${layout.versions}, is missing after the build: run \`node esbuild.config.mjs\` and fix what it says.`, 1);
  }
  const admin = chooseAdmin(config);
  if (admin.origin === "stored") console.log(`pb-fleet start: reusing the admin stored in ${admin.file}`);

  let pb;
  try {
    pb = await startPocketBase({
      binary: binary.path,
      dataDir: config.dataDir,
      host: config.host,
      port: config.port,
      line: binary.line,
      hooksDir: layout.hooksDir,
      migrationsDir: layout.migrationsDir,
      publicDir: PUBLIC_DIR,
      hooksPool: config.hooksPool,
      adminEmail: admin.email,
      adminPassword: admin.password,
      log: (message) => console.log(message),
    });
  } catch (error) {
    if (error.code === "EADDRINUSE") {
      exitWith(`${error.message} For example: PORT=${config.port === 8090 ? 8091 : config.port + 1} npm start`, 1);
    }
    if (admin.origin !== "env" && error.message.includes(`already has ${HOOKS_LINES[binary.line].admin.aNoun},`)) {
      if (admin.origin === "generated") unlinkSync(admin.file); // those credentials never worked here
      exitWith(`${error.message.split("\n")[0]} Set PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD to that ${HOOKS_LINES[binary.line].admin.noun}'s credentials.`, 1);
    }
    throw error;
  }

  printBanner({ pb, version: binary.version, admin, routes: await routeList() });

  let stopping = false;
  const shutdown = async (signal) => {
    if (stopping) {
      await pb.kill("SIGKILL");
      process.exit(1);
    }
    stopping = true;
    console.log(`\npb-fleet start: ${signal}: stopping PocketBase`);
    await pb.stop();
    console.log("pb-fleet start: PocketBase stopped; data kept in " + pb.dataDir);
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));

  const ended = await pb.exited;
  // Ctrl-C reaches PocketBase too (same process group); give our own SIGINT handler time to run first.
  await new Promise((r) => setTimeout(r, 300));
  if (!stopping) {
    exitWith(`PocketBase stopped unexpectedly (exit ${ended.code ?? ended.signal}).\n--- last lines of ${pb.logFile} ---\n${logTail(pb.logFile)}`, 1);
  }
}

try {
  await main();
} catch (error) {
  if (error instanceof PocketBaseBinaryError) exitWith(error.message, error.exitCode);
  exitWith(error.message, 1);
}
