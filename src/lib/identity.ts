/**
 * Worker identities: records of the auth collection `fleet_workers`
 * (migrations 1764461101_created_fleet_workers.js), signed in with
 * PocketBase's own auth-with-password, whose tokens may call the worker's
 * routes of /api/fleet/* and nothing else (README, "Worker identities").
 * Pure: the adapters read the token's record into a CallerAuth; the handlers
 * ask here what it may do.
 */
import { isQueueName, MAX_CLAIM_QUEUES, storedQueueName } from "./queue-names.js";
import { formatPbDate, parsePbDate } from "./lease.js";
import type { WhereClause } from "./queries.js";
import { SCHEDULE_KEY_PREFIX } from "./schedules.js";
import type { ClaimDecision } from "./transitions.js";

export const WORKERS_COLLECTION = "fleet_workers";
/** The record fields the hooks read (and the CLI and the dashboard write). */
export const WORKER_FIELDS = {
  /** PocketBase 0.22's built-in identity field; declared as a field on 0.23+ (the same rule). */
  name: "username",
  queues: "queues",
  canEnqueue: "can_enqueue",
  disabled: "disabled",
  lastSeenAt: "last_seen_at",
} as const;
/** A worker identity's name: PocketBase 0.22's username rule, 3 to 150 characters. */
export const WORKER_NAME_PATTERN = /^[\w][\w.-]{2,149}$/;
/** The hooks stamp an identity's last_seen_at when it is older than this: one write a minute per identity at most. */
export const LAST_SEEN_EVERY_MS = 60_000;

/** Who may call a route: a worker identity (or an admin), a worker identity with can_enqueue (or an admin), an admin only. */
export type RouteAccess = "worker" | "enqueue" | "admin";

/** What the adapter read of a request's auth token. */
export type CallerAuth =
  | { kind: "admin" }
  | {
    kind: "worker";
    id: string;
    /** The `queues` field as JSON text (PocketBase's reading of a json field); null when the collection has no such field. */
    queuesJson: string | null;
    canEnqueue: boolean;
    /** True too when the collection has no `disabled` field: a rule no one can read is not "enabled". */
    disabled: boolean;
    /** PocketBase's text form, "" when never; null when the collection has no such field (nothing to stamp). */
    lastSeenAt: string | null;
  }
  /** No token, a token that did not verify, or a record of another auth collection. */
  | { kind: "none" };

/** Who a handler serves. */
export type Caller =
  | { kind: "admin" }
  | { kind: "worker"; id: string; /** Empty: every queue. */ queues: readonly string[]; canEnqueue: boolean };

/** A refused call: PocketBase's 401 shape (as 0.22's requireAdminAuth answers), or pb-fleet's 403 `{ error }`. */
export interface AccessRefusal {
  status: 401 | 403;
  body: unknown;
}

/** What anyone but an admin or a worker identity gets: 0.22's `$apis.requireAdminAuth()` answer, the same members and values. */
export const NOT_SIGNED_IN = { code: 401, message: "The request requires valid admin authorization token to be set.", data: {} };
/** A disabled identity's token still verifies: its calls are refused as if it did not. */
export const WORKER_DISABLED = {
  code: 401,
  message: "This worker identity is disabled: an admin must enable it (fleet_workers.disabled) before it may call again.",
  data: {},
};
export const ADMIN_ONLY = "this route is for admins: a worker identity may call claim, renew, release, claim-next, heartbeat, " +
  "complete, openapi.json, and enqueue when its can_enqueue is on";
export const ENQUEUE_NOT_ALLOWED = "this worker identity may not enqueue: an admin must turn on its can_enqueue";
export const ACCOUNT_REQUEST_REFUSED =
  "a worker identity has no email: PocketBase's email change, password reset and verification are off for fleet_workers; " +
  "an admin gives it a new password (npx pb-fleet worker rotate <name>)";
export const QUEUES_UNREADABLE =
  `this worker identity's queues field is not a JSON array of at most ${MAX_CLAIM_QUEUES} queue names: ` +
  "an admin must correct it (nothing was written)";

/** The caller a request is served as, or why it is refused. Decided before the body is read. */
export function authorize(auth: CallerAuth, access: RouteAccess): { caller: Caller } | AccessRefusal {
  if (auth.kind === "admin") return { caller: { kind: "admin" } };
  if (auth.kind === "none") return { status: 401, body: NOT_SIGNED_IN };
  if (auth.disabled) return { status: 401, body: WORKER_DISABLED };
  if (access === "admin") return forbidden(ADMIN_ONLY);
  if (access === "enqueue" && !auth.canEnqueue) return forbidden(ENQUEUE_NOT_ALLOWED);
  const queues = parseWorkerQueues(auth.queuesJson);
  // Fail closed: a queues value no one can read restricts to nothing.
  if (queues === null) return forbidden(QUEUES_UNREADABLE);
  return { caller: { kind: "worker", id: auth.id, queues, canEnqueue: auth.canEnqueue } };
}

