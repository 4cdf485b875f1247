/** GET /api/fleet/stats[?format=prometheus][&probeKeyPrefix=...] */
import { getenv, json, queryOne, storeGet, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { decodeSweeperState, orphanCap, SWEEPER_STATE_KEY, sweepSchedule } from "../lib/config.js";
import { statsQuery, statsScanQuery, STATS_ROW_SHAPE } from "../lib/queries.js";
import { prefixError } from "../lib/validate.js";
import { buildStats, formatPrometheus, parseStatsFormat, STATS_UNAVAILABLE } from "../lib/stats.js";

export function handleStats(req: FleetRequest): Reply {
  const format = parseStatsFormat(req.query("format"));
  if (format === null) return json(400, { error: "format must be json or prometheus" });
  const prefix = req.query("probeKeyPrefix");
  const badPrefix = prefixError(prefix);
  if (badPrefix !== null) return json(400, { error: badPrefix });
  const now = Date.now();
  const cap = orphanCap(getenv);
  // Counted (job-counts.ts) unless a prefix narrows it or the counting triggers are missing.
  let row = prefix === "" ? queryOne(statsQuery(now, cap), STATS_ROW_SHAPE) : null;
  if (row === null || row.counts_ready !== 1) row = queryOne(statsScanQuery(now, cap, prefix), STATS_ROW_SHAPE);
  if (row === null) return json(503, { error: STATS_UNAVAILABLE }); // the cause is in the log
  const sweeper = decodeSweeperState(storeGet(SWEEPER_STATE_KEY), sweepSchedule(getenv));
  const stats = buildStats(row, now, cap, sweeper);
  return format === "prometheus" ? { status: 200, text: formatPrometheus(stats) } : json(200, stats);
}
