// A PocketBase of a test file's own (spawned from the binary), for what the
// shared server cannot do: other environment, --hooksWatch, test-only hooks,
// a database a test may break.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { inject } from "vitest";
import { ensurePocketBase } from "../../../scripts/pocketbase/binary.mjs";
import { startPocketBase } from "../../../scripts/pocketbase/server.mjs";

const repoRoot = resolve(import.meta.dirname, "../../..");

export interface OwnServer {
  url: string;
  token: string;
  logFile: string;
  stop(): Promise<void>;
}

export interface OwnServerOptions {
  env?: Record<string, string>;
  hooksWatch?: boolean;
  /** Test-only hook files from ./hooks, besides the bundle. */
  testHooks?: string[];
}

export async function startOwnServer(opts: OwnServerOptions = {}): Promise<OwnServer> {
  const { path } = await ensurePocketBase({ version: inject("pbVersion") });
  const root = mkdtempSync(join(tmpdir(), "pb-fleet-own-"));
  const hooksDir = join(root, "pb_hooks");
  mkdirSync(hooksDir);
  copyFileSync(join(repoRoot, "pb_hooks", "fleet.pb.js"), join(hooksDir, "fleet.pb.js"));
  for (const name of opts.testHooks ?? []) copyFileSync(join(import.meta.dirname, "hooks", name), join(hooksDir, name));
  const server = await startPocketBase({
    binary: path,
    dataDir: join(root, "pb_data"),
    hooksDir,
    migrationsDir: join(repoRoot, "pb_migrations"),
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
}
