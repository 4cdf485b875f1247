/**
 * The server's minute tick besides the sweep: periodic jobs from
 * probe_schedules, retention of finished rows and old probe_job_events, and a
 * check that the job counts' triggers are in place. Schedules are bounded per
 * tick (SCHEDULES_PER_TICK x SCHEDULE_PAGES_PER_TICK); retention drains: small
 * batches, each its own transaction, repeated until nothing expired is left or
 * RETENTION_BUDGET_MS is spent.
 */
import {
  CLAIMS_RETENTION_BATCH, deleteExpiredClaimsStatement, deletePassedParksStatement, PARKS_RETENTION_BATCH, START_BY_BATCH,
  START_BY_ORDER, startByPassed, startByPassedWhere,
} from "./flow.js";
import { notStartedPatch } from "./transitions.js";
import { deleteOldEventsStatement, JOB_EVENTS_RETENTION_BATCH } from "./job-events.js";
import { enqueueJobs } from "./enqueue.js";
import { parseJsonField, type JobBatch } from "./job-row.js";
import { JOB_COUNTS_READY_QUERY, JOB_COUNTS_READY_SHAPE, JOB_COUNTS_REPAIR, pruneCompletionsStatement } from "./job-counts.js";
import { UNREADABLE_LEASE_INDEX_PRESENT, UNREADABLE_LEASE_INDEX_SETUP } from "./queries.js";
import {
  deleteExpiredQuery, eventsKeep, keepSetting, RETENTION_BATCH, RETENTION_BUDGET_MS, RETENTION_CLASSES, retentionCutoff, type RetentionClass,
} from "./retention.js";
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
  /** probe_job_events records older than their keep (PB_FLEET_KEEP_EVENTS), deleted. */
  events: number;
  errors: string[];
}

/** How many rows per class, and events, one call of deleteExpiredBatch deletes at most. */
export interface RetentionLimits {
  rows: number;
  events: number;
}
/** A maintenance tick's transaction. */
export const TICK_BATCH: RetentionLimits = { rows: RETENTION_BATCH, events: JOB_EVENTS_RETENTION_BATCH };
/**
 * What a `complete` transaction deletes besides its releases, per release it
 * carries (RETENTION_ALONGSIDE_COMPLETE): twice as many expired rows per class
 * as it finishes, and a few events (each batch transaction writes one). So
 * at any rate the batch path sustains, the rows it finishes are deleted at
 * least as fast once expired, whoever wins the writer between ticks; the
 * tick's drain takes the rest (releases by id, cancels, backlogs).
 */
export function retentionAlongsideComplete(releases: number): RetentionLimits {
  return { rows: 2 * releases, events: 4 };
}

/**
 * One transaction's share of retention: at most `limits.rows` finished rows
 * per class that are past their keep time, and at most `limits.events`
 * probe_job_events records past theirs.
 */
export function deleteExpiredBatch(
  batch: JobBatch, nowMs: number, getenv: (name: string) => string, limits: RetentionLimits = TICK_BATCH,
): RetentionTick {
  const tick: RetentionTick = { deleted: { done: 0, failed: 0 }, events: 0, errors: [] };
  for (const retentionClass of RETENTION_CLASSES) {
    const setting = keepSetting(getenv, retentionClass);
    if (setting.error !== undefined) tick.errors.push(setting.error);
    const cutoff = retentionCutoff(nowMs, setting.keepMs);
    if (cutoff === null) continue;
    tick.deleted[retentionClass] = batch.execute(deleteExpiredQuery(retentionClass, cutoff, limits.rows));
  }
  const events = eventsKeep(getenv);
  if (events.error !== undefined) tick.errors.push(events.error);
  const eventsCutoff = retentionCutoff(nowMs, events.keepMs);
  if (eventsCutoff !== null) tick.events = batch.execute(deleteOldEventsStatement(eventsCutoff, limits.events));
  return tick;
}

/** What a tick's retention did in all its batches. */
export interface RetentionDrain extends RetentionTick {
  /** Transactions run (each one deleteExpiredBatch). */
  batches: number;
  /** true: the last batch found less than a full batch of anything, so nothing expired is left. */
  drained: boolean;
  /** true: a batch's transaction rolled back (the drain stopped there; the next tick goes on). */
  rolledBack: boolean;
}

/** Whether a batch deleted a full batch of something, so more may be waiting. */
function batchWasFull(tick: RetentionTick): boolean {
  return tick.deleted.done >= RETENTION_BATCH || tick.deleted.failed >= RETENTION_BATCH ||
    tick.events >= JOB_EVENTS_RETENTION_BATCH;
}

