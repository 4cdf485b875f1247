/** POST /api/fleet/release { jobId, workerId, status: done|failed|pending|retry, leaseToken?, result?, error? } */
import { json, updateJob, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { releaseAnswer, releasePatch } from "../lib/answers.js";
import { workerIdRefusal } from "../lib/identity.js";
import { decideRelease } from "../lib/transitions.js";
import { validateReleaseRequest } from "../lib/validate.js";

export function handleRelease(req: FleetRequest): Reply {
  const valid = validateReleaseRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const { jobId, workerId, target, leaseToken, result, error } = valid.value;
  const refused = workerIdRefusal(req.caller, workerId);
  if (refused !== null) return json(403, { error: refused });
  const release = { workerId, target, leaseToken, result, error, jitter: Math.random() };
  const outcome = updateJob(jobId, (row, now) => decideRelease(row, release, now), releasePatch);
  return json(200, releaseAnswer(outcome));
}
