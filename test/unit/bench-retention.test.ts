// The benchmark's retention phases (issue 18, scripts/bench/retention.mjs): the
// steady pass rule, the flags that size them (a bad value exits 2 with a
// sentence before any server starts), and that every PocketBase command
// pb-fleet runs says --dev=false.
import { describe, expect, it } from "vitest";
import { steadyVerdict } from "../../scripts/bench/retention.mjs";
import { devFlag } from "../../scripts/pocketbase/server.mjs";
import { bench } from "./support/bench-cli";



const sample = (minute: number, v: { rows: number; events?: number; rss?: number; claim?: number; stats?: number; completions?: number }) => ({
  minute,
  rows: v.rows,
  events: v.events ?? 100,
  rssBytes: v.rss ?? 100e6,
  claim: { p99: v.claim ?? 10 },
  stats: { p99: v.stats ?? 5 },
  completions: { p99: v.completions ?? 5 },
});

describe("steady pass rule", () => {
  const rule = { settleSamples: 5, growthLimit: 0.1 };

  it("passes when nothing grows more than 10% over its value at the 5th sample, whatever came before", () => {
    const samples = [1000, 5000, 9000, 10000, 10000, 10500, 10999, 9000].map((rows, i) => sample(i + 1, { rows }));
    const v = steadyVerdict(samples, rule);
    expect(v.pass).toBe(true);
    expect(v.baseMinute).toBe(5);
    expect(v.metrics.find((m) => m.key === "rows")).toMatchObject({ base: 10000, worst: 10999, pass: true });
  });

  it("misses when one metric (here the p99 of stats) grows more than 10%", () => {
    const samples = [1, 2, 3, 4, 5, 6, 7].map((m) => sample(m, { rows: 10000, stats: m === 7 ? 5.6 : 5 }));
    const v = steadyVerdict(samples, rule);
    expect(v.pass).toBe(false);
    expect(v.metrics.filter((m) => m.pass === false).map((m) => m.key)).toEqual(["stats"]);
  });

  it("does not judge a run too short to have a sample after the 5th", () => {
    const v = steadyVerdict([1, 2, 3, 4, 5].map((m) => sample(m, { rows: 1 })), rule);
    expect(v.pass).toBeNull();
    expect(v.why).toMatch(/only 5 samples/);
  });
});

describe("bench retention flags", () => {
  it.each([
    { args: ["--steadyMinutes", "0"], message: /--steadyMinutes needs a number from 0\.1 to 1,440, got "0"/ },
    { args: ["--steadyMinutes", "ten"], message: /--steadyMinutes needs a number/ },
    { args: ["--retainedRows", "500"], message: /--retainedRows needs a whole number from 1,001 to 100,000,000, got "500"/ },
    { args: ["--retainedRows", "1e7"], message: /--retainedRows needs a whole number/ },
    { args: ["--phases", "steady,soak"], message: /--phases: unknown phase "soak"/ },
  ])("$args -> exit 2 with a sentence", async ({ args, message }) => {
    const { code, stderr } = await bench(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it("names the retention phases and their flags in --help", async () => {
    const { code, stdout } = await bench(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/steady, retained, prune/);
    expect(stdout).toContain("--steadyMinutes");
    expect(stdout).toContain("--retainedRows");
  });
});

describe("dev mode", () => {
  it("is off in every command pb-fleet runs unless asked for", () => {
    expect(devFlag()).toBe("--dev=false");
    expect(devFlag(false)).toBe("--dev=false");
    expect(devFlag(true)).toBe("--dev=true");
  });
});
