import { describe, expect, it } from "vitest";
import { formatPbDate } from "../../src/lib/lease";
import type { StatsRow } from "../../src/lib/queries";
import { buildStats, formatPrometheus, parseStatsFormat } from "../../src/lib/stats";
import type { FleetStats } from "../../src/lib/types";
import { NOW } from "./support/rows";

function statsRow(overrides: Partial<StatsRow> = {}): StatsRow {
  return {
    pending: 4, claimed: 3, running: 2, done: 10, failed: 1, cancelled: 6, total: 26,
    scheduled: 3, retrying: 2, dead_lettered: 5,
    oldest_pending: formatPbDate(NOW - 90_500), expired_leases: 2, past_orphan_cap: 1, counts_ready: 1,
    ...overrides,
  };
}

/** What statsRow() with an orphan cap of 5 means, at NOW. */
const STATS: FleetStats = {
  counts: { pending: 4, claimed: 3, running: 2, done: 10, failed: 1, cancelled: 6 },
  total: 26,
  scheduled: 3,
  retrying: 2,
  deadLettered: 5,
  oldestPendingAgeSeconds: 90.5,
  expiredLeases: 2,
  pastOrphanCap: 1,
  orphanCap: 5,
  sweeper: { scheduled: true, schedule: "* * * * *" },
};
const SWEEPER = STATS.sweeper;

describe("buildStats", () => {
  it("maps a StatsRow to the wire shape, with the pending age in seconds", () => {
    expect(buildStats(statsRow(), NOW, 5, SWEEPER)).toEqual(STATS);
  });

  it.each<[string, string]>([
    ["nothing pending", ""],
    ["an unreadable date", "not a date"],
  ])("reports a null age for %s", (_name, oldest) => {
    const stats = buildStats(statsRow({ pending: 0, oldest_pending: oldest }), NOW, 5, SWEEPER);
    expect(stats.oldestPendingAgeSeconds).toBeNull();
  });

  it("reads only PocketBase's layout, as the lease rule does (the T form is not it)", () => {
    expect(buildStats(statsRow({ oldest_pending: formatPbDate(NOW - 2000) }), NOW, 5, SWEEPER).oldestPendingAgeSeconds).toBe(2);
    expect(buildStats(statsRow({ oldest_pending: new Date(NOW - 2000).toISOString() }), NOW, 5, SWEEPER).oldestPendingAgeSeconds).toBeNull();
  });

  it("never reports a negative age (a job created after now by a skewed clock)", () => {
    expect(buildStats(statsRow({ oldest_pending: formatPbDate(NOW + 5000) }), NOW, 5, SWEEPER).oldestPendingAgeSeconds).toBe(0);
  });
});

describe("buildStats: the queue's numbers", () => {
  it("reads scheduled, retrying and dead-lettered from their own columns, and counts cancelled jobs", () => {
    const stats = buildStats(statsRow({ scheduled: 11, retrying: 12, dead_lettered: 13, cancelled: 14 }), NOW, 5, SWEEPER);
    expect(stats).toMatchObject({ scheduled: 11, retrying: 12, deadLettered: 13, counts: { cancelled: 14 } });
  });

  it("reports a null age when only jobs not yet due are pending (the query gives no oldest)", () => {
    expect(buildStats(statsRow({ pending: 2, scheduled: 2, oldest_pending: "" }), NOW, 5, SWEEPER).oldestPendingAgeSeconds).toBeNull();
  });
});

describe("parseStatsFormat", () => {
  it.each<[string, string | null]>([
    ["", "json"],
    ["json", "json"],
    ["prometheus", "prometheus"],
    ["PROMETHEUS", null],
    ["Json", null],
    ["xml", null],
    [" prometheus", null],
  ])("%j -> %j", (raw, format) => {
    expect(parseStatsFormat(raw)).toBe(format);
  });
});

