// `npx pb-fleet install <pb_dir>` (bin/pb-fleet.mjs), run as a child process the
// way npx runs it, from a working directory that is not the package. The
// PocketBase binary in <pb_dir> is a stand-in shell script that answers
// `--version` like PocketBase: the installer picks the bundle of its hooks line.
import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { lineLayout } from "../../scripts/pocketbase/lines.mjs";

const packageRoot = resolve(import.meta.dirname, "../..");
const BIN = join(packageRoot, "bin", "pb-fleet.mjs");
/** What the package holds for each hooks line. */
const LINE_FILES = Object.fromEntries(
  (["0.22", "0.23"] as const).map((line) => {
    const layout = lineLayout(line, packageRoot);
    return [line, {
      bundle: readFileSync(layout.bundle),
      enqueueModule: readFileSync(layout.enqueueModule),
      migrationsDir: layout.migrationsDir,
      migrations: readdirSync(layout.migrationsDir).filter((n) => n.endsWith(".js")).sort(),
    }];
  }),
) as Record<"0.22" | "0.23", { bundle: Buffer; enqueueModule: Buffer; migrationsDir: string; migrations: string[] }>;
const MIGRATIONS = LINE_FILES["0.22"].migrations;
/** The dashboard page (the same files for both lines), installed into <pb_dir>/pb_public/fleet. */
const DASHBOARD_DIR = join(packageRoot, "pb_public", "fleet");
const DASHBOARD_FILES = readdirSync(DASHBOARD_DIR).sort();
const BUNDLE = LINE_FILES["0.22"].bundle;

