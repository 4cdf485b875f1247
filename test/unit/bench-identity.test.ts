// The benchmark's identity phase (issue 19, scripts/bench/identity.mjs): the
// worker/admin ratios paired by round and their PASS/MISS against 1.05, the
// alternating order of the variants, the Targets rows and the report section's
// place, and that the CLI knows the phase (a bad value exits 2 before any
// server starts).
import { describe, expect, it } from "vitest";
import {
  CONTROL_VARIANT, IDENTITY_LIMIT, cpuDelta, fmtIdentityRatio, identityRatios, identityTargets, roundOrder, variantsOf, withIdentitySection,
} from "../../scripts/bench/identity.mjs";
import { bench } from "./support/bench-cli";



type Variant = "admin" | "worker" | typeof CONTROL_VARIANT;
const cell = (round: number, workers: number, variant: Variant, jobsPerSec: number | null, cpuMicrosPerJob: number | null) => ({
  round, workers, variant, jobsPerSec, cpuMicrosPerJob,
});

/** Rounds at one W: [admin jobs/s, admin CPU, worker jobs/s, worker CPU] each. */
function rounds(workers: number, xs: Array<[number, number, number, number]>) {
  return xs.flatMap(([aj, ac, wj, wc], round) => [cell(round, workers, "admin", aj, ac), cell(round, workers, "worker", wj, wc)]);
}

describe("identityRatios", () => {
  it("pairs the cells by round: the median of the rounds' worker/admin ratios, not the ratio of medians", () => {
    // Per round the worker costs 2% more CPU and runs 1% slower, while the load moves both a lot.
    const cells = rounds(8, [
      [1000, 1000, 990, 1020],
      [500, 2000, 495, 2040],
      [800, 1250, 792, 1275],
    ]);
    const r = identityRatios(cells, 8);
    expect(r.workers).toBe(8);
    expect(r.limit).toBe(IDENTITY_LIMIT);
    expect(r.cpu.median).toBeCloseTo(1.02, 10);
    expect(r.cpu).toMatchObject({ n: 3, pass: true });
    expect(r.throughput.median).toBeCloseTo(0.99, 10);
    expect(r.throughput.wallCost).toBeCloseTo(1 / 0.99, 10);
    expect(r.throughput.pass).toBe(true);
  });

  it("misses when the worker's CPU per job is more than 1.05x, or its jobs/s below 1/1.05 of the admin's", () => {
    const r = identityRatios(rounds(1, [[1000, 1000, 940, 1060], [1000, 1000, 945, 1070], [1000, 1000, 950, 1055]]), 1);
    expect(r.cpu.median).toBeCloseTo(1.06, 10);
    expect(r.cpu.pass).toBe(false);
    expect(r.throughput.median).toBeCloseTo(0.945, 10);
    expect(r.throughput.pass).toBe(false);
  });

  it("judges exactly 1.05x CPU and exactly 1/1.05 of the jobs/s as PASS (<= and >=)", () => {
    const r = identityRatios(rounds(8, [[1050, 1000, 1000, 1050]]), 8);
    expect(r.cpu.median).toBeCloseTo(1.05, 10);
    expect(r.cpu.pass).toBe(true);
    expect(r.throughput.pass).toBe(true);
  });

  it("a worker faster and cheaper than the admin passes", () => {
    const r = identityRatios(rounds(8, [[1000, 1000, 1200, 900]]), 8);
    expect(r.cpu.pass).toBe(true);
    expect(r.throughput.pass).toBe(true);
  });

  it("takes only the cells of its W, and leaves a round without both variants out", () => {
    const cells = [...rounds(8, [[1000, 1000, 1000, 1000]]), ...rounds(1, [[100, 5000, 50, 9000]]), cell(7, 8, "worker", 10, 99999)];
    const r = identityRatios(cells, 8);
    expect(r.cpu).toMatchObject({ median: 1, n: 1, pass: true });
  });

  it("does not judge without a measurement (no CPU reading, no cells)", () => {
    const r = identityRatios(rounds(8, [[1000, Number.NaN, 1000, Number.NaN]]).map((c) => ({ ...c, cpuMicrosPerJob: null })), 8);
    expect(r.cpu).toMatchObject({ median: null, n: 0, pass: null });
    expect(r.throughput.pass).toBe(true);
    const none = identityRatios([], 8);
    expect(none.cpu.pass).toBeNull();
    expect(none.throughput).toMatchObject({ median: null, pass: null, wallCost: null });
  });

  it("pools the paired rounds' totals as context: CPU seconds per job and jobs per second", () => {
    const cells = [
      { ...cell(0, 8, "admin", 1000, 1000), jobs: 1000, elapsedMs: 1000, cpuSeconds: 1 },
      { ...cell(0, 8, "worker", 500, 1200), jobs: 500, elapsedMs: 1000, cpuSeconds: 0.6 },
      { ...cell(1, 8, "admin", 1000, 1000), jobs: 1000, elapsedMs: 1000, cpuSeconds: 1 },
      { ...cell(1, 8, "worker", 1500, 1000), jobs: 1500, elapsedMs: 1000, cpuSeconds: 1.5 },
    ];
    const r = identityRatios(cells, 8);
    // worker: 2.1 s over 2,000 jobs; admin: 2 s over 2,000 jobs
    expect(r.pooled.cpu).toBeCloseTo(1.05, 10);
    expect(r.pooled.throughput).toBeCloseTo(1, 10);
    // without the totals (older cells): no pooled figure
    expect(identityRatios(rounds(8, [[1000, 1000, 1000, 1000]]), 8).pooled).toEqual({ cpu: null, throughput: null });
  });

  it("computes the A/A control's ratio with the same rule (the admin token again over the admin's)", () => {
    const cells = [...rounds(8, [[1000, 1000, 900, 1100]]), cell(0, 8, CONTROL_VARIANT, 1010, 990)];
    const r = identityRatios(cells, 8, IDENTITY_LIMIT, { of: CONTROL_VARIANT, over: "admin" });
    expect(r).toMatchObject({ of: CONTROL_VARIANT, over: "admin" });
    expect(r.cpu.median).toBeCloseTo(0.99, 10);
    expect(r.throughput.median).toBeCloseTo(1.01, 10);
    expect(identityRatios(cells, 8)).toMatchObject({ of: "worker", over: "admin" });
  });

  it("honours another limit", () => {
    const r = identityRatios(rounds(8, [[1000, 1000, 900, 1080]]), 8, 1.1);
    expect(r.limit).toBe(1.1);
    expect(r.cpu.pass).toBe(true);
    expect(r.throughput.pass).toBe(false);
  });
});

