// Finds or builds a PocketBase binary for the hooks to run on: any 0.22.x, or
// 0.23.x to 0.40.x (see lines.mjs for the two hooks lines).
// Order: POCKETBASE_BIN (verified, never second-guessed by a fallback), the
// cache, `go install` from the Go module proxy, the official release zip.
// Every external step has a timeout, and when nothing works the error says
// what was tried, why each failed and what the user can do.
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { access, chmod, copyFile, mkdir, mkdtemp, open, readFile, rename, rm, rmdir, stat, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { inflateRawSync } from "node:zlib";
import { DEFAULT_PB_VERSION, SUPPORTED_VERSIONS_TEXT, UnsupportedPocketBaseVersion, hooksLineOf, normalizePbVersion } from "./lines.mjs";

export { DEFAULT_PB_VERSION, normalizePbVersion };
/** The newest 0.22 release the Go module proxy serves here (v0.22.51/52 are refused with 403). */
export const NEWEST_AVAILABLE_PB_VERSION = "0.22.50";
/** Versions the Go module proxy answers with 403 "This module version is not available". */
export const PROXY_REFUSED_VERSIONS = ["0.22.51", "0.22.52"];

/**
 * PocketBase minors whose go.mod asks for a newer Go than many machines have,
 * and the toolchain checked to build them (GOTOOLCHAIN downloads it through the
 * Go module proxy). v0.40's go.mod says `go 1.27`; every earlier supported
 * version builds with Go 1.25 or older.
 */
export const GO_TOOLCHAIN_NEEDS = Object.freeze([{ fromMinor: 40, minimumGo: "1.27", toolchain: "go1.27.3" }]);

const GO_INSTALL_TIMEOUT_MS = 15 * 60 * 1000; // a fresh module + build cache takes ~2-3 min (plus a toolchain download)
const GO_PROBE_TIMEOUT_MS = 15 * 1000;
const VERIFY_TIMEOUT_MS = 20 * 1000;
const DOWNLOAD_TIMEOUT_MS = 5 * 60 * 1000;
const CONNECT_TIMEOUT_MS = 20 * 1000;

/** A bad PB_VERSION, a refused POCKETBASE_BIN, or nothing worked; `exitCode` is what a CLI should exit with. */
export class PocketBaseBinaryError extends Error {
  /** @param {string} message @param {{ exitCode?: number, tried?: Array<{ option: string, outcome: string }> }} [details] */
  constructor(message, { exitCode = 1, tried = [] } = {}) {
    super(message);
    this.name = "PocketBaseBinaryError";
    this.exitCode = exitCode;
    this.tried = tried;
  }
}

/** normalizePbVersion with the refusal as a PocketBaseBinaryError (exit code 2). */
function wantedVersion(input) {
  try {
    return normalizePbVersion(input);
  } catch (error) {
    if (error instanceof UnsupportedPocketBaseVersion) throw new PocketBaseBinaryError(error.message, { exitCode: 2 });
    throw error;
  }
}

/** [major, minor, patch] of "1.26.8", "go1.27.3" or "go version go1.26.8 linux/amd64"; null when there is none. */
function goVersionNumbers(text) {
  const match = /(?:^|go)(\d+)\.(\d+)(?:\.(\d+))?/.exec(String(text));
  return match ? [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)] : null;
}

function goVersionAtLeast(have, need) {
  for (let i = 0; i < 3; i++) if (have[i] !== need[i]) return have[i] > need[i];
  return true;
}

/**
 * The GOTOOLCHAIN value `go install` of PocketBase `version` needs with the
 * local Go (`go version` output), or null when the local Go will do or the
 * user chose a GOTOOLCHAIN of their own (`env`).
 * @returns {{ toolchain: string, minimumGo: string } | null}
 */
export function goToolchainFor(version, localGoVersionText, env = process.env) {
  const minor = Number(String(version).split(".")[1]);
  const need = [...GO_TOOLCHAIN_NEEDS].reverse().find((n) => minor >= n.fromMinor);
  if (!need || env.GOTOOLCHAIN) return null;
  const have = goVersionNumbers(localGoVersionText);
  if (have && goVersionAtLeast(have, goVersionNumbers(need.minimumGo))) return null;
  return { toolchain: need.toolchain, minimumGo: need.minimumGo };
}

