/** POST /api/fleet/claim { jobId, workerId, leaseSeconds? } */
import { jobView } from "../lib/job-row";
import type { ClaimResponse } from "../lib/types";
import { decideClaim } from "../lib/transitions";
import { validateClaimRequest } from "../lib/validate";
import { findJob, newLeaseToken, readRow, requestBody, writePatch } from "./record";

export function handleClaim(c: echo.Context): void {
  const req = validateClaimRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });
  const { jobId, workerId, leaseSeconds } = req.value;

  let answer: ClaimResponse = { claimed: false };
  try {
    $app.dao().runInTransaction((tx) => {
      const rec = findJob(tx, jobId);
      if (rec === null) return;
      const row = readRow(rec);
      const leaseToken = newLeaseToken();
      const decision = decideClaim(row, workerId, leaseSeconds, Date.now(), leaseToken);
      if (decision.kind === "refused") return;
      if (decision.kind === "already_held") {
        answer = { claimed: true, job: jobView(row), alreadyHeld: true, leaseToken: decision.leaseToken };
        return;
      }
      writePatch(rec, decision.patch);
      tx.saveRecord(rec);
      answer = { claimed: true, job: jobView(row, decision.patch), leaseToken };
    });
  } catch {
    // The transaction rolled back (sqlite error, failed save): nothing was
    // claimed, whatever the callback had decided. A refusal, not a 500.
    answer = { claimed: false };
  }
  return c.json(200, answer);
}
