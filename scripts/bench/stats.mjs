// Small statistics for the benchmark: percentiles of latency samples and
// medians of repeated measurements (the machine is noisy, so every headline
// figure is a median over repetitions or a ratio measured back to back).

/** Nearest-rank percentile of an ascending array (p in 0..100). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function median(values) {
  const xs = values.filter((v) => typeof v === "number" && Number.isFinite(v)).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = Math.floor(xs.length / 2);
  return xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}

/** @param {number[]} latenciesMs */
export function latencySummary(latenciesMs) {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const round = (v) => (v === null ? null : Math.round(v * 100) / 100);
  return {
    n: sorted.length,
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.length ? sorted[sorted.length - 1] : null),
  };
}

export function ratio(numerator, denominator) {
  if (typeof numerator !== "number" || typeof denominator !== "number" || !(denominator > 0)) return null;
  return numerator / denominator;
}

/** Summary of paired per-repetition ratios: median plus the spread. */
export function ratioSummary(ratios) {
  const xs = ratios.filter((r) => typeof r === "number" && Number.isFinite(r));
  if (xs.length === 0) return { median: null, min: null, max: null, n: 0 };
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length };
}

/** Count of each value, keys sorted numerically: { "1": 40 } for forty single-winner rounds. */
export function histogram(values) {
  const counts = {};
  for (const v of [...values].sort((a, b) => a - b)) counts[String(v)] = (counts[String(v)] ?? 0) + 1;
  return counts;
}

/**
 * The CPU a client process spent while its completions went from 20% to 80%
 * of their final count `total`, and those completions, from its samples
 * [completions, CPU µs] in time order: the per-job cost once its code is
 * compiled and its first claims are in, before the run drains (a cold
 * process's first jobs carry V8's compilation, a fixed cost that a whole
 * run's figure spreads over the few jobs each process does). null: too few samples.
 * @param {Array<[number, number]>} samples
 * @param {number} total
 */
export function steadyCpu(samples, total) {
  const from = samples.find(([done]) => done >= total * 0.2);
  const to = samples.findLast(([done]) => done <= total * 0.8);
  if (!from || !to || to[0] <= from[0]) return null;
  return { jobs: to[0] - from[0], cpuMicros: to[1] - from[1] };
}
