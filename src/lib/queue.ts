/**
 * The queue's limits, defaults and retry backoff (docs/queue.md): one home for each,
 * imported by validation, the transitions, the client and the tests. Queue
 * names are in ./queue-names.ts.
 */

/** Jobs one POST /api/fleet/enqueue writes at most (all or nothing). */
export const MAX_ENQUEUE_JOBS = 1000;
/** Items of one POST /api/fleet/heartbeat or /complete (one transaction). */
export const MAX_BATCH_ITEMS = 100;
/** A job's payload, and a release's result, serialized as JSON: at most this many UTF-8 bytes. */
export const MAX_PAYLOAD_BYTES = 1_048_576;
export const MAX_RESULT_BYTES = 1_048_576;
/** A release's error text: at most this many UTF-8 bytes. */
export const MAX_ERROR_BYTES = 65_536;
/**
 * Identifier texts the endpoints accept, in UTF-8 bytes (400 beyond). Each is
 * far above what a real id needs (PocketBase record ids are 15 characters),
 * and small enough that a batch's probe_job_events record (up to
 * MAX_BATCH_ITEMS jobs, each carrying its probe_key and claimed_by) stays far
 * inside its field whatever the batch.
 */
export const MAX_WORKER_ID_BYTES = 256;
export const MAX_JOB_ID_BYTES = 255;
export const MAX_LEASE_TOKEN_BYTES = 255;
export const MAX_PROBE_KEY_BYTES = 1024;
export const MAX_UNIQUE_KEY_BYTES = 1024;
/**
 * The largest request body PocketBase reads (32 MiB on every supported
 * version: 0.22's JSON binder stops reading there, 0.23+'s body limit answers
 * 413). pb-fleet answers 413 with a sentence beyond it, on both lines.
 */
export const MAX_REQUEST_BODY_BYTES = 33_554_432;
/** The 413 answer's sentence for a body over MAX_REQUEST_BODY_BYTES. */
export const REQUEST_TOO_LARGE =
  `the request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes, the most PocketBase reads: ` +
  "send fewer or smaller items per call (nothing was written)";
/**
 * The client's budget for one batched call's body (complete, heartbeat): a
 * batch is cut at MAX_BATCH_ITEMS items or at this many bytes, whichever comes
 * first, so even 100 results of MAX_RESULT_BYTES travel in calls far below
 * MAX_REQUEST_BODY_BYTES. A single item is at most about MAX_RESULT_BYTES +
 * MAX_ERROR_BYTES + its ids, which always fits alone.
 */
export const MAX_BATCH_BODY_BYTES = 4_194_304;
/** delaySeconds: at most this (about 100 years; dates stay 4-digit years, which text order needs). */
export const MAX_DELAY_SECONDS = 3_153_600_000;
/**
 * The largest answer body the clients read (all three languages), bytes:
 * above the largest the server sends (a claim-next of 100 jobs at
 * MAX_PAYLOAD_BYTES each, with their errors and progress: about 110 MiB), and
 * below what one JavaScript string can hold (about 512 Mi characters in V8).
 * A larger answer (a proxy or a wrong URL streaming something else) is refused
 * as a FleetProtocolError before it fills the process's memory.
 */
export const MAX_ANSWER_BYTES = 167_772_160;
/** A renew's progress, serialized as JSON: at most this many UTF-8 bytes. */
export const MAX_PROGRESS_BYTES = 4096;
/** Priority: an integer in [MIN_PRIORITY, MAX_PRIORITY]; higher runs first. */
export const MIN_PRIORITY = -1000;
export const MAX_PRIORITY = 1000;
/** maxAttempts: an integer 0..MAX_MAX_ATTEMPTS; 0 means no cap. */
export const MAX_MAX_ATTEMPTS = 1000;
/** max_attempts of a job from enqueue that does not say (a bare record API row has 0: no cap). */
export const DEFAULT_MAX_ATTEMPTS = 25;

/**
 * The 503 answer of the queue's endpoints (enqueue, cancel, retry) when their
 * transaction rolled back: nothing was written; the cause is in PocketBase's log.
 */
export const TRANSACTION_FAILED =
  "the transaction was rolled back and nothing was written: retry later (details are in PocketBase's log)";

/** `last_error` of a job dead-lettered because it used its attempts. */
export const MAX_ATTEMPTS_ERROR = "max attempts reached";

