/**
 * The server-side sweeper: re-queues held jobs whose lease has passed, in one
 * transaction, with the bookkeeping of a `pending` release; a job orphaned
 * PB_FLEET_MAX_ORPHANS times in a row is failed instead. Runs from cronAdd
 * (PB_FLEET_SWEEP_CRON; "off" disables it) and on demand from POST /api/fleet/sweep.
 */
import { isSweepOff, orphanCap, SWEEP_BATCH, sweepSchedule } from "../lib/config";
import { expiredLeaseWhere } from "../lib/queries";
import { decideSweep } from "../lib/sweep";
import { validateSweepRequest } from "../lib/validate";
import {
  findJobs, forgetJobsCollection, getenv, jobsCollection, readRow, requestBody, transact, writePatch,
} from "./record";

export interface SweepOutcome {
  requeued: number;
  gaveUp: number;
}

export function sweepExpiredLeases(probeKeyPrefix: string): SweepOutcome {
  const cap = orphanCap(getenv);
  const collection = jobsCollection(Date.now());
  try {
    return transact((tx) => {
      const outcome: SweepOutcome = { requeued: 0, gaveUp: 0 };
      const now = Date.now();
      const where = expiredLeaseWhere(now, probeKeyPrefix);
      for (const rec of findJobs(tx, collection, where, ["lease_expires_at ASC"], SWEEP_BATCH)) {
        const decision = decideSweep(readRow(rec), now, cap);
        if (decision.kind === "skip") continue;
        writePatch(rec, decision.patch);
        tx.saveRecord(rec);
        if (decision.kind === "requeue") outcome.requeued++;
        else outcome.gaveUp++;
      }
      return outcome;
    });
  } catch (err) {
    forgetJobsCollection();
    throw err;
  }
}

/** cronAdd's job: log what it did; a failed sweep is logged and retried next tick. */
export function runScheduledSweep(): void {
  if (isSweepOff(getenv)) return;
  try {
    const outcome = sweepExpiredLeases("");
    if (outcome.requeued > 0 || outcome.gaveUp > 0) {
      $app.logger().info("pb-fleet sweep", "requeued", outcome.requeued, "gaveUp", outcome.gaveUp);
    }
  } catch (err) {
    $app.logger().error("pb-fleet sweep failed", "error", String(err));
  }
}

/** POST /api/fleet/sweep { probeKeyPrefix? }: the same sweep now, for operators and tests. */
export function handleSweep(c: echo.Context): void {
  const req = validateSweepRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });
  try {
    return c.json(200, sweepExpiredLeases(req.value.probeKeyPrefix));
  } catch {
    return c.json(200, { requeued: 0, gaveUp: 0 }); // rolled back: nothing changed
  }
}

/** The cron schedule, read once when PocketBase loads the hooks. */
export function scheduleFromEnv(): string {
  return sweepSchedule(getenv);
}
