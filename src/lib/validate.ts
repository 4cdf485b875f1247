/**
 * Request validation. The checks and their order follow the reference hooks,
 * so a bad request gets the same 400 message from pb-fleet as from them.
 */
import { SWEEPER_HOLDER } from "./config.js";
import { formatPbDate, parsePbDate } from "./lease.js";
import {
  DEFAULT_MAX_ATTEMPTS, jsonLongerThan, MAX_BATCH_ITEMS, MAX_DELAY_SECONDS, MAX_ENQUEUE_JOBS, MAX_ERROR_BYTES, MAX_JOB_ID_BYTES,
  MAX_LEASE_TOKEN_BYTES, MAX_MAX_ATTEMPTS, MAX_PAYLOAD_BYTES, MAX_PRIORITY, MAX_PROBE_KEY_BYTES, MAX_PROGRESS_BYTES,
  MAX_RESULT_BYTES, MAX_UNIQUE_KEY_BYTES, MAX_WORKER_ID_BYTES, MIN_PRIORITY, utf8LongerThan,
} from "./queue.js";
import { DEFAULT_QUEUE, isQueueName, MAX_CLAIM_QUEUES } from "./queue-names.js";
import {
  GROUP_NAME_RULE, isGroupName, MAX_RATE_LIMITED_FOR_SECONDS, MAX_START_WITHIN_SECONDS, MAX_TIMEOUT_SECONDS,
} from "./flow-limits.js";
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
  /** undefined: absent (or null). */
  progress: unknown;
}

export interface ReleaseRequestFields {
  jobId: string;
  workerId: string;
  target: ReleaseTarget;
  leaseToken: string | undefined;
  /** undefined: absent (or null). */
  result: unknown;
  error: string | undefined;
  /** Only with target "retry" (docs/flow-control.md); undefined: absent. */
  rateLimitedFor: number | undefined;
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
  /** The queues to take jobs of; null: any (docs/flow-control.md, claim-next's `queue`). */
  queues: readonly string[] | null;
}

type Body = Record<string, unknown>;

function asBody(data: unknown): Body {
  return typeof data === "object" && data !== null ? (data as Body) : {};
}

export function fail(error: string): { ok: false; error: string } {
  return { ok: false, error };
}

/**
 * The 400 message for an identifier text over its bound (queue.ts), or null.
 * Checked after the reference's own checks, so every request the reference
 * answers with a 400 gets its message.
 */
export function tooLongError(name: string, text: string, maxBytes: number): string | null {
  if (!utf8LongerThan(text, maxBytes)) return null;
  return `${name} must be at most ${maxBytes} bytes (UTF-8)`;
}

/** A worker id's 400 message (reserved, or too long), or null when it is usable. */
function workerIdError(workerId: string): string | null {
  return reservedWorkerIdError(workerId) ?? tooLongError("workerId", workerId, MAX_WORKER_ID_BYTES);
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
  const badWorkerId = workerIdError(workerId);
  if (badWorkerId !== null) return fail(badWorkerId);
  const badJobId = tooLongError("jobId", jobId, MAX_JOB_ID_BYTES);
  if (badJobId !== null) return fail(badJobId);
  return { ok: true, value: { jobId, workerId, leaseSeconds: body["leaseSeconds"] } };
}

/** renew: a claim request plus an optional `leaseToken` and `progress`. */
export function validateRenewRequest(data: unknown): Validated<RenewRequestFields> {
  const ids = validateClaimRequest(data);
  if (!ids.ok) return ids;
  const lease = readLeaseToken(data);
  if (lease.error !== undefined) return fail(lease.error);
  const leaseToken = lease.token;
  const progress = absentIfNull(asBody(data)["progress"]);
  if (progress !== undefined && jsonLongerThan(progress, MAX_PROGRESS_BYTES)) {
    return fail(`progress must be at most ${MAX_PROGRESS_BYTES} bytes as JSON`);
  }
  const { jobId, workerId, leaseSeconds } = ids.value;
  return { ok: true, value: { jobId, workerId, leaseSeconds, leaseToken, progress } };
}

