/**
 * Sweeper: hands the jobs of dead holders back to pending. It lists
 * claimed/running rows whose lease has expired and releases each to pending
 * under its holder's id; a row orphaned maxReclaimAttempts times in a row is
 * given up (failed) instead of being re-queued forever. Every step is a
 * compare-and-set on the server, so any number of sweepers may run at once: a
 * row another sweeper (or its renewing holder) got to first is just skipped.
 */
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { backoffDelay, sleep } from "./backoff.js";
import { isTransientError, toError } from "./errors.js";
import { FleetEmitter, type FleetLogger } from "./events.js";
import type { FleetApi, JobRecord } from "./fleet-client.js";

export interface SweeperOptions {
  /** Pause between sweeps, ms (default 5 000). */
  interval?: number;
  /** consecutive_orphan_count at which an expired row is failed instead of re-queued (default 5). */
  maxReclaimAttempts?: number;
  /** Rows per list (default 100); a full batch is followed at once by another sweep. */
  batchSize?: number;
  /** Holder id used to claim a row it gives up on (default sweeper-<host>-<pid>-<random>). */
  sweeperId?: string;
  /** Only rows whose probe_key starts with this. */
  probeKeyPrefix?: string;
  /** Lease of the give-up claim, seconds (default 30): it only has to outlive one release. */
  leaseSeconds?: number;
  logger?: FleetLogger;
}

export interface SweepCounts {
  /** Expired rows listed. */
  listed: number;
  /** Released to pending. */
  requeued: number;
  /** Marked failed at the orphan cap. */
  gaveUp: number;
  /** refused_lease_live: the holder renewed after the list. */
  skippedLive: number;
  /** Someone else changed the row first (another sweeper, a claim, the holder's release). */
  skippedRaced: number;
  /** A held row with no claimed_by cannot be released by anyone; it stays claimable by expiry. */
  skippedNoHolder: number;
  /** Rows whose requests failed (each also reported as an "error" event). */
  errors: number;
}

const RESULT_WRITE_ATTEMPTS = 4;

export class Sweeper extends FleetEmitter {
  readonly sweeperId: string;
  readonly #client: FleetApi;
  readonly #interval: number;
  readonly #maxReclaimAttempts: number;
  readonly #batchSize: number;
  readonly #probeKeyPrefix: string | undefined;
  readonly #leaseSeconds: number;
  #current: Promise<SweepCounts> | null = null;
  #loop: Promise<void> | null = null;
  #wake: AbortController | null = null;

