/**
 * Typed errors of the client. Protocol refusals (claimed:false, renewed:false,
 * released:false + reason) are answers, not errors; everything else that goes
 * wrong on the way (HTTP 4xx/5xx, no connection, a timeout, an answer of the
 * wrong shape) is thrown as one of these, never swallowed.
 */

/** Base class: `op` names the client call that failed (e.g. "claim", "writeResult"). */
export class FleetError extends Error {
  readonly op: string;
  constructor(op: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "FleetError";
    this.op = op;
  }
}

/** The server answered with an HTTP error status. `body` is its parsed JSON, its text when that is not JSON, or {} when empty. */
export class FleetHttpError extends FleetError {
  readonly status: number;
  readonly body: unknown;
  constructor(op: string, status: number, message: string, body: unknown, options?: { cause?: unknown }) {
    super(op, `${op}: HTTP ${status}: ${message}`, options);
    this.name = "FleetHttpError";
    this.status = status;
    this.body = body;
  }
}

/**
 * The server did not take the token as an admin's (PocketBase 0.22) or a
 * superuser's (0.23+), and signing in again did not cure it (or a token-only
 * client, which cannot sign in). Status 401 from the fleet endpoints; 403 from
 * PocketBase's record API, which on both lines treats a bad or expired token as
 * a guest ("Only admins can perform this action." on 0.22, "Only superusers can
 * perform this action." on 0.23+). A refused sign-in is one too: wrong email or
 * password (both lines answer 400 "Failed to authenticate.", kept as `status`),
 * or a 401 or 403 (0.23+ with password sign-in turned off for superusers, or
 * asking for MFA). A worker identity's client gets one for a refused sign-in
 * (a wrong name or password: 400; on 0.23+ a disabled identity: 403), and
 * for a 401 that signing in again did not cure (the identity disabled or
 * deleted, its token key rotated); a 403 of a worker route is a
 * FleetForbiddenError.
 */
export class FleetAuthError extends FleetHttpError {
  constructor(op: string, message: string, body: unknown, options?: { cause?: unknown; status?: 400 | 401 | 403 }) {
    super(op, options?.status ?? 401, message, body, options);
    this.name = "FleetAuthError";
  }
}

/**
 * A worker identity's token was taken, but the server says this identity may
 * not do this (HTTP 403 `{ error }`): an admin-only route (sweep, stats,
 * cancel, retry, the record API, ...), enqueue without `can_enqueue`, a
 * `workerId` that is not the identity's, a queue outside its `queues`. Signing
 * in again cannot change what it may do, so the client never retries it; the
 * message is the server's. A FleetAuthError with status 403, so callers that
 * catch those still do.
 */
export class FleetForbiddenError extends FleetAuthError {
  constructor(op: string, message: string, body: unknown, options?: { cause?: unknown }) {
    super(op, message, body, { ...options, status: 403 });
    this.name = "FleetForbiddenError";
  }
}

/** No answer within the request timeout. The request may or may not have taken effect. */
export class FleetTimeoutError extends FleetError {
  readonly timeoutMs: number;
  constructor(op: string, timeoutMs: number, options?: { cause?: unknown }) {
    super(op, `${op}: no answer within ${timeoutMs} ms`, options);
    this.name = "FleetTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/** The request never got an HTTP answer (connection refused or reset, DNS, ...). */
export class FleetNetworkError extends FleetError {
  constructor(op: string, message: string, options?: { cause?: unknown }) {
    super(op, `${op}: ${message}`, options);
    this.name = "FleetNetworkError";
  }
}

/** A 2xx answer that is not JSON or does not have the protocol's shape (a server of another version? not PocketBase?). */
export class FleetProtocolError extends FleetError {
  readonly body: unknown;
  constructor(op: string, message: string, body: unknown) {
    super(op, `${op}: ${message}`);
    this.name = "FleetProtocolError";
    this.body = body;
  }
}

/** The request was cancelled through the caller's own AbortSignal. */
export class FleetAbortError extends FleetError {
  constructor(op: string, options?: { cause?: unknown }) {
    super(op, `${op}: aborted by the caller`, options);
    this.name = "FleetAbortError";
  }
}

/**
 * Worth retrying after a pause: no answer (timeout, network) or a server-side
 * failure (5xx, 429). A 4xx is the caller's bug and will fail the same way again.
 */
export function isTransientError(err: unknown): boolean {
  if (err instanceof FleetTimeoutError || err instanceof FleetNetworkError) return true;
  if (err instanceof FleetHttpError) return err.status >= 500 || err.status === 429;
  return false;
}

/**
 * The server has no such endpoint (an older pb-fleet): PocketBase answers 404
 * to an unknown route. Callers probe an optional endpoint once with this and
 * fall back to what the server does have.
 */
export function isMissingEndpoint(err: unknown): boolean {
  return err instanceof FleetHttpError && err.status === 404;
}

/** Anything thrown, as an Error (a handler may throw a string). */
export function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Thrown by a Worker's handler to say that running the job again cannot help
 * (bad input, a probe that does not exist): the Worker releases the job
 * `failed` with this message as its error, instead of `retry`. Any other error
 * a handler throws releases `retry` (docs/queue.md: back to pending after a
 * backoff, or dead-lettered once the job's attempts are used up).
 */
export class PermanentJobError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PermanentJobError";
  }
}

/**
 * Whether a handler's error is a PermanentJobError: by class, or by name (a
 * second copy of this module, say one bundled with the handler's code, has a
 * class of its own).
 */
export function isPermanentJobError(err: unknown): boolean {
  return err instanceof PermanentJobError || (err instanceof Error && err.name === "PermanentJobError");
}

/**
 * Thrown by a Worker's handler when the system it works against said "not
 * now" (an HTTP 429, a quota): the Worker releases the job `retry` with
 * `rateLimitedFor` (docs/flow-control.md), so the job runs again after `retryAfterSeconds`
 * instead of the backoff, without using up an attempt, and the job's group
 * (its queue when it has none) is parked as long, so that no worker claims
 * its siblings meanwhile. The wait is rounded up to whole seconds and kept
 * within 1 to MAX_RATE_LIMITED_FOR_SECONDS; the message is the job's error.
 */
export class RateLimitedError extends Error {
  /** As given (say, from a Retry-After header); the Worker clamps it when it releases. */
  readonly retryAfterSeconds: number;
  constructor(opts: { retryAfterSeconds: number; message?: string; cause?: unknown }) {
    const seconds = opts?.retryAfterSeconds;
    if (typeof seconds !== "number" || Number.isNaN(seconds)) {
      throw new TypeError(`RateLimitedError: \`retryAfterSeconds\` must be a number of seconds (got ${String(seconds)})`);
    }
    super(opts.message ?? `rate limited: retry after ${seconds} s`, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "RateLimitedError";
    this.retryAfterSeconds = seconds;
  }
}

/** Whether a handler's error is a RateLimitedError: by class, or by name with a number `retryAfterSeconds` (another copy of this module). */
export function isRateLimitedError(err: unknown): err is RateLimitedError {
  return err instanceof RateLimitedError ||
    (err instanceof Error && err.name === "RateLimitedError" &&
      typeof (err as { retryAfterSeconds?: unknown }).retryAfterSeconds === "number");
}
