// Starts a real PocketBase 0.22 for npm start, the test suite's spawn mode and
// the benchmarks: migrate up, create the admin, serve on 127.0.0.1, wait for
// /api/health and return the admin's token. PocketBase's own output goes to a
// log file whose tail is put into every error.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";

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

async function postJson(url, path, body, token) {
  const response = await fetch(new URL(path, url), {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(token ? { Authorization: token } : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
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

/** Admin token for email/password (POST /api/admins/auth-with-password). */
export async function adminAuth(url, email, password) {
  const { status, json, text } = await postJson(url, "/api/admins/auth-with-password", { identity: email, password });
  if (status !== 200 || typeof json?.token !== "string") {
    throw new Error(`admin login as ${email} failed at ${url}: HTTP ${status} ${text.slice(0, 300)}`);
  }
  return json.token;
}

/**
 * Creates the first admin over HTTP. PocketBase 0.22 allows POST /api/admins
 * without auth only while no admin exists; afterwards it answers 401.
 * @returns {Promise<boolean>} true if created, false if an admin already existed
 */
export async function createFirstAdmin(url, email, password) {
  const { status, json, text } = await postJson(url, "/api/admins", { email, password, passwordConfirm: password });
  if (status === 200) return true;
  if (status === 401) return false;
  const fields = json?.data && Object.keys(json.data).length ? ` (${Object.entries(json.data).map(([k, v]) => `${k}: ${v?.message ?? v}`).join("; ")})` : "";
  throw new Error(`creating the admin ${email} failed: HTTP ${status} ${json?.message ?? text.slice(0, 300)}${fields}`);
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

function pathFlags({ dataDir, hooksDir, migrationsDir, hooksPool, hooksWatch }) {
  // --hooksWatch is off unless asked for: with it on, an error while loading the
  // hooks is only printed and PocketBase runs on without what failed.
  const flags = ["--dir", dataDir, `--hooksWatch=${hooksWatch === true}`];
  if (hooksDir) flags.push("--hooksDir", hooksDir);
  if (migrationsDir) flags.push("--migrationsDir", migrationsDir);
  if (hooksPool !== undefined && hooksPool !== null) flags.push(`--hooksPool=${hooksPool}`);
  return flags;
}

/**
 * Creates the first admin of a new data dir with PocketBase's CLI, before the
 * server listens: PocketBase 0.22 lets anyone create the first admin over HTTP
 * while none exists, so a new server must not listen without one. The CLI
 * exits 0 even when it fails: its output says.
 */
async function createAdminBeforeServe(binary, flags, email, password, { env, logFile }) {
  const before = statSync(logFile, { throwIfNoEntry: false })?.size ?? 0;
  // "--" ends the flags: a password may start with "-" (a generated one does, one time in 32).
  await runToCompletion(binary, ["admin", "create", ...flags, "--", email, password], { env, logFile, timeoutMs: MIGRATE_TIMEOUT_MS });
  const output = readFileSync(logFile, "utf8").slice(before);
  if (!/Successfully created new admin/.test(output)) {
    throw new Error(`creating the admin ${email} failed: ${output.trim().split("\n").pop() || "PocketBase printed nothing"}`);
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
 * @param {{
 *   binary: string, dataDir: string, port?: number, host?: string,
 *   hooksDir?: string, migrationsDir?: string, hooksPool?: number, hooksWatch?: boolean,
 *   adminEmail?: string, adminPassword?: string, env?: Record<string, string>,
 *   log?: (message: string) => void, logFile?: string, startTimeoutMs?: number,
 * }} options
 */
export async function startPocketBase({
  binary,
  dataDir,
  port = 0,
  host = "127.0.0.1",
  hooksDir,
  migrationsDir,
  hooksPool,
  hooksWatch = false,
  adminEmail = "admin@pb-fleet.test",
  adminPassword = randomBytes(18).toString("base64url"),
  env = {},
  log = () => {},
  logFile,
  startTimeoutMs = 20_000,
}) {
  if (!binary) throw new Error("startPocketBase needs { binary } (see ensurePocketBase in scripts/pocketbase/binary.mjs)");
  if (!dataDir) throw new Error("startPocketBase needs { dataDir }");
  dataDir = resolve(dataDir);
  await mkdir(dataDir, { recursive: true });
  logFile = resolve(logFile ?? join(dataDir, "pocketbase.log"));
  const childEnv = { ...process.env, ...env };
  const flags = pathFlags({ dataDir, hooksDir: hooksDir && resolve(hooksDir), migrationsDir: migrationsDir && resolve(migrationsDir), hooksPool, hooksWatch });

  if (port === 0) port = await freePort(host);
  else if (!(await portIsFree(port, host))) {
    const error = new Error(`port ${port} on ${host} is already in use (is another PocketBase running?). Stop it or choose another port.`);
    error.code = "EADDRINUSE";
    throw error;
  }

  // An existing data dir keeps its admins (created over HTTP below only if it has none).
  const newDataDir = !existsSync(join(dataDir, "data.db"));
  log(`pb-fleet: applying migrations (${binary} migrate up)`);
  await runToCompletion(binary, ["migrate", "up", ...flags], { env: childEnv, logFile, timeoutMs: MIGRATE_TIMEOUT_MS });
  if (newDataDir) {
    log(`pb-fleet: creating the first admin ${adminEmail} (${binary} admin create)`);
    await createAdminBeforeServe(binary, flags, adminEmail, adminPassword, { env: childEnv, logFile });
  }

  const serveArgs = ["serve", "--http", `${host}:${port}`, ...flags, "--automigrate=false"];
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
    const created = newDataDir || (await createFirstAdmin(url, adminEmail, adminPassword));
    if (!newDataDir) log(created ? `pb-fleet: created the first admin ${adminEmail}` : `pb-fleet: an admin already exists; logging in as ${adminEmail}`);
    let token;
    try {
      token = await adminAuth(url, adminEmail, adminPassword);
    } catch (error) {
      if (created) throw error;
      throw new Error(`${dataDir} already has an admin, and ${adminEmail} with the given password cannot log in. Use that admin's credentials, or a new data dir.`);
    }
    return {
      url,
      port,
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