  constructor(client: FleetApi, opts: SweeperOptions = {}) {
    super("sweeper", opts.logger);
    const max = opts.maxReclaimAttempts ?? 5;
    if (!Number.isInteger(max) || max < 1) throw new TypeError("Sweeper: `maxReclaimAttempts` must be an integer >= 1");
    const batchSize = opts.batchSize ?? 100;
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 500) throw new TypeError("Sweeper: `batchSize` must be an integer from 1 to 500");
    this.#client = client;
    this.#interval = opts.interval ?? 5_000;
    this.#maxReclaimAttempts = max;
    this.#batchSize = batchSize;
    this.#probeKeyPrefix = opts.probeKeyPrefix;
    this.#leaseSeconds = opts.leaseSeconds ?? 30;
    this.sweeperId = opts.sweeperId ?? `sweeper-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  }

  get running(): boolean {
    return this.#loop !== null;
  }

  /** Sweeps every `interval` ms until stop(). */
  start(): this {
    if (this.#loop) return this;
    const wake = new AbortController();
    this.#wake = wake;
    this.#loop = (async () => {
      let failures = 0;
      while (!wake.signal.aborted) {
        let full = false;
        try {
          const counts = await this.sweepOnce();
          // A full batch that moved something may have more behind it: sweep again at once.
          // One that moved nothing (rows it must skip) would only be listed again: pause.
          full = counts.listed >= this.#batchSize && counts.requeued + counts.gaveUp > 0;
          failures = 0;
        } catch (err) {
          this.report("error", { op: "sweep", error: toError(err) });
          failures++;
        }
        if (wake.signal.aborted) break;
        if (full) continue;
        // After failed sweeps (server away), wait longer, up to 4 intervals.
        const pause = failures === 0 ? this.#interval : backoffDelay(failures, { initialMs: this.#interval, maxMs: this.#interval * 4 });
        await sleep(pause, wake.signal);
      }
    })();
    return this;
  }

  /** Stops the interval; resolves once a sweep in progress has finished. */
  async stop(): Promise<void> {
    this.#wake?.abort();
    await this.#loop;
    this.#loop = null;
    this.#wake = null;
  }

  /**
   * One pass over (at most batchSize) expired rows. Rejects only when the list
   * itself fails; a failing row is counted in `errors` and reported. A call while
   * a sweep runs waits for it and returns its counts.
   */
  sweepOnce(): Promise<SweepCounts> {
    if (!this.#current) {
      this.#current = this.#sweep().finally(() => {
        this.#current = null;
      });
    }
    return this.#current;
  }

  async #sweep(): Promise<SweepCounts> {
    const counts: SweepCounts = {
      listed: 0, requeued: 0, gaveUp: 0, skippedLive: 0, skippedRaced: 0, skippedNoHolder: 0, errors: 0,
    };
    const rows = await this.#client.listExpiredLeases({ limit: this.#batchSize, probeKeyPrefix: this.#probeKeyPrefix });
    counts.listed = rows.length;
    for (const row of rows) {
      if (!row.claimed_by) {
        counts.skippedNoHolder++;
        continue;
      }
      try {
        const outcome = (row.consecutive_orphan_count ?? 0) >= this.#maxReclaimAttempts
          ? await this.#giveUp(row)
          : await this.#requeue(row);
        counts[outcome]++;
      } catch (err) {
        counts.errors++;
        this.report("error", { op: "sweep", jobId: row.id, error: toError(err) });
      }
    }
    return counts;
  }

  async #requeue(row: JobRecord): Promise<"requeued" | "skippedLive" | "skippedRaced"> {
    // The row's token (when the server has fencing) makes the release fail if
    // the job was claimed again after the list.
    const answer = await this.#client.release(row.id, row.claimed_by, "pending", row.lease_token || undefined);
    if (answer.released) {
      this.report("swept", {
        jobId: row.id, claimedBy: row.claimed_by, consecutiveOrphanCount: (row.consecutive_orphan_count ?? 0) + 1,
      });
      return "requeued";
    }
    return answer.reason === "refused_lease_live" ? "skippedLive" : "skippedRaced";
  }

  /**
   * Failing a job goes through the compare-and-set like any other finish: claim
   * it (its lease has expired, so it is claimable), release it failed, and only
   * then write why.
   */
  async #giveUp(row: JobRecord): Promise<"gaveUp" | "skippedRaced"> {
    const orphaned = row.consecutive_orphan_count;
    const claim = await this.#client.claim(row.id, this.sweeperId, this.#leaseSeconds);
    if (!claim.claimed) return "skippedRaced";
    this.report("claimed", {
      jobId: row.id,
      probeKey: claim.job.probe_key,
      workerId: this.sweeperId,
      version: claim.job.version,
      leaseToken: claim.leaseToken,
      alreadyHeld: claim.alreadyHeld,
    });
    const answer = await this.#client.release(row.id, this.sweeperId, "failed", claim.leaseToken);
    if (!answer.released && answer.reason !== "refused_terminal_same_holder") {
      this.report("lease_lost", { jobId: row.id, workerId: this.sweeperId, reason: answer.reason });
      return "skippedRaced";
    }
    this.report("released", {
      jobId: row.id,
      workerId: this.sweeperId,
      status: "failed",
      version: answer.released ? answer.job.version : null,
      committed: answer.released ? "released" : "refused_terminal_same_holder",
    });
    const error = `gave up after ${orphaned} orphaned leases`;
    await this.#writeResult(row.id, { error, reason: "orphan_cap", orphanedLeases: orphaned });
    this.report("result_written", { jobId: row.id, workerId: this.sweeperId, status: "failed" });
    this.report("gave_up", { jobId: row.id, claimedBy: row.claimed_by, consecutiveOrphanCount: orphaned });
    return "gaveUp";
  }

  /** The release has committed: the result must follow, so transient failures are retried a few times. */
  async #writeResult(jobId: string, result: unknown): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#client.writeResult(jobId, result);
      } catch (err) {
        if (!isTransientError(err) || attempt + 1 >= RESULT_WRITE_ATTEMPTS) throw err;
        await sleep(backoffDelay(attempt, { initialMs: 200, maxMs: 2_000 }));
      }
    }
  }
}
