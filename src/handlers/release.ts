/** POST /api/fleet/release { jobId, workerId, status: done|failed|pending, leaseToken? } */
import { jobView, type JobRow } from "../lib/job-row";
import type { ReleaseResponse } from "../lib/types";
import { decideRelease, type ReleaseDecision } from "../lib/transitions";
import { validateReleaseRequest } from "../lib/validate";
import {
  findJob, forgetJobsCollection, jobsCollection, readRow, requestBody, transact, writePatch,
} from "./record";

export function handleRelease(c: echo.Context): void {
  const req = validateReleaseRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });

  let outcome: { row: JobRow; decision: ReleaseDecision } | null;
  try {
    const collection = jobsCollection(Date.now());
    outcome = transact((tx) => {
      const rec = findJob(tx, collection, req.value.jobId);
      if (rec === null) return null;
      const row = readRow(rec);
      const decision = decideRelease(row, req.value, Date.now());
      if (decision.kind === "release") {
        writePatch(rec, decision.patch);
        tx.saveRecord(rec);
      }
      return { row, decision };
    });
  } catch {
    forgetJobsCollection(); // rolled back: see claim.ts
    outcome = null;
  }
  // An unknown job, or a rolled-back transaction: the caller holds nothing.
  let answer: ReleaseResponse = { released: false, reason: "refused_not_holder" };
  if (outcome !== null) {
    const { row, decision } = outcome;
    answer = decision.kind === "refused"
      ? { released: false, reason: decision.reason }
      : { released: true, job: jobView(row, decision.patch) };
  }
  return c.json(200, answer);
}
