/**
 * Retention: the server cron deletes finished rows once they are older than
 * the configured keep (docs/queue.md, "Periodic jobs and retention"), a bounded
 * batch per class per tick. Deleting data on a typo is the one mistake this
 * must never make, so every doubt resolves to keeping rows: an unreadable
 * setting keeps its whole class, and only terminal statuses can ever be named.
 */
import { DEFAULT_KEEP_DONE, DEFAULT_KEEP_FAILED, KEEP_DONE_ENV, KEEP_EVENTS_ENV, KEEP_FAILED_ENV } from "./config.js";
import { JOB_EVENTS_KEEP_MS } from "./job-events.js";
import { COMPLETED_STATUSES, type TerminalStatus } from "./job-schema.js";
import { formatPbDate } from "./lease.js";
import { FINISHED_SQL, type WhereClause } from "./queries.js";
import { isTerminalStatus } from "./transitions.js";
import type { JobStatus } from "./types.js";

/**
 * Rows deleted per class in one transaction. Each transaction holds
 * PocketBase's single writer, so a batch is kept small enough that a claim
 * waiting behind it waits little (measured in the bench's prune phase); the
 * tick repeats batches (RETENTION_BUDGET_MS) until nothing expired is left.
 */
export const RETENTION_BATCH = 200;
/**
 * How long one maintenance tick may keep deleting, in batches. The tick runs
 * every minute, so 15 s keeps a tick well inside its minute (never two at
 * once from the cron) and lets retention take at most a quarter of the
 * writer's time while it catches up on a backlog; in that time it deletes
 * far more rows than the fastest the server can finish (see
 * docs/protocol-decisions.md, "Retention"), so the table cannot outgrow it.
 */
export const RETENTION_BUDGET_MS = 15_000;

/** A class of finished rows sharing one keep setting, named after a completed status (cancelled rows go with done). */
export type RetentionClass = (typeof COMPLETED_STATUSES)[number];
export const RETENTION_CLASSES: readonly RetentionClass[] = COMPLETED_STATUSES;

/** The statuses each class deletes: terminal ones only (statusesOf re-checks). */
const CLASS_STATUSES: Readonly<Record<RetentionClass, readonly TerminalStatus[]>> = {
  done: ["done", "cancelled"],
  failed: ["failed"],
};

const CLASS_SETTINGS: Readonly<Record<RetentionClass, { env: string; fallback: string; rows: string }>> = {
  done: { env: KEEP_DONE_ENV, fallback: DEFAULT_KEEP_DONE, rows: "done or cancelled" },
  failed: { env: KEEP_FAILED_ENV, fallback: DEFAULT_KEEP_FAILED, rows: "failed" },
};

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `<integer><unit>` (s, m, h, d) or a bare `0`, in milliseconds; null when the
 * text is anything else (`7 d`, `7D`, `1.5h`, `-1d`, `7`, a bound past 2^53 ms).
 */
export function parseKeepDuration(text: string): number | null {
  if (text === "0") return 0;
  const m = /^(\d+)([smhd])$/.exec(text);
  if (m === null) return null;
  const ms = Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  return Number.isSafeInteger(ms) ? ms : null;
}

/** One class's setting as the server applies it. */
export interface KeepSetting {
  retentionClass: RetentionClass;
  /** How long a finished row is kept; null: forever (`0`, or an invalid value). */
  keepMs: number | null;
  /** Set when the configured value is invalid: a sentence for the server's log. */
  error?: string;
}

/** The keep of one class from the environment; unset or blank takes the default. */
export function keepSetting(getenv: (name: string) => string, retentionClass: RetentionClass): KeepSetting {
  const setting = CLASS_SETTINGS[retentionClass];
  const raw = getenv(setting.env).trim();
  const ms = parseKeepDuration(raw === "" ? setting.fallback : raw);
  if (ms === null) {
    return {
      retentionClass,
      keepMs: null,
      error: `${setting.env}=${JSON.stringify(raw)} is not a duration such as ${setting.fallback}, 12h, 30m, 90s ` +
        `or 0 (keep forever), so no ${setting.rows} rows are deleted`,
    };
  }
  // Any zero (`0`, `0d`, `0s`) keeps forever: read as "delete at once" it would empty the class.
  return { retentionClass, keepMs: ms === 0 ? null : ms };
}

