/**
 * The server's maintenance tick: periodic jobs (probe_schedules) and
 * retention (PB_FLEET_KEEP_DONE, PB_FLEET_KEEP_FAILED), every minute from
 * cronAdd, and on demand from POST /api/fleet/maintenance (operators, tests).
 * Each part runs in its own transaction; a failed one is logged (by the
 * adapter) and retried next tick.
 */
import { getenv, json, logError, logInfo, updateJobs, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { deleteExpiredJobs, enqueueDueSchedules, type RetentionTick, type ScheduleTick } from "../lib/maintenance.js";
import { TRANSACTION_FAILED } from "../lib/queue.js";

/** Every minute: schedules have minute resolution. */
const MAINTENANCE_SCHEDULE = "* * * * *";

export interface MaintenanceTick {
  /** null: the transaction rolled back (nothing enqueued). */
  schedules: ScheduleTick | null;
  /** null: the transaction rolled back (nothing deleted). */
  retention: RetentionTick | null;
}

function tick(): MaintenanceTick {
  const schedules = updateJobs((batch, now) => enqueueDueSchedules(batch, now));
  const retention = updateJobs((batch, now) => deleteExpiredJobs(batch, now, getenv));
  for (const error of (schedules?.errors ?? []).concat(retention?.errors ?? [])) logError("pb-fleet maintenance", error);
  return { schedules, retention };
}

export function maintenanceScheduleAtLoad(): string {
  return MAINTENANCE_SCHEDULE;
}

/** cronAdd's job: log what it did. */
export function runMaintenance(): void {
  const done = tick();
  const enqueued = done.schedules?.enqueued.filter((job) => job.created).length ?? 0;
  const deleted = done.retention === null ? 0 : done.retention.deleted.done + done.retention.deleted.failed;
  if (enqueued > 0 || deleted > 0) logInfo("pb-fleet maintenance", "enqueued", enqueued, "deleted", deleted);
}

/**
 * POST /api/fleet/maintenance: the same tick now. A part whose transaction
 * rolled back (another PocketBase process on the same data held the writer,
 * say) makes it a 503 that still shows what the other part did.
 */
export function handleMaintenance(_req: FleetRequest): Reply {
  const done = tick();
  if (done.schedules === null || done.retention === null) return json(503, Object.assign({ error: TRANSACTION_FAILED }, done));
  return json(200, done);
}
