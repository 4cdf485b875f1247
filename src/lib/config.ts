/**
 * Server-side settings, read from PocketBase's environment. This is the one
 * place that names them; the README's "Configuration" table mirrors it.
 */

export const SWEEP_SCHEDULE_ENV = "PB_FLEET_SWEEP_CRON";
/** Every minute: a dead worker's job waits at most one lease plus a minute. */
export const DEFAULT_SWEEP_SCHEDULE = "* * * * *";
/** PB_FLEET_SWEEP_CRON=off: no server sweeps (client sweepers, or POST /api/fleet/sweep, do it). */
export const SWEEP_OFF = "off";

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

/** The cron expression to register; "off" registers the default one and isSweepOff makes each tick a no-op. */
export function sweepSchedule(getenv: (name: string) => string): string {
  const raw = getenv(SWEEP_SCHEDULE_ENV).trim();
  return raw === "" || raw === SWEEP_OFF ? DEFAULT_SWEEP_SCHEDULE : raw;
}

export function isSweepOff(getenv: (name: string) => string): boolean {
  return getenv(SWEEP_SCHEDULE_ENV).trim() === SWEEP_OFF;
}

/** A positive integer, or the default when unset or not a positive integer. */
export function orphanCap(getenv: (name: string) => string): number {
  const n = Number(getenv(ORPHAN_CAP_ENV).trim());
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORPHAN_CAP;
}
