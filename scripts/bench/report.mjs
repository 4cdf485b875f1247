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
  if (run.phases) out.push("", `Phases run: ${run.phases.join(", ")}${run.phases.length < 8 ? " (a subset: the other sections are left out)" : ""}.`);

  h("Targets");
  out.push(table(["target", "measured", "result"], run.targets.map((t) => [t.target, t.measured, t.pass === null ? "n/a" : t.pass ? "PASS" : "MISS"])));

  if (run.versions) renderVersions(out, run.versions, h);
  if (run.contention) renderContention(out, run, h);
  if (run.endpoints) renderEndpoints(out, run, h);
  if (run.lifecycle) renderLifecycle(out, run, h);
  if (run.claimNext) renderClaimNext(out, run, h);
  if (run.hooksPool) renderHooksPool(out, run, h);
  if (run.enqueue) renderEnqueue(out, run.enqueue, h);
  if (run.claimNext100k) renderClaimNext100k(out, run.claimNext100k, run.config.claimNext100k, h);

  if (run.batched) renderBatched(out, run.batched, h);
  if (run.steady) renderSteady(out, run.steady, h);
  if (run.retained) renderRetained(out, run.retained, h);
  if (run.prune) renderPrune(out, run.prune, h);
  if (run.flow) renderFlow(out, run.flow, h);
  if (run.hotPath) renderHotPath(out, run.hotPath, h);

  h("9. Memory: max VmRSS per phase (sampled every 100 ms), MB");
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

function renderContention(out, run, h) {
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
}

function renderEndpoints(out, run, h) {
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
}

function renderLifecycle(out, run, h) {
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
}

function renderClaimNext(out, run, h) {
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
}

function renderHooksPool(out, run, h) {
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
}

/** "1.07x": a cost ratio (above 1: the first costs more). */
const fmtCost = (r) => (r && typeof r.median === "number" ? `${r.median.toFixed(2)}x` : "n/a");
const fmtCostCpu = (r) => (r && typeof r.cpu === "number" ? `${r.cpu.toFixed(2)}x` : "n/a");

function renderEnqueue(out, eq, h) {
  h(`6. Enqueue: ${fmtRate(eq.jobs)} jobs in one call vs the same jobs through the record API (one pb-fleet server)`);
  out.push(
    table(
      ["variant", "concurrency", "ms per 1,000 jobs (median rep)", "jobs/s (median rep)", "CPU us/job", "reps", "failures"],
      eq.rows.map((r) => [r.variant, r.concurrency, fmtMs(r.msPer1000), fmtRate(r.jobsPerSec), fmtCpu(r.cpuMicrosPerJob), r.reps, r.failureCount]),
    ),
  );
  out.push(
    "",
    `Jobs: ~${eq.payloadBytes}-byte JSON payloads, priorities ${eq.priorities[0]}..${eq.priorities[1]}, ${Math.round(eq.futureFraction * 100)}% due 1-24 h later. ` +
      "`enqueue`: one POST /api/fleet/enqueue of all the jobs (one transaction). `record API`: one POST /api/collections/probe_jobs/records per job with the same fields, " +
      "the only way before enqueue. " +
      `enqueue / record API jobs/s: ${fmtRatio(eq.ratio)} (spread ${fmtSpread(eq.ratio)}; from CPU/job ${fmtCpuRatio(eq.ratio)}).`,
  );
}