/** Root of pb-fleet's cache: $PB_FLEET_CACHE, else $XDG_CACHE_HOME/pb-fleet, else ~/.cache/pb-fleet. */
export function cacheRoot() {
  if (process.env.PB_FLEET_CACHE) return process.env.PB_FLEET_CACHE;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "pb-fleet");
}

export function cachedBinaryPath(version) {
  return join(cacheRoot(), "pocketbase", version, process.platform === "win32" ? "pocketbase.exe" : "pocketbase");
}

/**
 * Runs a command with a hard timeout (the whole process group is killed, so
 * `go install`'s compiler children go too). Never rejects.
 */
export function runCommand(command, args, { timeoutMs, env = process.env, cwd, onOutput } = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    let output = "";
    let child;
    try {
      child = spawn(command, args, { env, cwd, stdio: ["ignore", "pipe", "pipe"], detached: process.platform !== "win32" });
    } catch (error) {
      resolve({ code: null, signal: null, output: "", timedOut: false, error, seconds: 0 });
      return;
    }
    const collect = (chunk) => {
      const text = chunk.toString();
      output += text;
      if (output.length > 200_000) output = output.slice(-100_000);
      onOutput?.(text);
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (process.platform === "win32") child.kill("SIGKILL");
        else process.kill(-child.pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    }, timeoutMs ?? 60_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, output, timedOut, error, seconds: (Date.now() - started) / 1000 });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output, timedOut, error: null, seconds: (Date.now() - started) / 1000 });
    });
  });
}

function lastLines(text, count = 12) {
  return text.trim().split("\n").slice(-count).join("\n");
}

function indent(text, prefix = "      ") {
  return text.split("\n").map((line) => prefix + line).join("\n");
}

/**
 * The hooks line of a PocketBase binary from its command list (`--help`): 0.22
 * has `admin`, 0.23+ has `superuser`. For binaries built without a version stamp.
 * @returns {"0.22" | "0.23" | null}
 */
export function hooksLineFromHelp(helpText) {
  if (/^\s+superuser\s/m.test(helpText)) return "0.23";
  if (/^\s+admin\s/m.test(helpText)) return "0.22";
  return null;
}

/**
 * Checks that `path` is an executable PocketBase binary of a supported version.
 * `--version` must report it (and `expectedVersion`, when given); a binary
 * built without the version stamp ("(untracked)") passes if `serve --help`
 * has PocketBase's --hooksDir flag, and its line is read from its commands.
 * @returns {Promise<{ ok: true, version: string | null, line: "0.22" | "0.23" } | { ok: false, reason: string }>}
 */
