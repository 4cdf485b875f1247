// The benchmark's load shapes: contention rounds (W claimers race for one
// fresh row) and closed loops (W workers each do one operation after another
// for a bounded time and count). Both take the request as a function, so every
// variant (pb-fleet, reference, PATCH, noop) runs through the same loop.
import { performance } from "node:perf_hooks";
import { SEED_MAX, SEED_PATH } from "./hooks.mjs";

/**
 * Rows of probe_jobs made ahead of a measurement and handed out one by one.
 * `ensure` (outside the measured window) seeds more when fewer than n are left.
 * @param {ReturnType<import("./http.mjs").createBenchClient>} client
 * @param {{ port: number, token: string }} server
 * @param {"pending" | "claimed"} status claimed rows are held by `holder` with a one-hour lease
 */
export function createJobPool(client, server, status, holder = "bench-holder") {
  const ids = [];
  let cursor = 0;
  let seeded = 0;
  return {
    holder,
    async ensure(n) {
      while (ids.length - cursor < n) {
        const count = Math.min(SEED_MAX, n - (ids.length - cursor));
        const res = await client.post(server, SEED_PATH, { count, status, claimedBy: holder, tag: `seed${seeded}` });
        if (res.status !== 200 || !Array.isArray(res.body?.ids)) {
          throw new Error(`seeding ${count} ${status} rows on port ${server.port} failed: HTTP ${res.status} ${JSON.stringify(res.body)}`);
        }
        seeded += 1;
        ids.push(...res.body.ids);
      }
    },
    /** The next unused row id, or null when the pool is used up (ends a loop early). */
    take() {
      return cursor < ids.length ? ids[cursor++] : null;
    },
    left: () => ids.length - cursor,
  };
}

/**
 * One contention round: all `workers` requests start together.
 * @param {(i: number) => Promise<{ status: number, body: any, ms: number }>} send the i-th racer's request
 * @param {(res: { status: number, body: any }) => boolean} isWin
 */
export async function contentionRound(workers, send, isWin) {
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: workers }, (_, i) => send(i)));
  const wallMs = performance.now() - started;
  return {
    wallMs,
    latencies: results.map((r) => r.ms),
    winners: results.filter(isWin).length,
    errors: results.filter((r) => r.status !== 200).map((r) => `HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`),
  };
}

/**
 * W workers, each doing `op` back to back until `durationMs` has passed or an op
 * reports that there is no more work (returns null). `maxOps` bounds the total.
 * @param {{ workers: number, durationMs: number, maxOps: number,
 *   op: (worker: number) => Promise<null | { latencies: Record<string, number>, ok: boolean, detail?: string }> }} args
 */
export async function closedLoop({ workers, durationMs, maxOps, op }) {
  const latencies = {};
  const failureSamples = [];
  let failureCount = 0;
  let ops = 0;
  let started = 0;
  const t0 = performance.now();
  const deadline = t0 + durationMs;
  const worker = async (w) => {
    while (performance.now() < deadline && started < maxOps) {
      started += 1;
      const result = await op(w);
      if (result === null) return;
      for (const [name, ms] of Object.entries(result.latencies)) (latencies[name] ??= []).push(ms);
      if (result.ok) ops += 1;
      else {
        failureCount += 1;
        if (failureSamples.length < 5) failureSamples.push(result.detail ?? "unexpected answer");
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
  const elapsedMs = performance.now() - t0;
  return { ops, elapsedMs, opsPerSec: ops / (elapsedMs / 1000), latencies, failureCount, failureSamples };
}
