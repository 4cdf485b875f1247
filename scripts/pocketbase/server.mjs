// Starts a real PocketBase of either hooks line for npm start, the test suite's
// spawn mode and the benchmarks: migrate up, create the first admin (0.22) or
// superuser (0.23+) with PocketBase's CLI while nothing listens, serve on
// 127.0.0.1, wait for /api/health and return the account's token. PocketBase's
// own output goes to a log file whose tail is put into every error.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { verifyPocketBaseBinary } from "./binary.mjs";
import { HOOKS_LINES } from "./lines.mjs";

const MIGRATE_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;

/** Children still running when this Node process exits are killed, so a crashed caller leaves no server behind. */
const running = new Set();
process.on("exit", () => {
  for (const child of running) {
    try {
      child.kill("SIGKILL");
    } catch {
      /* already gone */
    }
  }
});

/** The last lines of a log file, for error messages. */
export function logTail(path, lines = 25) {
  try {
    const text = readFileSync(path, "utf8").trimEnd();
    return text.split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log output)";
  }
}

function withLog(message, logFile) {
  return `${message}\n--- last lines of ${logFile} ---\n${logTail(logFile)}`;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(host = "127.0.0.1") {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/** Resolves true when nothing listens on host:port (we could bind it). */
export function portIsFree(port, host = "127.0.0.1") {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once("error", () => resolveFree(false));
    server.listen(port, host, () => server.close(() => resolveFree(true)));
  });
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls GET <url>/api/health until it answers 200; throws after timeoutMs. */
export async function waitForHealth(url, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    try {
      const response = await fetch(new URL("/api/health", url), { signal: AbortSignal.timeout(2000) });
      if (response.status === 200) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = error?.cause?.code ?? error.message;
    }
    await sleep(100);
  }
  throw new Error(`PocketBase at ${url} was not healthy within ${timeoutMs / 1000} s (last: ${last})`);
}

function postJson(url, path, body, token) {
  return requestJson(url, "POST", path, { body, token });
}

/**
 * One JSON request to PocketBase: its status, its body parsed (null when not
 * JSON) and as text. Rejects as fetch does (unreachable, timed out).
 */