describe("the variants' order", () => {
  it("alternates A/B, B/A by round, and shifts at the second W so each W alternates too", () => {
    expect([0, 1, 2, 3].map((r) => roundOrder(r))).toEqual([["admin", "worker"], ["worker", "admin"], ["admin", "worker"], ["worker", "admin"]]);
    expect(roundOrder(0, 1)).toEqual(["worker", "admin"]);
  });

  it("with the control, rotates three cells so each takes each place in turn", () => {
    const three = variantsOf({ control: true });
    expect(three).toEqual(["admin", "worker", CONTROL_VARIANT]);
    expect(variantsOf({ control: false })).toEqual(["admin", "worker"]);
    expect([0, 1, 2].map((r) => roundOrder(r, 0, three))).toEqual([
      ["admin", "worker", CONTROL_VARIANT], ["worker", CONTROL_VARIANT, "admin"], [CONTROL_VARIANT, "admin", "worker"],
    ]);
  });
});

describe("cpuDelta", () => {
  it("prefers the schedstat clock, and falls back to the ticks when it is missing or went backwards", () => {
    expect(cpuDelta({ fine: 1.0, ticks: 1.0 }, { fine: 1.2345, ticks: 1.23 })).toEqual({ seconds: expect.closeTo(0.2345, 10), clock: "schedstat" });
    expect(cpuDelta({ fine: null, ticks: 1.0 }, { fine: 1.2, ticks: 1.2 })).toEqual({ seconds: expect.closeTo(0.2, 10), clock: "ticks" });
    expect(cpuDelta({ fine: 5.0, ticks: 1.0 }, { fine: 4.0, ticks: 1.5 })).toEqual({ seconds: 0.5, clock: "ticks" });
    expect(cpuDelta({ fine: null, ticks: null }, { fine: null, ticks: null })).toEqual({ seconds: null, clock: null });
  });
});

