/**
 * POST /api/fleet/claim-next { workerId, leaseSeconds?, limit?, probeKeyPrefix? }
 * Claims up to `limit` of the oldest claimable jobs in one transaction. The
 * transaction runs on PocketBase's single writer connection, so concurrent
 * callers see each other's claims: no job is handed out twice, and a caller
 * gets nothing only when nothing was claimable when its turn came.
 */
import { jobView } from "../lib/job-row";
import { CLAIM_ORDER, claimableWhere } from "../lib/queries";
import { decideClaim } from "../lib/transitions";
import type { ClaimedJob, ClaimNextResponse } from "../lib/types";
import { validateClaimNextRequest } from "../lib/validate";
import { findJobs, newLeaseToken, readRow, requestBody, writePatch } from "./record";

export function handleClaimNext(c: echo.Context): void {
  const req = validateClaimNextRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });
  const { workerId, leaseSeconds, limit, probeKeyPrefix } = req.value;

  let jobs: ClaimedJob[] = [];
  try {
    $app.dao().runInTransaction((tx) => {
      const now = Date.now();
      for (const rec of findJobs(tx, claimableWhere(now, probeKeyPrefix), CLAIM_ORDER, limit)) {
        const row = readRow(rec);
        const leaseToken = newLeaseToken();
        const decision = decideClaim(row, workerId, leaseSeconds, now, leaseToken);
        if (decision.kind !== "win") continue; // the SQL is a superset; the CAS decides
        writePatch(rec, decision.patch);
        tx.saveRecord(rec);
        jobs.push({ job: jobView(row, decision.patch), leaseToken });
      }
    });
  } catch {
    jobs = []; // rolled back: none of them was claimed
  }
  const answer: ClaimNextResponse = { jobs };
  return c.json(200, answer);
}