export async function requestJson(url, method, path, { body, token, timeoutMs = 10_000 } = {}) {
  const response = await fetch(new URL(path, url), {
    method,
    headers: { ...(body === undefined ? {} : { "Content-Type": "application/json" }), ...(token ? { Authorization: token } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: response.status, json, text };
}

function lineFacts(line) {
  const facts = HOOKS_LINES[line];
  if (!facts) throw new Error(`a hooks line is needed ("0.22" or "0.23"), got ${JSON.stringify(line)}`);
  return facts;
}

/**
 * The token of an admin (0.22: POST /api/admins/auth-with-password) or a
 * superuser (0.23+: POST /api/collections/_superusers/auth-with-password).
 * @param {"0.22" | "0.23"} line
 */
export async function adminAuth(url, email, password, line) {
  const { admin } = lineFacts(line);
  const { status, json, text } = await postJson(url, admin.authPath, { identity: email, password });
  if (status !== 200 || typeof json?.token !== "string") {
    throw new Error(`${admin.noun} login as ${email} failed at ${url}: HTTP ${status} ${text.slice(0, 300)}`);
  }
  return json.token;
}

/** The hooks line of a binary, from what it reports (see verifyPocketBaseBinary). */
export async function binaryHooksLine(binary) {
  const check = await verifyPocketBaseBinary(binary, null);
  if (!check.ok) throw new Error(`${binary} cannot be used: ${check.reason}`);
  return check.line;
}

/**
 * A memory figure of a live process from /proc/<pid>/status, in bytes: "VmHWM"
 * (peak resident set) or "VmRSS" (resident now); null when /proc cannot tell.
 */
export function readProcMemoryBytes(pid, field = "VmHWM") {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/**
 * PocketBase's dev mode prints every SQL statement and every log line to its
 * output: slow, and a flood of output. 0.36+ turns it on by
 * itself for any binary under the Go cache directory (GOCACHE, else ~/.cache:
 * it takes those for `go run`), which is where pb-fleet keeps its binaries
 * (~/.cache/pb-fleet), so every command pb-fleet runs says --dev=false unless
 * asked for dev mode (`dev: true`). Every supported version (0.22.x too) has
 * the global --dev flag.
 */
export function devFlag(dev = false) {
  return `--dev=${dev === true}`;
}

function pathFlags({ dataDir, hooksDir, migrationsDir, hooksPool, hooksWatch, dev }) {
  // --hooksWatch is off unless asked for: with it on, an error while loading the
  // hooks is only printed and PocketBase runs on without what failed.
  const flags = ["--dir", dataDir, `--hooksWatch=${hooksWatch === true}`, devFlag(dev)];
  if (hooksDir) flags.push("--hooksDir", hooksDir);
  if (migrationsDir) flags.push("--migrationsDir", migrationsDir);
  if (hooksPool !== undefined && hooksPool !== null) flags.push(`--hooksPool=${hooksPool}`);
  return flags;
}

/** Runs one PocketBase command to completion and returns what it added to logFile. */
async function runForOutput(binary, args, { env, logFile }) {
  const before = statSync(logFile, { throwIfNoEntry: false })?.size ?? 0;
  await runToCompletion(binary, args, { env, logFile, timeoutMs: MIGRATE_TIMEOUT_MS });
  return readFileSync(logFile).subarray(before).toString("utf8");
}

/**
 * Creates the first admin (0.22) or superuser (0.23+) with PocketBase's CLI,
 * before the server listens: PocketBase 0.22 lets anyone create the first admin
 * over HTTP while none exists, so a server must never listen without one. The
 * CLI exits 0 even when it fails (before 0.40): its output says.
 */
async function createAdminBeforeServe(binary, line, flags, email, password, { env, logFile }) {
  const { admin } = lineFacts(line);
  // "--" ends the flags: a password may start with "-" (a generated one does, one time in 32).
  const output = await runForOutput(binary, [...admin.cliCreate, ...flags, "--", email, password], { env, logFile });
  if (!admin.cliCreated.test(output)) {
    throw new Error(`creating the ${admin.noun} ${email} failed: ${output.trim().split("\n").pop() || "PocketBase printed nothing"}`);
  }
}

const COUNT_COMMAND = "pb-fleet-count-admins";
/**
 * A command hook that prints how many admins (0.22) or superusers (0.23+) a
 * data dir has, without serving it. 0.23+ leaves out the installer account
 * PocketBase makes while none exists (core.DefaultInstallerEmail), as
 * PocketBase's own installer check does.
 */
const COUNT_HOOKS = {
  "0.22": `$app.rootCmd.addCommand(new Command({ use: "${COUNT_COMMAND}", run: () => { console.log("${COUNT_COMMAND}=" + $app.dao().totalAdmins()); } }));\n`,
  "0.23":
    `$app.rootCmd.addCommand(new Command({ use: "${COUNT_COMMAND}", run: () => { console.log("${COUNT_COMMAND}=" + ` +
    `$app.countRecords("_superusers", $dbx.not($dbx.hashExp({ email: ${JSON.stringify(HOOKS_LINES["0.23"].admin.installerEmail)} })))); } }));\n`,
};

/** How many admins/superusers the (migrated) data dir has, read with a throwaway command hook. */
async function countAdmins(binary, line, dataDir, { env, logFile }) {
  const hooksDir = await mkdtemp(join(tmpdir(), "pb-fleet-count-admins-"));
  try {
    await writeFile(join(hooksDir, "count-admins.pb.js"), COUNT_HOOKS[line]);
    const output = await runForOutput(binary, [COUNT_COMMAND, "--dir", dataDir, "--hooksDir", hooksDir, "--hooksWatch=false", devFlag(false)], { env, logFile });
    const match = new RegExp(`${COUNT_COMMAND}=(\\d+)`).exec(output);
    if (!match) throw new Error(withLog(`counting the ${lineFacts(line).admin.noun}s of ${dataDir} printed no count`, logFile));
    return Number(match[1]);
  } finally {
    await rm(hooksDir, { recursive: true, force: true });
  }
}

/** Runs one PocketBase command to completion, output appended to logFile. */
function runToCompletion(binary, args, { env, logFile, timeoutMs }) {
  return new Promise((resolveRun, reject) => {
    const fd = openSync(logFile, "a");
    const child = spawn(binary, args, { env, stdio: ["ignore", fd, fd] });
    closeSync(fd);
    running.add(child);
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      running.delete(child);
      reject(new Error(`could not run ${binary}: ${error.message}`));
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      if (code === 0) resolveRun();
      else reject(new Error(withLog(`\`${binary} ${args.join(" ")}\` ${signal === "SIGKILL" ? `did not finish within ${timeoutMs / 1000} s` : `failed (exit ${code ?? signal})`}`, logFile)));
    });
  });
}

/**
 * `line` ("0.22" | "0.23") picks how the first account is made and how it
 * signs in; when omitted it is read from the binary (one `--version` run).
 * `adminEmail`/`adminPassword` name an admin (0.22) or a superuser (0.23+).
 * @param {{
 *   binary: string, line?: "0.22" | "0.23", dataDir: string, port?: number, host?: string,
 *   hooksDir?: string, migrationsDir?: string, publicDir?: string, hooksPool?: number, hooksWatch?: boolean,
 *   adminEmail?: string, adminPassword?: string, env?: Record<string, string>,
 *   log?: (message: string) => void, logFile?: string, startTimeoutMs?: number, dev?: boolean,
 * }} options
 * `dev: true` runs PocketBase in dev mode (every SQL statement printed to the
 * log file); the default, false, passes --dev=false to every command (devFlag).
 */
export async function startPocketBase({
  binary,
  line,
  dataDir,
  port = 0,
  host = "127.0.0.1",
  hooksDir,
  migrationsDir,
  publicDir,
  hooksPool,
  hooksWatch = false,
  adminEmail = "admin@pb-fleet.test",
  adminPassword = randomBytes(18).toString("base64url"),
  env = {},
  log = () => {},
  logFile,
  startTimeoutMs = 20_000,
  dev = false,
}) {
  if (!binary) throw new Error("startPocketBase needs { binary } (see ensurePocketBase in scripts/pocketbase/binary.mjs)");
  if (!dataDir) throw new Error("startPocketBase needs { dataDir }");
  line ??= await binaryHooksLine(binary);
  const { admin } = lineFacts(line);
  dataDir = resolve(dataDir);
  await mkdir(dataDir, { recursive: true });
  logFile = resolve(logFile ?? join(dataDir, "pocketbase.log"));
  const childEnv = { ...process.env, ...env };
  const flags = pathFlags({ dataDir, hooksDir: hooksDir && resolve(hooksDir), migrationsDir: migrationsDir && resolve(migrationsDir), hooksPool, hooksWatch, dev });

  if (port === 0) port = await freePort(host);
  else if (!(await portIsFree(port, host))) {
    const error = new Error(`port ${port} on ${host} is already in use (is another PocketBase running?). Stop it or choose another port.`);
    error.code = "EADDRINUSE";
    throw error;
  }

  // An existing data dir keeps its accounts; one without any gets ours, before it listens.
  const newDataDir = !existsSync(join(dataDir, "data.db"));
  log(`pb-fleet: applying migrations (${binary} migrate up)`);
  await runToCompletion(binary, ["migrate", "up", ...flags], { env: childEnv, logFile, timeoutMs: MIGRATE_TIMEOUT_MS });
  const created = newDataDir || (await countAdmins(binary, line, dataDir, { env: childEnv, logFile })) === 0;
  if (created) {
    log(`pb-fleet: creating the first ${admin.noun} ${adminEmail} (${binary} ${admin.cliCreate.join(" ")})`);
    await createAdminBeforeServe(binary, line, flags, adminEmail, adminPassword, { env: childEnv, logFile });
  } else {
    log(`pb-fleet: ${dataDir} has ${admin.aNoun} already; logging in as ${adminEmail}`);
  }

  const serveArgs = ["serve", "--http", `${host}:${port}`, ...flags, "--automigrate=false"];
  // What it serves at / (the dashboard at /fleet/); PocketBase's default is pb_public beside its binary.
  if (publicDir) serveArgs.push("--publicDir", resolve(publicDir));
  log(`pb-fleet: starting ${binary} ${serveArgs.join(" ")} (log: ${logFile})`);
  const fd = openSync(logFile, "a");
  const child = spawn(binary, serveArgs, { env: childEnv, stdio: ["ignore", fd, fd] });
  closeSync(fd);
  running.add(child);
  let exitInfo = null;
  const exited = new Promise((resolveExit) => {
    child.once("error", (error) => {
      exitInfo = { code: null, signal: null, error };
      running.delete(child);
      resolveExit(exitInfo);
    });
    child.once("exit", (code, signal) => {
      exitInfo = { code, signal, error: null };
      running.delete(child);
      resolveExit(exitInfo);
    });
  });

  const url = `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`;

  const kill = async (signal = "SIGKILL") => {
    if (!exitInfo) child.kill(signal);
    await exited;
  };
  const stop = async () => {
    if (exitInfo) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  };

  let starting = true;
  const diedDuringStart = exited.then((info) => {
    if (!starting) return;
    if (/address already in use/.test(logTail(logFile, 5))) {
      const error = new Error(`port ${port} on ${host} is already in use (is another PocketBase running?). Stop it or choose another port.`);
      error.code = "EADDRINUSE";
      throw error;
    }
    throw new Error(`PocketBase exited during start (${info.error ? info.error.message : `exit ${info.code ?? info.signal}`})`);
  });

  try {
    try {
      await Promise.race([waitForHealth(url, startTimeoutMs), diedDuringStart]);
    } finally {
      starting = false;
    }
    let token;
    try {
      token = await adminAuth(url, adminEmail, adminPassword, line);
    } catch (error) {
      if (created) throw error;
      throw new Error(`${dataDir} already has ${admin.aNoun}, and ${adminEmail} with the given password cannot log in. Use that ${admin.noun}'s credentials, or a new data dir.`);
    }
    return {
      url,
      port,
      line,
      pid: child.pid,
      dataDir,
      logFile,
      adminEmail,
      adminPassword,
      token,
      adminCreated: created,
      /** Resolves with { code, signal, error } when the server process ends. */
      exited,
      stop,
      kill,
      peakRssBytes: () => (exitInfo ? null : readProcMemoryBytes(child.pid, "VmHWM")),
    };
  } catch (error) {
    await kill("SIGKILL");
    if (error.code === "EADDRINUSE") throw error;
    const wrapped = new Error(withLog(error.message, logFile));
    wrapped.cause = error;
    throw wrapped;
  }
}
