/**
 * What a Worker's stop does to the jobs it holds (see StopMode): "finish"
 * lets them run; "release" aborts their handlers and hands each job back to
 * pending; "abandon" aborts them and walks away, writing nothing.
 */
import type { ReleaseResponse } from "../../lib/types.js";
import { sleep } from "../backoff.js";
import { toError } from "../errors.js";
import type { FleetApi } from "../fleet-client.js";
import { HAND_BACK_FLOOR_SECONDS, HAND_BACK_MARGIN_MS, disarmTimeout, type ActiveJob } from "./active-job.js";
import { WorkerStoppingError, type StopMode } from "./api.js";
import type { WorkerEvents } from "./events.js";

/**
 * Marks the jobs with a "release" or "abandon" stop's mode and aborts their
 * handlers; a buffered one (never run) goes to `unbuffer`, to be wound down
 * at once. A "finish" stop leaves them be.
 */
export function applyStopMode(jobs: Iterable<ActiveJob>, mode: StopMode, unbuffer: (job: ActiveJob) => void): void {
  if (mode === "finish") return;
  for (const job of [...jobs]) {
    // (A job that timed out is being released already: its handler was aborted then.)
    if (job.settled || job.timedOut !== null) continue;
    job.stopMode = mode;
    if (mode === "abandon") disarmTimeout(job);
    job.controller.abort(new WorkerStoppingError(mode));
    // Never run: wound down at once (handed back, or walked away from).
    if (!job.started) unbuffer(job);
  }
}

export interface HandBackOptions {
  client: Pick<FleetApi, "renew" | "release">;
  workerId: string;
  events: WorkerEvents;
}

/**
 * Hands a job back to pending (StopMode "release"): its lease cut to the
 * shortest, then, once that has run out, released `pending` (which the
 * server takes from the holder only once its lease has lapsed).
 */
export async function handBack(job: ActiveJob, { client, workerId, events }: HandBackOptions): Promise<void> {
  try {
    const shortened = await client.renew(job.id, workerId, HAND_BACK_FLOOR_SECONDS, job.leaseToken);
    if (!shortened.renewed) {
      events.report("lease_lost", { jobId: job.id, workerId, reason: "renew_refused" });
      return;
    }
    await sleep(HAND_BACK_FLOOR_SECONDS * 1000 + HAND_BACK_MARGIN_MS);
    for (let attempt = 0; ; attempt++) {
      const answer: ReleaseResponse = await client.release(job.id, workerId, "pending", job.leaseToken);
      if (answer.released) {
        events.report("released", { jobId: job.id, workerId, status: "pending", version: answer.job.version, committed: "released" });
        return;
      }
      // The server's clock may be a little behind ours: wait a little more.
      if (answer.reason === "refused_lease_live" && attempt < 5) {
        await sleep(HAND_BACK_MARGIN_MS);
        continue;
      }
      events.report("lease_lost", { jobId: job.id, workerId, reason: answer.reason });
      return;
    }
  } catch (err) {
    // The lease lapses on its own; the sweeper or a claim picks the job up.
    events.report("error", { op: "handBack", jobId: job.id, error: toError(err) });
  }
}
