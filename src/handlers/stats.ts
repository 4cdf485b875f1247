/** GET /api/fleet/stats[?format=prometheus][&probeKeyPrefix=...] */
import { orphanCap } from "../lib/config";
import { statsQuery, type StatsRow } from "../lib/queries";
import { buildStats, formatPrometheus, parseStatsFormat } from "../lib/stats";
import { getenv } from "./record";

export function handleStats(c: echo.Context): void {
  const format = parseStatsFormat(c.queryParam("format"));
  if (format === null) return c.json(400, { error: "format must be json or prometheus" });
  const now = Date.now();
  const cap = orphanCap(getenv);
  const query = statsQuery(now, cap, c.queryParam("probeKeyPrefix"));
  const row = new DynamicModel({
    pending: 0, claimed: 0, running: 0, done: 0, failed: 0, total: 0,
    oldest_pending: "", expired_leases: 0, past_orphan_cap: 0,
  }) as unknown as StatsRow;
  try {
    $app.dao().db().newQuery(query.sql).bind(query.params).one(row);
  } catch (err) {
    return c.json(503, { error: "stats are unavailable: " + String(err) });
  }
  const stats = buildStats(row, now, cap);
  if (format === "prometheus") return c.string(200, formatPrometheus(stats));
  return c.json(200, stats);
}