function renderClaimNext100k(out, cn, shape, h) {
  h(`7. claim-next at ${fmtRate(cn.rows)} pending rows, per call (each server its own PocketBase)`);
  const b = cn.baseline;
  out.push(
    b.skipped
      ? `Baseline skipped: ${b.skipped}`
      : `Baseline: pb-fleet at ${b.sha.slice(0, 7)} ("${b.subject}"; --baseline ${b.rev}), its ${b.files.join(", ")} from git, on plain pending rows.`,
    "",
  );
  out.push(
    table(
      ["server", "seeded with", "pending", "not yet due", "priority levels", "seed s", "enqueue ms/call, first 5 / last 5"],
      Object.entries(cn.datasets).map(([key, d]) => [
        key,
        d.seededWith,
        fmtRate(d.pending),
        fmtRate(d.future),
        d.priorityLevels,
        d.seedSec.toFixed(1),
        d.seedCalls ? `${fmtMs(d.seedCalls.firstMs)} / ${fmtMs(d.seedCalls.lastMs)}` : "-",
      ]),
    ),
    "",
  );
  out.push(
    table(
      ["variant", "limit", "W", "probeKeyPrefix", "per-call cost ms (median rep)", "calls/s", "CPU us/call", "p50 / p99 ms", "failures"],
      cn.results.map((r) => [
        r.variant,
        r.limit,
        r.workers,
        r.prefix ? `"${cn.prefix}" (all rows)` : "-",
        typeof r.costMs === "number" ? r.costMs.toFixed(2) : "n/a",
        fmtRate(r.callsPerSec),
        fmtCpu(r.cpuMicrosPerCall),
        `${fmtMs(r.latencyMs.p50)} / ${fmtMs(r.latencyMs.p99)}`,
        r.failureCount,
      ]),
    ),
    "",
  );
  out.push(
    table(
      ["cost ratio (per repetition, median; above 1: the first costs more)", "limit", "W", "prefix", "ratio", "spread", "same from CPU/call"],
      cn.ratios.map((r) => [r.name, r.limit, r.workers, r.prefix ? "yes" : "no", fmtCost(r.ratio), fmtSpread(r.ratio), fmtCostCpu(r.ratio)]),
    ),
  );
  out.push(
    "",
    `\`new (mixed)\`: pb-fleet as built, ${fmtRate(cn.rows)} jobs enqueued with priorities ${cn.priorities[0]}..${cn.priorities[1]} and ${Math.round(cn.futureFraction * 100)}% due 1-24 h later: the figure the 1.2x target is judged on. ` +
      "`new (plain)`: the same code on rows like the baseline's (priority 0, due at creation): the same data on both sides. " +
      "Per-call cost: sequential (W=1), the median call's latency; at W>1, wall time per call (1 / calls per second). " +
      `Each repetition runs every server once per limit/W/prefix in a rotating order (${shape.reps} reps; W=1: ${shape.seqCalls} calls; W>1: up to ${shape.maxOps} calls or ${shape.durationMs} ms), ` +
      "and puts the rows a cell claimed back to pending before the next, so every call sees the same pending rows.",
  );
}

const fmtShare = (v) => (typeof v === "number" ? v.toFixed(2) : "n/a");
const fmtFixed = (v, d = 1) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(d) : "n/a");

function renderBatched(out, bt, h) {
  if (bt.skipped) {
    h("8. Batched fleet");
    out.push(`Skipped: ${bt.skipped}`);
    return;
  }
  const f = bt.fleet;
  h(`8. Batched fleet: ${f.processes * f.workersPerProcess} Workers of concurrency ${f.concurrency} (${f.processes} Node processes), no-op handler, vs the per-job lifecycle`);
  out.push(
    table(
      ["variant", "concurrency per worker", "jobs per run", "jobs/s (median rep)", "per rep", "claim-to-completion p50 / p99 ms", "PB CPU us/job", "PB cores", "clients CPU us/job", "client cores", "requests/job", "claimed per claim-next", "items per complete", "PB peak RSS MB (run / life)", "exactly once"],
      bt.rows.map((r) => [
        r.variant,
        r.concurrency,
        fmtRate(r.jobs),
        fmtRate(r.jobsPerSec),
        r.perRepJobsPerSec.map(fmtRate).join(", "),
        `${fmtMs(r.latencyMs.p50)} / ${fmtMs(r.latencyMs.p99)}`,
        fmtCpu(r.pbCpuMicrosPerJob),
        fmtShare(r.pbCpuShare),
        fmtCpu(r.clientCpuMicrosPerJob),
        fmtShare(r.clientCpuShare),
        fmtFixed(r.requestsPerJob, 3),
        fmtFixed(r.claimedPerClaimNext),
        fmtFixed(r.itemsPerComplete),
        `${fmtMb(r.peakRssBytes)} / ${fmtMb(r.hwmBytes)}`,
        `${r.exactlyOnceRuns} runs`,
      ]),
    ),
  );
  const c = bt.ceiling ?? {};
  out.push(
    "",
    [bt.ratio, ...(bt.otherRatios ?? [])].map((r) => `${r.name} jobs/s: ${fmtRatio(r)} (spread ${fmtSpread(r)}; PocketBase CPU per job, the other's / batched's: ${fmtCpuRatio(r)})`).join("; ") + ". " +
      "jobs/s: the run's jobs over last finished_at - first claimed_at (the server's stamps); claim-to-completion: finished_at - claimed_at of each row. " +
      "`batched`: the pb-fleet Worker as built (claim-next of its free slots, one heartbeat per renew interval for every held lease, releases coalesced into complete calls). " +
      "`unbatched`: per worker id, as many loops as its concurrency, each claim-next (limit 1) -> renew -> release per job through the same FleetClient " +
      "(the same fleet shape: the issue's baseline; `N loops`: the same lifecycle at one loop per worker, which PocketBase serves better). " +
      `Each variant has a PocketBase of its own (--hooksPool: ${bt.rows.map((r) => `${r.variant} ${r.hooksPool}`).join(", ")}), the runs alternating; ` +
      "the table is emptied between runs. Exactly once: every row done, claimed once, its result its holder's, and each job reported completed by one worker once. " +
      `The client processes and PocketBase share the machine's ${c.cores ?? "?"} cores (\`PB cores\`, \`client cores\`: CPU seconds per second of the run). ` +
      (Object.keys(bt.pbEnv ?? {}).length ? `PocketBase ran with ${Object.entries(bt.pbEnv).map(([k, v]) => `${k}=${v}`).join(" ")}. ` : "") +
      `At its measured CPU per job, and were its work not serialized by the single writer (see the profile), PocketBase alone on all ${c.cores ?? "?"} cores would top out near ${fmtRate(c.batchedJobsPerCoreSecond * (c.cores ?? 1))} jobs/s batched and ${fmtRate(c.unbatchedJobsPerCoreSecond * (c.cores ?? 1))} unbatched.`,
  );
  const p = bt.profile;
  if (!p) return;
  h("8b. Where PocketBase's CPU goes under the batched load (--profile)");
  if (p.skipped) {
    out.push(`Skipped: ${p.skipped}`);
    return;
  }
  out.push(
    `PocketBase ${p.version} built with net/http/pprof (${p.binary}), ${fmtRate(p.jobs)} jobs at ${fmtRate(p.jobsPerSec)} jobs/s (PB ${fmtShare(p.pbCpuShare)} cores, clients ${fmtShare(p.clientCpuShare)}); ` +
      `${p.header.join("; ")}. Profile: ${p.file}.`,
    "",
  );
  out.push(
    table(
      ["group", "self %", "of which inside a write transaction", "inclusive % (anywhere on the stack)"],
      [
        ...p.groups.map((g) => [g.label, fmtFixed(g.selfPct), fmtFixed(g.selfInTransactionPct), fmtFixed(g.inclusivePct)]),
        ["total", "100.0", fmtFixed(p.inTransactionPct), ""],
      ],
    ),
    "",
    "`self %`: the sample's leaf frame, a generic runtime helper (memmove, map access, hashing) charged to its first caller in a group; these add up to 100%. " +
      "`inside a write transaction`: the part spent in a RunInTransaction callback: PocketBase runs write transactions one at a time on one connection, " +
      `so that part cannot use more than one core: at ${fmtCpu(p.pbCpuMicrosPerJob)} us of PocketBase CPU per job, ${fmtFixed(p.inTransactionPct)}% is ` +
      `${fmtCpu((p.pbCpuMicrosPerJob * p.inTransactionPct) / 100)} us per job held by the writer: at most ${fmtRate(1e6 / ((p.pbCpuMicrosPerJob * p.inTransactionPct) / 100))} jobs/s however many cores.`,
    "",
    "`go tool pprof -top` (flat):",
    "",
    "```",
    ...p.topFlat,
    "```",
    "",
    "`go tool pprof -top -cum`:",
    "",
    "```",
    ...p.topCum,
    "```",
  );
}

