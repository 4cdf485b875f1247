// The benchmark's hot-path phase (scripts/bench/hot-path.mjs, issue 21): the
// shape and its flags (a bad value exits 2 before any server starts), the
// ratios current over baseline paired by repetition and their PASS/MISS
// against each target (jobs/s a floor, CPU per job a ceiling), the Targets
// rows, and the report's section.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_HOT_PATH_BASELINE_REV, HOT_PATH_PARTS, LIMITED_PART_FLOW, HOT_PATH_TARGETS, fmtHotPathRatio, hotPathJudge, hotPathRatios, hotPathShape, hotPathShapeProblem,
  hotPathTargets, hotPathVerdict, summarizeRuns,
} from "../../scripts/bench/hot-path.mjs";
import { renderHotPath, renderReport } from "../../scripts/bench/report.mjs";
import { bench } from "./support/bench-cli";



/** bench.mjs's full-mode config of the phase. */
const config = () => ({
  reps: 3, warmupJobs: 2000, leaseSeconds: 30, hooksPool: 100, timeoutMs: 300_000,
  server: { jobs: 30_000, loops: 8, limit: 100 },
  worker: { jobs: 30_000, processes: 8, workersPerProcess: 1, concurrency: 50 },
});

describe("hotPathShape", () => {
  it("takes the mode's config, with issue 21's targets and the default baseline revision", () => {
    const s = hotPathShape(config());
    expect(s.targets).toEqual({ server: { jobsPerSec: 1.8, pbCpuPerJob: 0.45 }, worker: { jobsPerSec: 1.8, clientCpuPerJob: 0.3 }, limited: {}, held: {} });
    expect({ ...HOT_PATH_TARGETS, limited: {}, held: {} }).toEqual(s.targets);
    expect(s.baselineRev).toBe(DEFAULT_HOT_PATH_BASELINE_REV);
    expect(DEFAULT_HOT_PATH_BASELINE_REV).toBe("97dd997");
    expect(s.server).toEqual({ jobs: 30_000, loops: 8, limit: 100 });
    expect(s.worker).toEqual({ jobs: 30_000, processes: 8, workersPerProcess: 1, concurrency: 50 });
    expect(s.warmupJobs).toBe(2000);
    expect(s.reps).toBeGreaterThanOrEqual(3);
    expect(HOT_PATH_PARTS).toEqual(["server", "limited", "worker", "held"]);
  });

  it("applies --hotPathJobs to both parts (the warm-up never more) and --hotPathBaseline, and leaves the config it was given alone", () => {
    const c = config();
    const s = hotPathShape(c, { hotPathJobs: 3000, hotPathBaseline: "abc1234" });
    expect(s.server.jobs).toBe(3000);
    expect(s.worker.jobs).toBe(3000);
    expect(s.warmupJobs).toBe(2000);
    expect(s.baselineRev).toBe("abc1234");
    expect(hotPathShape(c, { hotPathJobs: 500 }).warmupJobs).toBe(500);
    expect(c.server.jobs).toBe(30_000);
    expect(c.worker.jobs).toBe(30_000);
  });

  it("refuses a shape that cannot run", () => {
    const z = config();
    z.reps = 0;
    expect(hotPathShapeProblem(z)).toMatch(/reps/);
    expect(() => hotPathShape(z)).toThrow(/hot-path phase: reps/);
    const l = config();
    l.server.limit = 101;
    expect(hotPathShapeProblem(l)).toMatch(/limit must be 1 to 100/);
    const w = config();
    w.worker.concurrency = 0;
    expect(hotPathShapeProblem(w)).toMatch(/worker: processes, workersPerProcess and concurrency/);
    const o = config();
    o.server.loops = 0;
    expect(hotPathShapeProblem(o)).toMatch(/server: loops/);
    const h = { ...config(), held: { jobs: 100, limit: 101, leaseSeconds: 3600 } };
    expect(hotPathShapeProblem(h)).toMatch(/held: jobs and leaseSeconds at least 1, limit 1 to 100/);
    expect(hotPathShapeProblem(config())).toBeNull();
  });
});

