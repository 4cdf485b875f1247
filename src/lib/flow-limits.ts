/**
 * Flow control's plain facts (docs/flow-control.md): the bounds of its fields and
 * settings, the job view's and the endpoint's names. Free of anything else,
 * so the client and the dashboard import them without the server's rules.
 */

/** A job's group: 1 to this many code points, no control characters (docs/flow-control.md "Fields on probe_jobs"). */
export const MAX_GROUP_KEY_CHARS = 200;
/** `timeoutSeconds` of an enqueue item: an integer 1 to this. */
export const MAX_TIMEOUT_SECONDS = 86_400;
/** `startWithinSeconds` of an enqueue item: an integer 1 to this (30 days). */
export const MAX_START_WITHIN_SECONDS = 2_592_000;
/** A scope's `concurrency`, and a rate limit's `limit`: an integer 1 to this. */
export const MAX_FLOW_CONCURRENCY = 100_000;
export const MAX_RATE_LIMIT = 100_000;
/** A rate limit's `periodSeconds`: an integer 1 to this (a day). */
export const MAX_RATE_PERIOD_SECONDS = 86_400;
/** `parkSeconds` (0 clears) and how far ahead `parkUntil` may be: 7 days. */
export const MAX_PARK_SECONDS = 604_800;
/** A `retry` release's `rateLimitedFor`: a number 1 to this. */
export const MAX_RATE_LIMITED_FOR_SECONDS = 86_400;

/** A group name as docs/flow-control.md allows it: 1-200 code points, none of Unicode category Cc. */
export function isGroupName(value: unknown): value is string {
  if (typeof value !== "string" || value === "") return false;
  let points = 0;
  for (const ch of value) {
    const code = ch.codePointAt(0) as number;
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return false;
    if (++points > MAX_GROUP_KEY_CHARS) return false;
  }
  return true;
}

/** The sentence a 400 gives for a bad group name. */
export const GROUP_NAME_RULE = `a group is 1 to ${MAX_GROUP_KEY_CHARS} characters with no control characters`;

/** The `last_error` of a job whose attempt passed its deadline (docs/flow-control.md "Timeouts"). */
export function timedOutError(timeoutSeconds: number): string {
  return `${TIMED_OUT_BEFORE}${timeoutSeconds}${TIMED_OUT_AFTER}`;
}
const TIMED_OUT_BEFORE = "timed out after ";
const TIMED_OUT_AFTER = " s";

/** timedOutError in SQLite, of an SQL expression for the seconds (an integer column: the same digits). */
export function timedOutErrorSql(timeoutSeconds: string): string {
  return `('${TIMED_OUT_BEFORE}' || (${timeoutSeconds}) || '${TIMED_OUT_AFTER}')`;
}

/** The `last_error` of a job the maintenance tick failed for its start_by (the date in PocketBase's layout). */
export function notStartedByError(startBy: string): string {
  return `not started by ${startBy}`;
}
