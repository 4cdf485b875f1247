/** POST /api/fleet/claim { jobId, workerId, leaseSeconds? } */
import { jobView, type JobRow } from "../lib/job-row";
import type { ClaimResponse } from "../lib/types";
import { decideClaim, type ClaimDecision } from "../lib/transitions";
import { validateClaimRequest } from "../lib/validate";
import {
  findJob, forgetJobsCollection, jobsCollection, newLeaseToken, readRow, requestBody, transact, writePatch,
} from "./record";

export function handleClaim(c: echo.Context): void {
  const req = validateClaimRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });
  const { jobId, workerId, leaseSeconds } = req.value;

  let outcome: { row: JobRow; decision: ClaimDecision } | null;
  try {
    const collection = jobsCollection(Date.now());
    outcome = transact((tx) => {
      const rec = findJob(tx, collection, jobId);
      if (rec === null) return null;
      const row = readRow(rec);
      const decision = decideClaim(row, workerId, leaseSeconds, Date.now(), newLeaseToken);
      if (decision.kind === "win") {
        writePatch(rec, decision.patch);
        tx.saveRecord(rec);
      }
      return { row, decision };
    });
  } catch {
    // Rolled back (sqlite error, failed save, schema change): nothing was
    // claimed, whatever the callback had decided. A refusal, not a 500.
    forgetJobsCollection();
    outcome = null;
  }
  // Built after the commit, so the writer is not held for it.
  return c.json(200, claimAnswer(outcome));
}

function claimAnswer(outcome: { row: JobRow; decision: ClaimDecision } | null): ClaimResponse {
  if (outcome === null || outcome.decision.kind === "refused") return { claimed: false };
  const { row, decision } = outcome;
  if (decision.kind === "already_held") {
    return { claimed: true, job: jobView(row), alreadyHeld: true, leaseToken: decision.leaseToken };
  }
  return { claimed: true, job: jobView(row, decision.patch), leaseToken: decision.patch.lease_token ?? "" };
}
