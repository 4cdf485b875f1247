/**
 * POST /api/fleet/release's transaction: the row read, decided by
 * decideRelease and written; a rate-limited retry parks the job's group (or
 * queue) in the same transaction (docs/flow-control.md "Release targets").
 */
import { releasePatch } from "./answers.js";
import { parkFor } from "./flow.js";
import type { JobBatch, JobUpdate } from "./job-row.js";
import { jobByIdWhere } from "./queries.js";
import { decideRelease, type ReleaseDecision } from "./transitions.js";

export function releaseById(
  batch: JobBatch,
  jobId: string,
  release: Parameters<typeof decideRelease>[1],
  nowMs: number,
): JobUpdate<ReleaseDecision> | null {
  const row = batch.find(jobByIdWhere(jobId), ["id ASC"], 1)[0];
  if (row === undefined) return null;
  const decision = decideRelease(row, release, nowMs);
  const patch = releasePatch(decision);
  if (patch !== null) batch.write(row, patch);
  if (decision.kind === "release" && decision.park !== undefined) parkFor(batch, row, decision.park, nowMs);
  return { row, decision };
}
