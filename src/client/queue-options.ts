/**
 * Client-side checks of what the queue's endpoints take (docs/queue.md, docs/flow-control.md):
 * enqueue items, a renew's progress, a release's result, error and
 * rateLimitedFor, and the items of the batch calls heartbeat and complete.
 * The limits are the server's own (src/lib/queue.ts, src/lib/flow-limits.ts);
 * a bad value is refused with a TypeError naming the option before any
 * request is sent.
 */
import {
  MAX_ERROR_BYTES, MAX_MAX_ATTEMPTS, MAX_PAYLOAD_BYTES, MAX_PRIORITY, MAX_PROGRESS_BYTES, MAX_RESULT_BYTES,
  MIN_PRIORITY, utf8ByteLength,
} from "../lib/queue.js";
import {
  GROUP_NAME_RULE, MAX_RATE_LIMITED_FOR_SECONDS, MAX_START_WITHIN_SECONDS, MAX_TIMEOUT_SECONDS, isGroupName,
} from "../lib/flow-limits.js";
import { MAX_CLAIM_QUEUES, QUEUE_NAME_PATTERN, isQueueName } from "../lib/queue-names.js";
import { RELEASE_TARGETS, type CompleteItem, type EnqueueItem, type HeartbeatItem } from "../lib/types.js";
import { reservedWorkerIdError } from "../lib/validate.js";
import { jsonSizeProblem } from "./json-bytes.js";

/** What a job can be enqueued with besides its probe key (EnqueueItem, with `runAt` also as a Date). */
export interface EnqueueOptions extends Omit<EnqueueItem, "probeKey" | "runAt"> {
  /** When the job becomes claimable: a Date, or ISO-8601 text with a zone (`Z` or an offset). Not with delaySeconds. */
  runAt?: Date | string;
}

/** One job of enqueueMany's item form. */
export interface EnqueueJob extends EnqueueOptions {
  probeKey: string;
}

/** The option names of an enqueue item (each one needs a server with POST /api/fleet/enqueue). */
const ENQUEUE_OPTION_NAMES = {
  payload: true, runAt: true, delaySeconds: true, priority: true, maxAttempts: true, uniqueKey: true, queue: true,
  group: true, timeoutSeconds: true, startWithinSeconds: true,
} as const satisfies Record<keyof EnqueueOptions, true>;

/** What RequestOptions may add to an enqueue's options object (see FleetClient.enqueue). */
export const REQUEST_OPTION_NAMES: ReadonlySet<string> = new Set(["timeoutMs", "signal"]);

/** ISO-8601 date and time with a zone, `T` or a space between them (PocketBase's own form has a space and a `Z`). */
const ZONED_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)$/i;

/**
 * Whether an options object asks for the queue form of enqueue: it has a key
 * other than the request options (`timeoutMs`, `signal`). An unknown key counts,
 * so that toEnqueueItem can refuse it by name.
 */
export function hasQueueOptions(opts: object | undefined): boolean {
  return opts !== undefined && opts !== null && Object.keys(opts).some((k) => !REQUEST_OPTION_NAMES.has(k));
}

/** Whether an item needs POST /api/fleet/enqueue: any option set (a bare probe key can be created through the record API). */
export function needsQueueServer(item: EnqueueItem): boolean {
  return Object.keys(item).some((k) => k !== "probeKey");
}

export const QUEUE_NAME_RULE = `a queue name matching ${QUEUE_NAME_PATTERN} (a letter or digit, then up to 63 of them or _ . : -)`;

/**
 * The wire item of one job, checked: throws a TypeError naming `where` and the
 * option. Options left undefined are left out; `runAt` as a Date becomes ISO
 * text. `ignore`: keys of the object that are not the job's (a request option
 * in enqueue's options object).
 */
