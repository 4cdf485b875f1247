// `npx pb-fleet install <pb_dir>` (bin/pb-fleet.mjs), run as a child process the
// way npx runs it, from a working directory that is not the package.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const packageRoot = resolve(import.meta.dirname, "../..");
const BIN = join(packageRoot, "bin", "pb-fleet.mjs");
const MIGRATIONS = readdirSync(join(packageRoot, "pb_migrations")).filter((n) => n.endsWith(".js")).sort();
const BUNDLE = readFileSync(join(packageRoot, "pb_hooks", "fleet.pb.js"));

function run(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { cwd, timeout: 30_000 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

let work: string;
let pbDir: string;
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), "pb-fleet-install-test-"));
  pbDir = join(work, "pb");
  mkdirSync(pbDir);
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

describe("pb-fleet install", () => {
  it("copies the bundle and every migration into <pb_dir> and says to restart", async () => {
    expect(MIGRATIONS.length).toBeGreaterThan(0);
    const { code, stdout } = await run(["install", "pb"], work);
    expect(code).toBe(0);
    expect(readFileSync(join(pbDir, "pb_hooks", "fleet.pb.js")).equals(BUNDLE)).toBe(true);
    for (const name of MIGRATIONS) {
      expect(readFileSync(join(pbDir, "pb_migrations", name)).equals(readFileSync(join(packageRoot, "pb_migrations", name)))).toBe(true);
      expect(stdout).toMatch(new RegExp(`copied\\s+pb_migrations/${name.replace(/\./g, "\\.")}`));
    }
    expect(stdout).toMatch(/copied\s+pb_hooks\/fleet\.pb\.js/);
    expect(stdout).toContain("`./pocketbase serve`; the migration runs on start");
  });

  it("is idempotent: a second run finds everything up to date", async () => {
    await run(["install", pbDir], work);
    const { code, stdout } = await run(["install", pbDir], work);
    expect(code).toBe(0);
    expect(stdout.match(/^  already up to date +\S/gm)?.length).toBe(MIGRATIONS.length + 1);
    expect(stdout).toContain("nothing to restart");
  });

  it("refuses to overwrite a different file, copies nothing, and names the file", async () => {
    mkdirSync(join(pbDir, "pb_hooks"));
    writeFileSync(join(pbDir, "pb_hooks", "fleet.pb.js"), "// my edits\n");
    const { code, stderr } = await run(["install", pbDir], work);
    expect(code).not.toBe(0);
    expect(stderr).toContain("pb_hooks/fleet.pb.js");
    expect(stderr).toMatch(/Nothing was copied\. Run again with --force/);
    expect(readFileSync(join(pbDir, "pb_hooks", "fleet.pb.js"), "utf8")).toBe("// my edits\n");
    expect(existsSync(join(pbDir, "pb_migrations"))).toBe(false);
  });

  it("overwrites a different file with --force", async () => {
    mkdirSync(join(pbDir, "pb_migrations"));
    const first = MIGRATIONS[0]!;
    const edited = join(pbDir, "pb_migrations", first);
    writeFileSync(edited, "// old\n");
    const { code, stdout } = await run(["install", "--force", pbDir], work);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`overwrote \\(--force\\)\\s+pb_migrations/${first.replace(/\./g, "\\.")}`));
    expect(readFileSync(edited).equals(readFileSync(join(packageRoot, "pb_migrations", first)))).toBe(true);
  });

  it("prints help with --help and exits 0", async () => {
    const { code, stdout } = await run(["--help"], work);
    expect(code).toBe(0);
    expect(stdout).toContain("npx pb-fleet install <pb_dir> [--force]");
  });

  it.each([
    { args: [], message: /no command given/ },
    { args: ["install"], message: /install needs the PocketBase folder/ },
    { args: ["install", "missing-dir"], message: /missing-dir does not exist/ },
    { args: ["install", "pb", "--frce"], message: /unknown option "--frce"/ },
    { args: ["uninstall", "pb"], message: /unknown command "uninstall"/ },
    { args: ["install", "pb", "other"], message: /install takes one folder/ },
  ])("exits non-zero with a sentence for $args", async ({ args, message }) => {
    const { code, stderr, stdout } = await run(args, work);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/^pb-fleet: /);
    expect(stderr).toMatch(message);
    expect(stdout).toBe("");
  });

  it("refuses a file given as <pb_dir>", async () => {
    writeFileSync(join(work, "a-file"), "x");
    const { code, stderr } = await run(["install", "a-file"], work);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/is not a folder/);
  });
});