const fmtGrowth = (g) => (typeof g === "number" ? `${g >= 0 ? "+" : ""}${(100 * g).toFixed(1)}%` : "n/a");

/** Issue 18: the steady-state run, one row per sample, and the pass rule. */
function renderSteady(out, st, h) {
  h(`10. Steady state: ${st.shape?.minutes ?? "?"} min at ${st.shape?.rate ?? "?"} jobs/s, PB_FLEET_KEEP_DONE=${st.shape?.keepDone ?? "?"}`);
  if (st.skipped) {
    out.push(`Skipped: ${st.skipped}`);
    return;
  }
  const s = st.shape;
  out.push(
    table(
      ["minute", "probe_jobs rows", "pending", "probe_job_events", "PB RSS MB", "jobs/s", "PB CPU us/job", "claim-next+complete p50 / p99 ms", "claim-next alone p99 ms", "stats p50 / p99 ms", "completions p50 / p99 ms", "load avg"],
      st.samples.map((x) => [
        fmtFixed(x.minute, 2),
        fmtRate(x.rows),
        fmtRate(x.pending),
        fmtRate(x.events),
        fmtMb(x.rssBytes),
        fmtRate(x.jobsPerSec),
        fmtCpu(x.pbCpuMicrosPerJob),
        `${fmtMs(x.claim.p50)} / ${fmtMs(x.claim.p99)}`,
        fmtMs(x.claimOnly.p99),
        `${fmtMs(x.stats.p50)} / ${fmtMs(x.stats.p99)}`,
        `${fmtMs(x.completions.p50)} / ${fmtMs(x.completions.p99)}`,
        fmtFixed(x.load1),
      ]),
    ),
    "",
  );
  const v = st.verdict;
  if (v.metrics.length) {
    out.push(
      table(
        ["metric", `at minute ${fmtFixed(v.baseMinute)} (sample ${s.settleSamples})`, "worst after", "growth", `<= ${Math.round(100 * s.growthLimit)}%`],
        v.metrics.map((m) => [m.label, m.key === "rss" ? `${fmtMb(m.base)} MB` : m.key === "rows" || m.key === "events" ? fmtRate(m.base) : `${fmtMs(m.base)} ms`,
          m.key === "rss" ? `${fmtMb(m.worst)} MB` : m.key === "rows" || m.key === "events" ? fmtRate(m.worst) : `${fmtMs(m.worst)} ms`, fmtGrowth(m.growth), m.pass === null ? "n/a" : m.pass ? "PASS" : "MISS"]),
      ),
      "",
    );
  } else {
    out.push(`Pass rule not judged: ${v.why}.`, "");
  }
  out.push(
    `Load: jobs enqueued at a fixed ${s.rate} jobs/s (one call every 100 ms) and drained by ${s.processes * s.workersPerProcess} pb-fleet Workers of concurrency ${s.concurrency} ` +
      `in ${s.processes} Node processes (claim-next, heartbeat, complete); ${fmtRate(st.enqueued)} enqueued, ${fmtRate(st.completed)} completed by the fleet in ${fmtFixed(st.wallSeconds)} s. ` +
      `A prober beside the fleet calls stats, completions and claim-next (limit 10) + complete ${s.probeHz} times a second each; each sample's percentiles are over the calls since the previous sample. ` +
      `Rows and events: COUNT(*) at the sample; RSS: VmRSS of PocketBase; jobs/s and CPU per job: the fleet's completions and PocketBase's CPU since the previous sample. ` +
      `Pass: no metric's worst value after sample ${s.settleSamples} is more than ${Math.round(100 * s.growthLimit)}% above its value at that sample (the retention cron runs every minute).`,
  );
}

