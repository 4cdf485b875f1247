/**
 * The Worker's completion queue: finished jobs' releases, gathered into
 * `complete` calls (one transaction each) and each answered with that job's
 * own release answer. Its one job is that a release within the per-item limits
 * is never lost to the size of the call it travels in:
 *
 * - A call is cut at MAX_BATCH_ITEMS items or MAX_BATCH_BODY_BYTES of body,
 *   whichever comes first, measured as the client sends it (the JSON of each
 *   item, commas and the envelope). 100 results of MAX_RESULT_BYTES would be a
 *   100 MiB body, three times what PocketBase reads (MAX_REQUEST_BODY_BYTES);
 *   cut at 4 MiB, they are about 25 calls that each fit many times over.
 * - A call refused as too large (413, or 0.22's 400 to a body over
 *   MAX_REQUEST_BODY_BYTES, which it reads truncated, as empty) is split in
 *   halves, each sent again, down to single items: a proxy in front of
 *   PocketBase may well take less than 4 MiB.
 * - A single item that still cannot go out in a `complete` (too large, or
 *   refused as malformed: a 400, the client's TypeError, any other
 *   non-transient error) is sent once more as a plain `release`, which the
 *   server judges by the same rules; only when that fails too is it given up,
 *   reported as an `error` event (op "release", the jobId) saying why. A
 *   batch refused as malformed is sent item by item at once, so that one bad
 *   item cannot fail the others.
 * - A call that keeps failing transiently (timeouts, 5xx, 429) is retried with
 *   backoff for reportRetryMs and then given up (the server is away; the
 *   leases lapse and the jobs run again), reported per job (op "complete").
 *
 * A lost answer is sent again like a lost release: an item that committed
 * then reads refused_terminal_same_holder, its own release. A server without
 * `complete` (a 404 to the first call, remembered) gets one release per job.
 *
 * With a rider (the Worker's, worker/claim-rides.ts), a call's first attempt
 * also claims the jobs for the room its releases free (completeAndClaim), once
 * the server has answered a complete; its retries never claim.
 */
import { MAX_BATCH_BODY_BYTES, MAX_BATCH_ITEMS, MAX_REQUEST_BODY_BYTES } from "../lib/queue.js";
import type { CompleteItem, CompleteResponse, JobView, ReleaseRefusal, ReleaseTarget } from "../lib/types.js";
import { FleetForbiddenError, FleetHttpError, isMissingEndpoint, isTransientError, toError } from "./errors.js";
import { isObject } from "./json-object.js";
import { jsonBytes } from "./json-bytes.js";
import type { ErrorEvent } from "./events.js";
import { DEFAULT_TIMEOUT_MS, type CompleteAndClaimResponse, type FleetApi, type ReleaseOptions, type RequestOptions } from "./fleet-client.js";
import { retryReport } from "./report-retry.js";
import type { ClaimRide, ClaimRider } from "./worker/claim-rides.js";

/**
 * How long a finished job's release waits in the completion queue when no
 * call is on the wire: 1 ms, Node's shortest timer (a timer of 0 waits as
 * long), so the releases of handlers that return together, in the same turn
 * of the event loop or the same millisecond, share a call. (The 10 ms of
 * before were paid by every report.) The batching is natural instead of timed:
 * while a call is on the wire, releases gather for the next one, which goes
 * as soon as that call has answered (or when full, by items or by bytes, or
 * urgent, or after COMPLETE_BUSY_MAX_WAIT_MS). So an idle pipe adds no
 * latency to a report, and a busy one sends calls as large as its load
 * makes them, one after the other (at 2,000 jobs a second and 10 ms per
 * call, about 20 releases a call), with no fixed delay to pay on each.
 */
export const COMPLETE_FLUSH_DELAY_MS = 1;
/**
 * While calls are on the wire, the releases gathered for the next call wait
 * for them at most this long, then go in a call of their own: a call that is
 * slow (a large body, retries while the server is away) must not hold every
 * later report back.
 */
