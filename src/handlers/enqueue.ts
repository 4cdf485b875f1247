/**
 * POST /api/fleet/enqueue { jobs: [{ probeKey, payload?, runAt?, delaySeconds?, priority?, maxAttempts?, uniqueKey? }] }
 * All or nothing: a bad item is a 400 before anything is written, and the
 * items are written in one transaction.
 */
import { json, updateJobs, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { enqueueJobs } from "../lib/enqueue.js";
import { enqueueRefusal } from "../lib/identity.js";
import { TRANSACTION_FAILED } from "../lib/queue.js";
import type { EnqueueResponse } from "../lib/types.js";
import { validateEnqueueRequest } from "../lib/validate.js";

export function handleEnqueue(req: FleetRequest): Reply {
  const valid = validateEnqueueRequest(req.body(), Date.now());
  if (!valid.ok) return json(400, { error: valid.error });
  const refused = enqueueRefusal(req.caller, valid.value.map((item) => item.queue));
  if (refused !== null) return json(403, { error: refused });
  const jobs = updateJobs((batch) => enqueueJobs(batch, valid.value));
  if (jobs === null) return json(503, { error: TRANSACTION_FAILED });
  const answer: EnqueueResponse = { jobs };
  return json(200, answer);
}
