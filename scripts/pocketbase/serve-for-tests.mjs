#!/usr/bin/env node
// A throwaway PocketBase for the other languages' test runners (pytest in
// clients/python, `go test` in clients/go) and the client conformance suite:
// PocketBase of PB_VERSION (default 0.22.21) with the line's committed bundle,
// enqueue module and migrations, in a temporary data folder, on a free port of 127.0.0.1, no
// cron sweep. It prints one JSON line on stdout once the server answers:
//   {"url", "version", "line", "adminEmail", "adminPassword", "token"}
// and stops the server (and deletes the folder) when its stdin closes, or on
// SIGTERM/SIGINT. A failure to start prints a sentence on stderr and exits 1.
import { mkdirSync, mkdtempSync, copyFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_PB_VERSION, ensurePocketBase } from "./binary.mjs";
import { ENQUEUE_MODULE_NAME, lineLayout, normalizePbVersion } from "./lines.mjs";
import { startPocketBase } from "./server.mjs";

const ADMIN_EMAIL = "admin@pb-fleet.test";
const ADMIN_PASSWORD = "pb-fleet-test-password";

async function main() {
  const version = normalizePbVersion(process.env.PB_VERSION || DEFAULT_PB_VERSION);
  const binary = await ensurePocketBase({ version, log: (m) => process.stderr.write(`${m}\n`) });
  const files = lineLayout(binary.line);
  const root = mkdtempSync(join(tmpdir(), "pb-fleet-serve-"));
  const hooksDir = join(root, "pb_hooks");
  mkdirSync(hooksDir);
  copyFileSync(files.bundle, join(hooksDir, "fleet.pb.js"));
  copyFileSync(files.enqueueModule, join(hooksDir, ENQUEUE_MODULE_NAME));
  let server;
  try {
    server = await startPocketBase({
      binary: binary.path,
      line: binary.line,
      dataDir: join(root, "pb_data"),
      hooksDir,
      migrationsDir: files.migrationsDir,
      adminEmail: ADMIN_EMAIL,
      adminPassword: ADMIN_PASSWORD,
      env: { PB_FLEET_SWEEP_CRON: "off", ...extraEnv() },
    });
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.stop();
    rmSync(root, { recursive: true, force: true });
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.stdin.on("end", stop);
  process.stdin.on("close", stop);
  process.stdin.resume();
  server.exited.then((info) => {
    if (stopping) return;
    process.stderr.write(`serve-for-tests: PocketBase exited (${info.code ?? info.signal}); its log: ${server.logFile}\n`);
    process.exit(1);
  });
  process.stdout.write(
    `${JSON.stringify({ url: server.url, version: binary.version, line: binary.line, adminEmail: ADMIN_EMAIL, adminPassword: ADMIN_PASSWORD, token: server.token })}\n`,
  );
}

/** PB_FLEET_* settings for the server itself, passed as SERVE_ENV_PB_FLEET_X=... (so the caller's own PB_FLEET_URL etc. stay out). */
function extraEnv() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith("SERVE_ENV_") && value !== undefined) env[key.slice("SERVE_ENV_".length)] = value;
  }
  return env;
}

main().catch((error) => {
  process.stderr.write(`serve-for-tests: ${error.message}\n`);
  process.exit(1);
});