export const COMPLETE_BUSY_MAX_WAIT_MS = 500;
/** A queued release whose lease ends within this goes out at once, without waiting for company. */
const COMPLETE_URGENT_MS = 250;
/**
 * Bodies on the wire at once, bytes: two full calls. Calls of small releases
 * never wait for each other; calls of large results go two at a time, since
 * the server takes them one transaction after another: 14 calls of 3 MiB
 * sent together on 0.22 had the last ones wait past the client's 10 s
 * timeout, be sent again, and time out again. One call alone always goes.
 */
const MAX_IN_FLIGHT_BYTES = 2 * MAX_BATCH_BODY_BYTES;
/**
 * A call waits for its answer the client's timeout plus 1 s per this many
 * bytes of body (a full 4 MiB call: 8 s more). A large body takes the server
 * a while to read and write (3 MiB: 0.4-0.7 s on 0.22 and 0.40 here, seconds
 * on a loaded 2-core machine), and a timeout would only send all of it again.
 */
const BODY_BYTES_PER_EXTRA_SECOND = 524_288;

/** What a release answered, through release (with the job) or as one item of complete. */
export type ReleaseAnswer = { released: true; job: JobView } | { released: false; reason: ReleaseRefusal };

/** A finished job's release, as the Worker hands it over. */
export interface FinishedRelease {
  jobId: string;
  leaseToken: string | undefined;
  status: ReleaseTarget;
  /** What the release writes (a server with the queue); undefined: the status change alone. */
  fields: Pick<ReleaseOptions, "result" | "error" | "rateLimitedFor"> | undefined;
  /** Local end of the job's lease (epoch ms): one about to end goes out at once. */
  deadline: number;
}

export interface CompletionQueueOptions {
  workerId: string;
  client: Pick<FleetApi, "complete" | "completeAndClaim" | "release" | "timeoutMs">;
  /** Claims that ride on the complete calls (worker/claim-rides.ts); none without it. */
  rider?: ClaimRider;
  /** How long to keep retrying a call that fails transiently, ms (the Worker's reportRetryMs). */
  reportRetryMs: number;
  /** Every failure, as the Worker's `error` event. */
  onError: (event: ErrorEvent) => void;
  /** The body budget of one `complete` call, bytes (default MAX_BATCH_BODY_BYTES). */
  maxBodyBytes?: number;
}

interface Entry {
  release: FinishedRelease;
  /** The wire item, and its size as JSON. */
  item: CompleteItem;
  bytes: number;
  settle: (answer: { value: ReleaseAnswer } | null) => void;
}

export class CompletionQueue {
  readonly #workerId: string;
  readonly #client: Pick<FleetApi, "complete" | "completeAndClaim" | "release" | "timeoutMs">;
  readonly #rider: ClaimRider | null;
  readonly #reportRetryMs: number;
  readonly #onError: (event: ErrorEvent) => void;
  readonly #maxBodyBytes: number;
  /** `{"workerId":...,"releases":[]}`: a call's body without its items. */
  readonly #envelopeBytes: number;
  /** Whether the server has /api/fleet/complete: undefined until its first answer; false also when the client has no such method. */
  #hasComplete: boolean | undefined;
  /** The call being gathered, and its items' bytes. */
  #pending: Entry[] = [];
  #pendingBytes = 0;
  /** The planned flush of #pending, and when it fires (see #plan). */
  #timer: ReturnType<typeof setTimeout> | null = null;
  #timerAt = Infinity;
  /** Calls on the wire or waiting for room: while there are some, the pipe is busy. */
  #calls = 0;
  /** Bytes of the calls on the wire, and the calls waiting for room (see MAX_IN_FLIGHT_BYTES). */
  #inFlightBytes = 0;
  readonly #waiting: Array<{ bytes: number; run: () => Promise<void> }> = [];

