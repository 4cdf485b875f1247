/**
 * The server's minute tick besides the sweep: periodic jobs from
 * probe_schedules, and retention of finished rows. Each is bounded per tick
 * (SCHEDULES_PER_TICK x SCHEDULE_PAGES_PER_TICK schedules, RETENTION_BATCH rows per class).
 */
import { deleteOldEventsStatement, JOB_EVENTS_KEEP_MS, JOB_EVENTS_RETENTION_BATCH } from "./bulk.js";
import { enqueueJobs } from "./enqueue.js";
import { parseJsonField, type JobBatch } from "./job-row.js";
import { formatPbDate } from "./lease.js";
import { deleteExpiredQuery, keepSetting, RETENTION_BATCH, RETENTION_CLASSES, retentionCutoff, type RetentionClass } from "./retention.js";
import {
  decideScheduleTick, enabledSchedulesQuery, markScheduleStatement, SCHEDULE_COLUMNS_SHAPE, SCHEDULE_PAGES_PER_TICK,
  SCHEDULES_PER_TICK,
} from "./schedules.js";

/** What one tick of periodic jobs did. */
export interface ScheduleTick {
  /** Jobs enqueued, one per schedule due this minute. */
  enqueued: { schedule: string; jobId: string; created: boolean }[];
  /** Sentences for the log: schedules that were due but could not run. */
  errors: string[];
}

/**
 * Enqueues each enabled schedule due this minute, once: read, decide and mark
 * in the caller's one transaction, so a second tick or a second server reads
 * the mark and skips (decideScheduleTick).
 */
export function enqueueDueSchedules(batch: JobBatch, nowMs: number): ScheduleTick {
  const tick: ScheduleTick = { enqueued: [], errors: [] };
  let after = "";
  for (let page = 0; page < SCHEDULE_PAGES_PER_TICK; page++) {
    const rows = batch.queryAll(enabledSchedulesQuery(nowMs, SCHEDULES_PER_TICK, after), SCHEDULE_COLUMNS_SHAPE);
    for (const columns of rows) {
      const row = Object.assign({}, columns, { payload: parseJsonField(columns.payload) });
      const decision = decideScheduleTick(row, nowMs);
      if (decision.kind === "skip") {
        if (decision.error !== undefined) tick.errors.push(decision.error);
        continue;
      }
      const job = enqueueJobs(batch, [decision.item])[0];
      batch.execute(markScheduleStatement(row.id, decision.patch));
      if (job !== undefined) tick.enqueued.push({ schedule: row.name, jobId: job.id, created: job.created });
    }
    if (rows.length < SCHEDULES_PER_TICK) return tick;
    after = (rows[rows.length - 1] as { name: string }).name;
  }
  // Due ones are marked and drop out of the next tick's read; schedules not
  // due this minute still take their places, so more of those than the bound
  // can hold a due one back: say so.
  tick.errors.push(`more than ${SCHEDULES_PER_TICK * SCHEDULE_PAGES_PER_TICK} enabled schedules are waiting this minute: ` +
    `those after ${JSON.stringify(after)} by name wait for a later tick`);
  return tick;
}

/** Rows retention deleted per class, and settings it could not read (nothing of that class is deleted). */
export interface RetentionTick {
  deleted: Record<RetentionClass, number>;
  /** probe_job_events records older than JOB_EVENTS_KEEP_MS, deleted. */
  events: number;
  errors: string[];
}

/**
 * Deletes at most RETENTION_BATCH finished rows per class that are past their
 * keep time, and the probe_job_events records past theirs.
 */
export function deleteExpiredJobs(batch: JobBatch, nowMs: number, getenv: (name: string) => string): RetentionTick {
  const tick: RetentionTick = { deleted: { done: 0, failed: 0 }, events: 0, errors: [] };
  for (const retentionClass of RETENTION_CLASSES) {
    const setting = keepSetting(getenv, retentionClass);
    if (setting.error !== undefined) tick.errors.push(setting.error);
    const cutoff = retentionCutoff(nowMs, setting.keepMs);
    if (cutoff === null) continue;
    tick.deleted[retentionClass] = batch.execute(deleteExpiredQuery(retentionClass, cutoff, RETENTION_BATCH));
  }
  tick.events = batch.execute(deleteOldEventsStatement(formatPbDate(nowMs - JOB_EVENTS_KEEP_MS), JOB_EVENTS_RETENTION_BATCH));
  return tick;
}
