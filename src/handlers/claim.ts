/** POST /api/fleet/claim { jobId, workerId, leaseSeconds? } */
import { json, newLeaseToken, updateJobs, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { claimAnswer } from "../lib/answers.js";
import { claimById } from "../lib/claim-by-id.js";
import { mayTakeQueue, QUEUE_NOT_ALLOWED, workerIdRefusal } from "../lib/identity.js";
import { validateClaimRequest } from "../lib/validate.js";

export function handleClaim(req: FleetRequest): Reply {
  const valid = validateClaimRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const refused = workerIdRefusal(req.caller, valid.value.workerId);
  if (refused !== null) return json(403, { error: refused });
  const outcome = updateJobs((batch, now) =>
    claimById(batch, valid.value, now, newLeaseToken, (queue) => (mayTakeQueue(req.caller, queue) ? null : QUEUE_NOT_ALLOWED)));
  return json(200, claimAnswer(outcome));
}
