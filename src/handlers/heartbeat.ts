/**
 * POST /api/fleet/heartbeat { workerId, leaseSeconds?, leases: [{ jobId, leaseToken?, progress? }] }
 * Renews up to 100 leases in one transaction: `{ results: [{ jobId, renewed }] }` in request order.
 */
import { json, updateJobsBulk, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { heartbeatByPlan } from "../lib/batch-plans.js";
import { batchWorkerIdRefusal } from "../lib/identity.js";
import { TRANSACTION_FAILED } from "../lib/queue.js";
import type { HeartbeatResponse } from "../lib/types.js";
import { validateHeartbeatRequest } from "../lib/validate.js";

export function handleHeartbeat(req: FleetRequest): Reply {
  const valid = validateHeartbeatRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const refused = batchWorkerIdRefusal(req.caller, valid.value);
  if (refused !== null) return json(403, { error: refused });
  const results = updateJobsBulk("heartbeat", (batch, now) => heartbeatByPlan(batch, valid.value, now));
  if (results === null) return json(503, { error: TRANSACTION_FAILED });
  const answer: HeartbeatResponse = { results };
  return json(200, answer);
}
