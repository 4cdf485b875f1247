// `npx pb-fleet worker ...` (bin/worker-commands.mjs): what it refuses before
// it reaches a server, exit code 2 and one sentence, and the patterns it
// restates from the TypeScript sources, which must stay equal.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as cli from "../../bin/worker-commands.mjs";
import { WORKER_FIELDS, WORKER_NAME_PATTERN, WORKERS_COLLECTION } from "../../src/lib/identity";
import { MAX_CLAIM_QUEUES, QUEUE_NAME_PATTERN } from "../../src/lib/queue-names";
import { freePort } from "../../scripts/pocketbase/server.mjs";

const repoRoot = resolve(import.meta.dirname, "../..");
const BIN = join(repoRoot, "bin", "pb-fleet.mjs");
/** A data dir without npm start's credentials file, so none is found by accident. */
const emptyDataDir = mkdtempSync(join(tmpdir(), "pb-fleet-cli-worker-"));
const ADMIN = { PB_ADMIN_EMAIL: "admin@pb-fleet.test", PB_ADMIN_PASSWORD: "pb-fleet-test-password", PB_DATA_DIR: emptyDataDir };

afterAll(() => rmSync(emptyDataDir, { recursive: true, force: true }));

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { env: { PATH: "/nonexistent", ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

describe("the CLI's copies of the identity and queue rules", () => {
  it("equal the TypeScript ones", () => {
    expect(cli.WORKER_NAME_PATTERN.source).toBe(WORKER_NAME_PATTERN.source);
    expect(cli.WORKER_NAME_PATTERN.flags).toBe(WORKER_NAME_PATTERN.flags);
    expect(cli.QUEUE_NAME_PATTERN.source).toBe(QUEUE_NAME_PATTERN.source);
    expect(cli.MAX_CLAIM_QUEUES).toBe(MAX_CLAIM_QUEUES);
    expect(cli.QUEUE_NAME_PATTERN.flags).toBe(QUEUE_NAME_PATTERN.flags);
    expect(cli.WORKERS_COLLECTION).toBe(WORKERS_COLLECTION);
    expect(cli.WORKER_FIELDS).toEqual(WORKER_FIELDS);
  });
});

describe("parseWorkerArguments", () => {
  it("reads create's name, queues (trimmed, without duplicates), can-enqueue and --url", () => {
    expect(cli.parseWorkerArguments(["create", "scraper-1", "--queues", "emails, reports,emails", "--can-enqueue", "--url=http://pb.test:8090/"], {})).toEqual({
      command: "worker",
      action: "create",
      name: "scraper-1",
      queues: ["emails", "reports"],
      canEnqueue: true,
      url: "http://pb.test:8090",
    });
  });

  it("takes the server from PB_URL, else the default; --url wins", () => {
    expect(cli.parseWorkerArguments(["list"], {}).url).toBe("http://127.0.0.1:8090");
    expect(cli.parseWorkerArguments(["list"], { PB_URL: "https://pb.example.com" }).url).toBe("https://pb.example.com");
    expect(cli.parseWorkerArguments(["list", "--url", "http://other:1"], { PB_URL: "https://pb.example.com" }).url).toBe("http://other:1");
  });

  it("makes a name-less create every queue and no enqueue", () => {
    const args = cli.parseWorkerArguments(["create", "w_1"], {});
    expect(args.queues).toEqual([]);
    expect(args.canEnqueue).toBe(false);
  });

  it.each(["abc", "_ab", "a.b-c_d", "x".repeat(150), "007"])("accepts the name %s", (name) => {
    expect(cli.workerNameProblem(name)).toBeNull();
  });

  it.each(["ab", "-abc", ".abc", "has space", "x".repeat(151), "naïve", "a/b", ""])("refuses the name %j", (name) => {
    expect(cli.workerNameProblem(name)).toMatch(/cannot be a worker identity's name: .*; choose another\.$/);
  });
});

describe("worker commands refused before any request", () => {
  it.each([
    { args: ["worker"], message: /worker needs an action: create, list, disable, enable, revoke, rotate/ },
    { args: ["worker", "delete", "x"], message: /unknown worker action "delete": use create, list/ },
    { args: ["worker", "create"], message: /worker create needs the identity's name/ },
    { args: ["worker", "create", "a1", "a2"], message: /worker create takes one name, got 2/ },
    { args: ["worker", "create", "ab"], message: /"ab" cannot be a worker identity's name: it has 2 characters, and a name needs 3 to 150/ },
    { args: ["worker", "create", "x".repeat(151)], message: /it has 151 characters, and a name has at most 150/ },
    { args: ["worker", "create", "bad name"], message: /"bad name" cannot be a worker identity's name: a name has only letters, digits/ },
    { args: ["worker", "disable", "-x"], message: /worker disable does not take "-x": it takes --url/ },
    { args: ["worker", "revoke", "ok-name", "--queues", "a"], message: /worker revoke does not take "--queues": it takes --url/ },
    { args: ["worker", "list", "--can-enqueue"], message: /worker list does not take "--can-enqueue"/ },
    { args: ["worker", "list", "extra"], message: /worker list takes no name/ },
    { args: ["worker", "create", "ok-name", "--queues"], message: /--queues needs queue names separated by commas/ },
    { args: ["worker", "create", "ok-name", "--queues", ""], message: /--queues is empty: give queue names separated by commas, or leave --queues out/ },
    { args: ["worker", "create", "ok-name", "--queues", "a,,b"], message: /"" in --queues is not a queue name: .*\(two commas in a row\?\)/ },
    { args: ["worker", "create", "ok-name", "--queues", "emails,bad queue"], message: /"bad queue" in --queues is not a queue name: 1 to 64 letters/ },
    { args: ["worker", "create", "ok-name", "--queues", "q".repeat(65)], message: /in --queues is not a queue name/ },
    { args: ["worker", "create", "ok-name", "--queues", Array.from({ length: 17 }, (_, i) => `q${i}`).join(",")], message: /--queues names 17 queues; an identity takes at most 16/ },
    { args: ["worker", "create", "ok-name", "--queues", "-a"], message: /--queues needs queue names/ },
    { args: ["worker", "create", "ok-name", "--can-enqueue", "--can-enqueue"], message: /--can-enqueue is given twice/ },
    { args: ["worker", "list", "--url"], message: /--url needs the server's address/ },
    { args: ["worker", "list", "--url", "ftp://pb.test"], message: /--url "ftp:\/\/pb\.test" is not an http\(s\) address/ },
    { args: ["worker", "list", "--url", "127.0.0.1:8090"], message: /is not an http\(s\) address/ },
  ])("$args -> exit 2 with a sentence", async ({ args, message }) => {
    const { code, stdout, stderr } = await run(args, ADMIN);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^pb-fleet: /);
    expect(stderr).toMatch(message);
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stdout).toBe("");
  });

  it("refuses a bad PB_URL", async () => {
    const { code, stderr } = await run(["worker", "list"], { ...ADMIN, PB_URL: "not a url" });
    expect(code).toBe(2);
    expect(stderr).toMatch(/PB_URL "not a url" is not an http\(s\) address/);
  });

  it.each<{ env: Record<string, string>; message: RegExp }>([
    { env: { PB_DATA_DIR: emptyDataDir }, message: /no admin credentials: set PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD .*pb-fleet-admin\.json, which does not exist/ },
    { env: { PB_DATA_DIR: emptyDataDir, PB_ADMIN_EMAIL: "me@example.com" }, message: /PB_ADMIN_EMAIL is set but PB_ADMIN_PASSWORD is not: set both/ },
    { env: { PB_DATA_DIR: emptyDataDir, PB_ADMIN_PASSWORD: "a password" }, message: /PB_ADMIN_PASSWORD is set but PB_ADMIN_EMAIL is not: set both/ },
  ])("refuses to run without admin credentials: $env", async ({ env, message }) => {
    // Nothing listens on the URL: the credentials are refused before any request.
    const { code, stdout, stderr } = await run(["worker", "list", "--url", `http://127.0.0.1:${await freePort()}`], env);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stdout).toBe("");
  });

  it("refuses an unreadable credentials file of npm start", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pb-fleet-cli-worker-"));
    try {
      writeFileSync(join(dataDir, "pb-fleet-admin.json"), "{ not json");
      const { code, stderr } = await run(["worker", "list"], { PB_DATA_DIR: dataDir });
      expect(code).toBe(2);
      expect(stderr).toMatch(/pb-fleet-admin\.json is not readable JSON with email and password: fix it, or set PB_ADMIN_EMAIL/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("uses npm start's credentials file, then says when nothing answers at the URL (exit 1)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pb-fleet-cli-worker-"));
    try {
      writeFileSync(join(dataDir, "pb-fleet-admin.json"), JSON.stringify({ email: "admin@pb-fleet.local", password: "stored-password" }));
      const url = `http://127.0.0.1:${await freePort()}`;
      const { code, stdout, stderr } = await run(["worker", "create", "scraper-1"], { PB_DATA_DIR: dataDir, PB_URL: url });
      expect(code).toBe(1);
      expect(stderr).toBe(`pb-fleet: PocketBase at ${url} cannot be reached (ECONNREFUSED): start it (\`npm start\`), or give its address with --url or PB_URL.\n`);
      expect(stdout).toBe("");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("prints the worker help with `worker --help`, and the commands in the general --help", async () => {
    const worker = await run(["worker", "--help"]);
    expect(worker.code).toBe(0);
    expect(worker.stdout).toContain("npx pb-fleet worker create <name> [--queues a,b] [--can-enqueue] [--url <url>]");
    expect(worker.stdout).toContain("PB_ADMIN_EMAIL and PB_ADMIN_PASSWORD");
    const general = await run(["--help"]);
    expect(general.code).toBe(0);
    expect(general.stdout).toContain("npx pb-fleet install <pb_dir> [--force]");
    expect(general.stdout).toContain("npx pb-fleet worker revoke <name> [--url <url>]");
  });

  it("finds the worker command after a flag and its value", async () => {
    const { code, stderr } = await run(["--url", "http://127.0.0.1:1", "worker", "create", "ab"], ADMIN);
    expect(code).toBe(2);
    expect(stderr).toMatch(/"ab" cannot be a worker identity's name/);
  });
});