export async function verifyPocketBaseBinary(path, expectedVersion) {
  let info;
  try {
    info = await stat(path);
  } catch {
    return { ok: false, reason: `${path} does not exist` };
  }
  if (!info.isFile()) return { ok: false, reason: `${path} is not a file` };
  if (process.platform !== "win32") {
    try {
      await access(path, fsConstants.X_OK);
    } catch {
      return { ok: false, reason: `${path} is not executable (chmod +x it)` };
    }
  }
  // Run from a scratch directory: PocketBase looks for pb_hooks/pb_migrations beside its data dir.
  const cwd = await mkdtemp(join(tmpdir(), "pb-fleet-verify-"));
  try {
    const versionRun = await runCommand(path, ["--version"], { timeoutMs: VERIFY_TIMEOUT_MS, cwd });
    if (versionRun.error) return { ok: false, reason: `running ${path} --version failed: ${versionRun.error.message}` };
    if (versionRun.timedOut) return { ok: false, reason: `${path} --version did not answer within ${VERIFY_TIMEOUT_MS / 1000} s` };
    const reported = /version\s+v?(\d+\.\d+\.\d+)/.exec(versionRun.output)?.[1] ?? null;
    if (versionRun.code === 0 && reported) {
      let line;
      try {
        line = hooksLineOf(reported);
      } catch {
        return { ok: false, reason: `${path} is PocketBase ${reported}; pb-fleet needs ${SUPPORTED_VERSIONS_TEXT}` };
      }
      if (expectedVersion && reported !== expectedVersion) {
        return { ok: false, reason: `${path} is PocketBase ${reported}, not ${expectedVersion}`, reported };
      }
      return { ok: true, version: reported, line };
    }
    const helpRun = await runCommand(path, ["serve", "--help"], { timeoutMs: VERIFY_TIMEOUT_MS, cwd });
    const line = helpRun.code === 0 ? hooksLineFromHelp((await runCommand(path, ["--help"], { timeoutMs: VERIFY_TIMEOUT_MS, cwd })).output) : null;
    if (helpRun.code === 0 && /--hooksDir/.test(helpRun.output) && line) return { ok: true, version: null, line };
    return {
      ok: false,
      reason:
        `${path} is not a working PocketBase binary: \`--version\` printed ${JSON.stringify(lastLines(versionRun.output, 2))}` +
        ` (exit ${versionRun.code ?? versionRun.signal}) and \`serve --help\` exited ${helpRun.code ?? helpRun.signal}` +
        (helpRun.code !== 0 ? "" : !/--hooksDir/.test(helpRun.output) ? " without PocketBase's --hooksDir flag" : " but `--help` lists neither `admin` (0.22) nor `superuser` (0.23+)"),
    };
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

/** Go's names for this machine, as used in `go install` and release archive names. */
function goPlatform() {
  const os = { linux: "linux", darwin: "darwin", win32: "windows" }[process.platform] ?? process.platform;
  const arch = { x64: "amd64", arm64: "arm64", arm: "armv7", ppc64: "ppc64le", s390x: "s390x" }[process.arch] ?? process.arch;
  return { os, arch };
}

async function installFromGo(version, target, log) {
  const probe = await runCommand("go", ["version"], { timeoutMs: GO_PROBE_TIMEOUT_MS });
  if (probe.error || probe.code !== 0) {
    const why = probe.error?.code === "ENOENT" ? "`go` is not on PATH" : `\`go version\` failed: ${lastLines(probe.output || String(probe.error), 3)}`;
    return { ok: false, reason: why };
  }
  const toolchain = goToolchainFor(version, probe.output);
  const goEnv = toolchain ? { GOTOOLCHAIN: toolchain.toolchain } : {};
  log(
    `pb-fleet: building PocketBase ${version} with ${probe.output.trim()}` +
      (toolchain ? ` through GOTOOLCHAIN=${toolchain.toolchain} (PocketBase ${version} needs Go >= ${toolchain.minimumGo}; Go fetches that toolchain from the module proxy once)` : "") +
      ` (go install from the Go module proxy; a fresh Go cache takes a few minutes, limit ${GO_INSTALL_TIMEOUT_MS / 60000} min)`,
  );
  await mkdir(dirname(target), { recursive: true });
  // A temp GOBIN beside the cache so the final move is a rename on one filesystem.
  const gobin = await mkdtemp(join(dirname(target), ".gobin-"));
  const module = `github.com/pocketbase/pocketbase/examples/base@v${version}`;
  const stamp = `-X github.com/pocketbase/pocketbase.Version=${version}`;
  try {
    const attempt = async (ldflags) => {
      const args = ["install", "-ldflags", ldflags, module];
      log(`pb-fleet: CGO_ENABLED=0 GOBIN=${gobin}${toolchain ? ` GOTOOLCHAIN=${toolchain.toolchain}` : ""} go ${args.map((a) => (a.includes(" ") ? JSON.stringify(a) : a)).join(" ")}`);
      const started = Date.now();
      const ticker = setInterval(() => log(`pb-fleet: still building PocketBase ${version} (${Math.round((Date.now() - started) / 1000)} s)`), 30_000);
      try {
        return await runCommand("go", args, {
          timeoutMs: GO_INSTALL_TIMEOUT_MS,
          env: { ...process.env, ...goEnv, CGO_ENABLED: "0", GOBIN: gobin, GOFLAGS: process.env.GOFLAGS ?? "-buildvcs=false" },
        });
      } finally {
        clearInterval(ticker);
      }
    };
    let run = await attempt(`-s -w ${stamp}`);
    if (run.code !== 0 && !run.timedOut && /linkname/.test(run.output)) {
      log("pb-fleet: Go refused an old dependency's //go:linkname; retrying with -checklinkname=0");
      run = await attempt(`-s -w -checklinkname=0 ${stamp}`);
    }
    if (run.timedOut) return { ok: false, reason: `go install did not finish within ${GO_INSTALL_TIMEOUT_MS / 60000} min` };
    if (run.code !== 0) {
      let reason = `go install failed (exit ${run.code ?? run.signal}):\n${indent(lastLines(run.output, 8))}`;
      if (/403|not available|Forbidden/i.test(run.output)) {
        reason +=
          `\n      The Go module proxy refused v${version}` +
          (PROXY_REFUSED_VERSIONS.includes(version) ? ` (it refuses ${PROXY_REFUSED_VERSIONS.map((v) => "v" + v).join(" and ")})` : "") +
          `: use PB_VERSION=${NEWEST_AVAILABLE_PB_VERSION}, the newest 0.22 release it serves.`;
      } else if (/unknown revision|invalid version|no matching versions/i.test(run.output)) {
        reason += version.startsWith("0.22.")
          ? `\n      There is no PocketBase v${version}: the 0.22 line ends at v0.22.52 (use ${NEWEST_AVAILABLE_PB_VERSION}).`
          : `\n      The Go module proxy has no PocketBase v${version}: check the version (https://github.com/pocketbase/pocketbase/releases).`;
      } else if (/requires go >= ?([\d.]+)/.test(run.output)) {
        const needed = /requires go >= ?([\d.]+)/.exec(run.output)[1];
        reason += process.env.GOTOOLCHAIN
          ? `\n      PocketBase v${version} needs Go >= ${needed}, and GOTOOLCHAIN=${process.env.GOTOOLCHAIN} is set: unset it (pb-fleet then picks a toolchain) or set a newer one.`
          : `\n      PocketBase v${version} needs Go >= ${needed}: install it, or set GOTOOLCHAIN=go${needed}.0 or newer (Go downloads that toolchain).`;
      }
      return { ok: false, reason };
    }
    const built = join(gobin, process.platform === "win32" ? "base.exe" : "base");
    await rename(built, target);
    log(`pb-fleet: built PocketBase ${version} in ${Math.round(run.seconds)} s -> ${target}`);
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `go install succeeded but moving the binary failed: ${error.message}` };
  } finally {
    await rm(gobin, { recursive: true, force: true });
  }
}

/** fetch() with a deadline for the response headers and another for the body. */
async function download(url) {
  const controller = new AbortController();
  const headerTimer = setTimeout(() => controller.abort(new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`)), CONNECT_TIMEOUT_MS);
  const bodyTimer = setTimeout(() => controller.abort(new Error(`download not finished within ${DOWNLOAD_TIMEOUT_MS / 1000} s`)), DOWNLOAD_TIMEOUT_MS);
  try {
    const response = await fetch(url, { signal: controller.signal, redirect: "follow" });
    clearTimeout(headerTimer);
    if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`);
    return Buffer.from(await response.arrayBuffer());
  } catch (error) {
    const cause = error?.cause?.code ? ` (${error.cause.code})` : error?.cause?.message ? ` (${error.cause.message})` : "";
    throw new Error(`${error.message}${cause}`);
  } finally {
    clearTimeout(headerTimer);
    clearTimeout(bodyTimer);
  }
}

/** Extracts one file from a zip archive (stored or deflated entries; no zip64: PocketBase's archives are small). */
export function extractZipEntry(zip, entryName) {
  const EOCD = 0x06054b50;
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 65535); i--) {
    if (zip.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error("not a zip archive (no end-of-central-directory record)");
  const entries = zip.readUInt16LE(eocd + 10);
  let offset = zip.readUInt32LE(eocd + 16);
  for (let n = 0; n < entries; n++) {
    if (zip.readUInt32LE(offset) !== 0x02014b50) throw new Error("corrupt zip central directory");
    const method = zip.readUInt16LE(offset + 10);
    const compressedSize = zip.readUInt32LE(offset + 20);
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    const localOffset = zip.readUInt32LE(offset + 42);
    const name = zip.toString("utf8", offset + 46, offset + 46 + nameLength);
    offset += 46 + nameLength + extraLength + commentLength;
    if (name !== entryName) continue;
    if (zip.readUInt32LE(localOffset) !== 0x04034b50) throw new Error("corrupt zip local header");
    const dataStart = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    const data = zip.subarray(dataStart, dataStart + compressedSize);
    if (method === 0) return Buffer.from(data);
    if (method === 8) return inflateRawSync(data);
    throw new Error(`zip entry ${name} uses unsupported compression method ${method}`);
  }
  throw new Error(`the archive has no ${entryName}`);
}

async function installFromRelease(version, target, log) {
  const { os, arch } = goPlatform();
  const archive = `pocketbase_${version}_${os}_${arch}.zip`;
  // PB_FLEET_RELEASE_URL: a mirror laid out like GitHub's releases/download folder.
  const mirror = process.env.PB_FLEET_RELEASE_URL?.replace(/\/+$/, "");
  const base = `${mirror || "https://github.com/pocketbase/pocketbase/releases/download"}/v${version}`;
  log(`pb-fleet: downloading ${base}/${archive}`);
  try {
    const [zip, checksums] = await Promise.all([download(`${base}/${archive}`), download(`${base}/checksums.txt`)]);
    const expected = checksums.toString("utf8").split("\n").map((line) => line.trim().split(/\s+/)).find((parts) => parts[1] === archive)?.[0];
    if (!expected) return { ok: false, reason: `checksums.txt of v${version} lists no ${archive}` };
    const actual = createHash("sha256").update(zip).digest("hex");
    if (actual !== expected) return { ok: false, reason: `${archive} has sha256 ${actual}, checksums.txt says ${expected}` };
    const binary = extractZipEntry(zip, os === "windows" ? "pocketbase.exe" : "pocketbase");
    await mkdir(dirname(target), { recursive: true });
    const partial = `${target}.${randomBytes(4).toString("hex")}.partial`;
    await writeFile(partial, binary, { mode: 0o755 });
    await rename(partial, target);
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `${base}/${archive}: ${error.message}` };
  }
}

