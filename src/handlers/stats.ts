/** GET /api/fleet/stats[?format=prometheus][&probeKeyPrefix=...][&queue=...] */
import { getenv, json, queryAll, queryOne, storeGet, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { decodeSweeperState, orphanCap, SWEEPER_STATE_KEY, sweepSchedule } from "../lib/config.js";
import {
  LIVE_COUNT_SHAPE, liveCountsByQueueQuery, MAX_QUEUE_GAUGE_ROWS, statsQuery, statsScanQuery, STATS_ROW_SHAPE,
} from "../lib/queries.js";
import { isQueueName } from "../lib/queue-names.js";
import { prefixError, QUEUE_NAME_RULE } from "../lib/validate.js";
import { buildStats, formatPrometheus, parseStatsFormat, STATS_UNAVAILABLE } from "../lib/stats.js";

export function handleStats(req: FleetRequest): Reply {
  const format = parseStatsFormat(req.query("format"));
  if (format === null) return json(400, { error: "format must be json or prometheus" });
  const prefix = req.query("probeKeyPrefix");
  const badPrefix = prefixError(prefix);
  if (badPrefix !== null) return json(400, { error: badPrefix });
  const queue = req.query("queue");
  if (queue !== "" && !isQueueName(queue)) return json(400, { error: `queue must be a queue name (${QUEUE_NAME_RULE})` });
  const now = Date.now();
  const cap = orphanCap(getenv);
  // Counted (job-counts.ts) unless a prefix or a queue narrows it or the counting triggers are missing.
  let row = prefix === "" && queue === "" ? queryOne(statsQuery(now, cap), STATS_ROW_SHAPE) : null;
  if (row === null || row.counts_ready !== 1) row = queryOne(statsScanQuery(now, cap, prefix, queue === "" ? null : queue), STATS_ROW_SHAPE);
  if (row === null) return json(503, { error: STATS_UNAVAILABLE }); // the cause is in the log
  const sweeper = decodeSweeperState(storeGet(SWEEPER_STATE_KEY), sweepSchedule(getenv));
  const stats = buildStats(row, now, cap, sweeper);
  if (format !== "prometheus") return json(200, stats);
  // The whole fleet's scrape carries the per-queue gauges; a narrowed one is about its own scope.
  const byQueue = prefix === "" && queue === "" ? queryAll(liveCountsByQueueQuery(MAX_QUEUE_GAUGE_ROWS), LIVE_COUNT_SHAPE) : [];
  if (byQueue === null) return json(503, { error: STATS_UNAVAILABLE });
  return { status: 200, text: formatPrometheus(stats, byQueue) };
}
