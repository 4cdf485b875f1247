#!/usr/bin/env node
// The package a user gets, checked end to end (CI):
//   1. `npm pack` of this repository (its prepare script builds dist/client),
//      and what the tarball holds (package.json "files");
//   2. an empty project that installs the tarball;
//   3. a strict TypeScript worker there (`import { FleetClient, Worker } from "pb-fleet"`),
//      type-checked with tsc --strict --module nodenext: the package's types must resolve;
//   4. per PocketBase version: a folder with that stock binary, `npx pb-fleet install`
//      run from the empty project (the installed package's bin), PocketBase
//      started on the installed files, a job enqueued by the admin and drained
//      by a plain-JS worker of the empty project: the job must end `done` with
//      the worker's result;
//   5. `npm start` of the installed package (its scripts/start.mjs) on the last version.
// Temp dirs and servers are removed even on failure. One line per step with its
// duration; on a failure a sentence and exit 1 (2: bad arguments).
//
//   node scripts/package-check.mjs [--versions 0.22.21,0.40.4] [--keep]
import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ensurePocketBase } from "./pocketbase/binary.mjs";
import { ENQUEUE_MODULE_NAME, HOOKS_LINES, hooksLineOf, lineLayout, normalizePbVersion } from "./pocketbase/lines.mjs";
import { adminAuth, freePort, requestJson, startPocketBase as repoStartPocketBase } from "./pocketbase/server.mjs";

const repoRoot = dirname(dirname(fileURLToPath(import.meta.url)));
const DEFAULT_VERSIONS = ["0.22.21", "0.40.4"];
const TSC = join(repoRoot, "node_modules", "typescript", "bin", "tsc");
/** The installer looks for the binary under these names (bin/pb-fleet.mjs BINARY_NAMES); the release archive's comes first. */
const BINARY_NAME = process.platform === "win32" ? "pocketbase.exe" : "pocketbase";
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const NPX = process.platform === "win32" ? "npx.cmd" : "npx";
const WORKER_ID = "package-check-worker";

/**
 * What a user must get, relative to the package root, besides each line's
 * bundle, enqueue module and migrations (taken from lineLayout) and the
 * dashboard's files (taken from pb_public/fleet).
 */
const REQUIRED = [
  "package.json",
  "bin/pb-fleet.mjs",
  "bin/worker-commands.mjs",
  "dist/client/index.js",
  "dist/client/index.d.ts",
  "openapi.json",
  "scripts/start.mjs",
  "scripts/pocketbase/binary.mjs",
  "scripts/pocketbase/lines.mjs",
  "scripts/pocketbase/server.mjs",
];
/** What no user needs: sources, tests, benchmarks, the build, the other clients, CI, stale outputs (also test/unit/package-files.test.ts's list). */
export const FORBIDDEN = [
  /^src\//, /^test\//, /^bench\//, /^scripts\/bench/, /^scripts\/build\//, /^scripts\/(get-pocketbase|check-self-contained|package-check)\.mjs$/,
  /^scripts\/pocketbase\/serve-for-tests\.mjs$/, /^clients\//, /^docs\//, /^examples\//, /^docker/, /^Dockerfile$/, /^\.ci\//,
  /^esbuild\.config\.mjs$/, /^tsconfig/, /^vitest/, /^pb_data\//, /^dist\/(?!client\/|lib\/)/, /\.map$/, /^node_modules\//,
];

class CheckFailure extends Error {}

function usage(problem) {
  console.error(`package-check: ${problem}\nUsage: node scripts/package-check.mjs [--versions ${DEFAULT_VERSIONS.join(",")}] [--keep]`);
  process.exit(2);
}

function parseArguments(argv) {
  let versions = DEFAULT_VERSIONS;
  let keep = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--versions" || arg.startsWith("--versions=")) {
      const value = arg === "--versions" ? argv[++i] : arg.slice("--versions=".length);
      if (!value || value.startsWith("-")) usage("--versions needs a comma-separated list, for example --versions 0.22.21,0.40.4.");
      try {
        versions = value.split(",").map((v) => v.trim()).filter(Boolean).map((v) => normalizePbVersion(v));
      } catch (error) {
        usage(error.message);
      }
      if (versions.length === 0) usage("--versions names no version.");
    } else if (arg === "--keep") keep = true;
    else if (arg === "--help" || arg === "-h") usage("checks the npm package end to end.");
    else usage(`unknown argument ${JSON.stringify(arg)}.`);
  }
  return { versions: [...new Set(versions)], keep };
}

