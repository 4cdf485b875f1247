// The benchmark's measured phases. Each takes the run context
// ({ client, config, servers, rss, log }) and returns plain data for the report
// and the JSON file. Variants that are compared run back to back in a rotating
// order inside each repetition, and ratios are taken per repetition, so the
// noise of a shared 2-core machine hits both sides of a ratio alike.
import { MIN_CLAIM_PATH, NOOP_PATH, SEED_PATH } from "./hooks.mjs";
import { cpuMicrosPerOp, readCpuSeconds } from "./proc.mjs";
import { histogram, latencySummary, median, ratio, ratioSummary } from "./stats.mjs";
import { closedLoop, contentionRound } from "./workloads.mjs";

const CLAIM = "/api/fleet/claim";
const RENEW = "/api/fleet/renew";
const RELEASE = "/api/fleet/release";
/** Claims and renews ask for an hour, so no lease expires (and no sweeper acts) during the run. */
const LEASE_SECONDS = 3600;
const recordPath = (id) => `/api/collections/probe_jobs/records/${id}`;

/** PocketBase's text form of a date, `2006-01-02 15:04:05.000Z`. */
const pbDate = (ms) => new Date(ms).toISOString().replace("T", " ");

/** The same write a winning claim makes, done through PocketBase's own record API. */
const patchBody = (workerId) => ({
  status: "claimed",
  claimed_by: workerId,
  lease_expires_at: pbDate(Date.now() + LEASE_SECONDS * 1000),
  claimed_at: pbDate(Date.now()),
  version: 1,
});

/** [a, b, c] rotated by n: each variant goes first in turn across repetitions. */
const rotate = (xs, n) => xs.map((_, i) => xs[(i + n) % xs.length]);

const brief = (res) => `HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`;

/**
 * One variant's repetitions, summarized: medians under the given names, plus the
 * per-repetition values that ratios are paired on.
 */
function summarizeReps(cells, rateKey, cpuKey) {
  return {
    reps: cells.length,
    [rateKey]: median(cells.map((c) => c.opsPerSec)),
    perRepRates: cells.map((c) => c.opsPerSec),
    [cpuKey]: median(cells.map((c) => c.cpuMicrosPerOp)),
    perRepCpuMicros: cells.map((c) => c.cpuMicrosPerOp),
    failureCount: cells.reduce((sum, c) => sum + c.failureCount, 0),
    failureSamples: cells.flatMap((c) => c.failureSamples).slice(0, 5),
  };
}

/* ------------------------------------------------------------------ warm-up */

