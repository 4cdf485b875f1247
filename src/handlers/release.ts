/** POST /api/fleet/release { jobId, workerId, status: done|failed|pending, leaseToken? } */
import { jobView } from "../lib/job-row";
import type { ReleaseResponse } from "../lib/types";
import { decideRelease } from "../lib/transitions";
import { validateReleaseRequest } from "../lib/validate";
import { findJob, readRow, requestBody, writePatch } from "./record";

export function handleRelease(c: echo.Context): void {
  const req = validateReleaseRequest(requestBody(c));
  if (!req.ok) return c.json(400, { error: req.error });
  const { jobId } = req.value;

  let answer: ReleaseResponse = { released: false, reason: "refused_not_holder" };
  try {
    $app.dao().runInTransaction((tx) => {
      const rec = findJob(tx, jobId);
      if (rec === null) return; // unknown job: the caller holds nothing
      const row = readRow(rec);
      const decision = decideRelease(row, req.value, Date.now());
      if (decision.kind === "refused") {
        answer = { released: false, reason: decision.reason };
        return;
      }
      writePatch(rec, decision.patch);
      tx.saveRecord(rec);
      answer = { released: true, job: jobView(row, decision.patch) };
    });
  } catch {
    // Rolled back (see claim.ts); the conservative refusal is "not the holder".
    answer = { released: false, reason: "refused_not_holder" };
  }
  return c.json(200, answer);
}