/** release: `{ jobId, workerId, status, leaseToken? }`; status has no default (a missing one is a caller bug). */
export function validateReleaseRequest(data: unknown): Validated<ReleaseRequestFields> {
  const ids = validateClaimRequest(data);
  if (!ids.ok) return ids;
  const target = asBody(data)["status"];
  if (!target) return fail("status is required (done|failed|pending)");
  if (!isReleaseTarget(target)) return fail("status must be done|failed|pending");
  const lease = readLeaseToken(data);
  if (lease.error !== undefined) return fail(lease.error);
  const leaseToken = lease.token;
  const result = absentIfNull(asBody(data)["result"]);
  if (result !== undefined && jsonLongerThan(result, MAX_RESULT_BYTES)) {
    return fail(`result must be at most ${MAX_RESULT_BYTES} bytes as JSON`);
  }
  const error = absentIfNull(asBody(data)["error"]);
  if (error !== undefined && typeof error !== "string") return fail("error must be a string when given");
  if (error !== undefined && utf8LongerThan(error, MAX_ERROR_BYTES)) {
    return fail(`error must be at most ${MAX_ERROR_BYTES} bytes`);
  }
  const rateLimitedFor = absentIfNull(asBody(data)["rateLimitedFor"]);
  if (rateLimitedFor !== undefined) {
    if (target !== "retry") return fail("rateLimitedFor is only for status retry");
    if (typeof rateLimitedFor !== "number" || !(rateLimitedFor >= 1) || rateLimitedFor > MAX_RATE_LIMITED_FOR_SECONDS) {
      return fail(`rateLimitedFor must be a number from 1 to ${MAX_RATE_LIMITED_FOR_SECONDS}`);
    }
  }
  return {
    ok: true,
    value: {
      jobId: ids.value.jobId, workerId: ids.value.workerId, target, leaseToken, result, error,
      rateLimitedFor: rateLimitedFor as number | undefined,
    },
  };
}

/** docs/queue.md: `null` means absent for the optional values it adds. */
function absentIfNull(value: unknown): unknown {
  return value === null ? undefined : value;
}

const INVALID = null;
const LEASE_TOKEN_ERROR = "leaseToken must be a non-empty string when given";

/**
 * Absent means "not fenced" (reference clients send none); anything sent must be
 * a real token, or a typo would silently turn fencing off.
 */
function readLeaseToken(data: unknown): { token: string | undefined; error?: undefined } | { error: string } {
  const token = asBody(data)["leaseToken"];
  if (token === undefined) return { token: undefined };
  if (typeof token !== "string" || token === "") return { error: LEASE_TOKEN_ERROR };
  const tooLong = tooLongError("leaseToken", token, MAX_LEASE_TOKEN_BYTES);
  return tooLong === null ? { token } : { error: tooLong };
}

/** claim-next: `{ workerId, leaseSeconds?, limit?, probeKeyPrefix? }`. */
export function validateClaimNextRequest(data: unknown): Validated<ClaimNextRequestFields> {
  const body = asBody(data);
  const { workerId, limit } = body;
  if (!workerId) return fail("workerId is required");
  if (typeof workerId !== "string") return fail("workerId must be a string");
  const badWorkerId = workerIdError(workerId);
  if (badWorkerId !== null) return fail(badWorkerId);
  if (limit !== undefined &&
      (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_CLAIM_NEXT_LIMIT)) {
    return fail(`limit must be an integer from 1 to ${MAX_CLAIM_NEXT_LIMIT}`);
  }
  const probeKeyPrefix = readPrefix(data);
  if (probeKeyPrefix === INVALID) return fail(PREFIX_ERROR);
  const badPrefix = prefixError(probeKeyPrefix);
  if (badPrefix !== null) return fail(badPrefix);
  const queues = readClaimQueues(body["queue"]);
  if (typeof queues === "string") return fail(queues);
  return {
    ok: true,
    value: { workerId, leaseSeconds: body["leaseSeconds"], limit: limit === undefined ? 1 : limit, probeKeyPrefix, queues },
  };
}

export const QUEUE_NAME_RULE = "a queue name is 1 to 64 letters, digits and _ . : -, starting with a letter or digit";

/** claim-next's `queue`: absent or null (any queue), a name, or an array of 1 to MAX_CLAIM_QUEUES names; else the 400's message. */
function readClaimQueues(value: unknown): readonly string[] | null | string {
  if (value === undefined || value === null) return null;
  const names = Array.isArray(value) ? value : [value];
  if (names.length < 1 || names.length > MAX_CLAIM_QUEUES) return `queue must be a queue name or an array of 1 to ${MAX_CLAIM_QUEUES} names`;
  for (const name of names) if (!isQueueName(name)) return `queue must be a queue name or an array of them (${QUEUE_NAME_RULE})`;
  // Each name once: the claim walks each queue's index.
  return names.filter((name, i) => names.indexOf(name) === i) as string[];
}

