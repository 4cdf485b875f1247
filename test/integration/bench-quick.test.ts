// Rot check for `npm run bench`: the quick mode runs end to end against real
// PocketBase servers, every claim contention round has exactly one winner, and
// the JSON file has the shape the README and LATEST.md are built from. No
// assertion on speed: that belongs in the benchmark's own report.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, inject, it } from "vitest";

const run = promisify(execFile);
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const TOP_LEVEL_KEYS = [
  "schema",
  "mode",
  "command",
  "machine",
  "binary",
  "config",
  "reference",
  "hooks",
  "servers",
  "contention",
  "endpoints",
  "lifecycle",
  "claimNext",
  "hooksPool",
  "versions",
  "memory",
  "targets",
  "failures",
  "ok",
  "durationSec",
];

interface ContentionRow {
  variant: string;
  kind: "claim" | "patch";
  workers: number;
  rounds: number;
  winnersHistogram: Record<string, number>;
  badRounds: number | null;
}

describe("npm run bench -- --quick", () => {
  let dir = "";
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("exits 0, has exactly one winner per claim round and writes the JSON report", async () => {
    dir = await mkdtemp(join(tmpdir(), "pb-fleet-bench-quick-"));
    const jsonPath = join(dir, "run.json");
    // Same PB_VERSION / POCKETBASE_BIN / CI as this test run: the child inherits the environment.
    const child = await run(process.execPath, ["scripts/bench.mjs", "--quick", "--json", jsonPath], {
      cwd: REPO,
      env: process.env,
      timeout: 170_000,
      maxBuffer: 32 * 1024 * 1024,
    }).catch((err: { code?: number; stdout?: string; stderr?: string }) => {
      throw new Error(`bench --quick exited ${err.code}:\n${err.stderr ?? ""}\n${err.stdout ?? ""}`);
    });
    expect(child.stdout).toContain("Targets");

    const report = JSON.parse(await readFile(jsonPath, "utf8"));
    expect(Object.keys(report).sort()).toEqual([...TOP_LEVEL_KEYS].sort());
    expect(report.mode).toBe("quick");
    expect(report.failures).toEqual([]);
    expect(report.ok).toBe(true);

    const claimRows = (report.contention.rows as ContentionRow[]).filter((r) => r.kind === "claim");
    expect(claimRows.length).toBeGreaterThan(0);
    for (const row of claimRows) {
      expect({ variant: row.variant, workers: row.workers, winners: row.winnersHistogram }).toEqual({
        variant: row.variant,
        workers: row.workers,
        winners: { "1": row.rounds },
      });
    }
    const poolRows = report.hooksPool.rows as Array<{ hooksPool: number; badRounds: number }>;
    expect(poolRows.length).toBeGreaterThan(0);
    for (const row of poolRows) expect(row.badRounds).toBe(0);
    const acquireRows = report.claimNext.rows as Array<{ variant: string; failureCount: number }>;
    expect(acquireRows.map((r) => [r.variant, r.failureCount])).toEqual([["claim-next", 0], ["list-then-claim", 0]]);
    // --quick's per-version phase: the suite's own version only, on its own hooks line.
    const versionRows = report.versions.rows as Array<{ version: string; line: string; badRounds: number; rounds: number; lifecycle: Array<{ jobsPerSec: number | null }> }>;
    expect(versionRows.map((r) => [r.version, r.line, r.badRounds])).toEqual([[inject("pbVersion"), inject("pbLine"), 0]]);
    expect(versionRows[0]!.rounds).toBeGreaterThan(0);
    expect(versionRows[0]!.lifecycle[0]!.jobsPerSec).toBeGreaterThan(0);
  }, 180_000);
});