/** Issue 18: per-call cost at few and many retained rows. */
function renderRetained(out, rt, h) {
  const s = rt.shape;
  h(`11. Retained rows: per-call cost at ${fmtRate(s.small)} vs ${fmtRate(s.rows)} finished rows (one server each, side by side)`);
  out.push(
    table(
      ["server", "finished rows seeded", "seed s", "rows/s seeded", "rows in probe_jobs", "pending", "database MB"],
      rt.servers.map((x) => [x.server, fmtRate(x.seededRows), fmtFixed(x.seedSeconds), x.seedSeconds > 0 ? fmtRate(x.seededRows / x.seedSeconds) : "n/a", fmtRate(x.counts.rows), fmtRate(x.counts.pending), fmtMb(x.dbBytes)]),
    ),
    "",
  );
  out.push(
    table(
      ["call", `median ms at ${fmtRate(s.small)}`, `median ms at ${fmtRate(s.rows)}`, "p99 ms (small / large)", "CPU us/call (small / large)", "large / small (median of reps)", "spread", "CPU ratio", `<= ${s.ratioLimit}x`],
      rt.ratios.map((r) => {
        const a = rt.rows.find((x) => x.name === r.name && x.variant === "small");
        const b = rt.rows.find((x) => x.name === r.name && x.variant === "large");
        return [
          r.name === "claim" ? `claim-next (limit ${s.limit}) + complete` : r.name,
          fmtMs(a?.medianMs),
          fmtMs(b?.medianMs),
          `${fmtMs(a?.p99Ms)} / ${fmtMs(b?.p99Ms)}`,
          `${fmtCpu(a?.cpuMicrosPerCall)} / ${fmtCpu(b?.cpuMicrosPerCall)}`,
          fmtRatio(r),
          fmtSpread(r),
          typeof r.cpu === "number" ? `${r.cpu.toFixed(2)}x` : "n/a",
          typeof r.median === "number" ? (r.median <= s.ratioLimit ? "PASS" : "MISS") : "n/a",
        ];
      }),
    ),
    "",
    `Finished rows (1 in 20 failed, 1 in 50 cancelled, the rest done; finished over the last 3 days, kept: PB_FLEET_KEEP_DONE=PB_FLEET_KEEP_FAILED=30d) inserted with INSERT ... SELECT over a recursive CTE, ` +
      `${fmtRate(s.chunk)} rows a statement, on the server's own database through a bench-only SQL route (its indexes and triggers apply; ids in insertion order). ` +
      `Both servers also hold ${fmtRate(s.backlog)} pending jobs (enqueue), put back to pending after each claim cell. ` +
      `${s.reps} reps; per rep and call, each server in a rotating order runs up to ${s.calls} sequential calls (at least ${s.minCalls}; fewer once a cell passes ${s.cellMs / 1000} s); ` +
      "ratio: the large server's median latency over the small one's, per rep, median of reps; CPU: PocketBase's CPU per call.",
  );
}

