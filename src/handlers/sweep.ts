/**
 * The server-side sweeper: re-queues held jobs whose lease has passed, in one
 * transaction, with the bookkeeping of a `pending` release; a job orphaned
 * PB_FLEET_MAX_ORPHANS times in a row is failed instead. Runs from cronAdd
 * (PB_FLEET_SWEEP_CRON; "off" disables it) and on demand from POST /api/fleet/sweep.
 */
import {
  getenv, json, logError, logInfo, storeSet, updateJobsBulk, type FleetRequest, type Reply,
} from "@pb-fleet/adapter";
import {
  DEFAULT_SWEEP_SCHEDULE, encodeSweeperState, invalidScheduleError, orphanCap, SWEEP_BATCH, SWEEP_OFF,
  SWEEPER_STATE_KEY, sweeperNotScheduled, sweeperScheduled, sweepSchedule,
} from "../lib/config.js";
import { cronScheduleError } from "../lib/cron.js";
import { sweepExpired } from "../lib/sweep.js";
import type { SweepResponse } from "../lib/types.js";
import { validateSweepRequest } from "../lib/validate.js";

/** One sweep; null when its transaction rolled back (nothing changed). */
function sweep(probeKeyPrefix: string): SweepResponse | null {
  const cap = orphanCap(getenv);
  return updateJobsBulk("sweep", (batch, now) => sweepExpired(batch, now, cap, probeKeyPrefix, SWEEP_BATCH));
}

/** cronAdd's job: log what it did; a failed sweep is logged (by the adapter) and retried next tick. */
export function runScheduledSweep(): void {
  if (sweepSchedule(getenv) === SWEEP_OFF) return;
  const outcome = sweep("");
  if (outcome !== null && (outcome.requeued > 0 || outcome.gaveUp > 0 || outcome.timedOut > 0)) {
    logInfo("pb-fleet sweep", "requeued", outcome.requeued, "gaveUp", outcome.gaveUp, "timedOut", outcome.timedOut);
  }
}

/** POST /api/fleet/sweep { probeKeyPrefix? }: the same sweep now, for operators, client sweepers and tests. */
export function handleSweep(req: FleetRequest): Reply {
  const valid = validateSweepRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const empty: SweepResponse = { requeued: 0, gaveUp: 0, timedOut: 0, jobs: [] };
  return json(200, sweep(valid.value.probeKeyPrefix) ?? empty);
}

/**
 * The cron schedule, read once when PocketBase loads the hooks, and recorded
 * (with whether the sweeper runs) for /api/fleet/stats. "off" registers the
 * default schedule and every tick does nothing. An invalid expression is
 * recorded, logged and thrown: with --hooksWatch=false PocketBase stops at
 * start; with it on, PocketBase only prints the error and serves on, and the
 * stats say the sweeper is not running.
 */
export function sweeperScheduleAtLoad(): string {
  const configured = sweepSchedule(getenv);
  if (configured === SWEEP_OFF) {
    storeSet(SWEEPER_STATE_KEY, encodeSweeperState(sweeperNotScheduled(SWEEP_OFF)));
    return DEFAULT_SWEEP_SCHEDULE;
  }
  const invalid = cronScheduleError(configured);
  if (invalid !== null) {
    const error = invalidScheduleError(configured, invalid);
    storeSet(SWEEPER_STATE_KEY, encodeSweeperState(sweeperNotScheduled(configured, error)));
    logError("pb-fleet-sweeper is not scheduled", error);
    throw new Error(`pb-fleet-sweeper: ${error}`);
  }
  storeSet(SWEEPER_STATE_KEY, encodeSweeperState(sweeperScheduled(configured)));
  return configured;
}
