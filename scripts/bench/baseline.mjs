// A git revision's pb-fleet as a benchmark baseline, for the phases that put
// the code as built side by side with an older revision in one run (flow.mjs's
// common path, hot-path.mjs):
//   server  the revision's hooks bundle and migrations of the binary's line
//           (queue.mjs's baselineFromGit), started like any other server of a
//           phase with baselineServerEnv's env
//   client  the revision's src/ (and the tsconfig files esbuild reads), read
//           out of git into the run's temp dir and bundled the way batched.mjs
//           bundles the working tree's src/client: the ESM file a
//           batched-fleet.mjs child imports
// Nothing here touches the repository's work tree, index or history: every
// file comes from `git show <sha>:<path>` into the temp dir.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { bundleClient } from "./batched.mjs";
import { baselineFromGit } from "./queue.mjs";

export { baselineFromGit };

/** What a phase's JSON says about its baseline: the revision asked for, what it resolved to, the files read, or why it was skipped. */
export function baselineSummary(baseline) {
  return { rev: baseline.rev, sha: baseline.sha ?? null, subject: baseline.subject ?? null, files: baseline.files ?? [], skipped: baseline.skipped ?? null };
}

/** The phase env of a server running the baseline's bundle and migrations (batched.mjs's startServer reads env.hookFiles and env.migrationsDir). */
export function baselineServerEnv(env, baseline) {
  return { ...env, hookFiles: baseline.hookFiles, migrationsDir: baseline.migrationsDir };
}

/** The hooks a server loaded: its hooks dir's copies (batched.mjs's startServer writes hooks-<name>). */
export function hooksOf(env, name, hookFiles) {
  return hookFiles.map((f) => ({
    file: basename(f),
    sha256: createHash("sha256").update(readFileSync(join(env.tmpRoot, `hooks-${name}`, basename(f)))).digest("hex"),
  }));
}

/**
 * The files under `folders` (and the single `files`, where the revision has
 * them) of commit `sha`, written below `outDir` at their repository paths.
 * Answers the paths written.
 */
export async function treeFromGit(repo, sha, { folders = [], files = [] }, outDir) {
  const git = (args, encoding = "utf8") => execFileSync("git", args, { cwd: repo, encoding, maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "pipe", "pipe"] });
  const listed = folders.length ? git(["ls-tree", "-r", "--name-only", sha, "--", ...folders.map((f) => `${f}/`)]).split("\n").filter(Boolean) : [];
  const single = files.length ? git(["ls-tree", "--name-only", sha, "--", ...files]).split("\n").filter(Boolean) : [];
  const paths = [...new Set([...listed, ...single])];
  for (const p of paths) {
    const out = join(outDir, p);
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, git(["show", `${sha}:${p}`], "buffer"));
  }
  return paths;
}

/**
 * The baseline's client (its src/client and the src/lib it imports) as one
 * ESM file, bundled like the working tree's (batched.mjs's bundleClient):
 * `{ path, sha, files }`, or `{ skipped }` (a sentence).
 * @param baseline baselineFromGit's answer (not skipped)
 */
export async function baselineClientFromGit(repo, baseline, tmpRoot) {
  if (baseline.skipped || !baseline.sha) return { skipped: baseline.skipped ?? "no baseline revision" };
  const dir = join(tmpRoot, `baseline-src-${baseline.sha.slice(0, 12)}`);
  let files;
  try {
    files = await treeFromGit(repo, baseline.sha, { folders: ["src"], files: ["tsconfig.json", "tsconfig.base.json"] }, dir);
  } catch (err) {
    return { skipped: `reading src/ of ${baseline.rev} from git failed (${String(err.message).split("\n")[0]}); the baseline client is not measured.` };
  }
  if (!files.includes("src/client/index.ts")) return { skipped: `${baseline.rev} has no src/client/index.ts; the baseline client is not measured.` };
  try {
    const bundle = await bundleClient(dir, join(dir, "bundle"));
    if (bundle.skipped) return { skipped: bundle.skipped };
    return { path: bundle.path, sha: baseline.sha, files: files.length, skipped: null };
  } catch (err) {
    return { skipped: `bundling ${baseline.rev}'s src/client failed (${String(err.message).split("\n")[0]}); the baseline client is not measured.` };
  }
}
