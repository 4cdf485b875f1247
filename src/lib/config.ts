/**
 * Server-side settings, read from PocketBase's environment. This is the one
 * place that names them; the README's "Configuration" table mirrors it.
 */

export const SWEEP_SCHEDULE_ENV = "PB_FLEET_SWEEP_CRON";
/** Every minute: a dead worker's job waits at most one lease plus a minute. */
export const DEFAULT_SWEEP_SCHEDULE = "* * * * *";

export const ORPHAN_CAP_ENV = "PB_FLEET_MAX_ORPHANS";
/** Consecutive orphaned leases after which the sweeper gives a job up as failed. */
export const DEFAULT_ORPHAN_CAP = 5;

/** Rows one sweep handles in its transaction; the rest wait for the next tick. */
export const SWEEP_BATCH = 500;


export function sweepSchedule(getenv: (name: string) => string): string {
  return getenv(SWEEP_SCHEDULE_ENV).trim() || DEFAULT_SWEEP_SCHEDULE;
}

/** A positive integer, or the default when unset or not a positive integer. */
export function orphanCap(getenv: (name: string) => string): number {
  const n = Number(getenv(ORPHAN_CAP_ENV).trim());
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ORPHAN_CAP;
}