/** Issue 18: claims during a large prune. */
function renderPrune(out, pr, h) {
  const s = pr.shape;
  h(`12. Prune: claim latency while retention deletes ${fmtRate(pr.seed.rows)} expired rows and ${fmtRate(pr.seed.events)} old events (W=${s.workers})`);
  out.push(
    table(
      ["window", "claims", "claims/s", "p50 ms", "p99 ms", "worst ms", "PB CPU us/claim+complete"],
      [
        [`without a prune (${s.baselineSeconds} s before the rows expire)`, fmtRate(pr.baseline.n), fmtRate(pr.baseline.perSec), fmtMs(pr.baseline.p50), fmtMs(pr.baseline.p99), fmtMs(pr.baseline.max), fmtCpu(pr.baseline.cpuMicrosPerClaim)],
        [`during the prune (${fmtFixed(pr.pruneSeconds)} s)`, fmtRate(pr.during.n), fmtRate(pr.during.perSec), fmtMs(pr.during.p50), fmtMs(pr.during.p99), fmtMs(pr.during.max), fmtCpu(pr.during.cpuMicrosPerClaim)],
      ],
    ),
    "",
    `Worst claim during / without: ${typeof pr.worstRatio === "number" ? `${pr.worstRatio.toFixed(2)}x` : "n/a"}; p99: ${typeof pr.p99Ratio === "number" ? `${pr.p99Ratio.toFixed(2)}x` : "n/a"}. ` +
      (pr.gone
        ? `Every seeded row and event was gone ${fmtFixed(pr.pruneSeconds)} s after the first maintenance call, after ${pr.ticks} calls`
        : `After ${fmtFixed(pr.pruneSeconds)} s (the cap) and ${pr.ticks} calls, ${fmtRate(pr.remaining.rows)} of ${fmtRate(pr.before.rows)} rows and ${fmtRate(pr.remaining.events)} of ${fmtRate(pr.before.events)} events were left`) +
      ` (each POST /api/fleet/maintenance took p50 ${fmtMs(pr.tickMs.p50)} / worst ${fmtMs(pr.tickMs.max)} ms; first answers: ${pr.firstTicks.map((t) => `${t.status} deleted ${JSON.stringify(t.deleted)} events ${t.events}`).join("; ")}). ` +
      `Seeding (SQL, ${fmtRate(s.chunk)} rows a statement): ${fmtFixed(pr.seed.rowsSeconds)} s for the rows, ${fmtFixed(pr.seed.eventsSeconds)} s for the events; they all expire within one second ` +
      `(finished ${s.seedMarginSeconds} s after the seeding began less PB_FLEET_KEEP_DONE=2m; events 15 min), so the baseline runs with them present. ` +
      `Load: ${s.workers} loops of claim-next (limit 1) + complete over ${fmtRate(s.backlog)} pending jobs${pr.emptyClaims ? ` (${fmtRate(pr.emptyClaims)} claims found the queue empty)` : ""}; ` +
      "the prune: maintenance calls back to back (each one retention tick) until nothing seeded is left; the cron ticks every minute as well." +
      (pr.load1 ? ` Machine load average (1 min) when the prune began / ended: ${fmtFixed(pr.load1.beforePrune)} / ${fmtFixed(pr.load1.afterPrune)} (the machine is shared).` : ""),
  );
}

const fmtPerRep = (xs, d = 2) => (Array.isArray(xs) && xs.length ? xs.map((x) => (typeof x === "number" ? x.toFixed(d) : "n/a")).join(", ") : "n/a");
const fmtX = (r) => (r && typeof r.median === "number" ? `${r.median.toFixed(2)}x` : "n/a");
const FLOW_TITLES = {
  isolation: "queue isolation",
  group: "group at its limit",
  common: "common path",
};