/** The first retry waits at least this long; no retry waits longer than BACKOFF_CAP_MS. */
export const BACKOFF_BASE_MS = 1000;
export const BACKOFF_CAP_MS = 3_600_000;
/** Jitter adds up to this fraction of the delay (never subtracts: the floor stays 1 s). */
export const BACKOFF_JITTER = 0.25;
/**
 * The jitter draw (the `r` of retryBackoffMs) of an attempt given up at its
 * deadline: the middle of the range, fixed, since the server decides a
 * timeout inside claim-next's and complete's statements, where the model the
 * tests hold them to draws nothing either.
 */
export const TIMEOUT_BACKOFF_DRAW = 0.5;
/** 2^32 s is far past the cap. */
export const BACKOFF_MAX_EXPONENT = 32;

/**
 * How long a job waits before its next attempt after its `attempts`-th failed:
 * `min(cap, base * 2^(attempts - 1) * (1 + jitter * r))` with `r` in [0, 1).
 * So 1 s, 2 s, 4 s, ... (each up to 25% more), never under 1 s, never over an
 * hour. `r` is passed in (Math.random() in the server) to keep this pure.
 */
export function retryBackoffMs(attempts: number, r: number): number {
  const exponent = Math.max(0, Math.min(attempts - 1, BACKOFF_MAX_EXPONENT));
  const delay = BACKOFF_BASE_MS * Math.pow(2, exponent) * (1 + BACKOFF_JITTER * Math.min(Math.max(r, 0), 1));
  return Math.max(BACKOFF_BASE_MS, Math.min(BACKOFF_CAP_MS, delay));
}

/**
 * retryBackoffMs in SQLite, of SQL expressions for the attempts and the jitter
 * in [0, 1): the same operations in the same order on the same doubles, so the
 * same value (batch-plans.ts; the differential test checks it).
 */
export function retryBackoffSql(attempts: string, jitter: string): string {
  const exponent = `MAX(0, MIN((${attempts}) - 1, ${BACKOFF_MAX_EXPONENT}))`;
  const delay = `${BACKOFF_BASE_MS} * (1 << ${exponent}) * (1 + ${BACKOFF_JITTER} * MIN(MAX(${jitter}, 0), 1))`;
  return `MAX(${BACKOFF_BASE_MS}, MIN(${BACKOFF_CAP_MS}, ${delay}))`;
}

/** hasAttemptsLeft in SQLite, of SQL expressions. */
export function hasAttemptsLeftSql(attempts: string, maxAttempts: string): string {
  return `((${maxAttempts}) <= 0 OR (${attempts}) < (${maxAttempts}))`;
}

/** Whether a job that has been claimed `attempts` times may be claimed again under `maxAttempts` (0: no cap). */
export function hasAttemptsLeft(attempts: number, maxAttempts: number): boolean {
  return maxAttempts <= 0 || attempts < maxAttempts;
}

/** UTF-8 length of a value serialized as JSON (what the size limits count). */
export function jsonByteLength(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : utf8ByteLength(text);
}

/**
 * Whether a text is over `maxBytes` of UTF-8, without counting where its
 * length alone decides (a UTF-16 unit is 1 to 3 bytes): a refused 32 MB value
 * costs no loop over its characters in goja.
 */
export function utf8LongerThan(text: string, maxBytes: number): boolean {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8ByteLength(text) > maxBytes;
}

/** Whether a value serialized as JSON is over `maxBytes` of UTF-8 (what the size limits count). */
export function jsonLongerThan(value: unknown, maxBytes: number): boolean {
  const text = JSON.stringify(value);
  return text !== undefined && utf8LongerThan(text, maxBytes);
}

/**
 * UTF-8 length of a text (goja has no TextEncoder). Counted by what regular
 * expressions remove, not a loop over the characters: goja runs the
 * expressions in Go, and a JS loop over a 1 MB result cost about a third of a
 * second of server CPU. A surrogate pair is 4 bytes; so are two lone
 * surrogates (2 each), where an encoder would write 3 each (U+FFFD): such
 * text is not valid UTF-16 to begin with, and JSON results escape them.
 */
export function utf8ByteLength(text: string): number {
  const nonAscii = text.replace(/[\u0000-\u007f]+/g, "");
  if (nonAscii.length === 0) return text.length;
  const wide = nonAscii.replace(/[\u0080-\u07ff]+/g, "");
  const threeByte = wide.replace(/[\ud800-\udfff]+/g, "").length;
  const surrogateUnits = wide.length - threeByte;
  return (text.length - nonAscii.length) + 2 * (nonAscii.length - wide.length) + 3 * threeByte + 2 * surrogateUnits;
}
