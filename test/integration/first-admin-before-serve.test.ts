// scripts/pocketbase/server.mjs (npm start, spawn mode, the benchmark) on the
// suite's version: the first admin (0.22) or superuser (0.23+) is made with
// PocketBase's CLI while nothing listens, on a new data dir and on an existing
// one that has none (a start that died after `migrate up`; on 0.23+ also one
// where PocketBase's installer account was left), so no server of ours ever
// listens without one. A data dir whose account is someone else's is refused
// with a sentence instead of being given a second account.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { ensurePocketBase } from "../../scripts/pocketbase/binary.mjs";
import { freePort, startPocketBase, waitForHealth } from "../../scripts/pocketbase/server.mjs";
import { get } from "./support/fleet-api";
import { account, layout } from "./support/pocketbase-line";

const root = mkdtempSync(join(tmpdir(), "pb-fleet-first-admin-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const OWNER = { adminEmail: "owner@pb-fleet.test", adminPassword: "owner-password-1" };
const SERVER_STARTED = "Server started at";

async function start(dataDir: string, credentials = OWNER) {
  const binary = await ensurePocketBase({ version: inject("pbVersion"), log: () => {} });
  return startPocketBase({
    binary: binary.path,
    line: binary.line,
    dataDir,
    hooksDir: layout(binary.line).hooksDir,
    migrationsDir: layout(binary.line).migrationsDir,
    env: { PB_FLEET_SWEEP_CRON: "off" },
    ...credentials,
  });
}

/** The log's lines from `from` on: where the CLI's success line sits against PocketBase's banner. */
function createdBeforeListening(logFile: string, from: number): void {
  const log = readFileSync(logFile, "utf8").slice(from);
  const created = log.search(account().cliCreated);
  expect(created, log).toBeGreaterThanOrEqual(0);
  expect(log.indexOf(SERVER_STARTED), log).toBeGreaterThan(created);
}

describe(`the first ${account().noun} of a server we start is made before it listens`, () => {
  it("on a new data dir; a restart signs in as the same account", async () => {
    const dataDir = join(root, "new");
    const first = await start(dataDir);
    try {
      expect(first.adminCreated).toBe(true);
      createdBeforeListening(first.logFile, 0);
      expect((await get("/api/fleet/stats", { baseUrl: first.url, token: first.token })).status).toBe(200);
    } finally {
      await first.stop();
    }
    const logSize = readFileSync(first.logFile).length;
    const again = await start(dataDir);
    try {
      expect(again.adminCreated).toBe(false);
      expect(readFileSync(again.logFile, "utf8").slice(logSize)).not.toMatch(account().cliCreated);
      expect((await get("/api/fleet/stats", { baseUrl: again.url, token: again.token })).status).toBe(200);
    } finally {
      await again.stop();
    }
  });

  it("on an existing data dir that has none", async () => {
    const dataDir = join(root, "migrated-only");
    const binary = await ensurePocketBase({ version: inject("pbVersion"), log: () => {} });
    // What a start that died after `migrate up` leaves.
    execFileSync(binary.path, ["migrate", "up", "--dir", dataDir, "--migrationsDir", layout(binary.line).migrationsDir, "--hooksDir", join(root, "no-hooks")], {
      stdio: "ignore",
      timeout: 60_000,
    });
    const server = await start(dataDir);
    try {
      expect(server.adminCreated).toBe(true);
      createdBeforeListening(server.logFile, 0);
    } finally {
      await server.stop();
    }
  });

  it("on a data dir that was served once without one (0.23+: with PocketBase's installer account in it)", async () => {
    const dataDir = join(root, "served-without");
    const binary = await ensurePocketBase({ version: inject("pbVersion"), log: () => {} });
    const port = await freePort();
    const plain = spawn(binary.path, ["serve", "--dev=false", "--http", `127.0.0.1:${port}`, "--dir", dataDir, "--migrationsDir", layout(binary.line).migrationsDir, "--hooksDir", join(root, "no-hooks")], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    plain.stdout.on("data", (d) => (output += d));
    plain.stderr.on("data", (d) => (output += d));
    const exited = new Promise((done) => plain.once("exit", done));
    try {
      await waitForHealth(`http://127.0.0.1:${port}`, 20_000);
      if (!account().anonymousFirstAdmin) {
        // 0.23+ makes its installer account right after it listens, then prints how to replace it.
        for (const deadline = Date.now() + 10_000; !/superuser upsert/.test(output) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
        expect(output).toMatch(/superuser upsert/);
      }
    } finally {
      plain.kill("SIGTERM");
      await exited;
    }
    const server = await start(dataDir);
    try {
      expect(server.adminCreated).toBe(true);
      createdBeforeListening(server.logFile, 0);
    } finally {
      await server.stop();
    }
  });

  it(`refuses a data dir whose ${account().noun} is someone else's, with a sentence`, async () => {
    const dataDir = join(root, "someone-else");
    const theirs = await start(dataDir);
    await theirs.stop();
    await expect(start(dataDir, { adminEmail: "me@pb-fleet.test", adminPassword: "my-password-123" })).rejects.toThrow(
      new RegExp(`already has ${account().aNoun}, and me@pb-fleet\\.test with the given password cannot log in`),
    );
  });
});
