/**
 * The answers of claim, renew and release, built from what their transaction
 * decided (null: no such job, or a rollback). Built after the commit, so the
 * writer is not held for them. The shapes are the reference's, plus leaseToken.
 */
import { jobView, type JobPatch, type JobUpdate } from "./job-row.js";
import type { ClaimDecision, ReleaseDecision, RenewDecision } from "./transitions.js";
import type { ClaimResponse, ReleaseResponse, RenewResponse } from "./types.js";

export function claimAnswer(outcome: JobUpdate<ClaimDecision> | null): ClaimResponse {
  if (outcome === null) return { claimed: false };
  const { row, decision } = outcome;
  if (decision.kind === "already_held") {
    return { claimed: true, job: jobView(row), alreadyHeld: true, leaseToken: decision.leaseToken };
  }
  if (decision.kind === "refused" && decision.reason !== undefined) return { claimed: false, reason: decision.reason };
  if (decision.kind !== "win") return { claimed: false };
  return { claimed: true, job: jobView(row, decision.patch), leaseToken: decision.patch.lease_token ?? "" };
}

export function renewAnswer(outcome: JobUpdate<RenewDecision> | null): RenewResponse {
  if (outcome === null) return { renewed: false };
  const { row, decision } = outcome;
  if (decision.kind === "refused") return decision.reason === undefined ? { renewed: false } : { renewed: false, reason: decision.reason };
  return { renewed: true, job: jobView(row, decision.patch) };
}

export function renewPatch(decision: RenewDecision): JobPatch | null {
  return decision.kind === "renew" ? decision.patch : null;
}

export function releaseAnswer(outcome: JobUpdate<ReleaseDecision> | null): ReleaseResponse {
  // An unknown job, or a rolled-back transaction: the caller holds nothing.
  if (outcome === null) return { released: false, reason: "refused_not_holder" };
  const { row, decision } = outcome;
  return decision.kind === "refused"
    ? { released: false, reason: decision.reason }
    : { released: true, job: jobView(row, decision.patch) };
}

/** The patch a claim decision writes, if any (a give-up or a timeout writes too: the job is failed or retried). */
export function claimPatch(decision: ClaimDecision): JobPatch | null {
  return decision.kind === "win" || decision.kind === "give_up" || decision.kind === "timed_out" ? decision.patch : null;
}

export function releasePatch(decision: ReleaseDecision): JobPatch | null {
  return decision.kind === "release" ? decision.patch : null;
}
