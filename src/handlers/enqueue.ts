/**
 * POST /api/fleet/enqueue { jobs: [{ probeKey, payload?, runAt?, delaySeconds?, priority?, maxAttempts?, uniqueKey? }] }
 * All or nothing: a bad item is a 400 before anything is written, and the
 * items are written in one transaction.
 */
import { json, updateJobs, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { enqueueJobs, uniqueKeyAcrossQueues } from "../lib/enqueue.js";
import { enqueueRefusal, isRestricted, mayTakeQueue } from "../lib/identity.js";
import { TRANSACTION_FAILED } from "../lib/queue.js";
import type { EnqueueResponse } from "../lib/types.js";
import { validateEnqueueRequest } from "../lib/validate.js";

export function handleEnqueue(req: FleetRequest): Reply {
  const valid = validateEnqueueRequest(req.body(), Date.now());
  if (!valid.ok) return json(400, { error: valid.error });
  const caller = req.caller;
  const refused = enqueueRefusal(caller, valid.value);
  if (refused !== null) return json(403, { error: refused });
  const outcome = updateJobs((batch) => {
    const hidden = isRestricted(caller) ? uniqueKeyAcrossQueues(batch, valid.value, (queue) => mayTakeQueue(caller, queue)) : null;
    return hidden !== null ? { refused: hidden } : { jobs: enqueueJobs(batch, valid.value) };
  });
  if (outcome === null) return json(503, { error: TRANSACTION_FAILED });
  if ("refused" in outcome) return json(403, { error: outcome.refused });
  const answer: EnqueueResponse = { jobs: outcome.jobs };
  return json(200, answer);
}
