// Bad arguments and environment of `npm run get-pocketbase` and `npm start` are
// refused with a sentence and exit code 2, before anything is built or started.
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const repoRoot = resolve(import.meta.dirname, "../..");

function run(script: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    // No PATH: nothing (go, a PocketBase build) could run even if validation let it through.
    execFile(process.execPath, [join(repoRoot, script), ...args], { env: { PATH: "/nonexistent", ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

describe("get-pocketbase arguments", () => {
  it.each([
    { args: ["--version", "0.41.0"], message: /PB_VERSION "0\.41\.0" is not supported: pb-fleet runs on PocketBase 0\.22\.x and 0\.23\.x to 0\.40\.x/ },
    { args: ["--version", "0.21.3"], message: /PB_VERSION "0\.21\.3" is not supported/ },
    { args: ["--version=1.0.0"], message: /not supported/ },
    { args: ["--version"], message: /--version needs a value/ },
    { args: ["--frobnicate"], message: /unknown argument "--frobnicate"/ },
  ])("$args -> exit 2", async ({ args, message }) => {
    const { code, stderr } = await run("scripts/get-pocketbase.mjs", args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it("refuses a bad PB_VERSION from the environment", async () => {
    const { code, stderr } = await run("scripts/get-pocketbase.mjs", [], { PB_VERSION: "0.41.0" });
    expect(code).toBe(2);
    expect(stderr).toMatch(/PB_VERSION "0\.41\.0" is not supported/);
  });

  it("prints usage with --help", async () => {
    const { code, stdout } = await run("scripts/get-pocketbase.mjs", ["--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("--docker-context");
  });
});

const START_CASES: Array<{ env: Record<string, string>; message: RegExp }> = [
    { env: { PORT: "http" }, message: /PORT="http" must be a number from 1 to 65535/ },
    { env: { PORT: "70000" }, message: /port 70000 is out of range/ },
    { env: { PB_HTTP: "localhost" }, message: /PB_HTTP="localhost" must look like 127\.0\.0\.1:8090/ },
    { env: { PB_ADMIN_EMAIL: "me@example.com", PB_ADMIN_PASSWORD: "short" }, message: /PB_ADMIN_PASSWORD has 5 bytes, but a PocketBase 0.22 admin password must have 10 to 72/ },
    { env: { PB_ADMIN_EMAIL: "me@example.com", PB_ADMIN_PASSWORD: "é".repeat(37) }, message: /PB_ADMIN_PASSWORD has 74 bytes, but a PocketBase 0.22 admin password must have 10 to 72/ },
    { env: { PB_VERSION: "0.40.4", PB_ADMIN_EMAIL: "me@example.com", PB_ADMIN_PASSWORD: "7-chars" }, message: /PB_ADMIN_PASSWORD has 7 characters \(7 UTF-8 bytes\), but a PocketBase 0.23\+ superuser password must have 8 to 71 characters and at most 72 bytes/ },
    { env: { PB_VERSION: "0.40.4", PB_ADMIN_EMAIL: "me@example.com", PB_ADMIN_PASSWORD: "é".repeat(37) }, message: /PB_ADMIN_PASSWORD has 37 characters \(74 UTF-8 bytes\), but a PocketBase 0.23\+ superuser password must have 8 to 71 characters and at most 72 bytes/ },
    { env: { PB_VERSION: "0.23.12", PB_ADMIN_EMAIL: "me@example.com", PB_ADMIN_PASSWORD: "x".repeat(72) }, message: /PB_ADMIN_PASSWORD has 72 characters \(72 UTF-8 bytes\), but a PocketBase 0.23\+ superuser password must have 8 to 71/ },
    { env: { PB_ADMIN_EMAIL: "me@example.com" }, message: /PB_ADMIN_EMAIL is set but PB_ADMIN_PASSWORD is not/ },
    { env: { PB_ADMIN_PASSWORD: "long enough" }, message: /PB_ADMIN_PASSWORD is set but PB_ADMIN_EMAIL is not/ },
    { env: { PB_ADMIN_EMAIL: "not-an-email", PB_ADMIN_PASSWORD: "long enough" }, message: /PB_ADMIN_EMAIL="not-an-email" is not an email address/ },
    { env: { PB_HOOKS_POOL: "0" }, message: /PB_HOOKS_POOL="0" must be a whole number from 1 to 10000/ },
    { env: { PB_HOOKS_POOL: "lots" }, message: /PB_HOOKS_POOL="lots" must be a whole number from 1 to 10000/ },
    { env: { PB_VERSION: "0.41.0" }, message: /PB_VERSION "0\.41\.0" is not supported/ },
];

describe("npm start environment", () => {
  it.each(START_CASES)("$env -> exit 2 with a sentence", async ({ env, message }) => {
    const { code, stderr, stdout } = await run("scripts/start.mjs", [], env);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^pb-fleet start: /);
    expect(stderr).toMatch(message);
    expect(stdout).not.toMatch(/building/);
  });
});
