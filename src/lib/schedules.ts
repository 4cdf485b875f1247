/**
 * Periodic jobs (docs/queue.md, "Periodic jobs and retention"): each server cron
 * tick enqueues a job for every enabled `probe_schedules` row whose cron
 * expression is due in the current UTC minute, once per row and minute.
 */
import { cronMatchesMinute, parseCron } from "./cron.js";
import { formatPbDate, parsePbDate } from "./lease.js";
import type { WhereClause } from "./queries.js";
import { GROUP_NAME_RULE, isGroupName } from "./flow-limits.js";
import { DEFAULT_QUEUE, isQueueName } from "./queue-names.js";
import { jsonByteLength, MAX_MAX_ATTEMPTS, MAX_PAYLOAD_BYTES, MAX_PRIORITY, MIN_PRIORITY } from "./queue.js";
import type { EnqueueItemFields } from "./validate.js";

/** A probe_schedules row as the records API reads it (rows are made by hand in the admin UI). */
export interface ScheduleRow {
  id: string;
  /** Unique; part of each enqueued job's unique_key. */
  name: string;
  probe_key: string;
  /** PocketBase's cron grammar (cron.ts), judged in UTC. */
  cron: string;
  payload: unknown;
  priority: number;
  max_attempts: number;
  enabled: boolean;
  /** The minute (its start, PocketBase's date text) this schedule last enqueued for; "" when never. */
  last_enqueued_for: string;
  /** The queue its jobs go to (docs/flow-control.md); "": the default queue. */
  queue: string;
  /** Its jobs' group; "": none. */
  group_key: string;
}

/** Schedules one tick reads per page. */
export const SCHEDULES_PER_TICK = 100;

/**
 * The enabled schedules not yet enqueued for the minute starting at
 * `minuteMs`, by name, `limit` at a time: pass the last name of a page as
 * `afterName` for the next. Leaving out the ones already marked lets a later
 * tick of the same minute reach schedules past a tick's bound. A row with an
 * empty name is never listed (and would be refused: decideScheduleTick).
 * Read into SCHEDULE_COLUMNS_SHAPE.
 */
export function enabledSchedulesQuery(minuteMs: number, limit: number = SCHEDULES_PER_TICK, afterName = ""): WhereClause {
  return {
    // COALESCE: a hand-made row's empty json field is NULL, which the text shape cannot read.
    sql: "SELECT id, name, probe_key, cron, COALESCE(payload, '') AS payload, priority, max_attempts, enabled, " +
      "COALESCE(last_enqueued_for, '') AS last_enqueued_for, COALESCE(queue, '') AS queue, COALESCE(group_key, '') AS group_key " +
      "FROM probe_schedules WHERE enabled = TRUE AND name > {:after} " +
      "AND COALESCE(last_enqueued_for, '') < {:minute} ORDER BY name LIMIT {:limit}",
    params: { after: afterName, limit, minute: formatPbDate(minuteStart(minuteMs)) },
  };
}

/** enabledSchedulesQuery's columns as the database layer reads them (payload as its JSON text). */
export type ScheduleColumns = Omit<ScheduleRow, "payload"> & { payload: string };
export const SCHEDULE_COLUMNS_SHAPE: ScheduleColumns = {
  id: "", name: "", probe_key: "", cron: "", payload: "", priority: 0, max_attempts: 0, enabled: false,
  last_enqueued_for: "", queue: "", group_key: "",
};

/** Pages of SCHEDULES_PER_TICK one tick reads at most: a bound on a tick's transaction. */
export const SCHEDULE_PAGES_PER_TICK = 10;

/** The schedule row's mark, written in the transaction that enqueues its job. */
export function markScheduleStatement(id: string, patch: SchedulePatch): WhereClause {
  return {
    sql: "UPDATE probe_schedules SET last_enqueued_for = {:minute} WHERE id = {:id}",
    params: { id, minute: patch.last_enqueued_for },
  };
}

const MINUTE_MS = 60_000;

/** The start of the UTC minute holding `epochMs`. */
export function minuteStart(epochMs: number): number {
  return Math.floor(epochMs / MINUTE_MS) * MINUTE_MS;
}

/**
 * The unique_key of the job a schedule enqueues for a minute:
 * `pb-fleet-schedule:<name>:<YYYY-MM-DDTHH:MMZ>` (UTC), e.g.
 * `pb-fleet-schedule:nightly:2025-01-31T02:00Z`. While that job is live, a
 * second enqueue for the same schedule and minute is answered with it
 * (docs/queue.md: unique_key) instead of writing another. The minute is the last,
 * fixed-width part, so a name containing ':' cannot make two keys collide.
 */
export function scheduleUniqueKey(name: string, minuteMs: number): string {
  return `${SCHEDULE_KEY_PREFIX}${name}:${new Date(minuteStart(minuteMs)).toISOString().slice(0, 16)}Z`;
}