type Run = { rep: number; variant: string; jobsPerSec: number | null; pbCpuMicrosPerJob: number | null; clientCpuMicrosPerJob: number | null; p99Ms: number | null };
const run = (rep: number, variant: string, jobsPerSec: number | null, pbCpu: number | null, clientCpu: number | null, p99: number | null): Run => ({
  rep, variant, jobsPerSec, pbCpuMicrosPerJob: pbCpu, clientCpuMicrosPerJob: clientCpu, p99Ms: p99,
});

describe("hotPathRatios", () => {
  it("pairs the runs by repetition, current over baseline: the median of the reps' ratios, with the per-rep values in rep order", () => {
    // The load moves both variants from rep to rep; within a rep current does 2x the jobs/s at 0.4x the CPU.
    const runs = [
      run(1, "baseline", 1000, 500, 200, 10), run(1, "current", 2000, 200, 50, 5),
      run(0, "current", 4000, 80, 20, 2), run(0, "baseline", 2000, 200, 100, 4),
      run(2, "current", 1500, 300, 90, 9), run(2, "baseline", 1000, 500, 100, 6),
    ];
    const r = hotPathRatios(runs);
    expect(r.jobsPerSec.perRep).toEqual([2, 2, 1.5]);
    expect(r.jobsPerSec).toMatchObject({ median: 2, min: 1.5, max: 2, n: 3 });
    expect(r.pbCpuPerJob.perRep).toEqual([0.4, 0.4, 0.6]);
    expect(r.pbCpuPerJob.median).toBeCloseTo(0.4, 10);
    expect(r.clientCpuPerJob.perRep).toEqual([0.2, 0.25, 0.9]);
    expect(r.clientCpuPerJob.median).toBeCloseTo(0.25, 10);
    expect(r.p99.perRep).toEqual([0.5, 0.5, 1.5]);
  });

  it("leaves a rep without both runs or a value out of the summary, and null in its place", () => {
    const runs = [run(0, "current", 2000, null, 10, 1), run(0, "baseline", 1000, 100, 10, 1), run(1, "current", 3000, 100, 10, 1)];
    const r = hotPathRatios(runs);
    expect(r.jobsPerSec.perRep).toEqual([2, null]);
    expect(r.jobsPerSec).toMatchObject({ median: 2, n: 1 });
    expect(r.pbCpuPerJob).toMatchObject({ median: null, n: 0, perRep: [null, null] });
  });

  it("summarizes each variant by its medians, the per-rep values in rep order", () => {
    const runs = [
      { ...run(1, "current", 2000, 200, 50, 5), server: "hot-path-current", clientJobsPerSec: 1900, latencyMs: { p50: 1, p99: 5, max: 9 }, requestsPerJob: 0.02, failures: [] },
      { ...run(0, "current", 4000, 80, 20, 2), server: "hot-path-current", clientJobsPerSec: 3900, latencyMs: { p50: 1, p99: 2, max: 3 }, requestsPerJob: 0.02, failures: ["x"] },
    ];
    const [c, b] = summarizeRuns(runs);
    expect(c).toMatchObject({ variant: "current", server: "hot-path-current", reps: 2, jobsPerSec: 3000, perRepJobsPerSec: [4000, 2000], pbCpuMicrosPerJob: 140, exactlyOnceRuns: "1 of 2" });
    expect(c!.latencyMs).toEqual({ p50: 1, p99: 3.5, max: 9 });
    expect(b).toMatchObject({ variant: "baseline", reps: 0, jobsPerSec: null });
  });
});

