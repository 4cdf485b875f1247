// The benchmark's per-version phase: one pb-fleet server per PocketBase version
// (each with its hooks line's bundle and migrations, the same --hooksPool),
// measured side by side in one run so a user sees what upgrading PocketBase
// costs or gains: claim against PocketBase's own PATCH of the same row on the
// same server, the claim -> renew -> release lifecycle against the first 0.22.x
// of the list, and exactly one winner per contention round on every version.
// Variants alternate per repetition (as in every phase), so the ratios pair
// repetitions that ran under the same machine load.
import { join } from "node:path";
import { ensurePocketBase } from "../pocketbase/binary.mjs";
import { lineLayout } from "../pocketbase/lines.mjs";
import { startPocketBase } from "../pocketbase/server.mjs";
import { benchedHookFiles, writeHooksDir } from "./hooks.mjs";
import { endpointRatio, lifecycleRatio, runContention, runEndpoints, runLifecycle, warmUp } from "./phases.mjs";
import { createJobPool } from "./workloads.mjs";

/**
 * @param {{ client: any, config: any, log: (m: string) => void }} ctx the run context; ctx.config.lines is this phase's shape
 * @param {{ versions: string[], reuse: { version: string, binary: any }, tmpRoot: string, started: any[], verbose: boolean }} options
 *   `reuse`: a binary already got for one version (the run's own, which may be POCKETBASE_BIN)
 * @returns {Promise<{ summary: any, failures: string[] }>}
 */
export async function runVersions(ctx, { versions, reuse, tmpRoot, started, verbose }) {
  const shape = ctx.config.lines;
  const { log } = ctx;
  log(`versions: PocketBase ${versions.join(", ")}, one pb-fleet server each (--hooksPool ${shape.hooksPool})`);
  const servers = [];
  for (const version of versions) {
    const binary = version === reuse.version ? reuse.binary : await ensurePocketBase({ version, log, useEnvBinary: false });
    const layout = lineLayout(binary.line);
    const files = await benchedHookFiles(layout, log);
    if (files === null) throw new Error(`the bundle for PocketBase ${version} is missing: run \`npm run build\``);
    const name = `v${version}`;
    const pb = await startPocketBase({
      binary: binary.path,
      line: binary.line,
      dataDir: join(tmpRoot, `data-${name}`),
      hooksDir: await writeHooksDir(join(tmpRoot, `hooks-${name}`), files, binary.line),
      migrationsDir: layout.migrationsDir,
      hooksPool: shape.hooksPool,
      adminEmail: "bench@example.com",
      adminPassword: "bench-password-1234",
      log: verbose ? (m) => console.error(`[${name}] ${m}`) : () => {},
    });
    const server = { name, version, line: binary.line, binaryPath: binary.path, hooksPool: shape.hooksPool, pb, hasMinClaim: true };
    server.pending = createJobPool(ctx.client, pb, "pending");
    server.held = createJobPool(ctx.client, pb, "claimed");
    started.push(server);
    servers.push(server);
  }
  for (const server of servers) await warmUp(ctx, server);

  const { contention, endpoints, lifecycle } = shape;
  log(`versions: contention W=${contention.workers} x ${contention.rounds} rounds; claim vs PATCH W=${endpoints.workers.join(",")}; lifecycle W=${lifecycle.workers.join(",")}`);
  const contentionRows = await runContention(
    ctx,
    servers.map((s) => ({ key: `${s.name} claim`, server: s, kind: "claim" })),
    [contention.workers],
    contention.rounds,
  );
  const endpointRows = await runEndpoints(
    { ...ctx, config: { ...ctx.config, endpoints } },
    servers.flatMap((s) => [
      { key: `${s.name} claim`, server: s, endpoint: "claim" },
      { key: `${s.name} patch`, server: s, endpoint: "patch" },
    ]),
    endpoints.workers,
  );
  const lifecycleRows = await runLifecycle(ctx, servers.map((s) => ({ key: s.name, server: s })), lifecycle.workers, lifecycle);

  // The baseline of "what upgrading costs": the first 0.22.x listed.
  const baseline = servers.find((s) => s.line === "0.22") ?? null;
  const rows = servers.map((s) => {
    const c = contentionRows.find((r) => r.variant === `${s.name} claim`);
    const atW = (w) => ({
      workers: w,
      claimPerSec: endpointRows.find((r) => r.variant === `${s.name} claim` && r.workers === w)?.requestsPerSec ?? null,
      claimCpuMicros: endpointRows.find((r) => r.variant === `${s.name} claim` && r.workers === w)?.cpuMicrosPerRequest ?? null,
      patchPerSec: endpointRows.find((r) => r.variant === `${s.name} patch` && r.workers === w)?.requestsPerSec ?? null,
      patchCpuMicros: endpointRows.find((r) => r.variant === `${s.name} patch` && r.workers === w)?.cpuMicrosPerRequest ?? null,
      claimVsPatch: endpointRatio(endpointRows, `${s.name} claim`, `${s.name} patch`, w),
      claimVsBaseline: baseline ? endpointRatio(endpointRows, `${s.name} claim`, `${baseline.name} claim`, w) : null,
    });
    return {
      version: s.version,
      line: s.line,
      server: s.name,
      binary: s.binaryPath,
      rounds: c.rounds,
      badRounds: c.badRounds,
      winnersHistogram: c.winnersHistogram,
      contentionErrors: c.errorCount,
      endpoints: endpoints.workers.map(atW),
      lifecycle: lifecycle.workers.map((w) => {
        const row = lifecycleRows.find((r) => r.variant === s.name && r.workers === w);
        return {
          workers: w,
          jobsPerSec: row?.jobsPerSec ?? null,
          cpuMicrosPerJob: row?.cpuMicrosPerJob ?? null,
          claimP99: row?.latencyMs.claim.p99 ?? null,
          vsBaseline: baseline ? lifecycleRatio(lifecycleRows, s.name, baseline.name, w) : null,
        };
      }),
    };
  });

  const failures = [];
  for (const r of contentionRows) {
    if (r.badRounds) failures.push(`versions: ${r.variant} W=${r.workers}: ${r.badRounds} of ${r.rounds} rounds did not have exactly one winner (winners:rounds ${JSON.stringify(r.winnersHistogram)})`);
    if (r.errorCount) failures.push(`versions: ${r.variant} W=${r.workers}: ${r.errorCount} contention requests failed, e.g. ${r.errorSamples[0]}`);
  }
  for (const r of endpointRows) if (r.failureCount) failures.push(`versions: ${r.variant} W=${r.workers}: ${r.failureCount} unexpected answers, e.g. ${r.failureSamples[0]}`);
  for (const r of lifecycleRows) if (r.failureCount) failures.push(`versions: lifecycle ${r.variant} W=${r.workers}: ${r.failureCount} failed jobs, e.g. ${r.failureSamples[0]}`);

  return {
    summary: { versions, baseline: baseline?.version ?? null, hooksPool: shape.hooksPool, rows, contention: contentionRows, endpoints: endpointRows, lifecycle: lifecycleRows },
    failures,
  };
}