  constructor(opts: CompletionQueueOptions) {
    this.#workerId = opts.workerId;
    this.#client = opts.client;
    this.#rider = typeof opts.client.completeAndClaim === "function" ? opts.rider ?? null : null;
    this.#reportRetryMs = opts.reportRetryMs;
    this.#onError = opts.onError;
    this.#maxBodyBytes = opts.maxBodyBytes ?? MAX_BATCH_BODY_BYTES;
    this.#envelopeBytes = jsonBytes({ workerId: opts.workerId, releases: [] });
    this.#hasComplete = typeof opts.client.complete === "function" ? undefined : false;
  }

  /** Queues a release; resolves with its answer, or null when it was given up (reported). */
  release(release: FinishedRelease): Promise<{ value: ReleaseAnswer } | null> {
    return new Promise((settle) => {
      const item = toItem(release);
      const entry: Entry = { release, item, bytes: jsonBytes(item), settle };
      if (this.#hasComplete === false) return this.#whenRoom(entry.bytes, () => this.#releaseAlone(entry, null));
      // The call gathered so far is full by bytes: it goes, and this one starts the next.
      if (this.#pending.length > 0 && this.#bodyBytes(this.#pending.length + 1, this.#pendingBytes + entry.bytes) > this.#maxBodyBytes) {
        this.flush();
      }
      this.#pending.push(entry);
      this.#pendingBytes += entry.bytes;
      const urgent = release.deadline - Date.now() <= COMPLETE_URGENT_MS;
      const full = this.#pending.length >= MAX_BATCH_ITEMS || this.#bodyBytes(this.#pending.length, this.#pendingBytes) >= this.#maxBodyBytes;
      if (urgent || full) this.flush();
      else this.#plan(release.deadline);
    });
  }

  /**
   * Plans the flush of what is gathered: at the end of this turn when no call
   * is on the wire (COMPLETE_FLUSH_DELAY_MS), else when the last one answers
   * (see #dispatch), or COMPLETE_BUSY_MAX_WAIT_MS from now at the latest,
   * and never later than COMPLETE_URGENT_MS before the lease of the release
   * just queued ends (`deadline`): waiting for company must not outlast it.
   */
  #plan(deadline: number): void {
    const now = Date.now();
    const wait = this.#calls === 0 ? COMPLETE_FLUSH_DELAY_MS : COMPLETE_BUSY_MAX_WAIT_MS;
    const delayMs = Math.max(0, Math.min(wait, deadline - COMPLETE_URGENT_MS - now));
    const at = now + delayMs;
    if (this.#timer !== null) {
      if (this.#timerAt <= at) return;
      clearTimeout(this.#timer);
    }
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.flush(), delayMs);
  }

  /** Sends what is gathered now (the Worker's stop(): nothing more will join). */
  flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#timerAt = Infinity;
    const batch = this.#pending;
    this.#pending = [];
    this.#pendingBytes = 0;
    if (batch.length > 0) this.#whenRoom(this.#bodyBytes(batch.length, sum(batch)), () => this.#send(batch));
  }

