/**
 * POST /api/fleet/claim-next { workerId, leaseSeconds?, limit?, probeKeyPrefix? }
 * Claims up to `limit` claimable jobs, in claim order, in one transaction. The
 * transaction runs on PocketBase's single writer connection, so concurrent
 * callers see each other's claims: no job is handed out twice, and a caller
 * gets nothing only when nothing was claimable when its turn came.
 */
import { getenv, json, newLeaseToken, updateJobsBulk, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { answerClaims, claimNextJobs } from "../lib/claim-plan.js";
import { orphanCap } from "../lib/config.js";
import { claimQueues, workerIdRefusal } from "../lib/identity.js";
import type { ClaimNextResponse } from "../lib/types.js";
import { validateClaimNextRequest } from "../lib/validate.js";

export function handleClaimNext(req: FleetRequest): Reply {
  const valid = validateClaimNextRequest(req.body());
  if (!valid.ok) return json(400, { error: valid.error });
  const refused = workerIdRefusal(req.caller, valid.value.workerId);
  if (refused !== null) return json(403, { error: refused });
  const scope = claimQueues(req.caller, valid.value.queues);
  if ("refusal" in scope) return json(403, { error: scope.refusal });
  const claim = { ...valid.value, queues: scope.queues };
  const cap = orphanCap(getenv);
  const taken = updateJobsBulk("claim-next", (batch, now) => claimNextJobs(batch, claim, now, cap, newLeaseToken));
  // null: rolled back, so none of them was claimed.
  const answer: ClaimNextResponse = { jobs: taken === null ? [] : answerClaims(taken) };
  return json(200, answer);
}
