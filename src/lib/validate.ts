/**
 * Request validation. The checks and their order follow the reference hooks,
 * so a bad request gets the same 400 message from pb-fleet as from them.
 */
import { RELEASE_TARGETS, type ReleaseTarget } from "./types";

export type Validated<T> = { ok: true; value: T } | { ok: false; error: string };

export interface JobRequestFields {
  jobId: string;
  workerId: string;
  /** Raw caller value; clampLeaseSeconds decides what it means. */
  leaseSeconds: unknown;
}

export interface ReleaseRequestFields {
  jobId: string;
  workerId: string;
  target: ReleaseTarget;
}

type Body = Record<string, unknown>;

function asBody(data: unknown): Body {
  return typeof data === "object" && data !== null ? (data as Body) : {};
}

/** claim and renew: `{ jobId, workerId, leaseSeconds? }`. */
export function validateJobRequest(data: unknown): Validated<JobRequestFields> {
  const body = asBody(data);
  const { jobId, workerId } = body;
  if (!jobId || !workerId) return { ok: false, error: "jobId and workerId are required" };
  // A number would be coerced into the text claimed_by column, and the holder's
  // later string-typed renew would never match it again: the row would wedge.
  if (typeof workerId !== "string") return { ok: false, error: "workerId must be a string" };
  if (typeof jobId !== "string") return { ok: false, error: "jobId must be a string" };
  return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
}

/** release: `{ jobId, workerId, status }`; status has no default (a missing one is a caller bug). */
export function validateReleaseRequest(data: unknown): Validated<ReleaseRequestFields> {
  const ids = validateJobRequest(data);
  if (!ids.ok) return ids;
  const target = asBody(data)["status"];
  if (!target) return { ok: false, error: "status is required (done|failed|pending)" };
  if (!isReleaseTarget(target)) return { ok: false, error: "status must be done|failed|pending" };
  return { ok: true, value: { jobId: ids.value.jobId, workerId: ids.value.workerId, target } };
}

function isReleaseTarget(value: unknown): value is ReleaseTarget {
  return (RELEASE_TARGETS as readonly unknown[]).indexOf(value) !== -1;
}
