/**
 * The events Worker and Sweeper emit (typed EventEmitter maps) and the optional
 * structured logger that receives the same facts as plain objects.
 */
import { EventEmitter } from "node:events";
import type { ReleaseRefusal, ReleaseTarget } from "../lib/types.js";

export interface ClaimedEvent {
  jobId: string;
  probeKey: string;
  workerId: string;
  /** The row's version right after the claim. */
  version: number;
  leaseToken: string | undefined;
  alreadyHeld: boolean;
}
export interface RenewedEvent {
  jobId: string;
  workerId: string;
  /**
   * The row's version after the renew. A heartbeat's answer carries no job:
   * the worker counts it (a renew bumps it by one); null when it cannot,
   * after a renew whose answer was lost.
   */
  version: number | null;
  /** The lease's end as the server stored it; null when renewed by a heartbeat, whose answer carries no job. */
  leaseExpiresAt: string | null;
}
export type LeaseLostReason =
  /**
   * A renew answered renewed:false: the lease lapsed, the job was claimed
   * again, or (a server with the queue) it was cancelled. The answer does not
   * say which.
   */
  | "renew_refused"
  /**
   * A renew answered renewed:false with reason "timed_out": the job's attempt
   * passed its deadline (docs/flow-control.md "Timeouts") before the Worker's own timeout
   * released it. Nothing more is written; the server retries the job.
   */
  | "timed_out"
  /** The lease ran out locally while renews could not reach the server. */
  | "lease_expired"
  /** The terminal release was refused (reason of the refusal). */
  | ReleaseRefusal;
export interface LeaseLostEvent {
  jobId: string;
  workerId: string;
  reason: LeaseLostReason;
}
export interface ReleasedEvent {
  jobId: string;
  workerId: string;
  status: ReleaseTarget;
  /**
   * The row's version after the release; null when the answer was
   * refused_terminal_same_holder. An item of `complete` carries no job: the
   * worker counts it (the version it knew + 1); null when it cannot, after a
   * renew whose answer was lost.
   */
  version: number | null;
  /**
   * "released": this call committed. "refused_terminal_same_holder": an earlier
   * attempt of the same worker committed and its answer was lost.
   */
  committed: "released" | "refused_terminal_same_holder";
}
export interface ResultWrittenEvent {
  jobId: string;
  workerId: string;
  status: "done" | "failed";
}
export interface FailedEvent {
  jobId: string;
  workerId: string;
  /**
   * The handler's error message: in the release's `error` (the job's
   * last_error) on a server with the queue, else written as the result `{ error }`.
   */
  error: string;
  /** true: the handler failed on the job's last attempt and the server dead-lettered it (a retry release answered failed). */
  deadLettered?: boolean;
}
/**
 * A handler threw (not a PermanentJobError), or its attempt timed out, and the
 * job went back to pending, to run again after the server's backoff (or after
 * `rateLimitedFor`, for a RateLimitedError).
 */
export interface RetriedEvent {
  jobId: string;
  workerId: string;
  /** The handler's error message (the job's last_error). */
  error: string;
  /** The attempt that failed, 1-based. */
  attempt: number;
  /** The job's cap on attempts; 0: none. */
  maxAttempts: number;
  /** The handler threw a RateLimitedError: the job is due again in this many seconds, and the attempt was given back. */
  rateLimitedFor?: number;
}
export interface SweptEvent {
  jobId: string;
  /** The holder whose expired lease was handed back. */
  claimedBy: string;
  /** The job's consecutive_orphan_count after this re-queue. */
  consecutiveOrphanCount: number;
}
export interface GaveUpEvent {
  jobId: string;
  /** The holder whose expired lease was the last straw. */
  claimedBy: string;
  /** How many times in a row the job had been orphaned when it was given up. */
  consecutiveOrphanCount: number;
}
export interface ErrorEvent {
  /**
   * What was being done: "claimNext", "renew", "heartbeat", "release",
   * "complete", "writeResult", "sweep", ... A heartbeat's or complete's error
   * is reported once per call (no jobId): it concerns every job in it.
   */
  op: string;
  jobId?: string;
  error: Error;
}

/** Event name -> listener arguments, for `EventEmitter<FleetEvents>`. */
export interface FleetEvents {
  claimed: [ClaimedEvent];
  renewed: [RenewedEvent];
  lease_lost: [LeaseLostEvent];
  released: [ReleasedEvent];
  result_written: [ResultWrittenEvent];
  failed: [FailedEvent];
  retried: [RetriedEvent];
  swept: [SweptEvent];
  gave_up: [GaveUpEvent];
  error: [ErrorEvent];
}
export type FleetEventName = keyof FleetEvents;

export type LogLevel = "debug" | "info" | "warn" | "error";
/** One structured log entry: the event's fields plus `level`, `event`, `source` and `time` (epoch ms). */
export type FleetLogEntry = Record<string, unknown> & {
  level: LogLevel;
  event: string;
  source: "worker" | "sweeper";
  time: number;
};
export type FleetLogger = (entry: FleetLogEntry) => void;

const LEVELS: Record<FleetEventName, LogLevel> = {
  claimed: "debug",
  renewed: "debug",
  lease_lost: "warn",
  released: "info",
  result_written: "debug",
  failed: "warn",
  retried: "warn",
  swept: "info",
  gave_up: "warn",
  error: "error",
};

/**
 * EventEmitter that also hands every event to the logger. An "error" event with
 * no listener is only logged: Node would otherwise throw it and take the whole
 * process down over one failed request.
 */
export class FleetEmitter extends EventEmitter<FleetEvents> {
  readonly #source: "worker" | "sweeper";
  readonly #logger: FleetLogger | undefined;

  constructor(source: "worker" | "sweeper", logger: FleetLogger | undefined) {
    super();
    this.#source = source;
    this.#logger = logger;
  }

  /**
   * A logger or listener that throws must not break the job it reports on (a
   * release half done, a result unwritten): its error becomes a process warning.
   */
  protected report<K extends FleetEventName>(event: K, payload: FleetEvents[K][0]): void {
    try {
      if (this.#logger) {
        const fields: Record<string, unknown> = { ...payload };
        if (event === "error") {
          const { error } = payload as ErrorEvent;
          fields["error"] = error.message;
          fields["errorName"] = error.name;
        }
        this.#logger({ ...fields, level: LEVELS[event], event, source: this.#source, time: Date.now() });
      }
      if (event === "error" && this.listenerCount("error") === 0) return;
      (this.emit as (e: K, p: FleetEvents[K][0]) => boolean)(event, payload);
    } catch (err) {
      process.emitWarning(`pb-fleet ${this.#source}: a "${event}" listener or logger threw: ${String(err)}`);
    }
  }
}