export function toEnqueueItem(where: string, job: unknown, ignore: ReadonlySet<string> = new Set()): EnqueueItem {
  if (typeof job !== "object" || job === null || Array.isArray(job)) {
    throw new TypeError(`${where} must be an object { probeKey, payload?, runAt?, ... } (got ${describe(job)})`);
  }
  const fields = job as Record<string, unknown>;
  const bad = (name: string, expected: string): TypeError =>
    new TypeError(`${where}: \`${name}\` must be ${expected} (got ${describe(fields[name])})`);
  for (const key of Object.keys(fields)) {
    if (key !== "probeKey" && !Object.hasOwn(ENQUEUE_OPTION_NAMES, key) && !ignore.has(key)) {
      throw new TypeError(`${where}: unknown option \`${key}\` (known: probeKey, ${Object.keys(ENQUEUE_OPTION_NAMES).join(", ")})`);
    }
  }
  const {
    probeKey, payload, runAt, delaySeconds, priority, maxAttempts, uniqueKey, queue, group, timeoutSeconds, startWithinSeconds,
  } = fields;
  if (typeof probeKey !== "string" || probeKey === "") throw bad("probeKey", "a non-empty string");
  const item: EnqueueItem = { probeKey };
  if (payload !== undefined) {
    const error = jsonSizeProblem(payload, MAX_PAYLOAD_BYTES);
    if (error !== null) throw bad("payload", error);
    item.payload = payload;
  }
  if (runAt !== undefined && delaySeconds !== undefined) {
    throw new TypeError(`${where}: give \`runAt\` or \`delaySeconds\`, not both`);
  }
  if (runAt !== undefined) {
    if (runAt instanceof Date) {
      if (Number.isNaN(runAt.getTime())) throw bad("runAt", "a valid Date");
      item.runAt = runAt.toISOString();
    } else if (isZonedDateTime(runAt)) {
      item.runAt = runAt;
    } else {
      throw bad("runAt", "a Date, or ISO-8601 text with a zone (e.g. 2030-01-01T12:00:00Z or +02:00)");
    }
  }
  if (delaySeconds !== undefined) {
    if (typeof delaySeconds !== "number" || !Number.isFinite(delaySeconds) || delaySeconds < 0) {
      throw bad("delaySeconds", "a finite number of seconds >= 0");
    }
    item.delaySeconds = delaySeconds;
  }
  if (priority !== undefined) {
    if (!isIntegerIn(priority, MIN_PRIORITY, MAX_PRIORITY)) throw bad("priority", `an integer from ${MIN_PRIORITY} to ${MAX_PRIORITY}`);
    item.priority = priority;
  }
  if (maxAttempts !== undefined) {
    if (!isIntegerIn(maxAttempts, 0, MAX_MAX_ATTEMPTS)) throw bad("maxAttempts", `an integer from 0 (no cap) to ${MAX_MAX_ATTEMPTS}`);
    item.maxAttempts = maxAttempts;
  }
  if (uniqueKey !== undefined) {
    if (typeof uniqueKey !== "string") throw bad("uniqueKey", "a string");
    item.uniqueKey = uniqueKey;
  }
  if (queue !== undefined) {
    if (!isQueueName(queue)) throw bad("queue", QUEUE_NAME_RULE);
    item.queue = queue;
  }
  // null and "" mean no group, as for the server: left out, so such an item is still a bare job.
  if (group !== undefined && group !== null && group !== "") {
    if (!isGroupName(group)) throw bad("group", `${GROUP_NAME_RULE}, or null or "" for none`);
    item.group = group;
  }
  if (timeoutSeconds !== undefined) {
    if (!isIntegerIn(timeoutSeconds, 1, MAX_TIMEOUT_SECONDS)) throw bad("timeoutSeconds", `an integer from 1 to ${MAX_TIMEOUT_SECONDS}`);
    item.timeoutSeconds = timeoutSeconds;
  }
  if (startWithinSeconds !== undefined) {
    if (!isIntegerIn(startWithinSeconds, 1, MAX_START_WITHIN_SECONDS)) {
      throw bad("startWithinSeconds", `an integer from 1 to ${MAX_START_WITHIN_SECONDS}`);
    }
    item.startWithinSeconds = startWithinSeconds;
  }
  return item;
}

/** ISO-8601 text with a zone that names a real instant (what runAt and the flow's parkUntil take as text). */
export function isZonedDateTime(value: unknown): value is string {
  return typeof value === "string" && ZONED_DATE_TIME.test(value) && Number.isFinite(Date.parse(value.replace(" ", "T")));
}

/**
 * claim-next's `queue`, checked as the server checks it: a queue name, or an
 * array of 1 to MAX_CLAIM_QUEUES of them (TypeError naming `where`). Answers
 * what is sent (undefined: every queue the caller may take).
 */
export function checkClaimQueue(where: string, queue: unknown): string | string[] | undefined {
  if (queue === undefined) return undefined;
  if (typeof queue === "string") {
    if (!isQueueName(queue)) throw new TypeError(`${where}: \`queue\` must be ${QUEUE_NAME_RULE} (got ${describe(queue)})`);
    return queue;
  }
  if (!Array.isArray(queue) || queue.length === 0 || queue.length > MAX_CLAIM_QUEUES) {
    throw new TypeError(`${where}: \`queue\` must be a queue name or an array of 1 to ${MAX_CLAIM_QUEUES} of them ` +
      `(got ${Array.isArray(queue) ? `an array of ${queue.length}` : describe(queue)})`);
  }
  queue.forEach((name: unknown, i) => {
    if (!isQueueName(name)) throw new TypeError(`${where}: \`queue[${i}]\` must be ${QUEUE_NAME_RULE} (got ${describe(name)})`);
  });
  return [...queue] as string[];
}

