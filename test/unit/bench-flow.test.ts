// The benchmark's flow phase (scripts/bench/flow.mjs, docs/flow-control.md "Performance"):
// the shape and its flags (a bad value exits 2 before any server starts), the
// ratios paired by repetition and their PASS/MISS against each figure's
// target, the Targets rows, and the report's section.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_FLOW_BASELINE_REV, FLOW_FIGURES, FLOW_TARGETS, flowShape, flowShapeProblem, flowTargets, flowVerdict, fmtFlowRatio, pairedRatio,
} from "../../scripts/bench/flow.mjs";
import { renderFlow, renderReport } from "../../scripts/bench/report.mjs";
import { bench } from "./support/bench-cli";



const config = () => ({
  reps: 3, warmupCalls: 3, leaseSeconds: 3600, chunk: 50_000, hooksPool: 25,
  isolation: { aJobs: 1000, bJobs: 20_000, limit: 10, calls: 15 },
  group: { gJobs: 10_000, otherJobs: 1000, otherGroups: 50, concurrency: 1, limit: 10, calls: 15 },
  common: { rows: 3000, limit: 100, loops: 10, reps: 5 },
});

describe("flowShape", () => {
  it("takes the mode's config, with docs/flow-control.md's targets and the default baseline revision", () => {
    const s = flowShape(config());
    expect(s.targets).toEqual({ isolation: 1.5, group: 3, common: 1.1 });
    expect(FLOW_TARGETS).toEqual(s.targets);
    expect(s.baselineRev).toBe(DEFAULT_FLOW_BASELINE_REV);
    expect(DEFAULT_FLOW_BASELINE_REV).toMatch(/^[0-9a-f]{7,40}$/);
    expect(s.isolation.bJobs).toBe(20_000);
    expect(FLOW_FIGURES).toEqual(["isolation", "group", "common"]);
  });

  it("applies --flowRows, --flowGroupRows and --flowBaseline, and leaves the config it was given alone", () => {
    const c = config();
    const s = flowShape(c, { flowRows: 1_000_000, flowGroupRows: 100_000, flowBaseline: "abc1234" });
    expect(s.isolation.bJobs).toBe(1_000_000);
    expect(s.group.gJobs).toBe(100_000);
    expect(s.baselineRev).toBe("abc1234");
    expect(c.isolation.bJobs).toBe(20_000);
    expect(c.group.gJobs).toBe(10_000);
  });

  it("refuses a shape whose cells would run out of jobs (cells are reset after, not during)", () => {
    const c = config();
    c.isolation.calls = 101;
    expect(flowShapeProblem(c)).toMatch(/isolation: 101 calls of 10 need more than queue A's 1000 jobs/);
    expect(() => flowShape(c)).toThrow(/flow phase: isolation/);
    const g = config();
    g.warmupCalls = 200;
    expect(flowShapeProblem(g)).toMatch(/isolation: 200 calls/);
    const m = config();
    m.common.loops = 31;
    expect(flowShapeProblem(m)).toMatch(/common: 31 loops of 100 need more than its 3000 jobs/);
    const z = config();
    z.common.reps = 0;
    expect(flowShapeProblem(z)).toMatch(/reps/);
    expect(flowShapeProblem(config())).toBeNull();
  });
});

const cell = (rep: number, variant: string, costMs: number | null, cpuMicrosPerCall: number | null) => ({ rep, variant, costMs, cpuMicrosPerCall });

describe("pairedRatio", () => {
  it("pairs the cells by repetition: the median of the reps' ratios, not the ratio of the medians, with the per-rep values in rep order", () => {
    // The load moves both variants a lot from rep to rep; within a rep the first costs 1.2x.
    const cells = [cell(1, "a", 24, 0), cell(1, "b", 20, 0), cell(0, "a", 6, 0), cell(0, "b", 5, 0), cell(2, "b", 100, 0), cell(2, "a", 150, 0)];
    const r = pairedRatio(cells, "a", "b", "costMs");
    expect(r.perRep.map((x) => Number((x as number).toFixed(6)))).toEqual([1.2, 1.2, 1.5]);
    expect(r.median).toBeCloseTo(1.2, 10);
    expect(r).toMatchObject({ min: expect.closeTo(1.2, 10), max: expect.closeTo(1.5, 10), n: 3 });
  });

  it("leaves a rep without both cells or a value out of the summary, and null in its place", () => {
    const cells = [cell(0, "a", 2, null), cell(0, "b", 1, 5), cell(1, "a", 3, 10)];
    const r = pairedRatio(cells, "a", "b", "costMs");
    expect(r.perRep).toEqual([2, null]);
    expect(r).toMatchObject({ median: 2, n: 1 });
    expect(pairedRatio(cells, "a", "b", "cpuMicrosPerCall")).toMatchObject({ median: null, n: 0, perRep: [null, null] });
  });
});

describe("flowVerdict", () => {
  it("passes at or under the target, misses above it, and does not judge without a figure", () => {
    expect(flowVerdict(1.5, 1.5)).toBe(true);
    expect(flowVerdict(1.49, 1.5)).toBe(true);
    expect(flowVerdict(1.51, 1.5)).toBe(false);
    expect(flowVerdict(0.8, 1.1)).toBe(true);
    expect(flowVerdict(null, 3)).toBeNull();
    expect(flowVerdict(Number.NaN, 3)).toBeNull();
  });

  it("formats a ratio with its per-rep values", () => {
    expect(fmtFlowRatio({ median: 1.0712, perRep: [1.02, 1.1, null] })).toBe("1.07x (per rep 1.02, 1.10, n/a)");
    expect(fmtFlowRatio({ median: null, perRep: [] })).toBe("n/a");
    expect(fmtFlowRatio(null)).toBe("n/a");
  });
});

/** A figure as runFlowPhase answers it, with one rep of ratios. */
function figure(key: "isolation" | "group" | "common", latency: number, cpu: number) {
  const sizes = {
    isolation: { aJobs: 1000, bJobs: 1_000_000, limit: 10, calls: 40 },
    group: { gJobs: 100_000, otherJobs: 1000, otherGroups: 50, concurrency: 1, limit: 10, calls: 40 },
    common: { rows: 10_000, limit: 100, loops: 20, reps: 15 },
  }[key];
  const row = (variant: string, costMs: number, cpuMicros: number) => ({
    variant, server: `flow-${key}-${variant}`, reps: 1, costMs, perRepCostMs: [costMs], cpuMicros, perRepCpuMicros: [cpuMicros],
    claimMs: 10, completeMs: 12, latencyMs: { n: 40, p50: costMs, p95: costMs, p99: costMs * 2, max: costMs * 3 }, failureCount: 0,
  });
  const datasets = {
    isolation: [{ variant: "new", aPending: 1000, bPending: 1_000_000, seedSec: 40 }, { variant: "base", aPending: 1000, bPending: 0, seedSec: 0.1 }],
    group: [{ variant: "new", gPending: 100_000, gHeld: 1, otherPending: 1000, seedSec: 4 }, { variant: "base", gPending: 0, gHeld: 1, otherPending: 1000, seedSec: 0.1 }],
    common: [{ variant: "new", pending: 10_000, columns: 29, flowRows: 0 }, { variant: "base", pending: 10_000, columns: 26, flowRows: null }],
  }[key];
  return {
    key, target: FLOW_TARGETS[key], sizes, of: "new", over: "base", datasets,
    rows: [row("new", 2 * latency, 1000 * cpu), row("base", 2, 1000)],
    ratios: { latency: { median: latency, min: latency, max: latency, n: 1, perRep: [latency] }, cpu: { median: cpu, min: cpu, max: cpu, n: 1, perRep: [cpu] } },
    pass: flowVerdict(latency, FLOW_TARGETS[key]),
    skipped: null,
    cells: [],
    ...(key === "common"
      ? {
        baseline: { rev: "98ad389", sha: "98ad389aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", subject: "before flow control", files: ["pb_hooks/fleet.pb.js", "pb_migrations/1.js"], skipped: null },
        context: { claimNext: { median: 1.02, perRep: [1.02] }, complete: { median: 0.99, perRep: [0.99] } },
      }
      : {}),
  };
}

const flowRun = (figures: unknown[]) => ({
  shape: { ...flowShape(config()), reps: 7 },
  figures,
  failures: [],
  load1: { start: 1.5, end: 2.5 },
});

describe("flowTargets", () => {
  it("judges isolation and group on latency per call (CPU beside it) and the common path on latency and CPU per job", () => {
    const t = flowTargets(flowRun([figure("isolation", 1.2, 1.1), figure("group", 3.5, 3.4), figure("common", 1.05, 1.12)]));
    expect(t).toHaveLength(4);
    expect(t[0]).toMatchObject({ pass: true, measured: "1.20x (per rep 1.20); CPU/call 1.10x" });
    expect(t[0]!.target).toMatch(/queue B holds 1,000,000 due jobs sorting before them <= 1\.5x the call with B empty/);
    expect(t[1]).toMatchObject({ pass: false, measured: "3.50x (per rep 3.50); CPU/call 3.40x" });
    expect(t[1]!.target).toMatch(/100,000 due jobs of one group at its concurrency limit .* <= 3x/);
    expect(t[2]).toMatchObject({ pass: true, measured: "1.05x (per rep 1.05)" });
    expect(t[2]!.target).toMatch(/common path: claim-next 100 \+ complete 100 .*<= 1\.1x .*: latency per job$/);
    expect(t[3]).toMatchObject({ pass: false, measured: "1.12x (per rep 1.12)" });
    expect(t[3]!.target).toMatch(/PocketBase CPU per job$/);
  });

  it("reports a figure without its baseline as skipped, not judged, and nothing without the phase", () => {
    const skipped = { key: "common", target: 1.1, sizes: { rows: 10, limit: 100, loops: 1, reps: 1 }, skipped: "git is not installed", ratios: null, rows: [], datasets: [] };
    const t = flowTargets(flowRun([skipped]));
    expect(t).toEqual([{ target: expect.stringMatching(/^common path/), measured: "skipped: git is not installed", pass: null }]);
    expect(flowTargets(null)).toEqual([]);
  });
});

describe("the report", () => {
  it("renders the ratios with their per-rep values and verdicts, and each variant's medians", () => {
    const out: string[] = [];
    renderFlow(out, flowRun([figure("isolation", 1.2, 1.1), figure("group", 3.5, 3.4), figure("common", 1.05, 1.12)]), (t: string) => out.push("", `### ${t}`, ""));
    const text = out.join("\n");
    expect(text).toContain("### 14. Flow control");
    expect(text).toMatch(/\| queue isolation +\| new \/ base +\| 1\.20x +\| 1\.20 +\| 1\.10x +\| 1\.10 +\| <= 1\.5x +\| PASS +\|/);
    expect(text).toMatch(/\| group at its limit +\| new \/ base +\| 3\.50x .*\| <= 3x +\| MISS +\|/);
    expect(text).toMatch(/\| common path +\| new \/ base +\| 1\.05x .*\| <= 1\.1x +\| latency PASS, CPU MISS +\|/);
    expect(text).toMatch(/\| queue isolation +\| new +\| flow-isolation-new +\| A 1,000, B 1,000,000 pending \(40\.0 s\) +\| call +\| 2\.40 +\|/);
    expect(text).toMatch(/\| group at its limit +\| new +\| .*\| G 100,000 pending \+ 1 held, others 1,000/);
    expect(text).toMatch(/\| common path +\| base +\| .*\| 10,000 pending, 26 columns +\| job +\| 2\.000 +\|/);
    expect(text).toContain('pb-fleet at 98ad389 ("before flow control"; --flowBaseline 98ad389), its pb_hooks/fleet.pb.js and 1 migrations from git');
    expect(text).toContain("claim-next 1.02x (per rep 1.02), complete 0.99x (per rep 0.99)");
    expect(text).toContain("load average (1 min) at the start / end of the phase: 1.5 / 2.5");
  });

  it("puts the section in the full report before the memory table, and its targets in the Targets table", () => {
    const flow = flowRun([figure("isolation", 1.2, 1.1)]);
    const run = {
      mode: "quick", command: "node scripts/bench.mjs --quick --phases flow",
      machine: { cpuModel: "cpu", cores: 2, node: "v20", pbVersion: "0.22.21", date: "2026-12-02T00:00:00.000Z" },
      binary: { path: "/pb", source: "cache", versionText: null }, hooks: [], reference: { skipped: "not used" }, phases: ["flow"],
      targets: flowTargets(flow), flow, memory: { maxRssByPhase: {}, peakHwmBytes: {} }, servers: [], failures: [],
    };
    const text = renderReport(run);
    expect(text.indexOf("### 14. Flow control")).toBeGreaterThan(text.indexOf("### Targets"));
    expect(text.indexOf("### 14. Flow control")).toBeLessThan(text.indexOf("### 9. Memory"));
    expect(text).toMatch(/\| claim-next \{queue: A, limit 10\}.*\| 1\.20x \(per rep 1\.20\); CPU\/call 1\.10x \| PASS +\|/);
  });

  it("says a skipped figure is skipped", () => {
    const out: string[] = [];
    const skipped = { key: "common", target: 1.1, sizes: {}, skipped: "the repository has no commit 98ad389", ratios: null, rows: [], datasets: [] };
    renderFlow(out, flowRun([skipped]), (t: string) => out.push(`### ${t}`));
    expect(out.join("\n")).toContain("common path: skipped: the repository has no commit 98ad389");
  });
});

describe("bench flow flags", () => {
  it.each([
    { args: ["--flowRows", "0"], message: /--flowRows needs a whole number from 1 to 100,000,000, got "0"/ },
    { args: ["--flowRows", "1e6"], message: /--flowRows needs a whole number/ },
    { args: ["--flowGroupRows", "12.5"], message: /--flowGroupRows needs a whole number from 1 to 100,000,000, got "12.5"/ },
    { args: ["--flowBaseline", " "], message: /--flowBaseline needs a git revision/ },
    { args: ["--phases", "flow,flows"], message: /--phases: unknown phase "flows"/ },
  ])("$args -> exit 2 with a sentence", async ({ args, message }) => {
    const { code, stderr } = await bench(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it("names the flow phase and its flags in --help, and says --quick leaves it out by default", async () => {
    const { code, stdout } = await bench(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/steady, retained, prune, flow\./);
    expect(stdout).toMatch(/leaves out enqueue, claim-next-100k, batched, identity, flow and the retention phases/);
    expect(stdout).toContain("--flowRows");
    expect(stdout).toContain("--flowGroupRows");
    expect(stdout).toContain(`--flowBaseline <rev>`);
    expect(stdout).toContain(`default: ${DEFAULT_FLOW_BASELINE_REV}, main before flow control`);
  });
});