/** The flow phase's section (scripts/bench/flow.mjs): docs/flow-control.md's three figures, each against its baseline. */
export function renderFlow(out, flow, h) {
  const s = flow.shape;
  h("14. Flow control: docs/flow-control.md's performance figures, each side by side with its baseline (a PocketBase each)");
  const figures = flow.figures ?? [];
  const measured = figures.filter((f) => !f.skipped);
  for (const f of figures.filter((x) => x.skipped)) out.push(`${FLOW_TITLES[f.key] ?? f.key}: skipped: ${f.skipped}`, "");
  if (measured.length) {
    out.push(
      table(
        ["figure", "ratio (the first over its baseline)", "latency: median of reps", "per rep", "PB CPU: median of reps", "per rep", "target", "result"],
        measured.map((f) => {
          const cpuPass = f.key === "common" && f.ratios.cpu && typeof f.ratios.cpu.median === "number" ? (f.ratios.cpu.median <= f.target ? "PASS" : "MISS") : null;
          const latPass = f.ratios.latency && typeof f.ratios.latency.median === "number" ? (f.ratios.latency.median <= f.target ? "PASS" : "MISS") : "n/a";
          return [
            FLOW_TITLES[f.key] ?? f.key,
            `${f.of} / ${f.over}`,
            fmtX(f.ratios.latency),
            fmtPerRep(f.ratios.latency?.perRep),
            fmtX(f.ratios.cpu),
            fmtPerRep(f.ratios.cpu?.perRep),
            `<= ${f.target}x`,
            cpuPass === null ? latPass : `latency ${latPass}, CPU ${cpuPass}`,
          ];
        }),
      ),
      "",
    );
    out.push(
      table(
        ["figure", "variant", "server", "seeded", "per", "latency ms (median of reps)", "per rep", "p50 / p99 ms", "PB CPU us (median of reps)", "per rep", "failures"],
        measured.flatMap((f) =>
          f.rows.map((r) => {
            const d = f.datasets.find((x) => x.variant === r.variant) ?? {};
            return [
              FLOW_TITLES[f.key] ?? f.key,
              r.variant,
              r.server,
              flowDataset(f.key, d),
              f.key === "common" ? "job" : "call",
              typeof r.costMs === "number" ? r.costMs.toFixed(f.key === "common" ? 3 : 2) : "n/a",
              fmtPerRep(r.perRepCostMs, f.key === "common" ? 3 : 2),
              `${fmtMs(r.latencyMs.p50)} / ${fmtMs(r.latencyMs.p99)}${f.key === "common" ? " (per job)" : ""}`,
              fmtCpu(r.cpuMicros),
              r.perRepCpuMicros.map(fmtCpu).join(", "),
              r.failureCount,
            ];
          }),
        ),
      ),
      "",
    );
  }
  const common = measured.find((f) => f.key === "common");
  const iso = figures.find((f) => f.key === "isolation");
  const grp = figures.find((f) => f.key === "group");
  const notes = [];
  if (iso && !iso.skipped) {
    notes.push(
      `Queue isolation: claim-next { queue: "A", limit: ${iso.sizes.limit} } with ${fmtRate(iso.sizes.aJobs)} due jobs in A (priority 0, the last 10 minutes); queue B's ${fmtRate(iso.sizes.bJobs)} due jobs are older (the 3 hours before) at priorities 0-2, so all of them sort before A's. The baseline is a server with the same A and B empty.`,
    );
  }
  if (grp && !grp.skipped) {
    notes.push(
      `Group at its limit: claim-next { queue: "work", limit: ${grp.sizes.limit} }; group G has concurrency ${grp.sizes.concurrency} (POST /api/fleet/flow) and ${grp.sizes.concurrency} job held under a ${s.leaseSeconds} s lease, and ${fmtRate(grp.sizes.gJobs)} due jobs older than (and up to 2 priority levels above) the ${fmtRate(grp.sizes.otherJobs)} jobs of ${grp.sizes.otherGroups} other groups. The baseline is the same server shape (the flow row, the held job, the other groups' jobs) without G's pending jobs.`,
    );
  }
  if (common) {
    const b = common.baseline;
    const ctx = common.context ?? {};
    notes.push(
      `Common path: ${common.sizes.reps} reps of ${common.sizes.loops} loops of claim-next (limit ${common.sizes.limit}, no queue) then complete of those ${common.sizes.limit} (status done), over ${fmtRate(common.sizes.rows)} pending jobs of the default queue with no group and no probe_flow rows; ` +
        `the baseline: pb-fleet at ${b.sha.slice(0, 7)} ("${b.subject.length > 90 ? `${b.subject.slice(0, 87)}...` : b.subject}"; --flowBaseline ${b.rev}), its ${b.files.filter((f) => f.endsWith(".pb.js")).join(", ")} and ${b.files.filter((f) => !f.endsWith(".pb.js")).length} migrations from git, on the same binary and the same rows. ` +
        `Per job: (claim-next ms + complete ms) / jobs of a loop, the median loop; CPU: the cell's PocketBase CPU over its jobs. ` +
        `Each call on its own (context): claim-next ${fmtX(ctx.claimNext)} (per rep ${fmtPerRep(ctx.claimNext?.perRep)}), complete ${fmtX(ctx.complete)} (per rep ${fmtPerRep(ctx.complete?.perRep)}); ` +
        `median call ms: ${common.rows.map((r) => `${r.variant} claim-next ${fmtMs(r.claimMs)} / complete ${fmtMs(r.completeMs)}`).join("; ")}. ` +
        `Hooks loaded: ${common.datasets.map((d) => `${d.variant} ${(d.hooks ?? []).map((x) => `${x.file} (sha256 ${x.sha256.slice(0, 12)})`).join(", ") || "?"}`).join("; ")}.`,
    );
  } else if (!figures.some((f) => f.key === "common")) {
    // not run
  }
  notes.push(
    `Each pair of servers is alive at once on the run's binary (--hooksPool ${s.hooksPool}, the sweeper cron off) and measured in ${s.reps} repetitions${common ? ` (the common path: ${common.sizes.reps})` : ""}, the variants' order rotating by rep; ` +
      `a cell is ${grp?.sizes?.calls ?? iso?.sizes?.calls ?? "?"} sequential calls (after ${s.warmupCalls} warm-up calls per server), its latency the median call; a ratio is the median of the reps' ratios, per rep values beside it. ` +
      "CPU: the PocketBase process's time on a CPU over the cell (the sum of its threads' /proc schedstat). " +
      "Rows are seeded with INSERT ... SELECT (a recursive CTE) through the bench-only SQL route, each a copy of a job made by POST /api/fleet/enqueue on that server with its own id, probe_key, queue, group, priority and created/run_at; after each cell the rows it claimed or completed are put back as enqueue wrote them, so every call sees the same rows. " +
      `Machine load average (1 min) at the start / end of the phase: ${flow.load1?.start ?? "?"} / ${flow.load1?.end ?? "?"} (the cores are shared).`,
  );
  out.push(notes.join("\n\n"));
}

