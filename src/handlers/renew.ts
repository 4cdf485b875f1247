/** POST /api/fleet/renew { jobId, workerId, leaseSeconds?, leaseToken? } */
import { jobView } from "../lib/job-row";
import type { RenewResponse } from "../lib/types";
import { decideRenew } from "../lib/transitions";
import { validateRenewRequest } from "../lib/validate";
import { findJob, readRow, requestBody, writePatch } from "./record";

export function handleRenew(c: echo.Context): void {
  const req = validateRenewRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });
  const { jobId } = req.value;

  let answer: RenewResponse = { renewed: false };
  try {
    $app.dao().runInTransaction((tx) => {
      const rec = findJob(tx, jobId);
      if (rec === null) return;
      const row = readRow(rec);
      const patch = decideRenew(row, req.value, Date.now());
      if (patch === null) return;
      writePatch(rec, patch);
      tx.saveRecord(rec);
      answer = { renewed: true, job: jobView(row, patch) };
    });
  } catch {
    answer = { renewed: false }; // rolled back: see claim.ts
  }
  return c.json(200, answer);
}