/**
 * `line` is the binary's hooks line ("0.22" | "0.23"): from the version it
 * reports, which for POCKETBASE_BIN may differ from PB_VERSION (the binary wins).
 * `useEnvBinary: false` skips POCKETBASE_BIN (for a caller that needs exactly `version`).
 * @param {{ version?: string, log?: (message: string) => void, useEnvBinary?: boolean }} [options]
 * @returns {Promise<{ path: string, version: string, line: "0.22" | "0.23", source: "env" | "cache" | "go" | "release" }>}
 */
export async function ensurePocketBase({ version = process.env.PB_VERSION || DEFAULT_PB_VERSION, log = (m) => console.error(m), useEnvBinary = true } = {}) {
  const wanted = wantedVersion(version);

  const fromEnv = useEnvBinary ? process.env.POCKETBASE_BIN : undefined;
  if (fromEnv) {
    // The user chose this binary: verify it, but never silently use another one.
    const check = await verifyPocketBaseBinary(fromEnv, null);
    if (!check.ok) {
      throw new PocketBaseBinaryError(
        `POCKETBASE_BIN=${fromEnv} cannot be used: ${check.reason}.\n` +
          `Point POCKETBASE_BIN at a PocketBase ${SUPPORTED_VERSIONS_TEXT} binary, or unset it to let pb-fleet get PocketBase ${wanted} itself.`,
        { tried: [{ option: "POCKETBASE_BIN", outcome: check.reason }] },
      );
    }
    // An unstamped binary of the other line than PB_VERSION's: say its line, not a version it is not.
    const assumed = hooksLineOf(wanted) === check.line ? wanted : `${check.line}.x`;
    log(`pb-fleet: using POCKETBASE_BIN=${fromEnv} (PocketBase ${check.version ?? `${assumed}, assumed: the binary reports no version`})`);
    return { path: fromEnv, version: check.version ?? assumed, line: check.line, source: "env" };
  }

  const tried = [{ option: "POCKETBASE_BIN", outcome: useEnvBinary ? "not set" : "not used here" }];
  const target = cachedBinaryPath(wanted);

  const cached = await verifyPocketBaseBinary(target, wanted);
  if (cached.ok) {
    log(`pb-fleet: using cached PocketBase ${wanted}: ${target}`);
    return { path: target, version: wanted, line: cached.line, source: "cache" };
  }
  const notThere = /does not exist$/.test(cached.reason);
  tried.push({ option: `cache ${target}`, outcome: notThere ? "not there yet" : cached.reason });
  if (!notThere) {
    log(`pb-fleet: discarding the cached binary: ${cached.reason}`);
    await rm(target, { force: true });
  }

  const fromGo = await installFromGo(wanted, target, log);
  if (fromGo.ok) {
    const check = await verifyPocketBaseBinary(target, wanted);
    if (check.ok) return { path: target, version: wanted, line: check.line, source: "go" };
    tried.push({ option: `go install github.com/pocketbase/pocketbase/examples/base@v${wanted}`, outcome: `built, but ${check.reason}` });
    await rm(target, { force: true });
  } else {
    tried.push({ option: `go install github.com/pocketbase/pocketbase/examples/base@v${wanted}`, outcome: fromGo.reason });
    log(`pb-fleet: go install did not work: ${fromGo.reason.split("\n")[0].replace(/:$/, " (details below)")}`);
  }

  const fromRelease = await installFromRelease(wanted, target, log);
  if (fromRelease.ok) {
    const check = await verifyPocketBaseBinary(target, wanted);
    if (check.ok) return { path: target, version: wanted, line: check.line, source: "release" };
    tried.push({ option: "release archive", outcome: `downloaded, but ${check.reason}` });
    await rm(target, { force: true });
  } else {
    tried.push({ option: "release archive", outcome: fromRelease.reason });
  }

  await rmdir(dirname(target)).catch(() => {}); // drop the version folder if it stayed empty
  const { os, arch } = goPlatform();
  throw new PocketBaseBinaryError(
    [
      `Could not get a PocketBase ${wanted} binary. Tried, in order:`,
      ...tried.map((t, i) => `  ${i + 1}. ${t.option}: ${t.outcome}`),
      "What you can do:",
      `  - point POCKETBASE_BIN at a PocketBase ${wanted} binary: POCKETBASE_BIN=/path/to/pocketbase npm start`,
      `  - install Go 1.21 or newer (https://go.dev/dl/) and run again: pb-fleet builds PocketBase from the Go module proxy`,
      `  - or download pocketbase_${wanted}_${os}_${arch}.zip from https://github.com/pocketbase/pocketbase/releases/tag/v${wanted} and unzip its pocketbase binary to ${target}`,
    ].join("\n"),
    { tried },
  );
}