/** Exercises every route each server will be measured on, so no phase pays first-use costs. */
export async function warmUp(ctx, server) {
  const { client } = ctx;
  const n = ctx.config.warmup.requests;
  await server.pending.ensure(2 * n + 10);
  await server.held.ensure(n + 10);
  const concurrency = 8;
  let i = 0;
  const kinds = ["noop", "claim", "patch", "renew-release", "min-claim"];
  const worker = async () => {
    while (i < n) {
      const kind = kinds[i++ % kinds.length];
      if (kind === "noop") await client.post(server.pb, NOOP_PATH, {});
      else if (kind === "claim") await client.post(server.pb, CLAIM, { jobId: server.pending.take(), workerId: "warm", leaseSeconds: LEASE_SECONDS });
      else if (kind === "min-claim" && server.hasMinClaim) await client.post(server.pb, MIN_CLAIM_PATH, { jobId: server.pending.take(), workerId: "warm" });
      else if (kind === "patch") await client.patch(server.pb, recordPath(server.pending.take()), patchBody("warm"));
      else if (kind === "renew-release") {
        const id = server.held.take();
        await client.post(server.pb, RENEW, { jobId: id, workerId: server.held.holder, leaseSeconds: LEASE_SECONDS });
        await client.post(server.pb, RELEASE, { jobId: id, workerId: server.held.holder, status: "done" });
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/* --------------------------------------------------------------- contention */

/**
 * Racers for one fresh row. `claim` variants must have exactly one winner per
 * round; the `patch` variant shows what PocketBase's own API does instead.
 * @param {Array<{ key: string, server: any, kind: "claim" | "patch" }>} variants
 */
export async function runContention(ctx, variants, workerCounts, rounds) {
  const out = [];
  for (const workers of workerCounts) {
    for (const v of variants) await v.server.pending.ensure(rounds + 1);
    /** key -> { rates: number[], latencies: number[], winners: number[], errors: string[] } */
    const acc = Object.fromEntries(variants.map((v) => [v.key, { rates: [], latencies: [], winners: [], errors: [], cpuSeconds: 0 }]));
    for (let r = 0; r < rounds; r++) {
      for (const v of rotate(variants, r)) {
        const jobId = v.server.pending.take();
        const workerId = (i) => `c${workers}-${r}-${i}`;
        const cpuBefore = readCpuSeconds(v.server.pb.pid);
        const round =
          v.kind === "claim"
            ? await contentionRound(
                workers,
                (i) => ctx.client.post(v.server.pb, CLAIM, { jobId, workerId: workerId(i), leaseSeconds: LEASE_SECONDS }),
                (res) => res.status === 200 && res.body?.claimed === true && res.body?.alreadyHeld !== true,
              )
            : await contentionRound(
                workers,
                (i) => ctx.client.patch(v.server.pb, recordPath(jobId), patchBody(workerId(i))),
                (res) => res.status === 200,
              );
        const a = acc[v.key];
        a.cpuSeconds += (readCpuSeconds(v.server.pb.pid) ?? NaN) - (cpuBefore ?? NaN);
        a.rates.push(workers / (round.wallMs / 1000));
        a.latencies.push(...round.latencies);
        a.winners.push(round.winners);
        if (a.errors.length < 5) a.errors.push(...round.errors.slice(0, 5 - a.errors.length));
        a.errorCount = (a.errorCount ?? 0) + round.errors.length;
        if (v.kind === "claim" && round.winners !== 1) {
          ctx.log(`!!! ${v.key}: W=${workers} round ${r} had ${round.winners} winners (exactly 1 expected)`);
        }
      }
    }
    for (const v of variants) {
      const a = acc[v.key];
      out.push({
        variant: v.key,
        server: v.server.name,
        kind: v.kind,
        workers,
        rounds,
        requestsPerSec: median(a.rates),
        cpuMicrosPerRequest: Number.isFinite(a.cpuSeconds) ? (a.cpuSeconds * 1e6) / (rounds * workers) : null,
        latencyMs: latencySummary(a.latencies),
        winnersHistogram: histogram(a.winners),
        badRounds: v.kind === "claim" ? a.winners.filter((w) => w !== 1).length : null,
        errorCount: a.errorCount ?? 0,
        errorSamples: a.errors,
        perRoundRates: a.rates,
      });
    }
  }
  return out;
}

/** Per-round ratio a/b of two variants of one contention run (same W, same round index). */
export function contentionRatio(rows, keyA, keyB, workers) {
  const a = rows.find((r) => r.variant === keyA && r.workers === workers);
  const b = rows.find((r) => r.variant === keyB && r.workers === workers);
  if (!a || !b) return null;
  return ratioSummary(a.perRoundRates.map((x, i) => ratio(x, b.perRoundRates[i])));
}

/* ------------------------------------------------------- single endpoints */

/**
 * The operation of one endpoint variant for a closed loop. Consuming variants
 * take a fresh row per call; renew works on one held row per worker.
 */
function endpointOp(ctx, server, endpoint, workers) {
  const { client } = ctx;
  const pb = server.pb;
  const once = (res, ok) => ({ latencies: { [endpoint]: res.ms }, ok, detail: ok ? undefined : brief(res) });
  switch (endpoint) {
    case "claim":
    case "min-claim": {
      const path = endpoint === "claim" ? CLAIM : MIN_CLAIM_PATH;
      return async () => {
        const jobId = server.pending.take();
        if (jobId === null) return null;
        const res = await client.post(pb, path, { jobId, workerId: `e-${jobId}`, leaseSeconds: LEASE_SECONDS });
        return once(res, res.status === 200 && res.body?.claimed === true);
      };
    }
    case "patch":
      return async () => {
        const jobId = server.pending.take();
        if (jobId === null) return null;
        const res = await client.patch(pb, recordPath(jobId), patchBody(`e-${jobId}`));
        return once(res, res.status === 200);
      };
    case "noop":
      return async () => {
        const res = await client.post(pb, NOOP_PATH, {});
        return once(res, res.status === 200 && res.body?.ok === true);
      };
    case "renew": {
      const rows = Array.from({ length: workers }, () => server.held.take());
      return async (w) => {
        const res = await client.post(pb, RENEW, { jobId: rows[w], workerId: server.held.holder, leaseSeconds: LEASE_SECONDS });
        return once(res, res.status === 200 && res.body?.renewed === true);
      };
    }
    case "release":
      return async () => {
        const jobId = server.held.take();
        if (jobId === null) return null;
        const res = await client.post(pb, RELEASE, { jobId, workerId: server.held.holder, status: "done" });
        return once(res, res.status === 200 && res.body?.released === true);
      };
    default:
      throw new Error(`unknown endpoint ${endpoint}`);
  }
}

/**
 * Each endpoint variant hammered alone by W workers for a short, bounded time,
 * in a rotating order, several repetitions.
 * @param {Array<{ key: string, server: any, endpoint: string }>} variants
 */
export async function runEndpoints(ctx, variants, workerCounts) {
  const { reps, durationMs, maxOps } = ctx.config.endpoints;
  const cells = [];
  for (const workers of workerCounts) {
    for (let rep = 0; rep < reps; rep++) {
      for (const v of rotate(variants, rep)) {
        // top-up outside the measured window
        if (["claim", "min-claim", "patch"].includes(v.endpoint)) await v.server.pending.ensure(maxOps);
        if (v.endpoint === "release") await v.server.held.ensure(maxOps);
        if (v.endpoint === "renew") await v.server.held.ensure(workers);
        const cpuBefore = readCpuSeconds(v.server.pb.pid);
        const result = await closedLoop({ workers, durationMs, maxOps, op: endpointOp(ctx, v.server, v.endpoint, workers) });
        result.cpuMicrosPerOp = cpuMicrosPerOp(cpuBefore, readCpuSeconds(v.server.pb.pid), result.ops);
        if (result.failureCount > 0) {
          ctx.log(`!!! ${v.key} W=${workers}: ${result.failureCount} unexpected answers, e.g. ${result.failureSamples[0]}`);
        }
        cells.push({ variant: v.key, endpoint: v.endpoint, server: v.server.name, workers, rep, ...result });
      }
    }
  }
  const rows = [];
  for (const workers of workerCounts) {
    for (const v of variants) {
      const mine = cells.filter((c) => c.variant === v.key && c.workers === workers);
      rows.push({
        variant: v.key,
        endpoint: v.endpoint,
        server: v.server.name,
        workers,
        ...summarizeReps(mine, "requestsPerSec", "cpuMicrosPerRequest"),
        latencyMs: latencySummary(mine.flatMap((c) => c.latencies[v.endpoint] ?? [])),
      });
    }
  }
  return rows;
}

/**
 * Median of per-repetition throughput ratios a/b between two variants at one W,
 * and the same comparison from server CPU per operation (b's CPU / a's CPU, so
 * that above 1 means a is cheaper in both).
 */
export function endpointRatio(rows, keyA, keyB, workers) {
  const a = rows.find((r) => r.variant === keyA && r.workers === workers);
  const b = rows.find((r) => r.variant === keyB && r.workers === workers);
  if (!a || !b) return null;
  return {
    ...ratioSummary(a.perRepRates.map((x, i) => ratio(x, b.perRepRates[i]))),
    cpu: ratioSummary(a.perRepCpuMicros.map((x, i) => ratio(b.perRepCpuMicros[i], x))).median,
  };
}

/* ---------------------------------------------------------------- lifecycle */

/** claim -> renew -> release(done) of one fresh row, as a worker does it. */
function lifecycleOp(ctx, server) {
  const { client } = ctx;
  const pb = server.pb;
  return async (w) => {
    const jobId = server.pending.take();
    if (jobId === null) return null;
    const workerId = `L-${w}`;
    const claim = await client.post(pb, CLAIM, { jobId, workerId, leaseSeconds: LEASE_SECONDS });
    if (!(claim.status === 200 && claim.body?.claimed === true)) return { latencies: { claim: claim.ms }, ok: false, detail: `claim ${brief(claim)}` };
    const renew = await client.post(pb, RENEW, { jobId, workerId, leaseSeconds: LEASE_SECONDS });
    if (!(renew.status === 200 && renew.body?.renewed === true)) return { latencies: { claim: claim.ms, renew: renew.ms }, ok: false, detail: `renew ${brief(renew)}` };
    const release = await client.post(pb, RELEASE, { jobId, workerId, status: "done" });
    const ok = release.status === 200 && release.body?.released === true;
    return { latencies: { claim: claim.ms, renew: renew.ms, release: release.ms }, ok, detail: ok ? undefined : `release ${brief(release)}` };
  };
}

/**
 * @param {Array<{ key: string, server: any }>} variants servers compared, alternated per repetition
 * @param {{ reps: number, durationMs: number, maxJobs: number }} shape
 */
export async function runLifecycle(ctx, variants, workerCounts, shape) {
  const cells = [];
  for (const workers of workerCounts) {
    for (let rep = 0; rep < shape.reps; rep++) {
      for (const v of rotate(variants, rep)) {
        await v.server.pending.ensure(shape.maxJobs);
        const cpuBefore = readCpuSeconds(v.server.pb.pid);
        const result = await closedLoop({ workers, durationMs: shape.durationMs, maxOps: shape.maxJobs, op: lifecycleOp(ctx, v.server) });
        result.cpuMicrosPerOp = cpuMicrosPerOp(cpuBefore, readCpuSeconds(v.server.pb.pid), result.ops);
        if (result.failureCount > 0) {
          ctx.log(`!!! lifecycle ${v.key} W=${workers}: ${result.failureCount} failed jobs, e.g. ${result.failureSamples[0]}`);
        }
        cells.push({ variant: v.key, server: v.server.name, workers, rep, ...result });
      }
    }
  }
  const rows = [];
  for (const workers of workerCounts) {
    for (const v of variants) {
      const mine = cells.filter((c) => c.variant === v.key && c.workers === workers);
      const per = (name) => latencySummary(mine.flatMap((c) => c.latencies[name] ?? []));
      rows.push({
        variant: v.key,
        server: v.server.name,
        workers,
        ...summarizeReps(mine, "jobsPerSec", "cpuMicrosPerJob"),
        latencyMs: { claim: per("claim"), renew: per("renew"), release: per("release") },
      });
    }
  }
  return rows;
}

export const lifecycleRatio = endpointRatio;

/* ------------------------------------------- claim-next vs list-then-claim */

const CLAIM_NEXT = "/api/fleet/claim-next";
/** How many pending rows a list-then-claim worker looks at, and picks one of at random (as FleetClient's fallback does). */
const LIST_WINDOW = 32;
const MAX_CLAIM_ATTEMPTS = 50;

/**
 * One worker getting its next job: with claim-next (one call, the server picks),
 * or by listing pending rows and racing the other workers for one by id.
 * Returns null when no work is left.
 */
function acquireOp(ctx, server, prefix, how, counters) {
  const { client } = ctx;
  const pb = server.pb;
  const filter = encodeURIComponent(`status = 'pending' && probe_key ~ '${prefix}%'`);
  const listPath = `/api/collections/probe_jobs/records?filter=${filter}&sort=created&perPage=${LIST_WINDOW}&skipTotal=1&fields=id`;
  return async (w) => {
    const workerId = `A-${w}`;
    if (how === "claim-next") {
      const res = await client.post(pb, CLAIM_NEXT, { workerId, leaseSeconds: LEASE_SECONDS, probeKeyPrefix: prefix });
      counters.requests += 1;
      if (res.status !== 200) return { latencies: { acquire: res.ms }, ok: false, detail: `claim-next ${brief(res)}` };
      return res.body.jobs.length === 0 ? null : { latencies: { acquire: res.ms }, ok: true };
    }
    let ms = 0;
    for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
      const list = await client.get(pb, listPath);
      counters.requests += 1;
      ms += list.ms;
      if (list.status !== 200) return { latencies: { acquire: ms }, ok: false, detail: `list ${brief(list)}` };
      const ids = list.body.items.map((item) => item.id);
      if (ids.length === 0) return null;
      const jobId = ids[Math.floor(Math.random() * ids.length)];
      const claim = await client.post(pb, CLAIM, { jobId, workerId, leaseSeconds: LEASE_SECONDS });
      counters.requests += 1;
      ms += claim.ms;
      if (claim.status !== 200) return { latencies: { acquire: ms }, ok: false, detail: `claim ${brief(claim)}` };
      if (claim.body.claimed === true) return { latencies: { acquire: ms }, ok: true };
      counters.lostRaces += 1;
    }
    return { latencies: { acquire: ms }, ok: false, detail: `no claim won in ${MAX_CLAIM_ATTEMPTS} attempts` };
  };
}

/**
 * W workers drain fresh pending rows, one job at a time: claim-next against
 * list-then-claim-by-id, alternated per repetition on the same server.
 * @param {{ workers: number, reps: number, durationMs: number, maxJobs: number }} shape
 */
export async function runClaimNextVsList(ctx, server, shape) {
  const hows = ["claim-next", "list-then-claim"];
  const cells = [];
  for (let rep = 0; rep < shape.reps; rep++) {
    for (const how of rotate(hows, rep)) {
      const tag = `acq-${how}-${rep}`;
      const seeded = await ctx.client.post(server.pb, SEED_PATH, { count: shape.maxJobs, status: "pending", tag });
      if (seeded.status !== 200) throw new Error(`seeding ${tag} failed: ${brief(seeded)}`);
      const counters = { requests: 0, lostRaces: 0 };
      const cpuBefore = readCpuSeconds(server.pb.pid);
      const result = await closedLoop({
        workers: shape.workers, durationMs: shape.durationMs, maxOps: shape.maxJobs,
        op: acquireOp(ctx, server, `${tag}-`, how, counters),
      });
      result.cpuMicrosPerOp = cpuMicrosPerOp(cpuBefore, readCpuSeconds(server.pb.pid), result.ops);
      if (result.failureCount > 0) ctx.log(`!!! ${how}: ${result.failureCount} failed, e.g. ${result.failureSamples[0]}`);
      cells.push({ how, rep, ...result, ...counters });
    }
  }
  const rows = hows.map((how) => {
    const mine = cells.filter((c) => c.how === how);
    const jobs = mine.reduce((s, c) => s + c.ops, 0);
    return {
      variant: how,
      workers: shape.workers,
      ...summarizeReps(mine, "jobsPerSec", "cpuMicrosPerJob"),
      latencyMs: latencySummary(mine.flatMap((c) => c.latencies.acquire ?? [])),
      requestsPerJob: jobs > 0 ? mine.reduce((sum, c) => sum + c.requests, 0) / jobs : null,
      lostRacesPerJob: jobs > 0 ? mine.reduce((sum, c) => sum + c.lostRaces, 0) / jobs : null,
    };
  });
  return { rows, ratio: endpointRatio(rows, "claim-next", "list-then-claim", shape.workers) };
}