/**
 * How long probe_job_events records are kept (PB_FLEET_KEEP_EVENTS), ms;
 * null: forever (`0`). They are the server's own log of batch writes, not
 * anybody's results, so an unreadable value falls back to the default (and
 * says so) rather than keeping a growing table forever.
 */
export function eventsKeep(getenv: (name: string) => string): { keepMs: number | null; error?: string } {
  const raw = getenv(KEEP_EVENTS_ENV).trim();
  if (raw === "") return { keepMs: JOB_EVENTS_KEEP_MS };
  const ms = parseKeepDuration(raw);
  if (ms === null) {
    return {
      keepMs: JOB_EVENTS_KEEP_MS,
      error: `${KEEP_EVENTS_ENV}=${JSON.stringify(raw)} is not a duration such as 15m, 1h or 0 (keep forever), ` +
        `so probe_job_events are kept ${JOB_EVENTS_KEEP_MS / 60_000}m`,
    };
  }
  return { keepMs: ms === 0 ? null : ms };
}

/**
 * The `finished_at` before which rows of a class are deleted, as PocketBase's
 * date text, or null when none are (kept forever, or a keep reaching before
 * 1970, which formatPbDate cannot write and no row was finished in).
 */
export function retentionCutoff(nowMs: number, keepMs: number | null): string | null {
  if (keepMs === null || !(keepMs > 0)) return null;
  const cutoffMs = nowMs - keepMs;
  return Number.isFinite(cutoffMs) && cutoffMs >= 0 ? formatPbDate(cutoffMs) : null;
}

/** A class's statuses, refusing at run time anything but a known class of terminal statuses. */
function statusesOf(retentionClass: RetentionClass): readonly JobStatus[] {
  const statuses = Object.prototype.hasOwnProperty.call(CLASS_STATUSES, retentionClass)
    ? CLASS_STATUSES[retentionClass]
    : undefined;
  if (statuses === undefined || statuses.length === 0 || !statuses.every(isTerminalStatus)) {
    throw new Error(`not a retention class: ${JSON.stringify(retentionClass)}`);
  }
  return statuses;
}

/**
 * Ids of at most `limit` rows of the class finished before `cutoff`: a range
 * of the (status, finished_at) index per status, so a batch costs the same
 * however many rows are retained. The statuses are constants of this module,
 * never input; a row with no finished_at (none of pb-fleet's terminal writes
 * leave one) is kept, and is not in that partial index (FINISHED_SQL). No
 * ORDER BY: any expired row is as good as another.
 */
export function expiredIdsQuery(retentionClass: RetentionClass, cutoff: string, limit: number): WhereClause {
  // SQLite reads a negative LIMIT as "no limit".
  if (!Number.isInteger(limit) || limit < 0) throw new Error(`not a batch size: ${limit}`);
  const statuses = statusesOf(retentionClass).map((status) => `'${status}'`).join(", ");
  return {
    sql: `SELECT id FROM probe_jobs WHERE status IN (${statuses}) AND ${FINISHED_SQL} AND finished_at < {:cutoff} ` +
      "LIMIT {:limit}",
    params: { cutoff, limit },
  };
}

/** Deletes expiredIdsQuery's rows in one statement (so nothing changes status between the pick and the delete). */
export function deleteExpiredQuery(retentionClass: RetentionClass, cutoff: string, limit: number): WhereClause {
  const ids = expiredIdsQuery(retentionClass, cutoff, limit);
  return { sql: `DELETE FROM probe_jobs WHERE id IN (${ids.sql})`, params: ids.params };
}
