// The hot-path phase's steady client CPU (scripts/bench/stats.mjs steadyCpu): a
// process's CPU between 20% and 80% of its completions, leaving out the cold
// start (V8 compiling the client) and the drain.
import { describe, expect, it } from "vitest";
import { steadyCpu } from "../../scripts/bench/stats.mjs";

describe("steadyCpu", () => {
  it("counts only the samples from 20% to 80% of the final completions: a costly start and tail do not enter", () => {
    // 1,000 jobs: the first 100 cost 500 µs each (compiling), the rest 50 µs each.
    const samples: Array<[number, number]> = [];
    let cpu = 0;
    for (let done = 0; done <= 1000; done += 50) {
      samples.push([done, cpu]);
      cpu += done < 100 ? 50 * 500 : 50 * 50;
    }
    expect(steadyCpu(samples, 1000)).toEqual({ jobs: 600, cpuMicros: 600 * 50 });
  });

  it("is null when no two samples span the window (a run too short to sample)", () => {
    expect(steadyCpu([], 100)).toBeNull();
    expect(steadyCpu([[0, 0], [100, 9000]], 100)).toBeNull();
    expect(steadyCpu([[50, 10]], 100)).toBeNull();
  });
});
