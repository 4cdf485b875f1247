/** POST /api/fleet/cancel { jobId }: a job not yet finished becomes cancelled; its holder's renew and release are refused. */
import { json, updateJobs, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { cancelJob } from "../lib/operator-actions.js";
import { TRANSACTION_FAILED } from "../lib/queue.js";
import { validateJobIdRequest } from "../lib/validate.js";

export function handleCancel(req: FleetRequest): Reply {
  const valid = validateJobIdRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const answer = updateJobs((batch, now) => cancelJob(batch, valid.value.jobId, now));
  return answer === null ? json(503, { error: TRANSACTION_FAILED }) : json(200, answer);
}
