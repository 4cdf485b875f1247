// Starts the PocketBase the integration suite runs against (one per run), plus,
// on PocketBase 0.22, a second one running the reference hooks for
// reference-oracle.test.ts, and provides their URLs and admin (0.22) or
// superuser (0.23+) tokens (see provided.d.ts).
//
// Where PocketBase comes from, first match wins:
//   PB_URL set            -> that server (PB_ADMIN_EMAIL / PB_ADMIN_PASSWORD; reference: PB_REFERENCE_URL)
//   a Docker engine       -> containers built from the project's Dockerfile for the version's hooks line (testcontainers)
//   otherwise             -> the binary on this machine (scripts/pocketbase/server.mjs)
// CI=true without a Docker engine is an error. PB_TEST_MODE=spawn|container forces a mode.
// PB_VERSION picks the version, 0.22.x or 0.23.x to 0.40.x (default 0.22.21), and
// with it the bundle and migrations (scripts/pocketbase/lines.mjs); PB_HOOKS_POOL sets --hooksPool.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { DEFAULT_PB_VERSION, ensurePocketBase } from "../../../scripts/pocketbase/binary.mjs";
import { HOOKS_LINES, hooksLineOf, lineLayout, normalizePbVersion } from "../../../scripts/pocketbase/lines.mjs";
import { adminAuth, startPocketBase } from "../../../scripts/pocketbase/server.mjs";
import {
  buildPocketBaseImage,
  dockerUnavailableReason,
  startPocketBaseContainer,
} from "./container";

const repoRoot = resolve(import.meta.dirname, "../../..");
/** Not part of the project: present on the team's machines, absent in a user's clone. */
export const REFERENCE_HOOKS = resolve(repoRoot, "../shared/reference/fleet-claim.pb.js");
/** The reference hooks are written against PocketBase 0.22's JS API (and were verified on 0.22.21). */
export const REFERENCE_LINE = "0.22";

type Line = keyof typeof HOOKS_LINES;

const ADMIN_EMAIL = "admin@pb-fleet.test";
const ADMIN_PASSWORD = "pb-fleet-test-password";
/**
 * The shared server runs no cron sweeps: a sweep every minute would re-queue the
 * expired leases that tests set up on purpose. sweeper-cron.test.ts starts its own.
 */
const SERVER_ENV = { PB_FLEET_SWEEP_CRON: "off" };

type Mode = "external" | "container" | "spawn";

interface Server {
  url: string;
  token: string;
  stop(): Promise<void>;
}

function log(message: string): void {
  console.log(`[pb-fleet tests] ${message}`);
}

