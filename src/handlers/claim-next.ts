/**
 * POST /api/fleet/claim-next { workerId, leaseSeconds?, limit?, probeKeyPrefix? }
 * Claims up to `limit` of the oldest claimable jobs in one transaction. The
 * transaction runs on PocketBase's single writer connection, so concurrent
 * callers see each other's claims: no job is handed out twice, and a caller
 * gets nothing only when nothing was claimable when its turn came.
 */
import { jobView, type JobPatch, type JobRow } from "../lib/job-row";
import { CLAIM_ORDER, expiredLeaseWhere, oldestFirst, pendingWhere } from "../lib/queries";
import { decideClaim } from "../lib/transitions";
import type { ClaimNextResponse } from "../lib/types";
import { validateClaimNextRequest } from "../lib/validate";
import {
  findJobs, forgetJobsCollection, jobsCollection, newLeaseToken, readRow, requestBody, transact, writePatch,
} from "./record";

export function handleClaimNext(c: echo.Context): void {
  const req = validateClaimNextRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });
  const { workerId, leaseSeconds, limit, probeKeyPrefix } = req.value;

  let won: { row: JobRow; patch: JobPatch }[];
  try {
    const collection = jobsCollection(Date.now());
    won = transact((tx) => {
      const now = Date.now();
      const claimed: { row: JobRow; patch: JobPatch }[] = [];
      const candidates = findJobs(tx, collection, pendingWhere(probeKeyPrefix), CLAIM_ORDER, limit)
        .concat(findJobs(tx, collection, expiredLeaseWhere(now, probeKeyPrefix), CLAIM_ORDER, limit))
        .map((rec) => ({ rec, id: rec.id, created: rec.getString("created") }));
      for (const { rec } of oldestFirst(candidates, limit)) {
        const row = readRow(rec);
        const decision = decideClaim(row, workerId, leaseSeconds, now, newLeaseToken);
        if (decision.kind !== "win") continue; // the CAS decides, not the query
        writePatch(rec, decision.patch);
        tx.saveRecord(rec);
        claimed.push({ row, patch: decision.patch });
      }
      return claimed;
    });
  } catch {
    forgetJobsCollection();
    won = []; // rolled back: none of them was claimed
  }
  const answer: ClaimNextResponse = {
    jobs: won.map(({ row, patch }) => ({ job: jobView(row, patch), leaseToken: patch.lease_token ?? "" })),
  };
  return c.json(200, answer);
}
