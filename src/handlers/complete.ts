/**
 * POST /api/fleet/complete { workerId, releases: [{ jobId, leaseToken?, status, result?, error? }] }
 * Releases up to 100 jobs in one transaction: `{ results: [{ jobId, released, reason? }] }` in request order.
 * The same transaction deletes up to twice as many expired finished rows.
 */
import { getenv, json, updateJobsBulk, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { completeByPlan } from "../lib/batch-plans.js";
import { batchWorkerIdRefusal } from "../lib/identity.js";
import { deleteExpiredBatch, retentionAlongsideComplete } from "../lib/maintenance.js";
import { TRANSACTION_FAILED } from "../lib/queue.js";
import type { CompleteResponse } from "../lib/types.js";
import { validateCompleteRequest } from "../lib/validate.js";

export function handleComplete(req: FleetRequest): Reply {
  const valid = validateCompleteRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const refused = batchWorkerIdRefusal(req.caller, valid.value);
  if (refused !== null) return json(403, { error: refused });
  const results = updateJobsBulk("complete", (batch, now) => {
    const released = completeByPlan(batch, valid.value, now, Math.random);
    // Retention keeps pace with the batch path, in this same transaction (maintenance.ts).
    deleteExpiredBatch(batch, now, getenv, retentionAlongsideComplete(released.length));
    return released;
  });
  if (results === null) return json(503, { error: TRANSACTION_FAILED });
  const answer: CompleteResponse = { results };
  return json(200, answer);
}
