/** POST /api/fleet/release { jobId, workerId, status: done|failed|pending|retry, leaseToken?, result?, error?, rateLimitedFor? } */
import { json, updateJobs, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { releaseAnswer } from "../lib/answers.js";
import { workerIdRefusal } from "../lib/identity.js";
import { releaseById } from "../lib/release-by-id.js";
import { validateReleaseRequest } from "../lib/validate.js";

export function handleRelease(req: FleetRequest): Reply {
  const valid = validateReleaseRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const { jobId, workerId, target, leaseToken, result, error, rateLimitedFor } = valid.value;
  const refused = workerIdRefusal(req.caller, workerId);
  if (refused !== null) return json(403, { error: refused });
  const release = { workerId, target, leaseToken, result, error, jitter: Math.random(), rateLimitedFor };
  const outcome = updateJobs((batch, now) => releaseById(batch, jobId, release, now));
  return json(200, releaseAnswer(outcome));
}
