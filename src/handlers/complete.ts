/**
 * POST /api/fleet/complete { workerId, releases: [{ jobId, leaseToken?, status, result?, error? }], claimNext? }
 * Releases up to 100 jobs in one transaction: `{ results: [{ jobId, released, reason? }] }` in request order.
 * The same transaction deletes up to twice as many expired finished rows, and
 * with `claimNext` (claim-next's fields but workerId) then claims as
 * claim-next would, answered as `jobs` beside the results.
 */
import { getenv, json, newLeaseToken, updateJobsBulk, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { completeByPlan } from "../lib/batch-plans.js";
import { answerClaims, claimNextJobs, type ClaimsTaken } from "../lib/claim-plan.js";
import { orphanCap } from "../lib/config.js";
import { batchWorkerIdRefusal, claimQueues } from "../lib/identity.js";
import { deleteExpiredBatch, retentionAlongsideComplete } from "../lib/maintenance.js";
import { TRANSACTION_FAILED } from "../lib/queue.js";
import type { CompleteResponse } from "../lib/types.js";
import { validateCompleteClaimNext, validateCompleteRequest, type ClaimNextRequestFields } from "../lib/validate.js";

export function handleComplete(req: FleetRequest): Reply {
  const body = req.body();
  const valid = validateCompleteRequest(body);
  if (!valid.ok) return json(400, { error: valid.error });
  const next = validateCompleteClaimNext(body);
  if (!next.ok) return json(400, { error: next.error });
  const refused = batchWorkerIdRefusal(req.caller, valid.value);
  if (refused !== null) return json(403, { error: refused });
  let claim: ClaimNextRequestFields | null = null;
  if (next.value !== null) {
    const scope = claimQueues(req.caller, next.value.queues);
    if ("refusal" in scope) return json(403, { error: scope.refusal });
    claim = { ...next.value, queues: scope.queues };
  }
  const cap = claim === null ? 0 : orphanCap(getenv);
  const done = updateJobsBulk("complete", (batch, now) => {
    const released = completeByPlan(batch, valid.value, now, Math.random);
    // Retention keeps pace with the batch path, in this same transaction (maintenance.ts).
    deleteExpiredBatch(batch, now, getenv, retentionAlongsideComplete(released.length));
    // After the releases: the jobs and the flow limits they held are free for this claim.
    const taken: ClaimsTaken | null = claim === null ? null : claimNextJobs(batch, claim, now, cap, newLeaseToken);
    return { released, taken };
  });
  if (done === null) return json(503, { error: TRANSACTION_FAILED });
  const answer: CompleteResponse = done.taken === null ? { results: done.released } : { results: done.released, jobs: answerClaims(done.taken) };
  return json(200, answer);
}