function flowDataset(key, d) {
  if (key === "isolation") return `A ${fmtRate(d.aPending)}, B ${fmtRate(d.bPending)} pending (${fmtFixed(d.seedSec)} s)`;
  if (key === "group") return `G ${fmtRate(d.gPending)} pending + ${d.gHeld} held, others ${fmtRate(d.otherPending)} (${fmtFixed(d.seedSec)} s)`;
  return `${fmtRate(d.pending)} pending, ${d.columns} columns${d.flowRows === null || d.flowRows === undefined ? "" : `, ${d.flowRows} probe_flow rows`}`;
}

const HOT_PATH_METRIC_LABELS = {
  jobsPerSec: "jobs/s",
  pbCpuPerJob: "PocketBase CPU per job",
  clientCpuPerJob: "client CPU per job",
  clientSteadyCpuPerJob: "client CPU per job, steady (20-80% of each process's jobs)",
  p99: "p99 claim-to-completion",
  msPerCall: "claim-next ms per call",
};
/** The ratios each part of the hot-path phase reports (its targets are among them; the rest are context). */
const HOT_PATH_PART_METRICS = {
  server: ["jobsPerSec", "pbCpuPerJob", "clientCpuPerJob", "p99"],
  worker: ["jobsPerSec", "pbCpuPerJob", "clientCpuPerJob", "clientSteadyCpuPerJob", "p99"],
  limited: ["jobsPerSec", "pbCpuPerJob", "p99"],
  held: ["msPerCall", "pbCpuPerJob"],
};

/**
 * The hot-path phase's section (scripts/bench/hot-path.mjs, issue 21): per
 * part, the ratios current over the baseline with their per-rep values and
 * verdicts, and each variant's medians.
 */
