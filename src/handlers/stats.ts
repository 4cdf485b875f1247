/** GET /api/fleet/stats[?format=prometheus][&probeKeyPrefix=...] */
import { getenv, json, queryOne, storeGet, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { decodeSweeperState, orphanCap, SWEEPER_STATE_KEY, sweepSchedule } from "../lib/config.js";
import { statsQuery, STATS_ROW_SHAPE } from "../lib/queries.js";
import { buildStats, formatPrometheus, parseStatsFormat, STATS_UNAVAILABLE } from "../lib/stats.js";

export function handleStats(req: FleetRequest): Reply {
  const format = parseStatsFormat(req.query("format"));
  if (format === null) return json(400, { error: "format must be json or prometheus" });
  const now = Date.now();
  const cap = orphanCap(getenv);
  const row = queryOne(statsQuery(now, cap, req.query("probeKeyPrefix")), STATS_ROW_SHAPE);
  if (row === null) return json(503, { error: STATS_UNAVAILABLE }); // the cause is in the log
  const sweeper = decodeSweeperState(storeGet(SWEEPER_STATE_KEY), sweepSchedule(getenv));
  const stats = buildStats(row, now, cap, sweeper);
  return format === "prometheus" ? { status: 200, text: formatPrometheus(stats) } : json(200, stats);
}