/** A renew's progress, checked (TypeError naming `where`). */
export function checkProgress(where: string, progress: unknown): void {
  if (progress === undefined || progress === null) return;
  const error = jsonSizeProblem(progress, MAX_PROGRESS_BYTES);
  if (error !== null) throw new TypeError(`${where}: \`progress\` must be ${error}`);
}

/** A release's result, error and rateLimitedFor, checked (TypeError naming `where`). */
export function checkReleaseFields(where: string, status: unknown, fields: { result?: unknown; error?: unknown; rateLimitedFor?: unknown }): void {
  const { result, error, rateLimitedFor } = fields;
  if (result !== undefined && result !== null) {
    const problem = jsonSizeProblem(result, MAX_RESULT_BYTES);
    if (problem !== null) throw new TypeError(`${where}: \`result\` must be ${problem}`);
  }
  if (error !== undefined && error !== null && typeof error !== "string") {
    throw new TypeError(`${where}: \`error\` must be a string (got ${describe(error)})`);
  }
  checkRateLimitedFor(where, status, rateLimitedFor);
}

/**
 * A retry release's `rateLimitedFor` (docs/flow-control.md): a number of seconds from 1 to
 * MAX_RATE_LIMITED_FOR_SECONDS, and only with status "retry" (the server
 * answers 400 otherwise, and in a `complete` call fails every item with it).
 */
function checkRateLimitedFor(where: string, status: unknown, rateLimitedFor: unknown): void {
  if (rateLimitedFor === undefined) return;
  if (status !== "retry") {
    throw new TypeError(`${where}: \`rateLimitedFor\` goes only with status "retry" (got status ${describe(status)}): ` +
      "it says when the job may run again");
  }
  if (typeof rateLimitedFor !== "number" || !Number.isFinite(rateLimitedFor) ||
      rateLimitedFor < 1 || rateLimitedFor > MAX_RATE_LIMITED_FOR_SECONDS) {
    throw new TypeError(`${where}: \`rateLimitedFor\` must be a number of seconds from 1 to ${MAX_RATE_LIMITED_FOR_SECONDS} ` +
      `(got ${describe(rateLimitedFor)})`);
  }
}

// ---- heartbeat and complete ----------------------------------------------------------

/** A batch call's worker id: a non-empty string the server does not reserve (it answers 400 to those). */
export function checkBatchWorkerId(where: string, workerId: unknown): void {
  if (typeof workerId !== "string" || workerId === "") {
    throw new TypeError(`${where}: \`workerId\` must be a non-empty string (got ${describe(workerId)})`);
  }
  const reserved = reservedWorkerIdError(workerId);
  if (reserved !== null) throw new TypeError(`${where}: \`workerId\`: ${reserved}`);
}

/** heartbeat's `leaseSeconds`: a number > 0 when given (the server clamps it to [1, 3600]; anything else would silently mean 30). */
export function checkLeaseSeconds(where: string, leaseSeconds: unknown): void {
  if (leaseSeconds === undefined) return;
  if (typeof leaseSeconds !== "number" || !Number.isFinite(leaseSeconds) || leaseSeconds <= 0) {
    throw new TypeError(`${where}: \`leaseSeconds\` must be a number of seconds > 0 (got ${describe(leaseSeconds)})`);
  }
}

/** The list of a batch call: a non-empty array (longer than MAX_BATCH_ITEMS is the caller's to chunk). */
export function checkBatchList(where: string, name: string, list: unknown): readonly unknown[] {
  if (!Array.isArray(list) || list.length === 0) {
    throw new TypeError(`${where}: \`${name}\` must be a non-empty array (got ${Array.isArray(list) ? "an empty array" : describe(list)})`);
  }
  return list;
}

const HEARTBEAT_ITEM_KEYS: ReadonlySet<string> = new Set(["jobId", "leaseToken", "progress"] satisfies (keyof HeartbeatItem)[]);
const COMPLETE_ITEM_KEYS: ReadonlySet<string> = new Set(
  ["jobId", "leaseToken", "status", "result", "error", "rateLimitedFor"] satisfies (keyof CompleteItem)[]);