function forbidden(error: string): AccessRefusal {
  return { status: 403, body: { error } };
}

/**
 * A `queues` field's JSON text as names: empty (every queue) for an empty
 * field, null, or []; null (unreadable: the identity is refused) for a
 * missing field, anything but an array of queue names, or more names than
 * claim-next takes (MAX_CLAIM_QUEUES: each is a walk of its own index).
 */
export function parseWorkerQueues(text: string | null): string[] | null {
  if (text === null) return null;
  if (text === "" || text === "null") return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length > MAX_CLAIM_QUEUES) return null;
  for (const name of value) if (typeof name !== "string" || !isQueueName(name)) return null;
  return value as string[];
}

/**
 * A worker identity's calls name their holder as its record id, or as the id
 * and `/` and anything (one identity runs several Worker instances): so it can
 * never act as another identity's holder, with or without that one's lease
 * token. Answers the 403's message, or null when allowed.
 */
export function workerIdRefusal(caller: Caller, workerId: string): string | null {
  if (caller.kind === "admin" || isOwnWorkerId(caller.id, workerId)) return null;
  return `workerId must be this worker identity's id (${caller.id}) or begin with "${caller.id}/" (nothing was written)`;
}

/** A batch call (heartbeat, complete) names one holder, which every item carries. */
export function batchWorkerIdRefusal(caller: Caller, items: readonly { workerId: string }[]): string | null {
  const first = items[0];
  return first === undefined ? null : workerIdRefusal(caller, first.workerId);
}

/** A claim by id of a job of a queue the identity does not take: refused, nothing written. */
export const QUEUE_NOT_ALLOWED: ClaimDecision = { kind: "refused", reason: "queue_not_allowed" };

/** The workerId rule itself (the client builds its Workers' ids by it too). */
export function isOwnWorkerId(identityId: string, workerId: string): boolean {
  return workerId === identityId || workerId.slice(0, identityId.length + 1) === `${identityId}/`;
}

/** Whether the caller may take jobs of a queue (a row's "" reads as the default queue). */
export function mayTakeQueue(caller: Caller, queue: string): boolean {
  if (caller.kind === "admin" || caller.queues.length === 0) return true;
  return caller.queues.indexOf(storedQueueName(queue)) !== -1;
}

/**
 * The queues a claim-next takes jobs of: those asked for (null: any), narrowed
 * to an identity's own; a queue asked for beyond them is a 403's message.
 */
export function claimQueues(caller: Caller, asked: readonly string[] | null): { queues: readonly string[] | null } | { refusal: string } {
  if (caller.kind === "admin" || caller.queues.length === 0) return { queues: asked };
  if (asked === null) return { queues: caller.queues };
  for (const queue of asked) if (!mayTakeQueue(caller, queue)) return { refusal: queueRefusal(queue) };
  return { queues: asked };
}

/**
 * The 403's message for an identity's enqueue (its items are all or nothing):
 * an item of a queue it does not take, or with a uniqueKey of the server's
 * own (a schedule's: taking one would stop that scheduled job).
 */
export function enqueueRefusal(caller: Caller, items: readonly { queue: string; uniqueKey: string }[]): string | null {
  if (caller.kind === "admin") return null;
  for (let index = 0; index < items.length; index++) {
    const item = items[index] as { queue: string; uniqueKey: string };
    if (!mayTakeQueue(caller, item.queue)) return queueRefusal(item.queue);
    if (item.uniqueKey.slice(0, SCHEDULE_KEY_PREFIX.length) === SCHEDULE_KEY_PREFIX) {
      return `jobs[${index}]: a uniqueKey beginning "${SCHEDULE_KEY_PREFIX}" is the server's own (its schedules'): pick another`;
    }
  }
  return null;
}

/** Whether an identity's enqueue must be checked for unique keys held across its queues (uniqueKeyAcrossQueues). */
export function isRestricted(caller: Caller): boolean {
  return caller.kind === "worker" && caller.queues.length > 0;
}

function queueRefusal(queue: string): string {
  return `queue ${queue} is not among this worker identity's queues (nothing was written)`;
}

/** Whether the hooks should stamp the identity's last activity now. */
export function lastSeenIsStale(lastSeenAt: string | null, nowMs: number): boolean {
  if (lastSeenAt === null) return false; // no such field: nothing to stamp
  const seen = lastSeenAt === "" ? null : parsePbDate(lastSeenAt);
  return seen === null || nowMs - seen >= LAST_SEEN_EVERY_MS || seen > nowMs;
}

/** The stamp: one row by id, outside the call's own transaction (a failure costs only the stamp). */
export function stampLastSeenStatement(id: string, nowMs: number): WhereClause {
  return {
    sql: `UPDATE ${WORKERS_COLLECTION} SET ${WORKER_FIELDS.lastSeenAt} = {:now} WHERE id = {:id}`,
    params: { id, now: formatPbDate(nowMs) },
  };
}
