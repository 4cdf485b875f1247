/**
 * The server's maintenance tick: periodic jobs (probe_schedules), the job
 * counts' triggers, and retention (PB_FLEET_KEEP_DONE, PB_FLEET_KEEP_FAILED,
 * and probe_job_events), every minute from cronAdd (PB_FLEET_MAINTENANCE_CRON=off
 * stops that), and on demand from POST
 * /api/fleet/maintenance (operators, tests). Each part runs in transactions of
 * its own (retention in many small ones); a failed one is logged (by the
 * adapter) and retried next tick.
 */
import { getenv, json, logError, logInfo, updateJobs, updateJobsBulk, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import {
  deleteExpiredBatch, drainFlowUpkeep, drainRetention, ensureJobCounts, ensureLeaseIndex, enqueueDueSchedules, flowUpkeepBatch,
  type FlowUpkeep, type RetentionDrain, type ScheduleTick,
} from "../lib/maintenance.js";
import { MAINTENANCE_SCHEDULE, maintenanceSetting } from "../lib/config.js";
import { TRANSACTION_FAILED } from "../lib/queue.js";

export interface MaintenanceTick {
  /** true: the counting triggers were missing and have been rebuilt; null: that transaction rolled back. */
  countsRepaired: boolean | null;
  /** true: the expired-lease index was missing and has been made again; null: that transaction rolled back. */
  leaseIndexRepaired: boolean | null;
  /** null: the transaction rolled back (nothing enqueued). */
  schedules: ScheduleTick | null;
  /** Every batch's deletes; `rolledBack` when a batch's transaction rolled back (the next tick goes on). */
  retention: RetentionDrain;
  /** Flow control's upkeep over all its batches; null: a batch rolled back (the next tick goes on). */
  flow: FlowUpkeep | null;
}

function flowUpkeep(): FlowUpkeep | null {
  return drainFlowUpkeep(() => updateJobsBulk("maintenance", (batch, now) => flowUpkeepBatch(batch, now)));
}

function tick(): MaintenanceTick {
  const countsRepaired = updateJobs((batch, now) => ensureJobCounts(batch, now));
  if (countsRepaired === true) logError("pb-fleet maintenance", "the job counts' triggers were missing: rebuilt them and recounted");
  const leaseIndexRepaired = updateJobs((batch) => ensureLeaseIndex(batch));
  if (leaseIndexRepaired === true) logError("pb-fleet maintenance", "the expired-lease index was missing: made it again");
  const schedules = updateJobs((batch, now) => enqueueDueSchedules(batch, now));
  const retention = drainRetention(() => updateJobs((batch, now) => deleteExpiredBatch(batch, now, getenv)), Date.now);
  const flow = flowUpkeep();
  for (const error of (schedules?.errors ?? []).concat(retention.errors)) logError("pb-fleet maintenance", error);
  return { countsRepaired, leaseIndexRepaired, schedules, retention, flow };
}

/**
 * Read once while PocketBase loads the hooks. "off" registers the schedule and
 * every tick does nothing (as the sweeper's "off"); any other value is thrown,
 * which stops PocketBase at start with --hooksWatch=false.
 */
export function maintenanceScheduleAtLoad(): string {
  const setting = maintenanceSetting(getenv);
  if (typeof setting === "object") {
    logError("pb-fleet-maintenance is not scheduled", setting.error);
    throw new Error(`pb-fleet-maintenance: ${setting.error}`);
  }
  return MAINTENANCE_SCHEDULE;
}

/** cronAdd's job: log what it did. */
export function runMaintenance(): void {
  if (maintenanceSetting(getenv) !== "on") return;
  const done = tick();
  const enqueued = done.schedules?.enqueued.filter((job) => job.created).length ?? 0;
  const { deleted, events, batches, drained } = done.retention;
  if (enqueued > 0 || deleted.done + deleted.failed + events > 0) {
    logInfo("pb-fleet maintenance", "enqueued", enqueued, "deleted", deleted.done + deleted.failed, "events", events,
      "batches", batches, "drained", drained);
  }
  if (done.flow !== null && done.flow.notStarted > 0) logInfo("pb-fleet maintenance", "not started by start_by", done.flow.notStarted);
}

/**
 * POST /api/fleet/maintenance: the same tick now. A part whose transaction
 * rolled back (another PocketBase process on the same data held the writer,
 * say) makes it a 503 that still shows what the other parts did.
 */
export function handleMaintenance(_req: FleetRequest): Reply {
  const done = tick();
  if (done.countsRepaired === null || done.leaseIndexRepaired === null || done.schedules === null || done.retention.rolledBack || done.flow === null) {
    return json(503, Object.assign({ error: TRANSACTION_FAILED }, done));
  }
  return json(200, done);
}