/**
 * The ELF interpreter (dynamic loader) a Linux binary asks for, or null for a
 * static binary. A scratch image can only run a static one.
 */
export async function elfInterpreter(path) {
  const file = await open(path, "r");
  try {
    const header = Buffer.alloc(64);
    await file.read(header, 0, 64, 0);
    if (header.readUInt32BE(0) !== 0x7f454c46) throw new Error(`${path} is not an ELF binary`);
    if (header[4] !== 2 || header[5] !== 1) throw new Error(`${path} is not a 64-bit little-endian ELF binary`);
    const phoff = Number(header.readBigUInt64LE(32));
    const phentsize = header.readUInt16LE(54);
    const phnum = header.readUInt16LE(56);
    const table = Buffer.alloc(phentsize * phnum);
    await file.read(table, 0, table.length, phoff);
    for (let i = 0; i < phnum; i++) {
      const entry = i * phentsize;
      if (table.readUInt32LE(entry) !== 3 /* PT_INTERP */) continue;
      const offset = Number(table.readBigUInt64LE(entry + 8));
      const size = Number(table.readBigUInt64LE(entry + 32));
      const name = Buffer.alloc(size);
      await file.read(name, 0, size, offset);
      return name.toString("utf8").replace(/\0+$/, "");
    }
    return null;
  } finally {
    await file.close();
  }
}

/** Copies a binary (atomically) to `target` with mode 755. */
export async function installBinaryCopy(source, target) {
  await mkdir(dirname(target), { recursive: true });
  const partial = `${target}.${randomBytes(4).toString("hex")}.partial`;
  await copyFile(source, partial);
  await chmod(partial, 0o755);
  await rename(partial, target);
}

/** Whether a file's bytes equal another's (cheap check before rewriting the Docker context). */
export async function sameFileContent(a, b) {
  try {
    const [left, right] = await Promise.all([stat(a), stat(b)]);
    if (left.size !== right.size) return false;
    const [x, y] = await Promise.all([readFile(a), readFile(b)]);
    return x.equals(y);
  } catch {
    return false;
  }
}