describe("hotPathVerdict and hotPathJudge", () => {
  it("judges jobs/s as a floor and CPU per job as a ceiling, and does not judge without a figure", () => {
    expect(hotPathVerdict(1.8, 1.8, "atLeast")).toBe(true);
    expect(hotPathVerdict(1.79, 1.8, "atLeast")).toBe(false);
    expect(hotPathVerdict(0.45, 0.45, "atMost")).toBe(true);
    expect(hotPathVerdict(0.46, 0.45, "atMost")).toBe(false);
    expect(hotPathVerdict(null, 1.8, "atLeast")).toBeNull();
    expect(hotPathVerdict(Number.NaN, 0.3, "atMost")).toBeNull();
  });

  it("judges only the metrics a part has a target for", () => {
    const ratios = hotPathRatios([run(0, "current", 1900, 400, 30, 1), run(0, "baseline", 1000, 1000, 100, 1)]);
    const server = hotPathJudge(ratios, HOT_PATH_TARGETS.server);
    expect(Object.keys(server)).toEqual(["jobsPerSec", "pbCpuPerJob"]);
    expect(server.jobsPerSec).toEqual({ target: 1.8, direction: "atLeast", median: 1.9, pass: true });
    expect(server.pbCpuPerJob).toEqual({ target: 0.45, direction: "atMost", median: 0.4, pass: true });
    const worker = hotPathJudge(ratios, HOT_PATH_TARGETS.worker);
    expect(Object.keys(worker)).toEqual(["jobsPerSec", "clientCpuPerJob"]);
    expect(worker.clientCpuPerJob).toMatchObject({ target: 0.3, median: 0.3, pass: true });
    expect(hotPathJudge(hotPathRatios([run(0, "current", 1000, 1, 1, 1), run(0, "baseline", 1000, 1, 1, 1)]), HOT_PATH_TARGETS.worker).jobsPerSec?.pass).toBe(false);
  });

  it("formats a ratio with its per-rep values", () => {
    expect(fmtHotPathRatio({ median: 1.0712, perRep: [1.02, 1.1, null] })).toBe("1.07x (per rep 1.02, 1.10, n/a)");
    expect(fmtHotPathRatio({ median: null, perRep: [] })).toBe("n/a");
    expect(fmtHotPathRatio(null)).toBe("n/a");
  });
});

/** A part as runHotPathPhase answers it, with one rep: current does `jobs`x the baseline's jobs/s at `cpu`x its CPU per job. */
function part(key: "server" | "worker", jobs: number, cpu: number, failures: string[] = []) {
  const runs = [
    { ...run(0, "current", 1000 * jobs, 500 * cpu, 100 * cpu, 50), clientSteadyCpuMicrosPerJob: 60 * cpu, server: "hot-path-current", clientJobsPerSec: 990 * jobs, latencyMs: { p50: 10, p99: 50, max: 60 }, requestsPerJob: 0.02, failures },
    { ...run(0, "baseline", 1000, 500, 100, 100), clientSteadyCpuMicrosPerJob: 60, server: "hot-path-baseline", clientJobsPerSec: 990, latencyMs: { p50: 20, p99: 100, max: 120 }, requestsPerJob: 0.03, failures: [] },
  ];
  const ratios = hotPathRatios(runs);
  const sizes = key === "server" ? { jobs: 30_000, loops: 8, limit: 100, reps: 1 } : { jobs: 30_000, processes: 8, workersPerProcess: 1, concurrency: 50, reps: 1 };
  return { key, sizes, targets: HOT_PATH_TARGETS[key], rows: summarizeRuns(runs), ratios, judged: hotPathJudge(ratios, HOT_PATH_TARGETS[key]), pass: null, runs, skipped: null };
}

const hotPath = (parts: unknown[], extra = {}) => ({
  shape: hotPathShape(config()),
  baseline: { rev: "97dd997", sha: "97dd997aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", subject: "before the hot path", files: ["pb_hooks/fleet.pb.js", "pb_migrations/1.js"], skipped: null },
  clients: { current: { skipped: null }, baseline: { skipped: null } },
  hooks: { current: [{ file: "fleet.pb.js", sha256: "c".repeat(64) }], baseline: [{ file: "fleet.pb.js", sha256: "b".repeat(64) }] },
  parts,
  failures: [],
  load1: { start: 1.5, end: 2.5 },
  skipped: null,
  ...extra,
});

