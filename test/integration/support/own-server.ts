// A PocketBase of a test file's own (spawned from the binary), for what the
// shared server cannot do: other environment, --hooksWatch, test-only hooks,
// a database a test may break, two processes on one database. Same version
// and hooks line as the shared server: the line's bundle, migrations and
// test-only hooks.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { inject } from "vitest";
import { ensurePocketBase } from "../../../scripts/pocketbase/binary.mjs";
import { startPocketBase } from "../../../scripts/pocketbase/server.mjs";
import { layout } from "./pocketbase-line";

export interface OwnServer {
  url: string;
  /** The PocketBase process. */
  pid: number;
  token: string;
  logFile: string;
  /** Its pb_data and pb_hooks folders (a second process may serve them: OwnServerOptions.sameDataAs). */
  dataDir: string;
  hooksDir: string;
  stop(): Promise<void>;
}

export interface OwnServerOptions {
  env?: Record<string, string>;
  hooksWatch?: boolean;
  /** Test-only hook files from the line's support/hooks* folder, besides the bundle. */
  testHooks?: string[];
  /** Hook files a test built (file name to text: the conformance routes), besides the bundle. */
  builtHooks?: Record<string, string>;
  /**
   * Start a second PocketBase process on this running own server's pb_data and
   * pb_hooks (same admin, its own port and log file): two servers of one
   * database. Its stop() leaves those folders to their owner, whose stop()
   * removes them: stop the second one first. testHooks and builtHooks are ignored (the
   * owner's hooks folder is served).
   */
  sameDataAs?: OwnServer;
  /**
   * PocketBase's dev mode (every SQL statement printed to the log file): off,
   * as on every server pb-fleet starts, unless a test needs it on.
   */
  dev?: boolean;
}

const ADMIN = { adminEmail: "own@pb-fleet.test", adminPassword: "own-server-password" };

export async function startOwnServer(opts: OwnServerOptions = {}): Promise<OwnServer> {
  const binary = await ensurePocketBase({ version: inject("pbVersion") });
  const files = layout(binary.line);
  const owner = opts.sameDataAs;
  // A second process on an owner's folders removes only its own (its log's).
  const root = mkdtempSync(join(tmpdir(), owner ? "pb-fleet-own-second-" : "pb-fleet-own-"));
  const dataDir = owner ? owner.dataDir : join(root, "pb_data");
  const hooksDir = owner ? owner.hooksDir : join(root, "pb_hooks");
  try {
    if (!owner) {
      mkdirSync(hooksDir);
      copyFileSync(files.bundle, join(hooksDir, "fleet.pb.js"));
      // As `npx pb-fleet install` puts it beside the bundle: test hooks require() it.
      copyFileSync(files.enqueueModule, join(hooksDir, basename(files.enqueueModule)));
      for (const name of opts.testHooks ?? []) copyFileSync(join(files.testHooksDir, name), join(hooksDir, name));
      for (const [name, text] of Object.entries(opts.builtHooks ?? {})) writeFileSync(join(hooksDir, name), text);
    }
    const server = await startPocketBase({
      binary: binary.path,
      line: binary.line,
      dataDir,
      hooksDir,
      migrationsDir: files.migrationsDir,
      ...(owner ? { logFile: join(root, "pocketbase.log") } : {}),
      ...ADMIN,
      env: { PB_FLEET_SWEEP_CRON: "off", ...opts.env },
      hooksWatch: opts.hooksWatch ?? false,
      dev: opts.dev ?? false,
    });
    return {
      url: server.url,
      pid: Number(server.pid),
      token: server.token,
      logFile: server.logFile,
      dataDir,
      hooksDir,
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
