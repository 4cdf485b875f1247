/** POST /api/fleet/claim { jobId, workerId, leaseSeconds? } */
import { json, newLeaseToken, updateJob, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { claimAnswer, claimPatch } from "../lib/answers.js";
import { mayTakeQueue, QUEUE_NOT_ALLOWED, workerIdRefusal } from "../lib/identity.js";
import { decideClaim } from "../lib/transitions.js";
import { validateClaimRequest } from "../lib/validate.js";

export function handleClaim(req: FleetRequest): Reply {
  const valid = validateClaimRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const { jobId, workerId, leaseSeconds } = valid.value;
  const refused = workerIdRefusal(req.caller, workerId);
  if (refused !== null) return json(403, { error: refused });
  // The reference's bookkeeping: a steal by id does not count as an orphaning.
  const outcome = updateJob(jobId, (row, now) =>
    mayTakeQueue(req.caller, row.queue) ? decideClaim(row, workerId, leaseSeconds, now, newLeaseToken) : QUEUE_NOT_ALLOWED, claimPatch);
  return json(200, claimAnswer(outcome));
}
