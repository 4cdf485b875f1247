// A PocketBase of a test file's own (spawned from the binary), for what the
// shared server cannot do: other environment, --hooksWatch, test-only hooks,
// a database a test may break. Same version and hooks line as the shared
// server: the line's bundle, migrations and test-only hooks.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { ensurePocketBase } from "../../../scripts/pocketbase/binary.mjs";
import { startPocketBase } from "../../../scripts/pocketbase/server.mjs";
import { layout } from "./pocketbase-line";

export interface OwnServer {
  url: string;
  token: string;
  logFile: string;
  stop(): Promise<void>;
}

export interface OwnServerOptions {
  env?: Record<string, string>;
  hooksWatch?: boolean;
  /** Test-only hook files from the line's support/hooks* folder, besides the bundle. */
  testHooks?: string[];
}

export async function startOwnServer(opts: OwnServerOptions = {}): Promise<OwnServer> {
  const binary = await ensurePocketBase({ version: inject("pbVersion") });
  const files = layout(binary.line);
  const root = mkdtempSync(join(tmpdir(), "pb-fleet-own-"));
  const hooksDir = join(root, "pb_hooks");
  mkdirSync(hooksDir);
  copyFileSync(files.bundle, join(hooksDir, "fleet.pb.js"));
  for (const name of opts.testHooks ?? []) copyFileSync(join(files.testHooksDir, name), join(hooksDir, name));
  try {
    const server = await startPocketBase({
      binary: binary.path,
      line: binary.line,
      dataDir: join(root, "pb_data"),
      hooksDir,
      migrationsDir: files.migrationsDir,
      adminEmail: "own@pb-fleet.test",
      adminPassword: "own-server-password",
      env: { PB_FLEET_SWEEP_CRON: "off", ...opts.env },
      hooksWatch: opts.hooksWatch ?? false,
    });
    return {
      url: server.url,
      token: server.token,
      logFile: server.logFile,
      async stop() {
        await server.stop();
        rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
}