/**
 * Retention that keeps up with any write rate the server sustains: batches
 * (`runBatch`, one transaction each, so claims get the writer between them)
 * until one comes back short, or `budgetMs` has passed since the first began.
 */
export function drainRetention(
  runBatch: () => RetentionTick | null,
  clock: () => number,
  budgetMs: number = RETENTION_BUDGET_MS,
): RetentionDrain {
  const drain: RetentionDrain = { deleted: { done: 0, failed: 0 }, events: 0, errors: [], batches: 0, drained: false, rolledBack: false };
  const started = clock();
  do {
    const tick = runBatch();
    if (tick === null) {
      drain.rolledBack = true;
      return drain;
    }
    if (drain.batches === 0) drain.errors = tick.errors; // the same settings every batch: said once
    drain.batches++;
    drain.deleted.done += tick.deleted.done;
    drain.deleted.failed += tick.deleted.failed;
    drain.events += tick.events;
    if (!batchWasFull(tick)) {
      drain.drained = true;
      return drain;
    }
  } while (clock() - started < budgetMs);
  return drain;
}

/**
 * Puts the job counts right when their triggers or tables are missing (a
 * database restored from before the migration, a hand-edited schema): drops
 * what is left, creates them again and recounts, in the caller's one
 * transaction, so the counts are exact from its commit on; and deletes the
 * completion seconds no window reaches any more. Answers whether it had to
 * repair.
 */
export function ensureJobCounts(batch: JobBatch, nowMs: number): boolean {
  const found = batch.queryOne(JOB_COUNTS_READY_QUERY, JOB_COUNTS_READY_SHAPE);
  const repair = found === null || found.ready !== 1;
  if (repair) for (const statement of JOB_COUNTS_REPAIR) batch.execute({ sql: statement, params: {} });
  batch.execute(pruneCompletionsStatement(nowMs));
  return repair;
}

/**
 * Makes the expired-lease index (queries.ts UNREADABLE_LEASE_INDEX) again if
 * it is missing: without it the expired leases are still found, by reading
 * every held row. Answers whether it had to.
 */
export function ensureLeaseIndex(batch: JobBatch): boolean {
  if (batch.queryOne(UNREADABLE_LEASE_INDEX_PRESENT, { n: 0 })?.n === 1) return false;
  batch.execute({ sql: UNREADABLE_LEASE_INDEX_SETUP, params: {} });
  return true;
}

/** What flow control's upkeep did: jobs failed for their start_by, rate-window claims and group rows deleted. */
export interface FlowUpkeep {
  notStarted: number;
  claims: number;
  parks: number;
}

/**
 * One batch of flow control's upkeep (docs/flow-control.md): never-started jobs past
 * their start_by failed, the rate window's log trimmed to the windows still
 * open, and group rows with no setting in force deleted. Each part bounded
 * per batch; drainFlowUpkeep repeats while a part was full.
 */
export function flowUpkeepBatch(batch: JobBatch, nowMs: number): FlowUpkeep {
  let notStarted = 0;
  for (const row of batch.find(startByPassedWhere(nowMs), START_BY_ORDER, START_BY_BATCH)) {
    // Re-checked on the row: the query proposes, the decision decides.
    if (!startByPassed(row, nowMs)) continue;
    batch.write(row, notStartedPatch(row, nowMs));
    notStarted++;
  }
  return {
    notStarted,
    claims: batch.execute(deleteExpiredClaimsStatement(nowMs, CLAIMS_RETENTION_BATCH)),
    parks: batch.execute(deletePassedParksStatement(nowMs, PARKS_RETENTION_BATCH)),
  };
}

export function flowUpkeepWasFull(upkeep: FlowUpkeep): boolean {
  return upkeep.notStarted >= START_BY_BATCH || upkeep.claims >= CLAIMS_RETENTION_BATCH || upkeep.parks >= PARKS_RETENTION_BATCH;
}

/** Batches of flow upkeep one tick runs at most (each its own transaction). */
export const FLOW_UPKEEP_BATCHES = 50;

/**
 * A tick's flow upkeep: batches (each `runBatch`, its own transaction)
 * while one was full, at most FLOW_UPKEEP_BATCHES; their sum, or null when
 * a batch rolled back (the next tick goes on).
 */
export function drainFlowUpkeep(runBatch: () => FlowUpkeep | null): FlowUpkeep | null {
  const total: FlowUpkeep = { notStarted: 0, claims: 0, parks: 0 };
  for (let i = 0; i < FLOW_UPKEEP_BATCHES; i++) {
    const done = runBatch();
    if (done === null) return null;
    total.notStarted += done.notStarted;
    total.claims += done.claims;
    total.parks += done.parks;
    if (!flowUpkeepWasFull(done)) break;
  }
  return total;
}
