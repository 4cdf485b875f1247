/**
 * Server-side settings, read from PocketBase's environment. This is the one
 * place that names them; the README's "Configuration" table mirrors it.
 */
import type { SweeperState } from "./types.js";

/** PocketBase's cron expression for the start of every minute. */
const EVERY_MINUTE = "* * * * *";

export const SWEEP_SCHEDULE_ENV = "PB_FLEET_SWEEP_CRON";
/** Every minute: a dead worker's job waits at most one lease plus a minute. */
export const DEFAULT_SWEEP_SCHEDULE = EVERY_MINUTE;
/** PB_FLEET_SWEEP_CRON=off: no server sweeps (client sweepers, or POST /api/fleet/sweep, do it). */
export const SWEEP_OFF = "off";

export const MAINTENANCE_SCHEDULE_ENV = "PB_FLEET_MAINTENANCE_CRON";
/** Every minute: probe_schedules have minute resolution. */
export const MAINTENANCE_SCHEDULE = EVERY_MINUTE;
/**
 * PB_FLEET_MAINTENANCE_CRON=off: no cron ticks; whoever sets it runs POST
 * /api/fleet/maintenance itself (another scheduler, or a test counting what
 * its own requests did). Schedules, retention and flow upkeep wait for it.
 */
export const MAINTENANCE_OFF = "off";

/** Whether the cron runs the maintenance tick: "on", "off", or why the setting is refused. */
export function maintenanceSetting(getenv: (name: string) => string): "on" | "off" | { error: string } {
  const raw = getenv(MAINTENANCE_SCHEDULE_ENV).trim();
  if (raw === "") return "on";
  if (raw === MAINTENANCE_OFF) return "off";
  return { error: `${MAINTENANCE_SCHEDULE_ENV} is ${JSON.stringify(raw)}: leave it unset (every minute) or set it to "off"` };
}

export const ORPHAN_CAP_ENV = "PB_FLEET_MAX_ORPHANS";
/** Consecutive orphaned leases after which the sweeper gives a job up as failed. */
export const DEFAULT_ORPHAN_CAP = 5;

/**
 * The holder a job is left under when the server sweeper gives it up. Not the
 * last worker's id: that worker's late release must not be taken for its own
 * committed release (refused_terminal_same_holder) and let it write a result.
 */
export const SWEEPER_HOLDER = "pb-fleet-sweeper";

/** Rows one sweep handles in its transaction; the rest wait for the next tick. */
export const SWEEP_BATCH = 500;

/** The configured schedule: a cron expression, or SWEEP_OFF. */
export function sweepSchedule(getenv: (name: string) => string): string {
  const raw = getenv(SWEEP_SCHEDULE_ENV).trim();
  return raw === "" ? DEFAULT_SWEEP_SCHEDULE : raw;
}

/**
 * Where the hooks file, while loading, records what became of the sweeper
 * (PocketBase's app store is shared by every pooled runtime), so that
 * /api/fleet/stats can say whether the server sweeps: with --hooksWatch on, a
 * load error is only printed and PocketBase serves on.
 */
export const SWEEPER_STATE_KEY = "pbFleetSweeper";

export function sweeperScheduled(schedule: string): SweeperState {
  return { scheduled: true, schedule };
}

export function sweeperNotScheduled(schedule: string, error?: string): SweeperState {
  return error === undefined ? { scheduled: false, schedule } : { scheduled: false, schedule, error };
}

export function invalidScheduleError(schedule: string, cause: string): string {
  return `${SWEEP_SCHEDULE_ENV}=${JSON.stringify(schedule)} is not a valid 5-field cron expression ` +
    `(or "${SWEEP_OFF}"), so the server sweeper is not running: ${cause}`;
}

/** The state as JSON text: the app store hands Go values between runtimes, and text survives that unchanged. */
export function encodeSweeperState(state: SweeperState): string {
  return JSON.stringify(state);
}

/** The recorded state, or, when the hooks never recorded one, a state that says so. */
export function decodeSweeperState(stored: unknown, configured: string): SweeperState {
  try {
    const state: unknown = typeof stored === "string" ? JSON.parse(stored) : null;
    if (typeof state === "object" && state !== null && typeof (state as SweeperState).scheduled === "boolean") {
      return state as SweeperState;
    }
  } catch {
    // not JSON: fall through
  }
  return sweeperNotScheduled(configured, "the pb-fleet hooks did not register the sweeper: see PocketBase's log");
}

/** A positive integer, or the default when unset or not a positive integer. */
export function orphanCap(getenv: (name: string) => string): number {
  const n = Number(getenv(ORPHAN_CAP_ENV).trim());
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORPHAN_CAP;
}

/**
 * How long finished rows are kept before the server cron deletes them (parsed
 * by retention.ts): `done` and `cancelled` rows under KEEP_DONE_ENV, `failed`
 * rows (kept longer: someone may still want to read why) under KEEP_FAILED_ENV.
 */
export const KEEP_DONE_ENV = "PB_FLEET_KEEP_DONE";
export const DEFAULT_KEEP_DONE = "7d";
export const KEEP_FAILED_ENV = "PB_FLEET_KEEP_FAILED";
export const DEFAULT_KEEP_FAILED = "30d";
/**
 * How long probe_job_events records are kept (default: job-events.ts's
 * JOB_EVENTS_KEEP_MS, how far back the dashboard's job history reaches).
 * Same syntax; `0` keeps them forever.
 */
export const KEEP_EVENTS_ENV = "PB_FLEET_KEEP_EVENTS";