describe("formatPrometheus", () => {
  const stats = STATS;

  it("reports a sweeper that is not running as 0, its schedule label escaped", () => {
    const text = formatPrometheus({ ...stats, sweeper: { scheduled: false, schedule: 'a "b" \\ c\nd', error: "x" } });
    expect(text).toContain('pb_fleet_sweeper_scheduled{schedule="a \\"b\\" \\\\ c\\nd"} 0\n');
  });

  it("writes the text exposition format: HELP and TYPE per gauge, labelled status samples", () => {
    expect(formatPrometheus(stats)).toBe(
      [
        "# HELP pb_fleet_jobs Jobs in probe_jobs by status.",
        "# TYPE pb_fleet_jobs gauge",
        'pb_fleet_jobs{status="pending"} 4',
        'pb_fleet_jobs{status="claimed"} 3',
        'pb_fleet_jobs{status="running"} 2',
        'pb_fleet_jobs{status="done"} 10',
        'pb_fleet_jobs{status="failed"} 1',
        'pb_fleet_jobs{status="cancelled"} 6',
        "# HELP pb_fleet_scheduled_jobs Pending jobs not yet due.",
        "# TYPE pb_fleet_scheduled_jobs gauge",
        "pb_fleet_scheduled_jobs 3",
        "# HELP pb_fleet_retrying_jobs Pending jobs that have been tried before.",
        "# TYPE pb_fleet_retrying_jobs gauge",
        "pb_fleet_retrying_jobs 2",
        "# HELP pb_fleet_dead_lettered_jobs Jobs dead-lettered (out of attempts, or given up at the orphan cap).",
        "# TYPE pb_fleet_dead_lettered_jobs gauge",
        "pb_fleet_dead_lettered_jobs 5",
        "# HELP pb_fleet_oldest_pending_age_seconds Seconds the longest-waiting due pending job has waited.",
        "# TYPE pb_fleet_oldest_pending_age_seconds gauge",
        "pb_fleet_oldest_pending_age_seconds 90.5",
        "# HELP pb_fleet_expired_leases Claimed or running jobs whose lease has passed, waiting for the sweeper.",
        "# TYPE pb_fleet_expired_leases gauge",
        "pb_fleet_expired_leases 2",
        "# HELP pb_fleet_past_orphan_cap Jobs whose consecutive orphaned leases reached the cap.",
        "# TYPE pb_fleet_past_orphan_cap gauge",
        "pb_fleet_past_orphan_cap 1",
        "# HELP pb_fleet_orphan_cap Consecutive orphaned leases after which the sweeper fails a job.",
        "# TYPE pb_fleet_orphan_cap gauge",
        "pb_fleet_orphan_cap 5",
        "# HELP pb_fleet_sweeper_scheduled 1 when the server sweeper is scheduled, 0 when it is off or its schedule failed.",
        "# TYPE pb_fleet_sweeper_scheduled gauge",
        'pb_fleet_sweeper_scheduled{schedule="* * * * *"} 1',
        "",
      ].join("\n"),
    );
  });

  it("leaves out the age sample (not a fake 0) when nothing is pending", () => {
    const text = formatPrometheus({ ...stats, oldestPendingAgeSeconds: null });
    expect(text).toContain("# TYPE pb_fleet_oldest_pending_age_seconds gauge\n# HELP pb_fleet_expired_leases");
    expect(text.split("\n").filter((l) => l.startsWith("pb_fleet_oldest_pending_age_seconds"))).toEqual([]);
  });

  it("is well-formed line by line: every sample follows its metric's HELP and TYPE", () => {
    const lines = formatPrometheus(stats).trimEnd().split("\n");
    let current = "";
    for (const line of lines) {
      const help = /^# HELP (\w+) \S.*$/.exec(line);
      if (help) { current = help[1]!; continue; }
      if (line.startsWith("# TYPE ")) { expect(line).toBe(`# TYPE ${current} gauge`); continue; }
      expect(line).toMatch(/^(\w+)(\{(status="(pending|claimed|running|done|failed|cancelled)"|schedule="[^"\\\n]*")\})? -?\d+(\.\d+)?$/);
      expect(line.split(/[{ ]/)[0]).toBe(current);
    }
  });
});
