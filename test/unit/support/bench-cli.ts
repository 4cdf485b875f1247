// Runs scripts/bench.mjs with arguments and no PATH, for the bench tests' flag
// and --help checks: nothing could be built or started even if validation let
// a bad flag through.
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";

const repoRoot = resolve(import.meta.dirname, "../../..");

export function bench(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [join(repoRoot, "scripts/bench.mjs"), ...args], { env: { PATH: "/nonexistent" }, timeout: 30_000 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
    });
  });
}
