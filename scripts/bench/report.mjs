// Turns one benchmark run (the object written as JSON) into the printed report
// and bench/LATEST.md: the same Markdown tables for both, padded so they also
// read well in a terminal.

const fmtRate = (v) => (typeof v === "number" ? Math.round(v).toLocaleString("en-US") : "n/a");
const fmtMs = (v) => (typeof v === "number" ? v.toFixed(1) : "n/a");
const fmtUs = (rate) => (typeof rate === "number" && rate > 0 ? Math.round(1e6 / rate).toLocaleString("en-US") : "n/a");
const fmtCpu = (us) => (typeof us === "number" && Number.isFinite(us) ? Math.round(us).toLocaleString("en-US") : "n/a");
const fmtCpuRatio = (r) => (r && typeof r.cpu === "number" ? `${r.cpu.toFixed(2)}x` : "n/a");
const fmtRatio = (r) => (r && typeof r.median === "number" ? `${r.median.toFixed(2)}x` : "n/a");
const fmtSpread = (r) => (r && typeof r.min === "number" ? `${r.min.toFixed(2)}-${r.max.toFixed(2)} (n=${r.n})` : "n/a");
const fmtMb = (bytes) => (typeof bytes === "number" ? (bytes / 1048576).toFixed(1) : "n/a");
const fmtHist = (h) =>
  Object.entries(h)
    .map(([winners, rounds]) => `${winners}:${rounds}`)
    .join(" ");

/** A Markdown table with padded columns. */
export function table(headers, rows) {
  const cells = [headers, ...rows].map((r) => r.map((c) => String(c ?? "")));
  const widths = headers.map((_, i) => Math.max(3, ...cells.map((r) => r[i].length)));
  const line = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(cells[0]), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...cells.slice(1).map(line)].join("\n");
}

export function machineLine(m) {
  return `${m.cpuModel}, ${m.cores} cores, Node ${m.node}, PocketBase ${m.pbVersion}, ${m.date}`;
}

/** "1,234 (1.05x)": a rate and its ratio to a baseline, when there is one. */
const rateVs = (rate, r) => (r && typeof r.median === "number" ? `${fmtRate(rate)} (${fmtRatio(r)})` : fmtRate(rate));

/** One row per PocketBase version of the per-version phase (scripts/bench/versions.mjs). */
function renderVersions(out, versions, h) {
  const base = versions.baseline;
  h(`PocketBase versions: what upgrading costs or gains (one pb-fleet server each, --hooksPool ${versions.hooksPool})`);
  const endpointW = versions.rows[0]?.endpoints.map((e) => e.workers) ?? [];
  const lifecycleW = versions.rows[0]?.lifecycle.map((l) => l.workers) ?? [];
  out.push(
    table(
      [
        "PocketBase",
        "hooks line",
        ...endpointW.flatMap((w) => [`claim/s W=${w}${base ? ` (vs ${base})` : ""}`, `PATCH/s W=${w}`, `claim / PATCH W=${w}`, `CPU us/claim W=${w}`]),
        ...lifecycleW.flatMap((w) => [`lifecycle jobs/s W=${w}${base ? ` (vs ${base})` : ""}`, `CPU us/job W=${w}`]),
        "bad rounds",
      ],
      versions.rows.map((r) => [
        r.version,
        r.line,
        ...r.endpoints.flatMap((e) => [rateVs(e.claimPerSec, e.claimVsBaseline), fmtRate(e.patchPerSec), fmtRatio(e.claimVsPatch), fmtCpu(e.claimCpuMicros)]),
        ...r.lifecycle.flatMap((l) => [rateVs(l.jobsPerSec, l.vsBaseline), fmtCpu(l.cpuMicrosPerJob)]),
        `${r.badRounds} of ${r.rounds}`,
      ]),
    ),
  );
  out.push(
    "",
    "Each ratio is the median of per-repetition ratios, the servers measured back to back in a rotating order. " +
      "`claim / PATCH`: pb-fleet's claim against PocketBase's own admin/superuser PATCH of the same fields, on the same server: the price of the compare-and-set on that version. " +
      (base ? `\`(vs ${base})\`: the same figure over ${base}'s: above 1.00x the version is faster. ` : "No 0.22.x was listed, so there is no baseline to compare with. ") +
      "`bad rounds`: contention rounds without exactly one winner (must be 0).",
  );
}