/** sweep: `{ probeKeyPrefix? }` narrows the sweep to one family of jobs. */
export function validateSweepRequest(data: unknown): Validated<{ probeKeyPrefix: string }> {
  const prefix = readPrefix(data);
  if (prefix === INVALID) return fail(PREFIX_ERROR);
  const badPrefix = prefixError(prefix);
  return badPrefix !== null ? fail(badPrefix) : { ok: true, value: { probeKeyPrefix: prefix } };
}

/** A probe_key prefix (body or query string) longer than any probe_key can be: its 400 message; else null. */
export function prefixError(prefix: string): string | null {
  return tooLongError("probeKeyPrefix", prefix, MAX_PROBE_KEY_BYTES);
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

/** cancel and retry: `{ jobId }`. */
export function validateJobIdRequest(data: unknown): Validated<{ jobId: string }> {
  const { jobId } = asBody(data);
  if (!jobId) return fail("jobId is required");
  if (typeof jobId !== "string") return fail("jobId must be a string");
  const badJobId = tooLongError("jobId", jobId, MAX_JOB_ID_BYTES);
  return badJobId !== null ? fail(badJobId) : { ok: true, value: { jobId } };
}

/** An enqueue item as validated: every default applied, run_at resolved against the request's time. */
export interface EnqueueItemFields {
  probeKey: string;
  /** null when absent. */
  payload: unknown;
  /** PocketBase's text form. */
  runAt: string;
  priority: number;
  maxAttempts: number;
  /** "" when none. */
  uniqueKey: string;
  queue: string;
  /** "" when none. */
  groupKey: string;
  /** 0: none. */
  timeoutSeconds: number;
  /** PocketBase's text form; "" when none. */
  startBy: string;
}

/**
 * enqueue: `{ jobs: [...] }`, 1 to MAX_ENQUEUE_JOBS items; the first bad item
 * fails the whole call (a 400 naming it) and nothing is written.
 */
export function validateEnqueueRequest(data: unknown, nowMs: number): Validated<EnqueueItemFields[]> {
  const jobs = asBody(data)["jobs"];
  if (!Array.isArray(jobs) || jobs.length < 1 || jobs.length > MAX_ENQUEUE_JOBS) {
    return fail(`jobs must be an array of 1 to ${MAX_ENQUEUE_JOBS} jobs`);
  }
  const items: EnqueueItemFields[] = [];
  for (let i = 0; i < jobs.length; i++) {
    const item = validateEnqueueItem(jobs[i], nowMs);
    if (typeof item === "string") return fail(`jobs[${i}]: ${item}`);
    items.push(item);
  }
  return { ok: true, value: items };
}

/** One item, or the reason it is refused. */
function validateEnqueueItem(data: unknown, nowMs: number): EnqueueItemFields | string {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return "must be an object";
  const item = data as Body;
  const { probeKey } = item;
  if (typeof probeKey !== "string" || probeKey === "") return "probeKey must be a non-empty string";
  const badProbeKey = tooLongError("probeKey", probeKey, MAX_PROBE_KEY_BYTES);
  if (badProbeKey !== null) return badProbeKey;
  const payload = absentIfNull(item["payload"]);
  if (payload !== undefined && jsonLongerThan(payload, MAX_PAYLOAD_BYTES)) {
    return `payload must be at most ${MAX_PAYLOAD_BYTES} bytes as JSON`;
  }
  const runAt = readRunAt(absentIfNull(item["runAt"]), absentIfNull(item["delaySeconds"]), nowMs);
  if (runAt.error !== undefined) return runAt.error;
  const priority = absentIfNull(item["priority"]);
  if (priority !== undefined && !isIntegerIn(priority, MIN_PRIORITY, MAX_PRIORITY)) {
    return `priority must be an integer from ${MIN_PRIORITY} to ${MAX_PRIORITY}`;
  }
  const maxAttempts = absentIfNull(item["maxAttempts"]);
  if (maxAttempts !== undefined && !isIntegerIn(maxAttempts, 0, MAX_MAX_ATTEMPTS)) {
    return `maxAttempts must be an integer from 0 to ${MAX_MAX_ATTEMPTS} (0: no cap)`;
  }
  const uniqueKey = absentIfNull(item["uniqueKey"]);
  if (uniqueKey !== undefined && typeof uniqueKey !== "string") return "uniqueKey must be a string";
  const badUniqueKey = uniqueKey === undefined ? null : tooLongError("uniqueKey", uniqueKey, MAX_UNIQUE_KEY_BYTES);
  if (badUniqueKey !== null) return badUniqueKey;
  const queue = absentIfNull(item["queue"]);
  if (queue !== undefined && !isQueueName(queue)) return `queue must be a queue name (${QUEUE_NAME_RULE})`;
  const group = absentIfNull(item["group"]);
  if (group !== undefined && group !== "" && !isGroupName(group)) return `group must be a group name (${GROUP_NAME_RULE}), or "" for none`;
  const timeoutSeconds = absentIfNull(item["timeoutSeconds"]);
  if (timeoutSeconds !== undefined && !isIntegerIn(timeoutSeconds, 1, MAX_TIMEOUT_SECONDS)) {
    return `timeoutSeconds must be an integer from 1 to ${MAX_TIMEOUT_SECONDS}`;
  }
  const startWithin = absentIfNull(item["startWithinSeconds"]);
  if (startWithin !== undefined && !isIntegerIn(startWithin, 1, MAX_START_WITHIN_SECONDS)) {
    return `startWithinSeconds must be an integer from 1 to ${MAX_START_WITHIN_SECONDS}`;
  }
  const runAtMs = parsePbDate(runAt.value) as number;
  return {
    probeKey,
    queue: queue === undefined ? DEFAULT_QUEUE : queue,
    groupKey: typeof group === "string" ? group : "",
    timeoutSeconds: timeoutSeconds === undefined ? 0 : (timeoutSeconds as number),
    startBy: startWithin === undefined ? "" : formatPbDate(runAtMs + (startWithin as number) * 1000),
    payload: payload === undefined ? null : payload,
    runAt: runAt.value,
    priority: priority === undefined ? 0 : (priority as number),
    maxAttempts: maxAttempts === undefined ? DEFAULT_MAX_ATTEMPTS : (maxAttempts as number),
    uniqueKey: uniqueKey === undefined ? "" : uniqueKey,
  };
}

export function isIntegerIn(value: unknown, min: number, max: number): boolean {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}

/** The due time of an enqueue item: `runAt`, or now + `delaySeconds`, or now. */
function readRunAt(runAt: unknown, delaySeconds: unknown, nowMs: number): { value: string; error?: string } {
  if (runAt !== undefined && delaySeconds !== undefined) return { value: "", error: "give runAt or delaySeconds, not both" };
  if (delaySeconds !== undefined) {
    if (typeof delaySeconds !== "number" || !(delaySeconds >= 0) || delaySeconds > MAX_DELAY_SECONDS) {
      return { value: "", error: `delaySeconds must be a number from 0 to ${MAX_DELAY_SECONDS}` };
    }
    return { value: formatPbDate(nowMs + Math.round(delaySeconds * 1000)) };
  }
  if (runAt === undefined) return { value: formatPbDate(nowMs) };
  const ms = typeof runAt === "string" ? parseZonedInstant(runAt) : null;
  if (ms === null) {
    return {
      value: "",
      error: "runAt must be an ISO-8601 time with a zone (like 2026-12-01T09:30:00Z or 2026-12-01T10:30:00+01:00) " +
        "or a PocketBase date (2026-12-01 09:30:00.000Z)",
    };
  }
  return { value: formatPbDate(ms) };
}

/** `YYYY-MM-DDTHH:MM[:SS[.fraction]]` and `Z` or `±HH:MM`; the separator may be a space. */
const ZONED_ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * An instant from a zoned ISO-8601 text or PocketBase's layout; null for
 * anything else: a time without a zone is ambiguous (the server's zone is not
 * the caller's), and an impossible date (Feb 30) is not silently moved.
 */
export function parseZonedInstant(text: string): number | null {
  const m = ZONED_ISO.exec(text);
  if (m === null) return null;
  const [, y, mo, d, h, mi, sec, frac, zone] = m as unknown as string[];
  const ms = frac === undefined ? "000" : (frac + "00").slice(0, 3);
  const local = parsePbDate(`${y}-${mo}-${d} ${h}:${mi}:${sec === undefined ? "00" : sec}.${ms}Z`);
  if (local === null || zone === undefined) return null;
  if (zone === "Z") return local;
  const sign = zone[0] === "-" ? -1 : 1;
  const offH = Number(zone.slice(1, 3));
  const offM = Number(zone.slice(4, 6));
  if (offH > 23 || offM > 59) return null;
  const instant = local - sign * (offH * 60 + offM) * 60_000;
  // Stored dates compare as text, which is time order only for 4-digit years.
  return /^\d{4}-/.test(formatPbDate(instant)) ? instant : null;
}

/**
 * heartbeat: `{ workerId, leaseSeconds?, leases: [{ jobId, leaseToken?, progress? }] }`.
 * Each item is checked as the renew it stands for; the first bad one fails the
 * whole call (a 400 naming it) and nothing is written.
 */
export function validateHeartbeatRequest(data: unknown): Validated<RenewRequestFields[]> {
  const body = asBody(data);
  const items = batchItems(body, "leases");
  if (typeof items === "string") return fail(items);
  const renewals: RenewRequestFields[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = asBody(items[i]);
    // The fields renew reads, one by one (in goja, copying a request object's every key costs more).
    const valid = validateRenewRequest({
      jobId: item["jobId"], workerId: body["workerId"], leaseSeconds: body["leaseSeconds"],
      leaseToken: item["leaseToken"], progress: item["progress"],
    });
    if (!valid.ok) return fail(`leases[${i}]: ${valid.error}`);
    renewals.push(valid.value);
  }
  return { ok: true, value: renewals };
}

/**
 * complete: `{ workerId, releases: [{ jobId, leaseToken?, status, result?, error? }] }`.
 * Each item is checked as the release it stands for; the first bad one fails
 * the whole call (a 400 naming it) and nothing is written.
 */
export function validateCompleteRequest(data: unknown): Validated<ReleaseRequestFields[]> {
  const body = asBody(data);
  const items = batchItems(body, "releases");
  if (typeof items === "string") return fail(items);
  const releases: ReleaseRequestFields[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = asBody(items[i]);
    // The fields release reads, one by one (see validateHeartbeatRequest).
    const valid = validateReleaseRequest({
      jobId: item["jobId"], workerId: body["workerId"], status: item["status"],
      leaseToken: item["leaseToken"], result: item["result"], error: item["error"], rateLimitedFor: item["rateLimitedFor"],
    });
    if (!valid.ok) return fail(`releases[${i}]: ${valid.error}`);
    releases.push(valid.value);
  }
  return { ok: true, value: releases };
}

/**
 * complete's `claimNext`: absent or null (no claim), or claim-next's fields
 * but `workerId` (the call's own claims); else the 400's message.
 */
export function validateCompleteClaimNext(data: unknown): Validated<ClaimNextRequestFields | null> {
  const body = asBody(data);
  const claim: unknown = body["claimNext"];
  if (claim === undefined || claim === null) return { ok: true, value: null };
  if (typeof claim !== "object" || Array.isArray(claim)) return fail("claimNext must be an object of claim-next's fields");
  if ("workerId" in claim) return fail("claimNext takes the call's workerId: leave workerId out of it");
  const valid = validateClaimNextRequest({ ...claim, workerId: body["workerId"] });
  return valid.ok ? valid : fail(`claimNext: ${valid.error}`);
}

/** The items of a batch call: 1 to MAX_BATCH_ITEMS objects, from a caller with a valid workerId; else the 400's message. */
function batchItems(body: Body, field: string): unknown[] | string {
  const { workerId } = body;
  if (!workerId) return "workerId is required";
  if (typeof workerId !== "string") return "workerId must be a string";
  const badWorkerId = workerIdError(workerId);
  if (badWorkerId !== null) return badWorkerId;
  const items = body[field];
  if (!Array.isArray(items) || items.length < 1 || items.length > MAX_BATCH_ITEMS) {
    return `${field} must be an array of 1 to ${MAX_BATCH_ITEMS} items`;
  }
  for (let i = 0; i < items.length; i++) {
    const item: unknown = items[i];
    if (typeof item !== "object" || item === null || Array.isArray(item)) return `${field}[${i}] must be an object`;
  }
  return items;
}