  /** Runs `run` (a call of `bytes`) once the bodies on the wire leave room for it; in order. */
  #whenRoom(bytes: number, run: () => Promise<void>): void {
    this.#calls++;
    this.#waiting.push({ bytes, run });
    this.#dispatch();
  }

  #dispatch(): void {
    for (let next = this.#waiting[0]; next !== undefined; next = this.#waiting[0]) {
      if (this.#inFlightBytes > 0 && this.#inFlightBytes + next.bytes > MAX_IN_FLIGHT_BYTES) return;
      this.#waiting.shift();
      const { bytes, run } = next;
      this.#inFlightBytes += bytes;
      void run()
        .catch((err: unknown) => this.#onError({ op: "complete", error: toError(err) }))
        .finally(() => {
          this.#inFlightBytes -= bytes;
          this.#calls--;
          this.#dispatch();
          // The pipe is idle: what gathered meanwhile goes now (at the end of this turn, with what else joins in it).
          if (this.#calls === 0 && this.#pending.length > 0) this.#plan(Infinity); // each one queued capped its wait already
        });
    }
  }

  /** The body of a call of `items` items totalling `itemBytes`: the envelope, the items and the commas between them. */
  #bodyBytes(items: number, itemBytes: number): number {
    return this.#envelopeBytes + itemBytes + Math.max(0, items - 1);
  }

  /** One complete call that carries `ride`'s claim; the ride settles with its outcome whatever happens. */
  async #completeRiding(items: CompleteItem[], wait: [RequestOptions] | [], ride: ClaimRide): Promise<CompleteResponse> {
    const sentAt = Date.now();
    let answer: CompleteAndClaimResponse;
    try {
      answer = await this.#client.completeAndClaim!(this.#workerId, items, ride.claim, ...wait);
    } catch (err) {
      if (!isClaimRefusal(err)) {
        ride.settle("failed", sentAt);
        throw err;
      }
      // Refused, maybe for the claim it carried (a server that takes another claimNext, a queue the identity may
      // not take): the releases go at once without it. Rides stop only if that plain complete goes through: a
      // 403 to it too was the releases' own, not the claim's.
      let plain: CompleteResponse;
      try {
        plain = await this.#client.complete!(this.#workerId, items, ...wait);
      } catch (plainErr) {
        ride.settle("failed", sentAt);
        throw plainErr;
      }
      ride.settle("unsupported", sentAt);
      return plain;
    }
    ride.settle(answer.jobs ?? "unsupported", sentAt);
    return { results: answer.results };
  }

  /** One `complete` call for these releases (see the top of this file for what a failure leads to). Never rejects. */
  async #send(batch: readonly Entry[]): Promise<void> {
    // Queued before a 404 to another call told the server has no `complete`.
    if (this.#hasComplete === false) return this.#releaseEach(batch, null);
    const probing = (err: unknown): boolean => this.#hasComplete !== true && isMissingEndpoint(err);
    const items = batch.map((entry) => entry.item);
    const wait = this.#waitFor(this.#bodyBytes(batch.length, sum(batch)));
    // The first attempt may carry a claim, once the server is known to have complete; a retry never does.
    const firstRide = this.#rider !== null && this.#hasComplete === true ? this.#rider.ride(batch.length) : null;
    let ride = firstRide;
    const sent = await retryReport(
      () => {
        const thisRide = ride;
        ride = null;
        return thisRide === null ? this.#client.complete!(this.#workerId, items, ...wait) : this.#completeRiding(items, wait, thisRide);
      },
      this.#reportRetryMs,
      (err) => {
        // (A 404 to a call sent beside the first probe counts too: the server has never answered one.)
        if (!probing(err)) this.#onError({ op: "complete", error: toError(err) });
      },
    );
    // (Settled already, unless the call threw before it was made.)
    firstRide?.settle("failed", Date.now());
    if ("value" in sent) {
      this.#hasComplete = true;
      return this.#settleAll(batch, sent.value);
    }
    const err = sent.gaveUp.error;
    if (probing(err)) {
      // A server from before `complete`: one release per job from now on, these included.
      this.#hasComplete = false;
      return this.#releaseEach(batch, null);
    }
    if (isTransientError(err)) {
      // The server is away: a release alone would wait for it as long again, past the leases.
      for (const entry of batch) {
        this.#giveUp(entry, "complete", `complete kept failing for ${this.#reportRetryMs} ms (reportRetryMs): ${toError(err).message}`, err);
      }
      return;
    }
    if (batch.length > 1 && isTooLarge(err, this.#bodyBytes(batch.length, sum(batch)))) {
      const half = Math.ceil(batch.length / 2);
      await Promise.all([this.#send(batch.slice(0, half)), this.#send(batch.slice(half))]);
      return;
    }
    // Refused for what it carries: each item on its own, as a plain release (one bad item cannot fail the others).
    return this.#releaseEach(batch, err);
  }

  #settleAll(batch: readonly Entry[], answer: CompleteResponse): void {
    batch.forEach((entry, i) => {
      const result = answer.results[i];
      if (result === undefined || result.jobId !== entry.item.jobId) {
        // (The client checks the answer's shape; a FleetApi of one's own may not.)
        this.#giveUp(entry, "complete", "the complete call's answer has no result for it", null);
      } else {
        // (An item's answer is a release answer, with its jobId.)
        entry.settle({ value: result });
      }
    });
  }

  async #releaseEach(batch: readonly Entry[], completeError: unknown): Promise<void> {
    await Promise.all(batch.map((entry) => this.#releaseAlone(entry, completeError)));
  }

  /** One plain release (with the client's and reportRetryMs' retries); `completeError`: why `complete` could not carry it. */
  async #releaseAlone(entry: Entry, completeError: unknown): Promise<void> {
    const { jobId, leaseToken, status, fields } = entry.release;
    const sent = await retryReport(
      () => {
        const [wait] = this.#waitFor(entry.bytes);
        return fields === undefined && wait === undefined
          ? this.#client.release(jobId, this.#workerId, status, leaseToken)
          : this.#client.release(jobId, this.#workerId, status, leaseToken, { ...fields, ...wait });
      },
      this.#reportRetryMs,
      (err) => this.#onError({ op: "release", jobId, error: toError(err) }),
    );
    if ("value" in sent) return entry.settle({ value: sent.value });
    const err = sent.gaveUp.error;
    const alone = `the release alone failed (${toError(err).message})`;
    const why = completeError === null
      ? alone
      : `complete could not carry it (${toError(completeError).message}), then ${alone}`;
    this.#giveUp(entry, "release", `${why}; its item is ${entry.bytes} bytes of JSON`, err);
  }

  /** The request options of a call of `bytes` of body: none for a small one (the client's timeout), else a longer wait (see BODY_BYTES_PER_EXTRA_SECOND). */
  #waitFor(bytes: number): [RequestOptions] | [] {
    const extraMs = Math.floor(bytes / BODY_BYTES_PER_EXTRA_SECOND) * 1_000;
    return extraMs === 0 ? [] : [{ timeoutMs: (this.#client.timeoutMs ?? DEFAULT_TIMEOUT_MS) + extraMs }];
  }

  /** Gives a release up, saying why: the job's lease lapses and it is claimed (and run) again. */
  #giveUp(entry: Entry, op: "complete" | "release", why: string, cause: unknown): void {
    const { jobId, status } = entry.release;
    const error = new Error(
      `gave up the ${status} release of job ${jobId}: ${why}. Its lease will lapse and the job will run again`,
      cause === null ? undefined : { cause },
    );
    this.#onError({ op, jobId, error });
    entry.settle(null);
  }
}

/** A ride's call refused for its claimNext: a 400 about it, or a worker identity's 403 (plain complete then tells whether it was the claim). */
function isClaimRefusal(err: unknown): boolean {
  if (err instanceof FleetForbiddenError) return true;
  if (!(err instanceof FleetHttpError) || err.status !== 400) return false;
  const body: unknown = err.body;
  return isObject(body) && typeof body["error"] === "string" && body["error"].startsWith("claimNext");
}

/** The wire item of a release (null and undefined fields left out, as the client sends it). */
function toItem({ jobId, leaseToken, status, fields }: FinishedRelease): CompleteItem {
  const item: CompleteItem = { jobId, status };
  if (leaseToken !== undefined) item.leaseToken = leaseToken;
  if (fields?.result !== undefined && fields.result !== null) item.result = fields.result;
  if (fields?.error !== undefined && fields.error !== null) item.error = fields.error;
  if (fields?.rateLimitedFor !== undefined) item.rateLimitedFor = fields.rateLimitedFor;
  return item;
}

/**
 * A call refused for the size of its body: 413 (0.23+'s body limit, pb-fleet's
 * own answer on both lines, or a proxy's), or a 400 to a body over what 0.22
 * reads (it reads a truncated body as empty: "workerId is required").
 */
function isTooLarge(err: unknown, bodyBytes: number): boolean {
  return err instanceof FleetHttpError && (err.status === 413 || (err.status === 400 && bodyBytes > MAX_REQUEST_BODY_BYTES));
}

function sum(batch: readonly Entry[]): number {
  return batch.reduce((total, entry) => total + entry.bytes, 0);
}
