/**
 * Sweeper: hands the jobs of dead holders back to pending, and gives up
 * (fails) a job orphaned too many times in a row instead of re-queueing it
 * forever.
 *
 * On a server with POST /api/fleet/sweep (probed once: a 404 means it has
 * none) each sweep is one call: the server does the work in one transaction,
 * with its own orphan cap (PB_FLEET_MAX_ORPHANS), and says what it did to
 * each job. On an older server the Sweeper does it itself: it lists
 * claimed/running rows whose lease has expired and releases each to pending
 * under its holder's id, or fails it once it has been orphaned
 * maxReclaimAttempts times. Either way every step is a compare-and-set on the
 * server, so any number of sweepers may run at once: a row another sweeper (or
 * its renewing holder) got to first is just skipped.
 */
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { DEFAULT_ORPHAN_CAP, SWEEP_BATCH } from "../lib/config.js";
import { DEFAULT_LEASE_SECONDS } from "../lib/lease.js";
import { ORPHAN_CAP_REASON } from "../lib/transitions.js";
import type { SweepResponse } from "../lib/types.js";
import { backoffDelay, sleep } from "./backoff.js";
import { isMissingEndpoint, isTransientError, toError } from "./errors.js";
import { FleetEmitter, type FleetLogger } from "./events.js";
import { MAX_LIST_LIMIT, type FleetApi, type JobRecord } from "./fleet-client.js";
import { integerFrom, LEASE_SECONDS, numberOption, POSITIVE_MS, workerIdOption, type NumberRule } from "./options.js";

export interface SweeperOptions {
  /** Pause between sweeps, ms (default 5 000). */
  interval?: number;
  /**
   * consecutive_orphan_count at which an expired row is failed instead of
   * re-queued (default 5). Only on a server without POST /api/fleet/sweep:
   * where the server sweeps, its own cap, PB_FLEET_MAX_ORPHANS, applies.
   */
  maxReclaimAttempts?: number;
  /**
   * Rows per list (1 to 500, default 100) on a server without POST
   * /api/fleet/sweep; the server's sweep takes up to its own batch (500).
   * A full batch is followed at once by another sweep.
   */
  batchSize?: number;
  /**
   * Holder id used to claim a row it gives up on (default
   * sweeper-<host>-<pid>-<random>); only without POST /api/fleet/sweep.
   */
  sweeperId?: string;
  /** Only rows whose probe_key starts with this. */
  probeKeyPrefix?: string;
  /**
   * Lease of the give-up claim, seconds (default 30): it only has to outlive
   * one release. Only without POST /api/fleet/sweep.
   */
  leaseSeconds?: number;
  logger?: FleetLogger;
}

export interface SweepCounts {
  /** Expired rows listed (where the server sweeps: the jobs it reported). */
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

interface SweepRound {
  counts: SweepCounts;
  /** The sweep took a whole batch and moved something: more may be waiting. */
  full: boolean;
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
  #current: Promise<SweepRound> | null = null;
  #loop: Promise<void> | null = null;
  #wake: AbortController | null = null;
  /** undefined until the first sweep tells whether the server has POST /api/fleet/sweep. */
  #serverSweeps: boolean | undefined;

  constructor(client: FleetApi, opts: SweeperOptions = {}) {
    super("sweeper", opts.logger);
    const option = (name: keyof SweeperOptions, fallback: number, rule: NumberRule): number =>
      numberOption("Sweeper", name, opts[name], fallback, rule);
    this.#interval = option("interval", 5_000, POSITIVE_MS);
    this.#maxReclaimAttempts = option("maxReclaimAttempts", DEFAULT_ORPHAN_CAP, integerFrom(1));
    this.#batchSize = option("batchSize", 100, integerFrom(1, MAX_LIST_LIMIT));
    this.#leaseSeconds = option("leaseSeconds", DEFAULT_LEASE_SECONDS, LEASE_SECONDS);
    this.sweeperId = opts.sweeperId === undefined
      ? `sweeper-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`
      : workerIdOption("Sweeper", "sweeperId", opts.sweeperId);
    this.#client = client;
    this.#probeKeyPrefix = opts.probeKeyPrefix;
  }

  get running(): boolean {
    return this.#loop !== null;
  }

  /** Whether the server does the sweeping (POST /api/fleet/sweep); undefined until the first sweep. */
  get serverSweeps(): boolean | undefined {
    return this.#serverSweeps;
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
          // A full batch that moved something may have more behind it: sweep again at once.
          // One that moved nothing (rows it must skip) would only be listed again: pause.
          full = (await this.#sweepRound()).full;
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
   * One pass over (at most one batch of) expired rows. Rejects only when the
   * server's sweep or the list itself fails; a failing row is counted in
   * `errors` and reported. A call while a sweep runs waits for it and returns
   * its counts.
   */
  async sweepOnce(): Promise<SweepCounts> {
    return (await this.#sweepRound()).counts;
  }

  #sweepRound(): Promise<SweepRound> {
    if (!this.#current) {
      this.#current = this.#sweep().finally(() => {
        this.#current = null;
      });
    }
    return this.#current;
  }

  async #sweep(): Promise<SweepRound> {
    if (this.#serverSweeps === false) return this.#sweepByList();
    let answer: SweepResponse;
    try {
      answer = await this.#client.sweep({ probeKeyPrefix: this.#probeKeyPrefix });
    } catch (err) {
      // Only the first answer is a probe: once the server has swept, a 404 is an error like any other.
      if (this.#serverSweeps !== undefined || !isMissingEndpoint(err)) throw err;
      this.#serverSweeps = false;
      return this.#sweepByList();
    }
    this.#serverSweeps = true;
    return this.#reportServerSweep(answer);
  }

  /** The server swept: its answer becomes the counts and one event per job. */
  #reportServerSweep(answer: SweepResponse): SweepRound {
    for (const job of answer.jobs) {
      const event = { jobId: job.id, claimedBy: job.claimedBy, consecutiveOrphanCount: job.consecutiveOrphanCount };
      if (job.outcome === "requeued") this.report("swept", event);
      else if (job.outcome === "gave_up") this.report("gave_up", event);
      // (timed_out: the server retried the job as a failed attempt, docs/flow-control.md "Timeouts"; neither event fits it.)
    }
    // (`timedOut`: a server with flow control; an older one has no such count.)
    const moved = answer.requeued + answer.gaveUp + (typeof answer.timedOut === "number" ? answer.timedOut : 0);
    return {
      counts: { ...noCounts(), listed: answer.jobs.length, requeued: answer.requeued, gaveUp: answer.gaveUp },
      full: moved >= SWEEP_BATCH,
    };
  }

  async #sweepByList(): Promise<SweepRound> {
    const counts = noCounts();
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
    return { counts, full: counts.listed >= this.#batchSize && counts.requeued + counts.gaveUp > 0 };
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
    await this.#writeResult(row.id, { error, reason: ORPHAN_CAP_REASON, orphanedLeases: orphaned });
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

function noCounts(): SweepCounts {
  return { listed: 0, requeued: 0, gaveUp: 0, skippedLive: 0, skippedRaced: 0, skippedNoHolder: 0, errors: 0 };
}
