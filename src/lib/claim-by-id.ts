/**
 * POST /api/fleet/claim's transaction: the row read, decided by decideClaim
 * with flow control's checks (docs/flow-control.md: a claim by id that would win but a
 * limit holds back answers a reason and writes nothing), and written.
 */
import { claimPatch } from "./answers.js";
import { flowGate } from "./flow.js";
import type { JobBatch, JobUpdate } from "./job-row.js";
import { jobByIdWhere } from "./queries.js";
import { decideClaim, type ClaimDecision } from "./transitions.js";

/** `mayTake`: whether the caller may take a job of this queue (a worker identity's queues); else its refusal. */
export function claimById(
  batch: JobBatch,
  req: { jobId: string; workerId: string; leaseSeconds: unknown },
  nowMs: number,
  newLeaseToken: () => string,
  mayTake: (queue: string) => ClaimDecision | null,
): JobUpdate<ClaimDecision> | null {
  const row = batch.find(jobByIdWhere(req.jobId), ["id ASC"], 1)[0];
  if (row === undefined) return null;
  const refused = mayTake(row.queue);
  if (refused !== null) return { row, decision: refused };
  const gate = flowGate(batch, nowMs);
  // The reference's bookkeeping: a steal by id does not count as an orphaning.
  const decision = decideClaim(row, req.workerId, req.leaseSeconds, nowMs, newLeaseToken, undefined, (r) => gate.refusal(r)?.reason ?? null);
  if (decision.kind === "win") {
    gate.claimed(row);
    gate.flush();
  }
  const patch = claimPatch(decision);
  if (patch !== null) batch.write(row, patch);
  return { row, decision };
}
