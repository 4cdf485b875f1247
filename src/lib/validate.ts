/**
 * Request validation. The checks and their order follow the reference hooks,
 * so a bad request gets the same 400 message from pb-fleet as from them.
 */
import { SWEEPER_HOLDER } from "./config.js";
import { RELEASE_TARGETS, type ReleaseTarget } from "./types.js";

export type Validated<T> = { ok: true; value: T } | { ok: false; error: string };

export interface ClaimRequestFields {
  jobId: string;
  workerId: string;
  /** Raw caller value; clampLeaseSeconds decides what it means. */
  leaseSeconds: unknown;
}

export interface RenewRequestFields extends ClaimRequestFields {
  /** Fencing token of the caller's claim, when it sent one. */
  leaseToken: string | undefined;
}

export interface ReleaseRequestFields {
  jobId: string;
  workerId: string;
  target: ReleaseTarget;
  leaseToken: string | undefined;
}

/** claim-next's `limit`: an integer from 1 to this. */
export const MAX_CLAIM_NEXT_LIMIT = 100;

/**
 * Worker ids the server writes itself. A worker using one could take a row the
 * sweeper gave up for its own committed release (refused_terminal_same_holder)
 * and write a result over the sweeper's.
 */
export const RESERVED_WORKER_IDS: readonly string[] = [SWEEPER_HOLDER];

/** The 400 message for a reserved worker id, or null when the id is free. */
export function reservedWorkerIdError(workerId: string): string | null {
  return RESERVED_WORKER_IDS.indexOf(workerId) === -1
    ? null
    : `workerId ${JSON.stringify(workerId)} is reserved for pb-fleet's server sweeper: pick another id`;
}

export interface ClaimNextRequestFields {
  workerId: string;
  leaseSeconds: unknown;
  limit: number;
  probeKeyPrefix: string;
}

type Body = Record<string, unknown>;

function asBody(data: unknown): Body {
  return typeof data === "object" && data !== null ? (data as Body) : {};
}

function fail(error: string): { ok: false; error: string } {
  return { ok: false, error };
}

/** claim: `{ jobId, workerId, leaseSeconds? }`. */
export function validateClaimRequest(data: unknown): Validated<ClaimRequestFields> {
  const body = asBody(data);
  const { jobId, workerId } = body;
  if (!jobId || !workerId) return fail("jobId and workerId are required");
  // A number would be coerced into the text claimed_by column, and the holder's
  // later string-typed renew would never match it again: the row would wedge.
  if (typeof workerId !== "string") return fail("workerId must be a string");
  if (typeof jobId !== "string") return fail("jobId must be a string");
  const reserved = reservedWorkerIdError(workerId);
  if (reserved !== null) return fail(reserved);
  return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
}

/** renew: a claim request plus an optional `leaseToken`. */
export function validateRenewRequest(data: unknown): Validated<RenewRequestFields> {
  const ids = validateClaimRequest(data);
  if (!ids.ok) return ids;
  const leaseToken = readLeaseToken(data);
  if (leaseToken === INVALID) return fail(LEASE_TOKEN_ERROR);
  return { ok: true, value: Object.assign({ leaseToken }, ids.value) };
}

/** release: `{ jobId, workerId, status, leaseToken? }`; status has no default (a missing one is a caller bug). */
export function validateReleaseRequest(data: unknown): Validated<ReleaseRequestFields> {
  const ids = validateClaimRequest(data);
  if (!ids.ok) return ids;
  const target = asBody(data)["status"];
  if (!target) return fail("status is required (done|failed|pending)");
  if (!isReleaseTarget(target)) return fail("status must be done|failed|pending");
  const leaseToken = readLeaseToken(data);
  if (leaseToken === INVALID) return fail(LEASE_TOKEN_ERROR);
  return { ok: true, value: { jobId: ids.value.jobId, workerId: ids.value.workerId, target, leaseToken } };
}

const INVALID = null;
const LEASE_TOKEN_ERROR = "leaseToken must be a non-empty string when given";

/**
 * Absent means "not fenced" (reference clients send none); anything sent must be
 * a real token, or a typo would silently turn fencing off.
 */
function readLeaseToken(data: unknown): string | undefined | typeof INVALID {
  const token = asBody(data)["leaseToken"];
  if (token === undefined) return undefined;
  return typeof token === "string" && token !== "" ? token : INVALID;
}

/** claim-next: `{ workerId, leaseSeconds?, limit?, probeKeyPrefix? }`. */
export function validateClaimNextRequest(data: unknown): Validated<ClaimNextRequestFields> {
  const body = asBody(data);
  const { workerId, limit } = body;
  if (!workerId) return fail("workerId is required");
  if (typeof workerId !== "string") return fail("workerId must be a string");
  const reserved = reservedWorkerIdError(workerId);
  if (reserved !== null) return fail(reserved);
  if (limit !== undefined &&
      (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_CLAIM_NEXT_LIMIT)) {
    return fail(`limit must be an integer from 1 to ${MAX_CLAIM_NEXT_LIMIT}`);
  }
  const probeKeyPrefix = readPrefix(data);
  if (probeKeyPrefix === INVALID) return fail(PREFIX_ERROR);
  return {
    ok: true,
    value: { workerId, leaseSeconds: body["leaseSeconds"], limit: limit === undefined ? 1 : limit, probeKeyPrefix },
  };
}

/** sweep: `{ probeKeyPrefix? }` narrows the sweep to one family of jobs. */
export function validateSweepRequest(data: unknown): Validated<{ probeKeyPrefix: string }> {
  const prefix = readPrefix(data);
  return prefix === INVALID ? fail(PREFIX_ERROR) : { ok: true, value: { probeKeyPrefix: prefix } };
}

const PREFIX_ERROR = "probeKeyPrefix must be a string";

/** An optional probe_key prefix; "" (all jobs) when absent. */
export function readPrefix(data: unknown): string | typeof INVALID {
  const prefix = asBody(data)["probeKeyPrefix"];
  if (prefix === undefined) return "";
  return typeof prefix === "string" ? prefix : INVALID;
}

function isReleaseTarget(value: unknown): value is ReleaseTarget {
  return (RELEASE_TARGETS as readonly unknown[]).indexOf(value) !== -1;
}