describe("the report", () => {
  const identity = {
    shape: { limit: 10 },
    versions: [{ version: "0.22.21", ratios: [identityRatios(rounds(8, [[1000, 1000, 980, 1030]]), 8)] }],
  };

  it("gives two Targets rows per version and W: CPU per job and wall time per job", () => {
    const t = identityTargets(identity);
    expect(t).toHaveLength(2);
    expect(t[0]).toMatchObject({ pass: true, measured: "1.030x (1.03-1.03, n=1)" });
    expect(t[0]!.target).toMatch(/CPU per job .*W=8, PocketBase 0\.22\.21/);
    expect(t[1]!.target).toMatch(/wall time per job.*>= 0\.952/);
    expect(t[1]!.measured).toMatch(/^jobs\/s 0\.980x .*wall\/job 1\.020x$/);
    expect(identityTargets(null)).toEqual([]);
  });

  it("formats a ratio with its spread, or n/a", () => {
    expect(fmtIdentityRatio({ median: 1.0234, min: 0.98, max: 1.1, n: 12 })).toBe("1.023x (0.98-1.10, n=12)");
    expect(fmtIdentityRatio({ median: null, min: null, max: null, n: 0 })).toBe("n/a");
  });

  it("puts the section before the memory table, and leaves a report without the phase alone", () => {
    const full = {
      shape: { limit: 10, hooksPool: 25, rounds: 1, durationMs: 100, maxJobs: 100, ratioLimit: 1.05 },
      versions: [{
        version: "0.40.4", seeded: 1000, load1: { start: 1, end: 2 },
        rows: [{ variant: "admin", workers: 8, jobsPerSec: 900, cpuMicrosPerJob: 1000, pbCores: 0.9, claimMs: { p50: 1, p99: 2 }, completeMs: { p50: 1, p99: 3 }, jobs: 90, failureCount: 0 }],
        ratios: [identityRatios(rounds(8, [[1000, 1000, 990, 1010]]), 8)],
      }],
    };
    const report = "## run\n\n### Targets\n\n| a |\n\n### 9. Memory: max VmRSS\n\n| m |\n";
    const out = withIdentitySection(report, full);
    expect(out.indexOf("### 13. Worker identities")).toBeGreaterThan(out.indexOf("| a |"));
    expect(out.indexOf("### 13. Worker identities")).toBeLessThan(out.indexOf("### 9. Memory"));
    expect(out).toContain("| a |\n\n### 13. Worker identities");
    expect(out).toMatch(/\| 0\.40\.4 +\| 8 +\| 1\.010x \(1\.01-1\.01, n=1\) +\| PASS/);
    expect(withIdentitySection(report, null)).toBe(report);
    expect(withIdentitySection("## run\n", full)).toMatch(/^## run\n\n### 13\. Worker identities/);
  });

  it("shows the A/A control rows and PocketBase's own price of each token when they were measured", () => {
    const row = (variant: string, cpu: number) => ({ variant, workers: 8, jobsPerSec: 900, cpuMicrosPerJob: cpu, pbCores: 0.9, claimMs: { p50: 1, p99: 2 }, completeMs: { p50: 1, p99: 3 }, jobs: 90, failureCount: 0 });
    const cells = [...rounds(8, [[1000, 1000, 990, 1080]]), cell(0, 8, CONTROL_VARIANT, 1000, 1010)];
    const identity = {
      shape: { limit: 10, hooksPool: 25, rounds: 1, durationMs: 100, maxJobs: 100, ratioLimit: 1.05, control: true },
      versions: [{
        version: "0.22.21", seeded: 1000, load1: { start: 1, end: 2 },
        hooks: [{ file: "pb_hooks/fleet.pb.js", sha256: "0123456789abcdef", builtAt: "2026-12-02T00:00:00.000Z" }],
        rows: [row("admin", 1000), row("worker", 1080), row(CONTROL_VARIANT, 1010)],
        ratios: [identityRatios(cells, 8)],
        controls: [identityRatios(cells, 8, IDENTITY_LIMIT, { of: CONTROL_VARIANT, over: "admin" })],
        tokenLoad: { rounds: 3, workers: 4, cellMs: 200, cpuMicrosPerRequest: { admin: 100, worker: 250, none: 50 }, workerMinusAdmin: 150, perJob: 30 },
      }],
    };
    const out = withIdentitySection("## run\n", identity);
    expect(out).toMatch(/\| 0\.22\.21 +\| 8 +\| 1\.080x \(1\.08-1\.08, n=1\) +\| MISS/);
    expect(out).toMatch(/\| 8, control: admin again \/ admin \| 1\.010x \(1\.01-1\.01, n=1\) +\| \(noise\)/);
    expect(out).toMatch(/\| 100 \/ 250 \/ 50 +\| \+150 us +\| \+30\.0 us +\| 3\.0% +\|/);
    expect(out).toContain("pb_hooks/fleet.pb.js (sha256 0123456789ab, built 2026-12-02T00:00:00.000Z)");
    expect(out).toContain("the admin token again as an A/A control");
  });
});

describe("bench identity flags", () => {
  it("names the identity phase in --help and says --quick leaves it out by default", async () => {
    const { code, stdout } = await bench(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/batched, hot-path, identity, steady/);
    expect(stdout).toMatch(/leaves out enqueue, claim-next-100k, batched, identity/);
    expect(stdout).toMatch(/and for the identity phase/);
  });

  it("refuses an unknown phase next to it with exit 2", async () => {
    const { code, stderr } = await bench(["--phases", "identity,identities"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--phases: unknown phase "identities"/);
  });
});