/** Runs a command to completion; rejects with its output's tail when it fails or outlasts timeoutMs. */
function run(command, args, { cwd, env = {}, timeoutMs = 120_000 } = {}) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new CheckFailure(`\`${command} ${args.join(" ")}\` could not run: ${error.message}`));
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolveRun({ stdout, stderr });
      const tail = `${stdout}\n${stderr}`.trim().split("\n").slice(-25).join("\n");
      const how = signal === "SIGKILL" ? `did not finish within ${timeoutMs / 1000} s` : `failed (exit ${code ?? signal})`;
      reject(new CheckFailure(`\`${command} ${args.join(" ")}\` in ${cwd ?? process.cwd()} ${how}:\n${tail}`));
    });
  });
}

function tempDir(label, cleanups, keep) {
  const dir = mkdtempSync(join(tmpdir(), `pb-fleet-package-check-${label}-`));
  cleanups.push(() => (keep ? console.log(`package-check: kept ${dir}`) : rmSync(dir, { recursive: true, force: true })));
  return dir;
}

async function step(name, fn) {
  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
  try {
    const result = await fn();
    console.log(`package-check: ok   ${name} (${seconds()} s)`);
    return result;
  } catch (error) {
    console.log(`package-check: FAIL ${name} (${seconds()} s)`);
    throw error;
  }
}

/** The package's files that must be there, from this repository's layout. */
export function requiredFiles() {
  const files = [...REQUIRED];
  for (const line of Object.keys(HOOKS_LINES)) {
    const layout = lineLayout(line, repoRoot);
    files.push(relative(repoRoot, layout.bundle), relative(repoRoot, layout.enqueueModule));
    for (const name of readdirSync(layout.migrationsDir).filter((n) => n.endsWith(".js"))) files.push(relative(repoRoot, join(layout.migrationsDir, name)));
  }
  for (const name of readdirSync(join(repoRoot, "pb_public", "fleet"))) files.push(`pb_public/fleet/${name}`);
  return files.map((f) => f.split("\\").join("/"));
}

/** Problems with the tarball's list of files: missing, not wanted, or a dist file without a source (left from an older build). */
export function packageListProblems(paths, root = repoRoot) {
  const have = new Set(paths);
  const problems = [];
  const missing = requiredFiles().filter((f) => !have.has(f));
  if (missing.length) problems.push(`the tarball lacks ${missing.join(", ")}`);
  const unwanted = paths.filter((p) => FORBIDDEN.some((re) => re.test(p)));
  if (unwanted.length) problems.push(`the tarball holds files no user needs: ${unwanted.join(", ")}`);
  for (const path of paths.filter((p) => p.startsWith("dist/"))) {
    const source = join(root, "src", path.slice("dist/".length).replace(/(\.d)?\.js$|\.d\.ts$/, ".ts"));
    if (!existsSync(source)) problems.push(`${path} has no source (${relative(root, source)}): a stale build output; delete dist/ and pack again`);
  }
  return problems;
}