export function renderHotPath(out, hp, h) {
  const s = hp.shape;
  const rev = hp.baseline?.sha ? hp.baseline.sha.slice(0, 7) : (hp.baseline?.rev ?? s?.baselineRev ?? "?");
  h(`15. Hot path (issue 21): claim-next -> complete as built vs pb-fleet ${rev}, same binary, same run`);
  if (hp.skipped) {
    out.push(`Skipped: ${hp.skipped}`);
    return;
  }
  const parts = hp.parts ?? [];
  const title = (p) => ({ server: "server (load generator)", limited: "server, a rate limit set", held: "claim-next, held jobs growing" })[p.key] ?? "Worker fleet";
  for (const p of parts.filter((x) => x.skipped)) out.push(`${title(p)}: skipped: ${p.skipped}`, "");
  const measured = parts.filter((p) => !p.skipped);
  if (measured.length) {
    out.push(
      table(
        ["part", "figure", "current / baseline (median of reps)", "per rep", "target", "result"],
        measured.flatMap((p) =>
          (HOT_PATH_PART_METRICS[p.key] ?? Object.keys(HOT_PATH_METRIC_LABELS)).map((key) => {
            const j = p.judged?.[key];
            return [
              title(p),
              HOT_PATH_METRIC_LABELS[key],
              fmtX(p.ratios?.[key]),
              fmtPerRep(p.ratios?.[key]?.perRep),
              j ? `${j.direction === "atLeast" ? ">=" : "<="} ${j.target}x` : "(context)",
              j ? (j.pass === null ? "n/a" : j.pass ? "PASS" : "MISS") : "",
            ];
          }),
        ),
      ),
      "",
    );
    out.push(
      table(
        ["part", "variant", "server", "jobs/s (server stamps)", "per rep", "jobs/s (client clock)", "PB CPU us/job", "per rep", "client CPU us/job", "per rep", "p50 / p99 ms", "requests/job", "exactly once"],
        measured.flatMap((p) =>
          p.rows.map((r) => [
            title(p),
            r.variant,
            r.server,
            fmtRate(r.jobsPerSec),
            (r.perRepJobsPerSec ?? []).map(fmtRate).join(", "),
            fmtRate(r.clientJobsPerSec),
            fmtCpu(r.pbCpuMicrosPerJob),
            (r.perRepPbCpuMicros ?? []).map(fmtCpu).join(", "),
            fmtCpu(r.clientCpuMicrosPerJob),
            (r.perRepClientCpuMicros ?? []).map(fmtCpu).join(", "),
            `${fmtMs(r.latencyMs?.p50)} / ${fmtMs(r.latencyMs?.p99)}`,
            fmtFixed(r.requestsPerJob, 3),
            r.exactlyOnceRuns,
          ]),
        ),
      ),
      "",
    );
  }
  const b = hp.baseline ?? {};
  const server = measured.find((p) => p.key === "server");
  const worker = measured.find((p) => p.key === "worker");
  const notes = [];
  notes.push(
    `Baseline: pb-fleet at ${rev}${b.subject ? ` ("${b.subject.length > 90 ? `${b.subject.slice(0, 87)}...` : b.subject}")` : ""} (--hotPathBaseline ${b.rev ?? s?.baselineRev}): its ${(b.files ?? []).filter((f) => f.endsWith(".pb.js")).join(", ") || "bundle"} and ${(b.files ?? []).filter((f) => !f.endsWith(".pb.js")).length} migrations from git` +
      `${hp.clients?.baseline?.skipped ? "" : ", and for the Worker its src/client (with the src/lib it imports) read from git and bundled like the working tree's"}; ` +
      `current: the bundle as built and the working tree's src/client. ` +
      `Hooks loaded: ${Object.entries(hp.hooks ?? {}).map(([k, hs]) => `${k} ${hs.map((x) => `${x.file} (sha256 ${x.sha256.slice(0, 12)})`).join(", ")}`).join("; ") || "?"}.`,
  );
  if (server) {
    notes.push(
      `Server: ${server.sizes.loops} loops in the bench's own process, each claim-next (limit ${server.sizes.limit}) then complete of every job it claimed (status done, result { w }), until ${fmtRate(server.sizes.jobs)} jobs are done; the client CPU column is that load generator's (context: the same code for both variants).`,
    );
  }
  const limited = measured.find((p) => p.key === "limited");
  if (limited) {
    notes.push(
      `Limited: the server part's load with a rate limit on the jobs' queue that it never reaches (POST /api/fleet/flow ${JSON.stringify(limited.sizes.flow)}), set on both servers for the part and cleared after it: what counting and logging every claim in a rate window costs.`,
    );
  }
  const held = measured.find((p) => p.key === "held");
  if (held) {
    notes.push(
      `Held: one loop in the bench's own process of claim-next (limit ${held.sizes.limit}, leases that outlast the run) and no completes, until ${fmtRate(held.sizes.jobs)} jobs are held: ms per call and PocketBase CPU per job over the claims (finding the expired leases must not read the live ones); the jobs are then completed, untimed, and checked. Its jobs/s is the claims' own (client clock).`,
    );
  }
  if (worker) {
    notes.push(
      `Worker: ${worker.sizes.processes} Node processes x ${worker.sizes.workersPerProcess} pb-fleet Worker(s) of concurrency ${worker.sizes.concurrency} (batched-fleet.mjs, mode "worker"), a no-op handler returning a tiny result, ${fmtRate(worker.sizes.jobs)} jobs a run; client CPU: the processes' process.cpuUsage() over the run.`,
    );
  }
  notes.push(
    `Each run enqueues its jobs first (POST /api/fleet/enqueue, not timed); jobs/s is jobs / (last finished_at - first claimed_at), the server's own stamps (the client clock's figure beside it); p50 / p99: finished_at - claimed_at per row; PB CPU: utime + stime of the PocketBase process (/proc) over the run. ` +
      `Both servers are alive for the whole phase (--hooksPool ${s?.hooksPool}, the sweeper cron off), a warm-up run of ${fmtRate(s?.warmupJobs)} jobs each, then ${s?.reps} repetitions, the order rotating; a ratio is the median of the reps' ratios. ` +
      `Exactly once: every row done, attempts 1, reclaim_count 0, its result its holder's, each job completed by one loop or worker once; anything else fails the run. ` +
      `Machine load average (1 min) at the start / end of the phase: ${hp.load1?.start ?? "?"} / ${hp.load1?.end ?? "?"} (the cores are shared).`,
  );
  out.push(notes.join("\n\n"));
}