/** @param {any} run the object written to the JSON file */
export function renderReport(run) {
  const out = [];
  const h = (title) => out.push("", `### ${title}`, "");
  out.push(`## pb-fleet benchmark (${run.mode})`, "");
  out.push(`Command: \`${run.command}\``, "");
  out.push(`Machine: ${machineLine(run.machine)}`, "");
  const says = run.binary.versionText ? `; \`--version\` says "${run.binary.versionText}"` : "";
  out.push(`PocketBase binary: ${run.binary.path} (${run.binary.source}${says}); every server of the numbered sections runs this binary (the versions table, each its own version).`);
  out.push("", `Hooks measured: ${run.hooks.map((h) => `${h.file} (sha256 ${h.sha256.slice(0, 12)}, built ${h.builtAt})`).join(", ")}.`);
  if (run.reference.skipped) out.push("", `Reference baseline skipped: ${run.reference.skipped}`);

  h("Targets");
  out.push(table(["target", "measured", "result"], run.targets.map((t) => [t.target, t.measured, t.pass === null ? "n/a" : t.pass ? "PASS" : "MISS"])));

  renderVersions(out, run.versions, h);

  h("1. Contention: W claimers race for one fresh row per round");
  out.push(
    table(
      ["variant", "W", "rounds", "req/s (median round)", "CPU us/req", "p50 ms", "p95 ms", "p99 ms", "winners:rounds", "bad rounds", "errors"],
      run.contention.rows.map((r) => [
        r.variant,
        r.workers,
        r.rounds,
        fmtRate(r.requestsPerSec),
        fmtCpu(r.cpuMicrosPerRequest),
        fmtMs(r.latencyMs.p50),
        fmtMs(r.latencyMs.p95),
        fmtMs(r.latencyMs.p99),
        fmtHist(r.winnersHistogram),
        r.badRounds === null ? "(no CAS)" : r.badRounds,
        r.errorCount,
      ]),
    ),
  );
  out.push("", "`patch` is PocketBase's own admin PATCH of the same row: every racer's write is accepted, which is why the claim endpoint exists.");
  if (run.contention.ratios.length) {
    out.push("");
    out.push(table(["contention ratio (per round, median)", "W", "ratio", "spread"], run.contention.ratios.map((r) => [r.name, r.workers, fmtRatio(r.ratio), fmtSpread(r.ratio)])));
  }

  h("2. Single endpoints: W workers, each call on its own row (renew: one held row per worker)");
  out.push(
    table(
      ["variant", "W", "req/s (median rep)", "wall us/req", "CPU us/req", "p50 ms", "p99 ms", "failures"],
      run.endpoints.rows.map((r) => [
        r.variant,
        r.workers,
        fmtRate(r.requestsPerSec),
        fmtUs(r.requestsPerSec),
        fmtCpu(r.cpuMicrosPerRequest),
        fmtMs(r.latencyMs.p50),
        fmtMs(r.latencyMs.p99),
        r.failureCount,
      ]),
    ),
  );
  out.push(
    "",
    "`wall us/req` = 1/throughput. `CPU us/req` = the PocketBase process's CPU time (user + system, /proc) per call, median over repetitions: much less sensitive to other load on the machine than throughput. `patch`: PocketBase's admin PATCH of the row with the fields a claim writes. " +
      "`min-claim`: bench-only JS claim (one transaction: find, status check, 5 sets, save) = the floor of any JS compare-and-set. `noop`: a JS route that only answers JSON = the fixed cost of any JS hook.",
    "",
  );
  out.push(
    table(
      ["throughput ratio (per repetition, median)", "W", "ratio", "spread", "same from CPU/req"],
      run.endpoints.ratios.map((r) => [r.name, r.workers, fmtRatio(r.ratio), fmtSpread(r.ratio), fmtCpuRatio(r.ratio)]),
    ),
  );
  out.push("", "`same from CPU/req` = CPU per request of the second variant / of the first: above 1 means the first is cheaper.");

  h("3. Lifecycle: W workers each claim -> renew -> release(done) fresh rows");
  out.push(
    table(
      ["variant", "W", "jobs/s (median rep)", "CPU us/job", "claim p50/p99 ms", "renew p50/p99 ms", "release p50/p99 ms", "failures"],
      run.lifecycle.rows.map((r) => [
        r.variant,
        r.workers,
        fmtRate(r.jobsPerSec),
        fmtCpu(r.cpuMicrosPerJob),
        `${fmtMs(r.latencyMs.claim.p50)} / ${fmtMs(r.latencyMs.claim.p99)}`,
        `${fmtMs(r.latencyMs.renew.p50)} / ${fmtMs(r.latencyMs.renew.p99)}`,
        `${fmtMs(r.latencyMs.release.p50)} / ${fmtMs(r.latencyMs.release.p99)}`,
        r.failureCount,
      ]),
    ),
  );
  if (run.lifecycle.ratios.length) {
    out.push("");
    out.push(
      table(
        ["lifecycle ratio (per repetition, median)", "W", "ratio", "spread", "same from CPU/job"],
        run.lifecycle.ratios.map((r) => [r.name, r.workers, fmtRatio(r.ratio), fmtSpread(r.ratio), fmtCpuRatio(r.ratio)]),
      ),
    );
  }

  h("4. Getting the next job: claim-next vs list-then-claim-by-id (pb-fleet, W workers draining fresh rows)");
  out.push(
    table(
      ["variant", "W", "jobs/s (median rep)", "CPU us/job", "acquire p50/p99 ms", "requests/job", "lost races/job", "failures"],
      run.claimNext.rows.map((r) => [
        r.variant,
        r.workers,
        fmtRate(r.jobsPerSec),
        fmtCpu(r.cpuMicrosPerJob),
        `${fmtMs(r.latencyMs.p50)} / ${fmtMs(r.latencyMs.p99)}`,
        typeof r.requestsPerJob === "number" ? r.requestsPerJob.toFixed(2) : "n/a",
        typeof r.lostRacesPerJob === "number" ? r.lostRacesPerJob.toFixed(2) : "n/a",
        r.failureCount,
      ]),
    ),
  );
  out.push("", `claim-next / list-then-claim jobs/s: ${fmtRatio(run.claimNext.ratio)} (spread ${fmtSpread(run.claimNext.ratio)}; from CPU/job ${fmtCpuRatio(run.claimNext.ratio)}).`);

  h("5. --hooksPool (pb-fleet servers that differ only in pool size)");
  out.push(
    table(
      ["hooksPool", "W", "contention req/s", "CPU us/req", "contention p99 ms", "bad rounds", "lifecycle jobs/s", "CPU us/job", "lifecycle claim p99 ms", "max RSS MB (this phase)"],
      run.hooksPool.rows.map((r) => [
        r.hooksPool,
        r.workers,
        fmtRate(r.contentionPerSec),
        fmtCpu(r.contentionCpuMicros),
        fmtMs(r.contentionP99),
        r.badRounds,
        fmtRate(r.jobsPerSec),
        fmtCpu(r.lifecycleCpuMicros),
        fmtMs(r.lifecycleClaimP99),
        fmtMb(r.maxRssBytes),
      ]),
    ),
  );
  out.push("", run.hooksPool.recommendation);

  h("6. Memory: max VmRSS per phase (sampled every 100 ms), MB");
  const phases = Object.keys(run.memory.maxRssByPhase);
  const serverNames = run.servers.map((s) => s.name);
  out.push(
    table(
      ["server", ...phases, "VmHWM (life)"],
      serverNames.map((name) => [name, ...phases.map((p) => fmtMb(run.memory.maxRssByPhase[p]?.[name])), fmtMb(run.memory.peakHwmBytes[name])]),
    ),
  );

  if (run.failures.length) {
    h("FAILURES");
    for (const f of run.failures) out.push(`- ${f}`);
  }
  out.push("");
  return out.join("\n");
}