/** One lease of heartbeat, checked as the server checks a renew (TypeError naming `where` and the field); null and undefined fields left out. */
export function toHeartbeatItem(where: string, lease: unknown): HeartbeatItem {
  const fields = batchItemFields(where, lease, HEARTBEAT_ITEM_KEYS);
  const item: HeartbeatItem = { jobId: fields.jobId };
  if (fields.leaseToken !== undefined) item.leaseToken = fields.leaseToken;
  const progress = fields.raw["progress"];
  if (progress !== undefined && progress !== null) {
    const problem = jsonSizeProblem(progress, MAX_PROGRESS_BYTES);
    if (problem !== null) throw new TypeError(`${where}: \`progress\` must be ${problem}`);
    item.progress = progress;
  }
  return item;
}

/** One release of complete, checked as the server checks a release (TypeError naming `where` and the field); null and undefined fields left out. */
export function toCompleteItem(where: string, release: unknown): CompleteItem {
  const fields = batchItemFields(where, release, COMPLETE_ITEM_KEYS);
  const { status, result, error, rateLimitedFor } = fields.raw;
  if (typeof status !== "string" || !(RELEASE_TARGETS as readonly string[]).includes(status)) {
    throw new TypeError(`${where}: \`status\` must be one of ${RELEASE_TARGETS.join(", ")} (got ${describe(status)})`);
  }
  const item: CompleteItem = { jobId: fields.jobId, status: status as CompleteItem["status"] };
  if (fields.leaseToken !== undefined) item.leaseToken = fields.leaseToken;
  if (result !== undefined && result !== null) {
    const problem = jsonSizeProblem(result, MAX_RESULT_BYTES);
    if (problem !== null) throw new TypeError(`${where}: \`result\` must be ${problem}`);
    item.result = result;
  }
  if (error !== undefined && error !== null) {
    if (typeof error !== "string") throw new TypeError(`${where}: \`error\` must be a string (got ${describe(error)})`);
    if (!fitsErrorLimit(error)) {
      throw new TypeError(`${where}: \`error\` must be at most ${MAX_ERROR_BYTES} bytes of UTF-8 (it is ${utf8ByteLength(error)})`);
    }
    item.error = error;
  }
  checkRateLimitedFor(where, status, rateLimitedFor);
  if (rateLimitedFor !== undefined) item.rateLimitedFor = rateLimitedFor as number;
  return item;
}

function batchItemFields(
  where: string, value: unknown, known: ReadonlySet<string>,
): { jobId: string; leaseToken: string | undefined; raw: Record<string, unknown> } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`${where} must be an object { jobId, leaseToken?, ... } (got ${describe(value)})`);
  }
  const raw = value as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!known.has(key)) throw new TypeError(`${where}: unknown field \`${key}\` (known: ${[...known].join(", ")})`);
  }
  const { jobId, leaseToken } = raw;
  if (typeof jobId !== "string" || jobId === "") throw new TypeError(`${where}: \`jobId\` must be a non-empty string (got ${describe(jobId)})`);
  if (leaseToken !== undefined && (typeof leaseToken !== "string" || leaseToken === "")) {
    throw new TypeError(`${where}: \`leaseToken\` must be a non-empty string when given (got ${describe(leaseToken)})`);
  }
  return { jobId, leaseToken, raw };
}

/** Whether the server takes `error` as a release's error: at most MAX_ERROR_BYTES of UTF-8, measured as the server measures it. */
function fitsErrorLimit(error: string): boolean {
  return utf8ByteLength(error) <= MAX_ERROR_BYTES;
}

const TRUNCATED = " [truncated]";

/**
 * A handler's error message cut to what the server takes as a release's
 * error, MAX_ERROR_BYTES of UTF-8, marked as cut. The cut falls between code
 * points, never inside a surrogate pair (so never inside a UTF-8 sequence).
 * An error the server would refuse would fail the whole release (a 400), and
 * in a `complete` call every other job's release with it.
 */
export function fitError(error: string): string {
  if (fitsErrorLimit(error)) return error;
  const budget = MAX_ERROR_BYTES - utf8ByteLength(TRUNCATED);
  let bytes = 0;
  let end = 0;
  for (const ch of error) {
    bytes += utf8ByteLength(ch);
    if (bytes > budget) break;
    end += ch.length;
  }
  return error.slice(0, end) + TRUNCATED;
}

export function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}

/** A value as an error message shows it: strings quoted and cut, objects by kind. */
export function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (typeof value === "bigint") return `${value}n`;
  if (value instanceof Date) return `Date(${Number.isNaN(value.getTime()) ? "invalid" : value.toISOString()})`;
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" && value !== null) return "an object";
  return String(value);
}
