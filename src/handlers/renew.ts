/** POST /api/fleet/renew { jobId, workerId, leaseSeconds?, leaseToken? } */
import { jobView, type JobPatch, type JobRow } from "../lib/job-row";
import type { RenewResponse } from "../lib/types";
import { decideRenew } from "../lib/transitions";
import { validateRenewRequest } from "../lib/validate";
import {
  findJob, forgetJobsCollection, jobsCollection, readRow, requestBody, transact, writePatch,
} from "./record";

export function handleRenew(c: echo.Context): void {
  const req = validateRenewRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });

  let renewed: { row: JobRow; patch: JobPatch } | null;
  try {
    const collection = jobsCollection(Date.now());
    renewed = transact((tx) => {
      const rec = findJob(tx, collection, req.value.jobId);
      if (rec === null) return null;
      const row = readRow(rec);
      const patch = decideRenew(row, req.value, Date.now());
      if (patch === null) return null;
      writePatch(rec, patch);
      tx.saveRecord(rec);
      return { row, patch };
    });
  } catch {
    forgetJobsCollection(); // rolled back: see claim.ts
    renewed = null;
  }
  const answer: RenewResponse = renewed === null
    ? { renewed: false }
    : { renewed: true, job: jobView(renewed.row, renewed.patch) };
  return c.json(200, answer);
}