describe("hotPathTargets", () => {
  it("judges the server on jobs/s and PocketBase CPU per job, the Worker on jobs/s and client CPU per job (its steady CPU and p99 beside it), and exactly once over every run", () => {
    const t = hotPathTargets(hotPath([part("server", 2, 0.4), part("worker", 1.5, 0.2)]));
    expect(t).toHaveLength(7);
    expect(t[0]).toMatchObject({ pass: true, measured: "2.00x (per rep 2.00); 2,000 vs 1,000 jobs/s" });
    expect(t[0]!.target).toBe("hot path, server (8 loops of claim-next (limit 100) + complete, 30,000 jobs): jobs/s >= 1.8x pb-fleet 97dd997");
    expect(t[1]).toMatchObject({ pass: true, measured: "0.40x (per rep 0.40); 200 vs 500 us" });
    expect(t[1]!.target).toMatch(/PocketBase CPU per job <= 0\.45x pb-fleet 97dd997$/);
    expect(t[2]).toMatchObject({ pass: false, measured: "1.50x (per rep 1.50); 1,500 vs 1,000 jobs/s" });
    expect(t[2]!.target).toMatch(/^hot path, Worker \(8 Workers x 50 \(8 processes\), 30,000 jobs\): jobs\/s >= 1\.8x/);
    expect(t[3]).toMatchObject({ pass: true, measured: "0.20x (per rep 0.20); 20 vs 100 us" });
    expect(t[3]!.target).toMatch(/client CPU per job <= 0\.3x/);
    expect(t[4]).toMatchObject({ pass: null, measured: "0.20x (per rep 0.20); 12 vs 60 us" });
    expect(t[4]!.target).toMatch(/^\(context\) .*client CPU per job, steady \(20-80% of each process's jobs\), current over/);
    expect(t[5]).toMatchObject({ pass: null, measured: "0.50x (per rep 0.50); 50 vs 100 ms" });
    expect(t[5]!.target).toMatch(/^\(context\) .*p99 claim-to-completion/);
    expect(t[6]).toMatchObject({ pass: true, measured: "4 of 4 runs" });
  });

  it("misses exactly once when a run failed, reports a skipped part or phase as skipped, and nothing without the phase", () => {
    expect(hotPathTargets(hotPath([part("server", 1, 1, ["3 jobs left behind (not done)"])])).at(-1)).toMatchObject({ measured: "1 of 2 runs", pass: false });
    const skippedWorker = { key: "worker", sizes: { jobs: 3000, processes: 8, workersPerProcess: 1, concurrency: 50 }, rows: [], ratios: null, judged: {}, runs: [], skipped: "esbuild is not installed" };
    expect(hotPathTargets(hotPath([skippedWorker]))).toEqual([{ target: expect.stringMatching(/^hot path, Worker .*current vs pb-fleet 97dd997$/), measured: "skipped: esbuild is not installed", pass: null }]);
    const none = hotPathTargets(hotPath([], { skipped: "git is not installed", baseline: { rev: "97dd997", skipped: "git is not installed" } }));
    expect(none).toEqual([{ target: expect.stringMatching(/^hot path/), measured: "skipped: git is not installed", pass: null }]);
    expect(hotPathTargets(null)).toEqual([]);
  });
});

describe("the limited part (the server part's load with a rate limit set)", () => {
  it("is context, not a target: jobs/s and PocketBase CPU per job current over the baseline, with the setting in its title", () => {
    const server = part("server", 2, 0.5);
    const limited = { ...server, key: "limited", targets: {}, judged: hotPathJudge(server.ratios, {}), sizes: { ...server.sizes, flow: LIMITED_PART_FLOW } };
    const t = hotPathTargets(hotPath([limited]));
    expect(t.slice(0, 2)).toEqual([
      {
        target: "(context) hot path, server with a rate limit set (8 loops of claim-next (limit 100) + complete, 30,000 jobs, " +
          'rate limit {"limit":100000,"periodSeconds":1} set): jobs/s, current over pb-fleet 97dd997',
        measured: "2.00x (per rep 2.00); 2,000 vs 1,000 jobs/s",
        pass: null,
      },
      { target: expect.stringMatching(/^\(context\) hot path, server with a rate limit set .*: PocketBase CPU per job, current over/), measured: "0.50x (per rep 0.50); 250 vs 500 us", pass: null },
    ]);
    expect(t[2]).toMatchObject({ measured: "2 of 2 runs", pass: true });
  });
});

describe("the held part (claim-next while the held jobs grow)", () => {
  const runs = [
    { ...run(0, "current", 4000, 250, 20, null), server: "hot-path-current", msPerCall: 25, clientJobsPerSec: 4000, latencyMs: { p50: null, p99: null, max: 0 }, requestsPerJob: 0.01, failures: [] },
    { ...run(0, "baseline", 2000, 450, 20, null), server: "hot-path-baseline", msPerCall: 50, clientJobsPerSec: 2000, latencyMs: { p50: null, p99: null, max: 0 }, requestsPerJob: 0.01, failures: [] },
  ];
  const ratios = hotPathRatios(runs);
  const held = { key: "held", sizes: { jobs: 20_000, limit: 100, reps: 1 }, targets: {}, rows: summarizeRuns(runs), ratios, judged: hotPathJudge(ratios, {}), pass: null, runs, skipped: null };

  it("is context, not a target: claim-next ms per call current over the baseline, and exactly once", () => {
    expect(held.judged).toEqual({});
    const t = hotPathTargets(hotPath([held]));
    expect(t[0]).toEqual({
      target: "(context) hot path, claim-next while held jobs grow (1 loop of claim-next (limit 100), no completes, until 20,000 jobs are held): " +
        "claim-next ms per call, current over pb-fleet 97dd997",
      measured: "0.50x (per rep 0.50); 25 vs 50 ms",
      pass: null,
    });
    expect(t[1]).toMatchObject({ measured: "2 of 2 runs", pass: true });
  });

  it("shows its own figures in the report: ms per call and PocketBase CPU per job, not claim-to-completion", () => {
    const out: string[] = [];
    renderHotPath(out, hotPath([held]), (t: string) => out.push("", `### ${t}`, ""));
    const text = out.join("\n");
    expect(text).toMatch(/\| claim-next, held jobs growing +\| claim-next ms per call +\| 0\.50x +\| 0\.50 +\| \(context\) +\| +\|/);
    expect(text).toMatch(/\| claim-next, held jobs growing +\| PocketBase CPU per job +\| 0\.56x /);
    expect(text).not.toMatch(/\| claim-next, held jobs growing +\| p99/);
    expect(text).toContain("Held: one loop in the bench's own process of claim-next (limit 100");
  });
});

describe("the report", () => {
  it("renders each part's ratios with their per-rep values and verdicts, and each variant's medians", () => {
    const out: string[] = [];
    renderHotPath(out, hotPath([part("server", 2, 0.4), part("worker", 1.5, 0.2)]), (t: string) => out.push("", `### ${t}`, ""));
    const text = out.join("\n");
    expect(text).toContain("### 15. Hot path (issue 21): claim-next -> complete as built vs pb-fleet 97dd997");
    expect(text).toMatch(/\| server \(load generator\) +\| jobs\/s +\| 2\.00x +\| 2\.00 +\| >= 1\.8x +\| PASS +\|/);
    expect(text).toMatch(/\| server \(load generator\) +\| PocketBase CPU per job +\| 0\.40x +\| 0\.40 +\| <= 0\.45x +\| PASS +\|/);
    expect(text).toMatch(/\| Worker fleet +\| jobs\/s +\| 1\.50x +\| 1\.50 +\| >= 1\.8x +\| MISS +\|/);
    expect(text).toMatch(/\| Worker fleet +\| p99 claim-to-completion +\| 0\.50x +\| 0\.50 +\| \(context\) +\| +\|/);
    expect(text).toMatch(/\| Worker fleet +\| baseline +\| hot-path-baseline +\| 1,000 +\| 1,000 +\| 990 +\| 500 +\| 500 +\| 100 +\| 100 +\| 20\.0 \/ 100\.0 +\| 0\.030 +\| 1 of 1 +\|/);
    expect(text).toContain('pb-fleet at 97dd997 ("before the hot path") (--hotPathBaseline 97dd997): its pb_hooks/fleet.pb.js and 1 migrations from git');
    expect(text).toContain("current fleet.pb.js (sha256 cccccccccccc); baseline fleet.pb.js (sha256 bbbbbbbbbbbb)");
    expect(text).toContain("load average (1 min) at the start / end of the phase: 1.5 / 2.5");
  });

  it("puts the section in the full report before the memory table, and its targets in the Targets table", () => {
    const hp = hotPath([part("server", 2, 0.4)]);
    const r = {
      mode: "full", command: "node scripts/bench.mjs --phases hot-path --hotPathJobs 3000",
      machine: { cpuModel: "cpu", cores: 2, node: "v20", pbVersion: "0.22.21", date: "2026-12-02T00:00:00.000Z" },
      binary: { path: "/pb", source: "cache", versionText: null }, hooks: [], reference: { skipped: "not used" }, phases: ["hot-path"],
      targets: hotPathTargets(hp), hotPath: hp, memory: { maxRssByPhase: {}, peakHwmBytes: {} }, servers: [], failures: [],
    };
    const text = renderReport(r);
    expect(text.indexOf("### 15. Hot path")).toBeGreaterThan(text.indexOf("### Targets"));
    expect(text.indexOf("### 15. Hot path")).toBeLessThan(text.indexOf("### 9. Memory"));
    expect(text).toMatch(/\| hot path, server .*jobs\/s >= 1\.8x pb-fleet 97dd997 +\| 2\.00x \(per rep 2\.00\); 2,000 vs 1,000 jobs\/s +\| PASS +\|/);
  });

  it("says a skipped phase is skipped", () => {
    const out: string[] = [];
    renderHotPath(out, hotPath([], { skipped: "the repository has no commit 97dd997" }), (t: string) => out.push(`### ${t}`));
    expect(out.join("\n")).toContain("Skipped: the repository has no commit 97dd997");
  });
});

describe("bench hot-path flags", () => {
  it.each([
    { args: ["--hotPathJobs", "0"], message: /--hotPathJobs needs a whole number from 100 to 10,000,000, got "0"/ },
    { args: ["--hotPathJobs", "3e3"], message: /--hotPathJobs needs a whole number/ },
    { args: ["--hotPathJobs", "1500.5"], message: /--hotPathJobs needs a whole number/ },
    { args: ["--hotPathBaseline", " "], message: /--hotPathBaseline needs a git revision/ },
    { args: ["--phases", "hot-paths"], message: /--phases: unknown phase "hot-paths"/ },
  ])("$args -> exit 2 with a sentence", async ({ args, message }) => {
    const { code, stderr } = await bench(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it("names the phase and its flags in --help, and says --quick leaves it out by default", async () => {
    const { code, stdout } = await bench(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/batched, hot-path, identity/);
    expect(stdout).toMatch(/the retention phases,\s+and hot-path/);
    expect(stdout).toContain("--hotPathJobs <n>");
    expect(stdout).toContain("default 30,000; --quick: 3,000");
    expect(stdout).toContain("--hotPathBaseline <rev>");
    expect(stdout).toContain(`default: ${DEFAULT_HOT_PATH_BASELINE_REV}, main before the hot-path work`);
  });
});
