// What `npm pack` puts into the tarball (package.json "files"): the client,
// the bin, both hooks lines' bundles, enqueue modules and migrations, the
// dashboard, openapi.json and the scripts the bin and `npm start` import, and
// nothing else (no sources, tests, benchmarks or build). Hermetic and fast:
// the repository's files (git ls-files, plus the client's build outputs as
// tsc names them, plus stale decoys) are mirrored as empty files into a temp
// dir beside the real package.json, and `npm pack --dry-run --json
// --ignore-scripts` lists what it would pack there. So it holds whether or not
// dist/ has been built. scripts/package-check.mjs packs and installs for real.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, posix, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FORBIDDEN } from "../../scripts/package-check.mjs";

const repoRoot = join(import.meta.dirname, "..", "..");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

function walk(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === "node_modules" || entry.name === ".git") return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? walk(path, base) : [relative(base, path).split("\\").join("/")];
  });
}

/** The repository's files, tracked or new but not ignored. */
function repositoryFiles(): string[] {
  try {
    return execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { cwd: repoRoot, encoding: "utf8" })
      .split("\n")
      .filter((p) => p && existsSync(join(repoRoot, p)));
  } catch {
    return walk(repoRoot);
  }
}

/** What tsconfig.client.json emits: one .js and one .d.ts per module of src/client and src/lib. */
function clientBuildOutputs(): string[] {
  return ["client", "lib"].flatMap((dir) =>
    readdirSync(join(repoRoot, "src", dir))
      .filter((n) => n.endsWith(".ts") && !n.endsWith(".d.ts"))
      .flatMap((n) => [`dist/${dir}/${n.replace(/\.ts$/, ".js")}`, `dist/${dir}/${n.replace(/\.ts$/, ".d.ts")}`]),
  );
}

/** Relative static imports of a module (`from "./x.mjs"`), as package paths. */
function staticImports(path: string): string[] {
  const text = readFileSync(join(repoRoot, path), "utf8");
  return [...text.matchAll(/\bfrom\s+["'](\.{1,2}\/[^"']+)["']/g)].map((m) => posix.normalize(posix.join(posix.dirname(path), m[1]!)));
}

/** The scripts reached by static imports from the bin and npm start's script. */
function runtimeClosure(entries: string[]): Set<string> {
  const seen = new Set<string>();
  const queue = [...entries];
  while (queue.length) {
    const path = queue.pop()!;
    if (seen.has(path)) continue;
    seen.add(path);
    queue.push(...staticImports(path));
  }
  return seen;
}

let mirror: string;
let packed: string[];
let report: { size: number; entryCount: number; files: { path: string }[] };

beforeAll(() => {
  mirror = mkdtempSync(join(tmpdir(), "pb-fleet-package-files-"));
  const decoys = ["dist/handlers/routes.js", "dist/handlers/routes.d.ts", "dist/client/index.js.map", "bench/results/run.json", "pb_data/data.db"];
  for (const path of new Set([...repositoryFiles(), ...clientBuildOutputs(), ...decoys])) {
    mkdirSync(dirname(join(mirror, path)), { recursive: true });
    writeFileSync(join(mirror, path), "");
  }
  for (const path of ["package.json", ".gitignore", ".npmignore"]) {
    if (existsSync(join(repoRoot, path))) copyFileSync(join(repoRoot, path), join(mirror, path));
  }
  const out = execFileSync(NPM, ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: mirror, encoding: "utf8", timeout: 30_000 });
  [report] = JSON.parse(out);
  packed = report.files.map((f) => f.path).sort();
}, 30_000);

afterAll(() => {
  if (mirror) rmSync(mirror, { recursive: true, force: true });
});

describe("the npm package's files", () => {
  it("holds the client: every module of src/client and src/lib as .js and .d.ts, under the exports' paths", () => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
    const exported = manifest.exports["."];
    expect(packed).toContain(posix.normalize(exported.types));
    expect(packed).toContain(posix.normalize(exported.import));
    for (const output of clientBuildOutputs()) expect(packed).toContain(output);
  });

  it("holds the bin, both hooks lines' bundles, enqueue modules and migrations, the dashboard and openapi.json", () => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
    for (const bin of Object.values<string>(manifest.bin)) expect(packed).toContain(posix.normalize(bin));
    for (const dir of ["pb_hooks", "pb_hooks_0.23"]) {
      expect(packed).toContain(`${dir}/fleet.pb.js`);
      expect(packed).toContain(`${dir}/pb-fleet-enqueue.js`);
    }
    for (const dir of ["pb_migrations", "pb_migrations_0.23"]) {
      const migrations = readdirSync(join(repoRoot, dir)).filter((n) => n.endsWith(".js"));
      expect(migrations.length).toBeGreaterThan(0);
      for (const name of migrations) expect(packed).toContain(`${dir}/${name}`);
    }
    expect(packed).toContain("pb_public/fleet/index.html");
    for (const name of readdirSync(join(repoRoot, "pb_public", "fleet"))) expect(packed).toContain(`pb_public/fleet/${name}`);
    expect(packed).toContain("openapi.json");
  });

  it("holds exactly the scripts the bin and npm start import, every one of them", () => {
    const closure = runtimeClosure(["bin/pb-fleet.mjs", "bin/worker-commands.mjs", "scripts/start.mjs"]);
    const shippedCode = packed.filter((p) => p.startsWith("bin/") || p.startsWith("scripts/"));
    expect(shippedCode.sort()).toEqual([...closure].sort());
    for (const path of closure) expect(existsSync(join(repoRoot, path)), `${path} is imported but missing`).toBe(true);
  });

  it("leaves out sources, tests, benchmarks, the build, other clients and stale build outputs", () => {
    const unwanted = packed.filter((p) => FORBIDDEN.some((re) => re.test(p)));
    expect(unwanted).toEqual([]);
  });

  it("holds nothing beyond those (the README and package.json npm adds itself)", () => {
    const allowed = [/^bin\//, /^dist\/(client|lib)\/[^/]+\.(js|d\.ts)$/, /^pb_hooks(_0\.23)?\//, /^pb_migrations(_0\.23)?\//, /^pb_public\/fleet\//, /^scripts\//,
      /^openapi\.json$/, /^package\.json$/, /^README\.md$/, /^LICENSE/];
    expect(packed.filter((p) => !allowed.some((re) => re.test(p)))).toEqual([]);
  });
});
