/** GET /api/fleet/stats: the numbers, and their Prometheus text form. */
import { parsePbDate } from "./lease.js";
import type { StatsRow } from "./queries.js";
import { JOB_STATUSES, type FleetStats, type JobStatus, type SweeperState } from "./types.js";

export function buildStats(row: StatsRow, nowMs: number, orphanCap: number, sweeper: SweeperState): FleetStats {
  const counts = {} as Record<JobStatus, number>;
  for (const status of JOB_STATUSES) counts[status] = row[status];
  const oldest = parsePbDate(row.oldest_pending);
  return {
    counts,
    total: row.total,
    scheduled: row.scheduled,
    retrying: row.retrying,
    deadLettered: row.dead_lettered,
    oldestPendingAgeSeconds: oldest === null ? null : Math.max(0, (nowMs - oldest) / 1000),
    expiredLeases: row.expired_leases,
    pastOrphanCap: row.past_orphan_cap,
    orphanCap,
    sweeper,
  };
}

/** The 503 answer when the stats query fails; the database's own text goes to the log, not to callers. */
export const STATS_UNAVAILABLE = "stats are unavailable right now: the database read failed (details are in PocketBase's log)";

export type StatsFormat = "json" | "prometheus";

export function parseStatsFormat(raw: string): StatsFormat | null {
  if (raw === "" || raw === "json") return "json";
  return raw === "prometheus" ? "prometheus" : null;
}

/** Unfinished jobs of one queue in one status (Prometheus's per-queue gauges). */
export interface QueueStatusCount {
  queue: string;
  status: string;
  n: number;
}

/**
 * Prometheus text exposition format 0.0.4. `byQueue`: the unfinished jobs
 * per queue and status, as pb_fleet_queue_jobs{queue,status} (a metric of
 * its own, so the series of pb_fleet_jobs{status} stay as they were).
 */
export function formatPrometheus(stats: FleetStats, byQueue: readonly QueueStatusCount[] = []): string {
  const lines: string[] = [];
  const gauge = (name: string, help: string, samples: [string, number][]) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
    for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
  };
  gauge("pb_fleet_jobs", "Jobs in probe_jobs by status.",
    JOB_STATUSES.map((s): [string, number] => [`{status="${s}"}`, stats.counts[s]]));
  if (byQueue.length > 0) {
    gauge("pb_fleet_queue_jobs", "Unfinished jobs (pending, claimed, running) by queue and status.",
      byQueue.map((c): [string, number] => [`{queue="${escapeLabel(c.queue)}",status="${escapeLabel(c.status)}"}`, c.n]));
  }
  gauge("pb_fleet_scheduled_jobs", "Pending jobs not yet due.", [["", stats.scheduled]]);
  gauge("pb_fleet_retrying_jobs", "Pending jobs that have been tried before.", [["", stats.retrying]]);
  gauge("pb_fleet_dead_lettered_jobs", "Jobs dead-lettered (out of attempts, or given up at the orphan cap).",
    [["", stats.deadLettered]]);
  // No sample when nothing is pending: an absent series, not a fake zero age.
  gauge("pb_fleet_oldest_pending_age_seconds", "Seconds the longest-waiting due pending job has waited.",
    stats.oldestPendingAgeSeconds === null ? [] : [["", stats.oldestPendingAgeSeconds]]);
  gauge("pb_fleet_expired_leases", "Claimed or running jobs whose lease has passed, waiting for the sweeper.",
    [["", stats.expiredLeases]]);
  gauge("pb_fleet_past_orphan_cap", "Jobs whose consecutive orphaned leases reached the cap.",
    [["", stats.pastOrphanCap]]);
  gauge("pb_fleet_orphan_cap", "Consecutive orphaned leases after which the sweeper fails a job.",
    [["", stats.orphanCap]]);
  gauge("pb_fleet_sweeper_scheduled", "1 when the server sweeper is scheduled, 0 when it is off or its schedule failed.",
    [[`{schedule="${escapeLabel(stats.sweeper.schedule)}"}`, stats.sweeper.scheduled ? 1 : 0]]);
  return lines.join("\n") + "\n";
}

/** A Prometheus label value: backslash, double quote and newline escaped. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}