async function packTarball(packDir) {
  // --ignore-scripts=false: the prepare script (npm run build:client) must run even if the environment says otherwise.
  const { stdout } = await run(NPM, ["pack", "--json", "--ignore-scripts=false", "--pack-destination", packDir], { cwd: repoRoot, timeoutMs: 180_000 });
  const tarballs = readdirSync(packDir).filter((n) => n.endsWith(".tgz"));
  if (tarballs.length !== 1) throw new CheckFailure(`npm pack wrote ${tarballs.length} tarballs into ${packDir}, not one.`);
  // The prepare script's output may come before npm's JSON on stdout.
  const json = stdout.slice(stdout.search(/^\[/m));
  let report;
  try {
    [report] = JSON.parse(json);
  } catch {
    throw new CheckFailure(`npm pack --json printed no readable JSON:\n${stdout.slice(-2000)}`);
  }
  const paths = report.files.map((f) => f.path);
  const problems = packageListProblems(paths);
  if (problems.length) throw new CheckFailure(`the package is not what a user needs: ${problems.join("; ")}.`);
  return { tarball: join(packDir, tarballs[0]), size: report.size, unpackedSize: report.unpackedSize, entryCount: report.entryCount };
}

async function makeProject(projectDir, tarball) {
  await run(NPM, ["init", "-y"], { cwd: projectDir, timeoutMs: 60_000 });
  const manifest = JSON.parse(readFileSync(join(projectDir, "package.json"), "utf8"));
  writeFileSync(join(projectDir, "package.json"), JSON.stringify({ ...manifest, name: "pb-fleet-package-check", private: true, type: "module" }, null, 2) + "\n");
  // The package has no dependencies: nothing is fetched from a registry.
  await run(NPM, ["install", tarball, "--no-audit", "--no-fund", "--prefer-offline"], { cwd: projectDir, timeoutMs: 180_000 });
  const installed = join(projectDir, "node_modules", "pb-fleet");
  for (const file of ["package.json", "dist/client/index.d.ts", "bin/pb-fleet.mjs"]) {
    if (!existsSync(join(installed, file))) throw new CheckFailure(`the installed package has no ${file} (${installed}).`);
  }
  if (!existsSync(join(projectDir, "node_modules", ".bin", process.platform === "win32" ? "pb-fleet.cmd" : "pb-fleet"))) {
    throw new CheckFailure("npm install put no pb-fleet command into node_modules/.bin: package.json's bin is not installed.");
  }
  return installed;
}

const TYPED_WORKER = `import { FleetClient, Worker, type WorkerJob } from "pb-fleet";

interface Payload {
  word: string;
}
interface Result {
  echoed: string;
  worker: string;
}

const client = new FleetClient({ url: "http://127.0.0.1:8090", email: "admin@example.test", password: "a-password" });
const handler = async (job: WorkerJob<Payload>, signal: AbortSignal): Promise<Result> => {
  signal.throwIfAborted();
  return { echoed: job.payload.word.toUpperCase(), worker: job.workerId };
};
const worker = new Worker<Result, Payload>(client, { workerId: "typed-worker", handler, concurrency: 2 });
worker.start();
await worker.stop();

// The types are real, not any: each of these must be an error.
// @ts-expect-error a FleetClient is not a number
const notANumber: number = client;
// @ts-expect-error the handler must return a Result
new Worker<Result, Payload>(client, { handler: async (job: WorkerJob<Payload>) => job.payload.word.length });
void notANumber;
`;

async function typecheck(projectDir) {
  writeFileSync(join(projectDir, "typed-worker.ts"), TYPED_WORKER);
  if (!existsSync(TSC)) throw new CheckFailure(`${TSC} is missing: run npm ci in ${repoRoot} first.`);
  // The client's types extend Node's EventEmitter (node:events): a Node project has @types/node; this one borrows the repository's.
  const typeRoots = join(repoRoot, "node_modules", "@types");
  try {
    await run(process.execPath, [TSC, "--strict", "--noEmit", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022",
      "--typeRoots", typeRoots, "--types", "node", "typed-worker.ts"], { cwd: projectDir, timeoutMs: 120_000 });
  } catch (error) {
    throw new CheckFailure(`a strict TypeScript worker importing "pb-fleet" does not type-check against the installed package:\n${error.message}`);
  }
}

const PLAIN_WORKER = `// Drains one job (JOB_ID) with the installed package's Worker, then stops.
import { FleetClient, Worker } from "pb-fleet";

const { PB_URL, PB_ADMIN_EMAIL, PB_ADMIN_PASSWORD, JOB_ID, WORKER_ID } = process.env;
const client = new FleetClient({ url: PB_URL, email: PB_ADMIN_EMAIL, password: PB_ADMIN_PASSWORD, timeoutMs: 5000 });
const worker = new Worker(client, {
  workerId: WORKER_ID,
  leaseSeconds: 10,
  handler: async (job) => ({ echoed: job.payload.word.toUpperCase(), worker: job.workerId, attempt: job.attempt }),
});
worker.on("error", (e) => console.error(\`worker: \${e.op} failed: \${e.error.message}\`));
worker.start();
const deadline = Date.now() + 30000;
let job;
do {
  await new Promise((r) => setTimeout(r, 200));
  job = await client.getJob(JOB_ID);
} while (!["done", "failed", "cancelled"].includes(job.status) && Date.now() < deadline);
await worker.stop();
console.log(JSON.stringify({ status: job.status, result: job.result }));
process.exit(job.status === "done" ? 0 : 1);
`;

async function checkVersion(version, { projectDir, installed, cleanups, keep }) {
  const label = `PocketBase ${version}`;
  const line = hooksLineOf(version);
  const pbDir = tempDir(`pb-${version}`, cleanups, keep);
  await step(`${label}: a folder with the stock binary (${BINARY_NAME})`, async () => {
    const binary = await ensurePocketBase({ version, log: () => {}, useEnvBinary: false });
    copyFileSync(binary.path, join(pbDir, BINARY_NAME));
    chmodSync(join(pbDir, BINARY_NAME), 0o755);
  });

  await step(`${label}: npx pb-fleet install (the installed package's bin, from the empty project)`, async () => {
    await run(NPX, ["--no", "pb-fleet", "install", pbDir], { cwd: projectDir, timeoutMs: 60_000 });
    const layout = lineLayout(line, installed);
    const expected = [
      ["pb_hooks/fleet.pb.js", layout.bundle],
      [`pb_hooks/${ENQUEUE_MODULE_NAME}`, layout.enqueueModule],
      ...readdirSync(layout.migrationsDir).map((n) => [`pb_migrations/${n}`, join(layout.migrationsDir, n)]),
      ...readdirSync(join(installed, "pb_public", "fleet")).map((n) => [`pb_public/fleet/${n}`, join(installed, "pb_public", "fleet", n)]),
    ];
    for (const [target, source] of expected) {
      const path = join(pbDir, target);
      if (!existsSync(path) || !readFileSync(path).equals(readFileSync(source))) {
        throw new CheckFailure(`after the install, ${target} in ${pbDir} is not the installed package's ${relative(installed, source)} (the bundle of the ${line} line).`);
      }
    }
  });

  // The installed package's own startPocketBase when it ships one (it should: npm start uses it).
  const shipped = join(installed, "scripts", "pocketbase", "server.mjs");
  const startPocketBase = existsSync(shipped) ? (await import(pathToFileURL(shipped).href)).startPocketBase : repoStartPocketBase;
  const pb = await step(`${label}: serve (migrate up, admin by the CLI, default pb_hooks/pb_migrations/pb_public beside the binary)`, async () => {
    // No --hooksDir/--migrationsDir/--publicDir: PocketBase's defaults, where the installer put the files.
    const server = await startPocketBase({ binary: join(pbDir, BINARY_NAME), line, dataDir: join(pbDir, "pb_data"), port: await freePort(), logFile: join(pbDir, "pocketbase.log") });
    cleanups.push(() => server.stop());
    const dashboard = await requestJson(server.url, "GET", "/fleet/");
    if (dashboard.status !== 200 || !/<html/i.test(dashboard.text)) throw new CheckFailure(`${server.url}/fleet/ answered HTTP ${dashboard.status}, not the dashboard.`);
    return server;
  });

  await step(`${label}: enqueue as the admin, drain with a plain-JS worker of the empty project`, async () => {
    const word = `hello-${version}`;
    const enqueued = await requestJson(pb.url, "POST", "/api/fleet/enqueue", { token: pb.token, body: { jobs: [{ probeKey: `package-check/${version}`, payload: { word } }] } });
    const id = enqueued.json?.jobs?.[0]?.id;
    if (enqueued.status !== 200 || typeof id !== "string") throw new CheckFailure(`POST /api/fleet/enqueue answered HTTP ${enqueued.status}: ${enqueued.text.slice(0, 300)}`);
    await run(process.execPath, ["plain-worker.mjs"], {
      cwd: projectDir,
      timeoutMs: 60_000,
      env: { PB_URL: pb.url, PB_ADMIN_EMAIL: pb.adminEmail, PB_ADMIN_PASSWORD: pb.adminPassword, JOB_ID: id, WORKER_ID },
    });
    const row = await requestJson(pb.url, "GET", `/api/collections/probe_jobs/records/${id}`, { token: pb.token });
    const expected = { echoed: word.toUpperCase(), worker: WORKER_ID, attempt: 1 };
    if (row.json?.status !== "done" || canonical(row.json.result) !== canonical(expected)) {
      throw new CheckFailure(`job ${id} ended ${JSON.stringify(row.json?.status)} with result ${JSON.stringify(row.json?.result)}, not done with ${JSON.stringify(expected)}.`);
    }
  });
  await pb.stop();
}

/** JSON with sorted keys: PocketBase's JSON fields do not keep the key order (0.40 does not). */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  return JSON.stringify(value);
}

