// scripts/pocketbase/binary.mjs and lines.mjs without building PocketBase:
// version validation and hooks lines, a refused POCKETBASE_BIN, the "nothing
// worked" report, and the `go install` path driven by a stand-in `go` script on
// PATH (so the retry, the Go toolchain choice and error wording are checked
// here, and the real build in the integration run).
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { deflateRawSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import {
  DEFAULT_PB_VERSION,
  cachedBinaryPath,
  extractZipEntry,
  goToolchainFor,
  hooksLineFromHelp,
  normalizePbVersion,
  verifyPocketBaseBinary,
} from "../../scripts/pocketbase/binary.mjs";
import { PACKAGE_ROOT, adminPasswordProblem, hooksLayout, hooksLineOf } from "../../scripts/pocketbase/lines.mjs";

const MODULE = resolve(import.meta.dirname, "../../scripts/pocketbase/binary.mjs");
const scratch = mkdtempSync(join(tmpdir(), "pb-fleet-binary-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function script(path: string, body: string): string {
  mkdirSync(resolve(path, ".."), { recursive: true });
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A shell script that answers like a PocketBase binary of `version`. */
function fakePocketBase(path: string, version: string): string {
  return script(path, `case "$1" in --version) echo "pocketbase version ${version}";; *) exit 3;; esac`);
}

/** Runs ensurePocketBase in a child process with exactly `env` (plus node's own PATH entry removed on purpose). */
function ensureInChild(env: Record<string, string>, version?: string): Promise<{ ok: boolean; result?: any; message?: string; exitCode?: number; logs: string }> {
  const code = `
    const m = await import(${JSON.stringify(MODULE)});
    const logs = [];
    try {
      const result = await m.ensurePocketBase({ ${version ? `version: ${JSON.stringify(version)},` : ""} log: (x) => logs.push(x) });
      console.log(JSON.stringify({ ok: true, result, logs: logs.join("\\n") }));
    } catch (e) {
      console.log(JSON.stringify({ ok: false, message: e.message, exitCode: e.exitCode, logs: logs.join("\\n") }));
    }`;
  return new Promise((done, fail) => {
    execFile(process.execPath, ["--input-type=module", "-e", code], { env, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) return fail(new Error(`child failed: ${error.message}\n${stderr}`));
      done(JSON.parse(stdout.trim().split("\n").pop()!));
    });
  });
}

/** A port nothing listens on, so the release download fails at once and offline. */
const DEAD_MIRROR = "http://127.0.0.1:9/releases";

describe("normalizePbVersion", () => {
  it("accepts 0.22.x and 0.23.x to 0.40.x, with or without a v", () => {
    expect(normalizePbVersion("0.22.21")).toBe("0.22.21");
    expect(normalizePbVersion("v0.22.50")).toBe("0.22.50");
    expect(normalizePbVersion(" 0.22.0 ")).toBe("0.22.0");
    expect(normalizePbVersion("0.23.0")).toBe("0.23.0");
    expect(normalizePbVersion("v0.36.8")).toBe("0.36.8");
    expect(normalizePbVersion("0.40.4")).toBe("0.40.4");
    expect(DEFAULT_PB_VERSION).toBe("0.22.21");
  });

  it.each(["0.21.3", "0.41.0", "0.9.0", "1.0.0", "0.22", "0.22.x", "latest", "", "0.22.021", "0.22.21-rc1", "0.23.0-rc1", "0.040.4"])(
    "refuses %j with exit code 2 and the supported versions",
    (input) => {
      expect(() => normalizePbVersion(input)).toThrow(/is not supported: pb-fleet runs on PocketBase 0\.22\.x and 0\.23\.x to 0\.40\.x/);
      try {
        normalizePbVersion(input);
      } catch (error: any) {
        expect(error.exitCode).toBe(2);
      }
    },
  );

  it("refuses a 0.22 patch past the last release and suggests 0.22.50", () => {
    expect(() => normalizePbVersion("0.22.53")).toThrow(/ends at v0\.22\.52.*0\.22\.50/);
  });
});

describe("hooks lines (scripts/pocketbase/lines.mjs)", () => {
  it("puts 0.22.x on the 0.22 line and 0.23.0 to 0.40.x on the 0.23 line", () => {
    expect(["0.22.0", "0.22.21", "0.22.52"].map(hooksLineOf)).toEqual(["0.22", "0.22", "0.22"]);
    expect(["0.23.0", "0.23.12", "0.36.8", "0.40.4"].map(hooksLineOf)).toEqual(["0.23", "0.23", "0.23", "0.23"]);
    expect(() => hooksLineOf("0.41.0")).toThrow(/not supported/);
  });

  it("says where each line's bundle, migrations and Docker hooks are, and how its accounts sign in", () => {
    expect(hooksLayout("0.22.21")).toMatchObject({
      line: "0.22",
      bundle: join(PACKAGE_ROOT, "pb_hooks", "fleet.pb.js"),
      enqueueModule: join(PACKAGE_ROOT, "pb_hooks", "pb-fleet-enqueue.js"),
      migrationsDir: join(PACKAGE_ROOT, "pb_migrations"),
      dockerHooksDir: join(PACKAGE_ROOT, "docker", "hooks"),
      dirSuffix: "",
      admin: { noun: "admin", authPath: "/api/admins/auth-with-password", cliCreate: ["admin", "create"] },
    });
    expect(hooksLayout("0.40.4")).toMatchObject({
      line: "0.23",
      bundle: join(PACKAGE_ROOT, "pb_hooks_0.23", "fleet.pb.js"),
      enqueueModule: join(PACKAGE_ROOT, "pb_hooks_0.23", "pb-fleet-enqueue.js"),
      migrationsDir: join(PACKAGE_ROOT, "pb_migrations_0.23"),
      dockerHooksDir: join(PACKAGE_ROOT, "docker", "hooks_0.23"),
      dirSuffix: "_0.23",
      admin: { noun: "superuser", authPath: "/api/collections/_superusers/auth-with-password", cliCreate: ["superuser", "create"] },
    });
    // The Dockerfile and docker-compose.yml build the line's paths from the suffix.
    for (const version of ["0.22.21", "0.40.4"]) {
      const layout = hooksLayout(version);
      expect(layout.hooksDir).toBe(join(PACKAGE_ROOT, `pb_hooks${layout.dirSuffix}`));
      expect(layout.migrationsDir).toBe(join(PACKAGE_ROOT, `pb_migrations${layout.dirSuffix}`));
      expect(layout.dockerHooksDir).toBe(join(PACKAGE_ROOT, "docker", `hooks${layout.dirSuffix}`));
    }
  });

  it("holds passwords to 0.22's 10-72 bytes and 0.23+'s 8-71 characters of at most 72 bytes", () => {
    expect(adminPasswordProblem("0.22", "x".repeat(9))).toMatchObject({ length: 9, unit: "bytes", min: 10, max: 72 });
    expect(adminPasswordProblem("0.22", "é".repeat(5))).toBeNull(); // 5 characters, 10 bytes
    expect(adminPasswordProblem("0.22", "é".repeat(37))).toMatchObject({ length: 74, unit: "bytes", min: 10, max: 72 });
    expect(adminPasswordProblem("0.23", "x".repeat(7))).toEqual({ length: 7, unit: "characters", min: 8, max: 71, bytes: 7, maxBytes: 72 });
    expect(adminPasswordProblem("0.23", "é".repeat(5))).toMatchObject({ length: 5, bytes: 10 }); // 0.22 would take it: 10 bytes
    expect(adminPasswordProblem("0.23", "x".repeat(71))).toBeNull();
    expect(adminPasswordProblem("0.23", "é".repeat(36))).toBeNull(); // 36 characters, 72 bytes
    // 71 characters pass the field but not bcrypt: 142 bytes.
    expect(adminPasswordProblem("0.23", "é".repeat(71))).toEqual({ length: 71, unit: "characters", min: 8, max: 71, bytes: 142, maxBytes: 72 });
    expect(adminPasswordProblem("0.23", "x".repeat(72))).toMatchObject({ length: 72, unit: "characters" });
  });

  it("reads an unstamped binary's line from its commands", () => {
    expect(hooksLineFromHelp("Available Commands:\n  admin       Manages admin accounts\n  serve  Starts the web server")).toBe("0.22");
    expect(hooksLineFromHelp("Available Commands:\n  superuser   Manage superusers\n  serve  Starts the web server")).toBe("0.23");
    expect(hooksLineFromHelp("Available Commands:\n  serve  Starts the web server")).toBeNull();
  });
});

describe("goToolchainFor", () => {
  it("asks for go1.27.3 to build 0.40.x with an older Go, and nothing otherwise", () => {
    expect(goToolchainFor("0.40.4", "go version go1.26.8 linux/amd64", {})).toEqual({ toolchain: "go1.27.3", minimumGo: "1.27" });
    expect(goToolchainFor("0.40.4", "go version go1.27.0 linux/amd64", {})).toBeNull();
    expect(goToolchainFor("0.39.11", "go version go1.26.8 linux/amd64", {})).toBeNull();
    expect(goToolchainFor("0.22.21", "go version go1.21.0 linux/amd64", {})).toBeNull();
  });

  it("leaves a GOTOOLCHAIN the user set alone", () => {
    expect(goToolchainFor("0.40.4", "go version go1.26.8 linux/amd64", { GOTOOLCHAIN: "go1.28.0" })).toBeNull();
  });
});

describe("verifyPocketBaseBinary", () => {
  it("says a missing file, a non-executable file and a non-PocketBase program apart", async () => {
    expect(await verifyPocketBaseBinary(join(scratch, "missing"), null)).toEqual({ ok: false, reason: expect.stringMatching(/does not exist/) });
    const plain = join(scratch, "plain-file");
    writeFileSync(plain, "not a program");
    expect(await verifyPocketBaseBinary(plain, null)).toEqual({ ok: false, reason: expect.stringMatching(/not executable/) });
    const other = script(join(scratch, "other-program"), 'echo "hello"');
    expect(await verifyPocketBaseBinary(other, null)).toEqual({ ok: false, reason: expect.stringMatching(/not a working PocketBase binary/) });
  });

  it("refuses an unsupported PocketBase and a different version than expected; says the line of the rest", async () => {
    const newer = fakePocketBase(join(scratch, "pb-0.41", "pocketbase"), "0.41.0");
    expect(await verifyPocketBaseBinary(newer, null)).toMatchObject({ ok: false, reason: expect.stringMatching(/0\.41\.0; pb-fleet needs 0\.22\.x and 0\.23\.x to 0\.40\.x/) });
    const older = fakePocketBase(join(scratch, "pb-0.21", "pocketbase"), "0.21.3");
    expect(await verifyPocketBaseBinary(older, null)).toMatchObject({ ok: false, reason: expect.stringMatching(/0\.21\.3; pb-fleet needs/) });
    const other = fakePocketBase(join(scratch, "pb-0.22.50", "pocketbase"), "0.22.50");
    expect(await verifyPocketBaseBinary(other, "0.22.21")).toMatchObject({ ok: false, reason: expect.stringMatching(/0\.22\.50, not 0\.22\.21/) });
    expect(await verifyPocketBaseBinary(other, "0.22.50")).toEqual({ ok: true, version: "0.22.50", line: "0.22" });
    const modern = fakePocketBase(join(scratch, "pb-0.40.4", "pocketbase"), "0.40.4");
    expect(await verifyPocketBaseBinary(modern, null)).toEqual({ ok: true, version: "0.40.4", line: "0.23" });
  });

  it("takes an unstamped build by its flags and reads its line from its commands", async () => {
    const untracked = script(
      join(scratch, "pb-untracked", "pocketbase"),
      `case "$1" in
  --version) echo "pocketbase version (untracked)";;
  serve) echo "      --hooksDir string   the directory with the JS app hooks";;
  --help) printf 'Available Commands:\n  superuser   Manage superusers\n  serve       Starts the web server\n';;
  *) exit 3;;
esac`,
    );
    expect(await verifyPocketBaseBinary(untracked, null)).toEqual({ ok: true, version: null, line: "0.23" });
  });
});

describe("ensurePocketBase", () => {
  it("refuses a POCKETBASE_BIN that is not executable, without trying anything else", async () => {
    const plain = join(scratch, "not-executable");
    writeFileSync(plain, "x");
    const outcome = await ensureInChild({ POCKETBASE_BIN: plain, PATH: "/nonexistent" });
    expect(outcome.ok).toBe(false);
    expect(outcome.message).toContain(`POCKETBASE_BIN=${plain} cannot be used`);
    expect(outcome.message).toContain("not executable");
    expect(outcome.message).toMatch(/unset it to let pb-fleet get PocketBase/);
    expect(outcome.logs).not.toMatch(/go install|download/);
  });

  it("uses a working POCKETBASE_BIN and reports its own version and line", async () => {
    const bin = fakePocketBase(join(scratch, "env-pb", "pocketbase"), "0.22.50");
    const outcome = await ensureInChild({ POCKETBASE_BIN: bin, PATH: "/nonexistent" });
    expect(outcome).toMatchObject({ ok: true, result: { path: bin, version: "0.22.50", line: "0.22", source: "env" } });
    // The binary decides the line, whatever PB_VERSION says.
    const modern = fakePocketBase(join(scratch, "env-pb-modern", "pocketbase"), "0.40.4");
    const other = await ensureInChild({ POCKETBASE_BIN: modern, PB_VERSION: "0.22.21", PATH: "/nonexistent" });
    expect(other).toMatchObject({ ok: true, result: { path: modern, version: "0.40.4", line: "0.23", source: "env" } });
  });

  it("refuses an unsupported PB_VERSION with exit code 2 before looking for a binary", async () => {
    const outcome = await ensureInChild({ PB_VERSION: "0.41.0", PATH: "/nonexistent", PB_FLEET_CACHE: join(scratch, "cache-unsupported") });
    expect(outcome).toMatchObject({ ok: false, exitCode: 2 });
    expect(outcome.message).toMatch(/PB_VERSION "0\.41\.0" is not supported/);
    expect(outcome.logs).toBe("");
  });

  it("lists every option tried, why each failed and what to do when nothing works", async () => {
    const cache = join(scratch, "cache-nothing");
    const outcome = await ensureInChild({ PATH: "/nonexistent", PB_FLEET_CACHE: cache, PB_FLEET_RELEASE_URL: DEAD_MIRROR }, "0.22.21");
    expect(outcome.ok).toBe(false);
    expect(outcome.exitCode).toBe(1);
    const message = outcome.message!;
    expect(message).toMatch(/^Could not get a PocketBase 0\.22\.21 binary\. Tried, in order:/);
    expect(message).toContain("1. POCKETBASE_BIN: not set");
    expect(message).toContain(`2. cache ${join(cache, "pocketbase", "0.22.21", "pocketbase")}: not there yet`);
    expect(message).toMatch(/3\. go install github\.com\/pocketbase\/pocketbase\/examples\/base@v0\.22\.21: `go` is not on PATH/);
    expect(message).toMatch(/4\. release archive: http:\/\/127\.0\.0\.1:9\/releases\/v0\.22\.21\/pocketbase_0\.22\.21_\w+_\w+\.zip: fetch failed/);
    expect(message).toMatch(/point POCKETBASE_BIN at a PocketBase 0\.22\.21 binary/);
    expect(message).toMatch(/install Go/);
  });

  it("says when the Go module proxy refuses a version and suggests 0.22.50", async () => {
    const bin = join(scratch, "go-refuses");
    script(
      join(bin, "go"),
      `if [ "$1" = version ]; then echo "go version go1.22.0 linux/amd64"; exit 0; fi
echo "go: github.com/pocketbase/pocketbase/examples/base@v0.22.52: reading https://proxy.golang.org/...: 403 Forbidden" >&2
echo "	server response: This module version is not available." >&2
exit 1`,
    );
    const outcome = await ensureInChild({ PATH: bin, PB_FLEET_CACHE: join(scratch, "cache-refused"), PB_FLEET_RELEASE_URL: DEAD_MIRROR }, "v0.22.52");
    expect(outcome.ok).toBe(false);
    expect(outcome.message).toMatch(/The Go module proxy refused v0\.22\.52 \(it refuses v0\.22\.51 and v0\.22\.52\): use PB_VERSION=0\.22\.50/);
    expect(outcome.message).toContain("This module version is not available");
  });

  it("retries go install with -checklinkname=0, caches the result and verifies it", async () => {
    const bin = join(scratch, "go-linkname");
    // Fails like Go 1.23+ on an old //go:linkname unless -checklinkname=0 is passed,
    // then "builds" a program that answers like PocketBase into $GOBIN/base.
    script(
      join(bin, "go"),
      `if [ "$1" = version ]; then echo "go version go1.23.0 linux/amd64"; exit 0; fi
[ "$CGO_ENABLED" = 0 ] || { echo "CGO_ENABLED must be 0" >&2; exit 9; }
case "$3" in *-checklinkname=0*) ;; *) echo "link: github.com/x/y: invalid reference to runtime.z (//go:linkname)" >&2; exit 1;; esac
case "$3" in *"-X github.com/pocketbase/pocketbase.Version=0.22.50"*) ;; *) echo "missing version stamp: $3" >&2; exit 8;; esac
[ "$4" = "github.com/pocketbase/pocketbase/examples/base@v0.22.50" ] || { echo "unexpected module $4" >&2; exit 7; }
printf '#!/bin/sh\\necho "pocketbase version 0.22.50"\\n' > "$GOBIN/base"; chmod +x "$GOBIN/base"`,
    );
    const cache = join(scratch, "cache-linkname");
    const first = await ensureInChild({ PATH: `${bin}:/usr/bin:/bin`, PB_FLEET_CACHE: cache }, "0.22.50");
    expect(first).toMatchObject({ ok: true, result: { version: "0.22.50", source: "go", path: join(cache, "pocketbase", "0.22.50", "pocketbase") } });
    expect(first.logs).toMatch(/retrying with -checklinkname=0/);
    const second = await ensureInChild({ PATH: "/nonexistent:/usr/bin:/bin", PB_FLEET_CACHE: cache }, "0.22.50");
    expect(second).toMatchObject({ ok: true, result: { source: "cache" } });
  });

  it("builds 0.40.x through GOTOOLCHAIN=go1.27.3 when the local Go is older, and 0.36.x with the local Go", async () => {
    const bin = join(scratch, "go-toolchain");
    // Like Go 1.26 with GOTOOLCHAIN=local: refuses a module that needs Go 1.27 unless GOTOOLCHAIN names a newer toolchain.
    script(
      join(bin, "go"),
      `if [ "$1" = version ]; then echo "go version go1.26.8 linux/amd64"; exit 0; fi
case "$4" in
  *@v0.40.4) [ "$GOTOOLCHAIN" = go1.27.3 ] || { echo "go: github.com/pocketbase/pocketbase@v0.40.4 requires go >= 1.27 (running go 1.26.8; GOTOOLCHAIN=local)" >&2; exit 1; }; v=0.40.4;;
  *@v0.36.8) [ -z "$GOTOOLCHAIN" ] || { echo "GOTOOLCHAIN set for 0.36.8: $GOTOOLCHAIN" >&2; exit 6; }; v=0.36.8;;
  *) echo "unexpected module $4" >&2; exit 7;;
esac
printf '#!/bin/sh\necho "pocketbase version %s"\n' "$v" > "$GOBIN/base"; chmod +x "$GOBIN/base"`,
    );
    const cache = join(scratch, "cache-toolchain");
    const modern = await ensureInChild({ PATH: `${bin}:/usr/bin:/bin`, PB_FLEET_CACHE: cache }, "0.40.4");
    expect(modern).toMatchObject({ ok: true, result: { version: "0.40.4", line: "0.23", source: "go" } });
    expect(modern.logs).toMatch(/GOTOOLCHAIN=go1\.27\.3 \(PocketBase 0\.40\.4 needs Go >= 1\.27/);
    const older = await ensureInChild({ PATH: `${bin}:/usr/bin:/bin`, PB_FLEET_CACHE: cache }, "0.36.8");
    expect(older).toMatchObject({ ok: true, result: { version: "0.36.8", line: "0.23", source: "go" } });
    expect(older.logs).not.toMatch(/GOTOOLCHAIN/);
  });

  it("says how to get a newer Go when the user's GOTOOLCHAIN is too old for the version", async () => {
    const bin = join(scratch, "go-too-old");
    script(
      join(bin, "go"),
      `if [ "$1" = version ]; then echo "go version go1.26.8 linux/amd64"; exit 0; fi
echo "go: github.com/pocketbase/pocketbase@v0.40.4 requires go >= 1.27 (running go 1.26.8; GOTOOLCHAIN=local)" >&2; exit 1`,
    );
    const outcome = await ensureInChild(
      { PATH: `${bin}:/usr/bin:/bin`, GOTOOLCHAIN: "local", PB_FLEET_CACHE: join(scratch, "cache-too-old"), PB_FLEET_RELEASE_URL: DEAD_MIRROR },
      "0.40.4",
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.message).toMatch(/PocketBase v0\.40\.4 needs Go >= 1\.27, and GOTOOLCHAIN=local is set: unset it/);
  });

  it("puts the cache under PB_FLEET_CACHE/pocketbase/<version>/pocketbase", () => {
    const previous = process.env.PB_FLEET_CACHE;
    process.env.PB_FLEET_CACHE = "/some/cache";
    try {
      expect(cachedBinaryPath("0.22.21")).toBe("/some/cache/pocketbase/0.22.21/pocketbase");
    } finally {
      if (previous === undefined) delete process.env.PB_FLEET_CACHE;
      else process.env.PB_FLEET_CACHE = previous;
    }
  });
});

/** A minimal zip archive (no CRCs: the reader trusts the archive's sha256 instead). */
function makeZip(entries: Array<{ name: string; data: Buffer; deflate: boolean }>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data, deflate } of entries) {
    const body = deflate ? deflateRawSync(data) : data;
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(deflate ? 8 : 0, 8);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(deflate ? 8 : 0, 10);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, body);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + body.length;
  }
  const centralDir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralDir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, centralDir, end]);
}

describe("extractZipEntry (the release archive reader)", () => {
  const binary = Buffer.from("\x7fELF pretend binary ".repeat(200));
  const zip = makeZip([
    { name: "CHANGELOG.md", data: Buffer.from("notes"), deflate: false },
    { name: "LICENSE.md", data: Buffer.from("MIT"), deflate: false },
    { name: "pocketbase", data: binary, deflate: true },
  ]);

  it("extracts a deflated entry byte for byte, and a stored one", () => {
    expect(extractZipEntry(zip, "pocketbase").equals(binary)).toBe(true);
    expect(extractZipEntry(zip, "LICENSE.md").toString()).toBe("MIT");
  });

  it("names what is wrong with a bad archive", () => {
    expect(() => extractZipEntry(zip, "pocketbase.exe")).toThrow(/has no pocketbase\.exe/);
    expect(() => extractZipEntry(Buffer.from("<html>not found</html>"), "pocketbase")).toThrow(/not a zip archive/);
  });
});
