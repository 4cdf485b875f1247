/** POST /api/fleet/retry { jobId }: a failed or cancelled job back to pending, due now, with fresh attempts. */
import { json, updateJobs, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { retryJob } from "../lib/operator-actions.js";
import { TRANSACTION_FAILED } from "../lib/queue.js";
import { validateJobIdRequest } from "../lib/validate.js";

export function handleRetry(req: FleetRequest): Reply {
  const valid = validateJobIdRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const answer = updateJobs((batch, now) => retryJob(batch, valid.value.jobId, now));
  return answer === null ? json(503, { error: TRANSACTION_FAILED }) : json(200, answer);
}