/** A stand-in PocketBase binary at `path` that says it is `version` (or reports none and lists `commands`). */
function fakePocketBase(path: string, version: string | null, commands = "  admin  Manages admin accounts"): string {
  const body =
    version === null
      ? `case "$1" in
  --version) echo "pocketbase version (untracked)";;
  serve) echo "      --hooksDir string   the directory with the JS app hooks";;
  --help) printf 'Available Commands:\n${commands}\n';;
  *) exit 3;;
esac`
      : `case "$1" in --version) echo "pocketbase version ${version}";; *) exit 3;; esac`;
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

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
  fakePocketBase(join(pbDir, "pocketbase"), "0.22.21");
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

describe("pb-fleet install", () => {
  it("copies the bundle and every migration into <pb_dir> and says to restart", async () => {
    expect(MIGRATIONS.length).toBeGreaterThan(0);
    const { code, stdout } = await run(["install", "pb"], work);
    expect(code).toBe(0);
    expect(readFileSync(join(pbDir, "pb_hooks", "fleet.pb.js")).equals(BUNDLE)).toBe(true);
    expect(readFileSync(join(pbDir, "pb_hooks", "pb-fleet-enqueue.js")).equals(LINE_FILES["0.22"].enqueueModule)).toBe(true);
    expect(stdout).toMatch(/copied\s+pb_hooks\/pb-fleet-enqueue\.js/);
    for (const name of MIGRATIONS) {
      expect(readFileSync(join(pbDir, "pb_migrations", name)).equals(readFileSync(join(packageRoot, "pb_migrations", name)))).toBe(true);
      expect(stdout).toMatch(new RegExp(`copied\\s+pb_migrations/${name.replace(/\./g, "\\.")}`));
    }
    expect(stdout).toMatch(/copied\s+pb_hooks\/fleet\.pb\.js/);
    expect(stdout).toContain("installing the bundle for PocketBase 0.22.21 (./pocketbase)");
    expect(stdout).toContain("`./pocketbase serve`; the migrations run on start");
    expect(stdout).toContain("need an admin token");
  });

  it.each(["0.22.21", "0.40.4"])("installs the dashboard into <pb_dir>/pb_public/fleet for PocketBase %s, where PocketBase serves it at /fleet/", async (version) => {
    fakePocketBase(join(pbDir, "pocketbase"), version);
    const { code, stdout } = await run(["install", "pb"], work);
    expect(code, stdout).toBe(0);
    expect(DASHBOARD_FILES).toContain("index.html");
    expect(readdirSync(join(pbDir, "pb_public", "fleet")).sort()).toEqual(DASHBOARD_FILES);
    for (const name of DASHBOARD_FILES) {
      expect(readFileSync(join(pbDir, "pb_public", "fleet", name)).equals(readFileSync(join(DASHBOARD_DIR, name))), name).toBe(true);
      expect(stdout).toMatch(new RegExp(`copied\\s+pb_public/fleet/${name.replace(/\./g, "\\.")}`));
    }
    // The binary is in <pb_dir>, so PocketBase's default public dir (pb_public beside it) is the one written.
    expect(stdout).toContain("The dashboard is at http://127.0.0.1:8090/fleet/");
    expect(stdout).not.toContain("--publicDir");
  });

  it("says to pass --publicDir when the binary lives outside <pb_dir>", async () => {
    const elsewhere = fakePocketBase(join(work, "pocketbase-elsewhere"), "0.40.4");
    const { code, stdout } = await run(["install", "pb", "--binary", elsewhere], work);
    expect(code, stdout).toBe(0);
    expect(stdout).toContain(`start PocketBase with --publicDir ${join(pbDir, "pb_public")}`);
  });

  it.each(["0.23.12", "0.36.8", "0.40.4"])("installs the 0.23+ bundle and migrations for PocketBase %s", async (version) => {
    fakePocketBase(join(pbDir, "pocketbase"), version);
    const { code, stdout } = await run(["install", "pb"], work);
    expect(code, stdout).toBe(0);
    const modern = LINE_FILES["0.23"];
    expect(readFileSync(join(pbDir, "pb_hooks", "fleet.pb.js")).equals(modern.bundle)).toBe(true);
    expect(modern.bundle.equals(BUNDLE)).toBe(false);
    expect(readFileSync(join(pbDir, "pb_hooks", "pb-fleet-enqueue.js")).equals(modern.enqueueModule)).toBe(true);
    expect(modern.enqueueModule.equals(LINE_FILES["0.22"].enqueueModule)).toBe(false);
    expect(readdirSync(join(pbDir, "pb_migrations")).sort()).toEqual(modern.migrations);
    for (const name of modern.migrations) {
      expect(readFileSync(join(pbDir, "pb_migrations", name)).equals(readFileSync(join(modern.migrationsDir, name)))).toBe(true);
    }
    expect(stdout).toContain(`installing the bundle for PocketBase ${version} (./pocketbase)`);
    expect(stdout).toContain("need a superuser token");
  });

  it("finds a binary named base (go install's name) and one given with --binary", async () => {
    rmSync(join(pbDir, "pocketbase"));
    fakePocketBase(join(pbDir, "base"), "0.40.4");
    const byName = await run(["install", "pb"], work);
    expect(byName.code, byName.stderr).toBe(0);
    expect(byName.stdout).toContain("PocketBase 0.40.4 (./base)");
    expect(readFileSync(join(pbDir, "pb_hooks", "fleet.pb.js")).equals(LINE_FILES["0.23"].bundle)).toBe(true);

    const elsewhere = fakePocketBase(join(work, "pb-0.22.50"), "0.22.50");
    const given = await run(["install", "pb", "--force", "--binary", elsewhere], work);
    expect(given.code, given.stderr).toBe(0);
    expect(given.stdout).toContain(`PocketBase 0.22.50 (${elsewhere})`);
    expect(readFileSync(join(pbDir, "pb_hooks", "fleet.pb.js")).equals(BUNDLE)).toBe(true);
  });

  it("takes the line of a binary that reports no version from its commands", async () => {
    fakePocketBase(join(pbDir, "pocketbase"), null, "  superuser  Manage superusers");
    const { code, stdout } = await run(["install", "pb"], work);
    expect(code, stdout).toBe(0);
    expect(stdout).toMatch(/PocketBase 0\.23\.x to 0\.40\.x \(the binary reports no version/);
    expect(readFileSync(join(pbDir, "pb_hooks", "fleet.pb.js")).equals(LINE_FILES["0.23"].bundle)).toBe(true);
  });

  it.each(["0.41.0", "0.21.3"])("refuses PocketBase %s with a sentence, a non-zero exit and nothing copied", async (version) => {
    fakePocketBase(join(pbDir, "pocketbase"), version);
    const { code, stdout, stderr } = await run(["install", "pb"], work);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(new RegExp(`^pb-fleet: .*is PocketBase ${version.replace(/\./g, "\\.")}; pb-fleet needs 0\\.22\\.x and 0\\.23\\.x to 0\\.40\\.x.*Nothing was copied\\.`));
    expect(stdout).toBe("");
    expect(existsSync(join(pbDir, "pb_hooks"))).toBe(false);
    expect(existsSync(join(pbDir, "pb_migrations"))).toBe(false);
  });

  it("refuses a folder without a PocketBase binary, and says how to name one", async () => {
    rmSync(join(pbDir, "pocketbase"));
    const { code, stderr } = await run(["install", "pb"], work);
    expect(code).toBe(2);
    expect(stderr).toMatch(/has no PocketBase binary \(looked for pocketbase and base\).*--binary <path>\. Nothing was copied\./);
    expect(existsSync(join(pbDir, "pb_hooks"))).toBe(false);
  });

  it("points out the other line's pb-fleet files left in <pb_dir> after a switch of PocketBase", async () => {
    fakePocketBase(join(pbDir, "pocketbase"), "0.40.4");
    expect((await run(["install", "pb"], work)).code).toBe(0);
    fakePocketBase(join(pbDir, "pocketbase"), "0.22.21");
    const { code, stdout } = await run(["install", "pb", "--force"], work);
    expect(code).toBe(0);
    // Files of the 0.23+ set under names the 0.22 set does not have stay behind (never deleted): each gets a note.
    const leftovers = LINE_FILES["0.23"].migrations.filter((name) => !MIGRATIONS.includes(name));
    const notes = [...stdout.matchAll(/note: (\S+) is pb-fleet's file for PocketBase 0\.23\.x to 0\.40\.x, which PocketBase 0\.22\.21 cannot load: delete it/g)].map((m) => m[1]);
    expect(notes).toEqual(leftovers.map((name) => `pb_migrations/${name}`));
    for (const name of leftovers) expect(existsSync(join(pbDir, "pb_migrations", name))).toBe(true);
  });

  it("is idempotent: a second run finds everything up to date", async () => {
    await run(["install", pbDir], work);
    const { code, stdout } = await run(["install", pbDir], work);
    expect(code).toBe(0);
    // The bundle and the enqueue module, the migrations, the dashboard.
    expect(stdout.match(/^  already up to date +\S/gm)?.length).toBe(2 + MIGRATIONS.length + DASHBOARD_FILES.length);
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
    { args: ["install", "pb", "--binary"], message: /--binary needs the path of a PocketBase binary/ },
    { args: ["install", "pb", "--binary", "nowhere/pocketbase"], message: /--binary nowhere\/pocketbase: .* does not exist/ },
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