/** `npm start` of the installed package: scripts/start.mjs without the build, on the shipped bundles. */
async function checkNpmStart(version, { installed, cleanups, keep }) {
  const dataDir = tempDir(`start-${version}`, cleanups, keep);
  const port = await freePort();
  const child = spawn(NPM, ["start"], {
    cwd: installed,
    env: { ...process.env, PB_VERSION: version, PORT: String(port), PB_DATA_DIR: dataDir, POCKETBASE_BIN: "" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: process.platform !== "win32",
  });
  let output = "";
  const exited = new Promise((r) => child.once("exit", (code, signal) => r(code ?? signal)));
  const stop = async () => {
    try {
      process.kill(process.platform === "win32" ? child.pid : -child.pid, "SIGTERM");
    } catch {
      /* gone */
    }
    const timer = setTimeout(() => { try { process.kill(-child.pid, "SIGKILL"); } catch { /* gone */ } }, 8000);
    await exited;
    clearTimeout(timer);
  };
  cleanups.push(stop);
  child.stdout.on("data", (c) => (output += c));
  child.stderr.on("data", (c) => (output += c));
  let poll;
  let limit;
  const ready = await Promise.race([
    new Promise((r) => (poll = setInterval(() => output.includes("pb-fleet is running") && r(true), 100))),
    exited.then(() => false),
    new Promise((r) => (limit = setTimeout(() => r(false), 60_000))),
  ]);
  clearInterval(poll);
  clearTimeout(limit);
  if (!ready) throw new CheckFailure(`npm start in the installed package did not come up on port ${port}:\n${output.trim().split("\n").slice(-15).join("\n")}`);
  // npm start generated an admin and stored it in the data dir; with its token the fleet's stats must answer.
  const url = `http://127.0.0.1:${port}`;
  const { email, password } = JSON.parse(readFileSync(join(dataDir, "pb-fleet-admin.json"), "utf8"));
  const token = await adminAuth(url, email, password, hooksLineOf(version));
  const stats = await requestJson(url, "GET", "/api/fleet/stats", { token });
  if (stats.status !== 200) throw new CheckFailure(`npm start's PocketBase answers HTTP ${stats.status} at /api/fleet/stats: the hooks are not loaded (${stats.text.slice(0, 200)}).`);
  await stop();
}

async function main() {
  const { versions, keep } = parseArguments(process.argv.slice(2));
  const cleanups = [];
  let failed = false;
  const stopOnSignal = (signal) => {
    console.error(`package-check: ${signal}: cleaning up`);
    failed = true;
    void cleanUp().finally(() => process.exit(130));
  };
  const cleanUp = async () => {
    while (cleanups.length) {
      try {
        await cleanups.pop()();
      } catch (error) {
        console.error(`package-check: cleaning up: ${error.message}`);
      }
    }
  };
  process.once("SIGINT", stopOnSignal);
  process.once("SIGTERM", stopOnSignal);
  const started = performance.now();
  try {
    const packDir = tempDir("pack", cleanups, keep);
    const pack = await step("npm pack (prepare builds dist/client) and the tarball's files", () => packTarball(packDir));
    console.log(`package-check:      ${pack.tarball.split(/[\\/]/).pop()}: ${pack.entryCount} files, ${(pack.size / 1024).toFixed(0)} kB packed, ${(pack.unpackedSize / 1024).toFixed(0)} kB unpacked`);
    const projectDir = tempDir("project", cleanups, keep);
    const installed = await step("an empty project installs the tarball", () => makeProject(projectDir, pack.tarball));
    await step("strict TypeScript worker type-checks (tsc --strict, nodenext)", () => typecheck(projectDir));
    writeFileSync(join(projectDir, "plain-worker.mjs"), PLAIN_WORKER);
    for (const version of versions) await checkVersion(version, { projectDir, installed, cleanups, keep });
    const last = versions[versions.length - 1];
    await step(`npm start of the installed package (PocketBase ${last}, no build)`, () => checkNpmStart(last, { installed, cleanups, keep }));
  } catch (error) {
    failed = true;
    const message = error instanceof CheckFailure ? error.message : `unexpected error: ${error.stack ?? error.message}`;
    console.error(`package-check: ${message}`);
  } finally {
    await cleanUp();
  }
  const total = ((performance.now() - started) / 1000).toFixed(1);
  if (failed) {
    console.error(`package-check: FAILED after ${total} s`);
    process.exit(1);
  }
  console.log(`package-check: the package installs and works on PocketBase ${versions.join(", ")} (${total} s)`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