function hooksPool(): number | undefined {
  const raw = process.env.PB_HOOKS_POOL;
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`PB_HOOKS_POOL must be a positive integer, got "${raw}"`);
  return n;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Nothing can be pulled here, and the ryuk reaper is an image; teardown stops the containers.
  process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
  // Mapped ports are reached on 127.0.0.1 (not "localhost", which may resolve to ::1).
  process.env.TESTCONTAINERS_HOST_OVERRIDE ??= "127.0.0.1";
  const ci = process.env.CI === "true";
  const version = normalizePbVersion(process.env.PB_VERSION || DEFAULT_PB_VERSION);
  const wantedLine = hooksLineOf(version);
  // An external run brings its own reference server (PB_REFERENCE_URL), or none.
  // The conformance project (test/conformance) shares this setup and compares nothing with the reference.
  const needsReference = project.name !== "conformance";
  const withReference = needsReference && wantedLine === REFERENCE_LINE && existsSync(REFERENCE_HOOKS);
  if (!needsReference) {
    log(`no reference server: the ${project.name} project does not use one.`);
  } else if (wantedLine !== REFERENCE_LINE) {
    log(`no reference server: the reference hooks are written for PocketBase 0.22's JS API and cannot load on ${version}; reference-oracle.test.ts will skip.`);
  } else if (!withReference && !process.env.PB_URL) {
    const why = `${REFERENCE_HOOKS} is absent (the reference hooks live outside the project, in ../shared)`;
    if (ci) throw new Error(`CI=true needs the reference hooks for the oracle comparison, but ${why}.`);
    log(`no reference server: ${why}; reference-oracle.test.ts will skip.`);
  }

  const servers: Server[] = [];
  const teardown = async () => {
    await Promise.allSettled(servers.map((s) => s.stop()));
  };
  let mode: Mode;
  let main: Server;
  let reference: Server | null = null;
  let versionNote = "";
  let line: Line = wantedLine;
  const started = Date.now();
  try {
    if (process.env.PB_URL) {
      mode = "external";
      ({ main, reference, versionNote } = await useExternal(line));
    } else {
      mode = await chooseLocalMode(ci);
      const binary = await ensurePocketBase({ version, log });
      // POCKETBASE_BIN may be of another line than PB_VERSION: the binary's own line decides.
      line = binary.line;
      const layout = lineLayout(line);
      if (!existsSync(layout.bundle)) {
        throw new Error(`${layout.relative.bundle}, the bundle for PocketBase ${layout.versions}, does not exist: run \`npm run build\`.`);
      }
      const start = mode === "container" ? startInContainer : startSpawned;
      const [mainResult, referenceResult] = await Promise.allSettled([
        start(binary.path, binary.version, line, layout.bundle),
        withReference && line === REFERENCE_LINE ? start(binary.path, binary.version, line, REFERENCE_HOOKS) : Promise.resolve(null),
      ]);
      // Keep whatever started, so that teardown stops it when the other failed.
      if (mainResult.status === "fulfilled") servers.push(mainResult.value);
      if (referenceResult.status === "fulfilled" && referenceResult.value) servers.push(referenceResult.value);
      if (mainResult.status === "rejected") throw mainResult.reason;
      if (referenceResult.status === "rejected") throw referenceResult.reason;
      main = mainResult.value;
      reference = referenceResult.value;
      versionNote = `binary from ${binary.source} (${binary.path}); ${mainResult.value.versionNote}`;
    }
  } catch (err) {
    await teardown();
    throw err;
  }

  log(
    `PocketBase ${version} (hooks line ${line}, ${HOOKS_LINES[line].admin.noun} auth) in ${mode} mode at ${main.url} (${versionNote}); ` +
      `hooks pool ${hooksPool() ?? (mode === "container" ? "the image's (Dockerfile)" : "PocketBase's default")}; ` +
      `reference ${reference ? reference.url : "none"}; ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  project.provide("pbUrl", main.url);
  project.provide("adminToken", main.token);
  project.provide("adminEmail", mode === "external" ? process.env.PB_ADMIN_EMAIL ?? "" : ADMIN_EMAIL);
  project.provide("adminPassword", mode === "external" ? process.env.PB_ADMIN_PASSWORD ?? "" : ADMIN_PASSWORD);
  project.provide("pbVersion", version);
  project.provide("pbLine", line);
  project.provide("pbMode", mode);
  project.provide("referenceUrl", reference?.url ?? null);
  project.provide("referenceToken", reference?.token ?? null);
  return teardown;
}

async function chooseLocalMode(ci: boolean): Promise<"container" | "spawn"> {
  const forced = process.env.PB_TEST_MODE;
  if (forced !== undefined && forced !== "" && forced !== "container" && forced !== "spawn") {
    throw new Error(`PB_TEST_MODE must be "container" or "spawn", got "${forced}"`);
  }
  if (forced === "spawn" && !ci) return "spawn";
  const noDocker = await dockerUnavailableReason();
  if (noDocker === null) return "container";
  if (ci || forced === "container") {
    throw new Error(
      `CI=true runs PocketBase in Docker, but no Docker engine answers (${noDocker}). ` +
        "Start one (apt-get install -y docker.io && dockerd &, as .ci/run does) and run again.",
    );
  }
  log(`no Docker engine (${noDocker}); running the PocketBase binary directly`);
  return "spawn";
}

async function useExternal(line: Line): Promise<{ main: Server; reference: Server | null; versionNote: string }> {
  const email = process.env.PB_ADMIN_EMAIL;
  const password = process.env.PB_ADMIN_PASSWORD;
  if (!email || !password) {
    throw new Error(`PB_URL is set: also set PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD (${HOOKS_LINES[line].admin.aNoun} of that server).`);
  }
  const url = process.env.PB_URL!.replace(/\/+$/, "");
  const main: Server = { url, token: await adminAuth(url, email, password, line), stop: async () => {} };
  let reference: Server | null = null;
  const referenceUrl = process.env.PB_REFERENCE_URL?.replace(/\/+$/, "");
  if (referenceUrl && line === REFERENCE_LINE) {
    const refEmail = process.env.PB_REFERENCE_ADMIN_EMAIL || email;
    const refPassword = process.env.PB_REFERENCE_ADMIN_PASSWORD || password;
    reference = { url: referenceUrl, token: await adminAuth(referenceUrl, refEmail, refPassword, REFERENCE_LINE), stop: async () => {} };
  }
  return { main, reference, versionNote: `version assumed from PB_VERSION, not checked` };
}

/**
 * pb-fleet's image for the line, its hooks replaced by hooksFile (the fresh
 * build, or the reference). The first admin/superuser comes from the image's
 * own bootstrap hook (PB_ADMIN_EMAIL/PB_ADMIN_PASSWORD), before the port opens.
 */
async function startInContainer(binaryPath: string, version: string, line: Line, hooksFile: string): Promise<Server & { versionNote: string }> {
  const image = await imageFor(binaryPath, version, line);
  const container = await startPocketBaseContainer({
    image,
    hooksFile,
    env: { ...SERVER_ENV, PB_ADMIN_EMAIL: ADMIN_EMAIL, PB_ADMIN_PASSWORD: ADMIN_PASSWORD },
    hooksPool: hooksPool(),
  });
  try {
    const token = await adminAuth(container.url, ADMIN_EMAIL, ADMIN_PASSWORD, line);
    return { url: container.url, token, stop: container.stop, versionNote: `image ${image}, "${container.versionLine}"` };
  } catch (err) {
    await container.stop();
    throw err;
  }
}

// Both servers use one image; build it once.
let imageBuild: Promise<string> | undefined;
function imageFor(binaryPath: string, version: string, line: Line): Promise<string> {
  imageBuild ??= (async () => {
    const t = Date.now();
    const tag = await buildPocketBaseImage(repoRoot, binaryPath, version, line);
    log(`built image ${tag} from ${repoRoot}/Dockerfile in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    return tag;
  })();
  return imageBuild;
}

async function startSpawned(binaryPath: string, _version: string, line: Line, hooksFile: string): Promise<Server & { versionNote: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "pb-fleet-test-data-"));
  // PocketBase loads every *.pb.js of a directory: give each server one file.
  const hooksDir = mkdtempSync(join(tmpdir(), "pb-fleet-test-hooks-"));
  copyFileSync(hooksFile, join(hooksDir, "fleet.pb.js"));
  const cleanup = () => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(hooksDir, { recursive: true, force: true });
  };
  try {
    const server = await startPocketBase({
      binary: binaryPath,
      line,
      dataDir,
      port: 0,
      hooksDir,
      migrationsDir: lineLayout(line).migrationsDir,
      // The dashboard, as npm start serves it (PocketBase's default is pb_public beside the binary).
      publicDir: resolve(repoRoot, "pb_public"),
      hooksPool: hooksPool(),
      adminEmail: ADMIN_EMAIL,
      adminPassword: ADMIN_PASSWORD,
      env: SERVER_ENV,
      log,
    });
    return {
      url: server.url,
      token: server.token,
      stop: async () => {
        await server.stop();
        cleanup();
      },
      versionNote: `pid ${server.pid}`,
    };
  } catch (err) {
    cleanup();
    throw err;
  }
}
