/** POST /api/fleet/renew { jobId, workerId, leaseSeconds?, leaseToken?, progress? } */
import { json, updateJob, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { renewAnswer, renewPatch } from "../lib/answers.js";
import { workerIdRefusal } from "../lib/identity.js";
import { decideRenew } from "../lib/transitions.js";
import { validateRenewRequest } from "../lib/validate.js";

export function handleRenew(req: FleetRequest): Reply {
  const valid = validateRenewRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const refused = workerIdRefusal(req.caller, valid.value.workerId);
  if (refused !== null) return json(403, { error: refused });
  const outcome = updateJob(valid.value.jobId, (row, now) => decideRenew(row, valid.value, now), renewPatch);
  return json(200, renewAnswer(outcome));
}