/** The start of every schedule's unique key: the server's own (a worker identity may not enqueue one). */
export const SCHEDULE_KEY_PREFIX = "pb-fleet-schedule:";

/** What an enqueueing tick writes to the schedule row, with the job. */
export interface SchedulePatch {
  last_enqueued_for: string;
}

/** The job a due schedule enqueues: every field given, none left to enqueue's defaults. */
export type ScheduledEnqueueItem = EnqueueItemFields;

/**
 * `disabled`, `not_due` and `already_enqueued` are routine; `invalid` comes
 * with `error`, a sentence for the server's log (the row is hand-made, and one
 * bad row must not stop the others).
 */
export type ScheduleSkipReason = "disabled" | "not_due" | "already_enqueued" | "invalid";

export type ScheduleDecision =
  | { kind: "enqueue"; item: ScheduledEnqueueItem; patch: SchedulePatch }
  | { kind: "skip"; reason: ScheduleSkipReason; error?: string };

/**
 * Whether a tick at `nowMs` enqueues for this schedule, judged on the row as
 * read inside the transaction that writes the job and the patch: the patch
 * moves last_enqueued_for to this minute, so a second tick or a second server
 * (whose transaction runs after this one commits) reads it and skips. A
 * last_enqueued_for at or past this minute (a server with a clock ahead wrote
 * it) counts as done; an unreadable one as never, so a bad value cannot stop
 * the schedule for good (the patch overwrites it).
 *
 * A bad cron expression is reported every tick (when it is due cannot be
 * known); a bad probe_key, priority, max_attempts or payload only on the
 * minutes it would have run, each a run that was lost.
 */
export function decideScheduleTick(row: ScheduleRow, nowMs: number): ScheduleDecision {
  if (row.enabled !== true) return { kind: "skip", reason: "disabled" };
  const parsed = parseCron(row.cron);
  if (!parsed.ok) return invalid(row, `cron ${JSON.stringify(row.cron)} is not a valid cron expression: ${parsed.error}`);
  const minute = minuteStart(nowMs);
  if (!cronMatchesMinute(parsed.schedule, minute)) return { kind: "skip", reason: "not_due" };
  const last = row.last_enqueued_for === "" ? null : parsePbDate(row.last_enqueued_for);
  if (last !== null && last >= minute) return { kind: "skip", reason: "already_enqueued" };

  const payload = row.payload ?? null; // a json field left empty
  const error = scheduleFieldError(row, payload);
  if (error !== null) return invalid(row, error);
  return {
    kind: "enqueue",
    item: {
      probeKey: row.probe_key,
      queue: row.queue === "" ? DEFAULT_QUEUE : row.queue,
      groupKey: row.group_key,
      timeoutSeconds: 0,
      startBy: "",
      payload,
      priority: row.priority,
      maxAttempts: row.max_attempts,
      uniqueKey: scheduleUniqueKey(row.name, minute),
      runAt: formatPbDate(minute),
    },
    patch: { last_enqueued_for: formatPbDate(minute) },
  };
}

function invalid(row: ScheduleRow, error: string): ScheduleDecision {
  return {
    kind: "skip",
    reason: "invalid",
    error: `probe_schedules ${JSON.stringify(row.name)} (id ${row.id}): ${error}; nothing enqueued`,
  };
}

/** What enqueue would refuse in the row's job (the limits of queue.ts), or null. */
function scheduleFieldError(row: ScheduleRow, payload: unknown): string | null {
  if (typeof row.name !== "string" || row.name === "") return "name is empty";
  if (typeof row.probe_key !== "string" || row.probe_key === "") return "probe_key is empty";
  if (!Number.isInteger(row.priority) || row.priority < MIN_PRIORITY || row.priority > MAX_PRIORITY) {
    return `priority ${row.priority} is not an integer from ${MIN_PRIORITY} to ${MAX_PRIORITY}`;
  }
  if (!Number.isInteger(row.max_attempts) || row.max_attempts < 0 || row.max_attempts > MAX_MAX_ATTEMPTS) {
    return `max_attempts ${row.max_attempts} is not an integer from 0 (no cap) to ${MAX_MAX_ATTEMPTS}`;
  }
  if (row.queue !== "" && !isQueueName(row.queue)) return `queue ${JSON.stringify(row.queue)} is not a queue name`;
  if (row.group_key !== "" && !isGroupName(row.group_key)) return `group_key is not a group name (${GROUP_NAME_RULE})`;
  const bytes = jsonByteLength(payload);
  if (bytes > MAX_PAYLOAD_BYTES) return `payload is ${bytes} bytes of JSON, more than ${MAX_PAYLOAD_BYTES}`;
  return null;
}
