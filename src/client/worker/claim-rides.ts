/**
 * Claims on the wire, and the claims that ride on complete calls.
 *
 * A Worker's finished jobs go to the server in `complete` calls (the
 * completion queue); the slots they free are what its next claim would fill.
 * So a complete call asks for those jobs itself (completeAndClaim: complete
 * with `claimNext`, one transaction, one request instead of two; BullMQ's
 * moveToFinished with fetchNext is the same idea). The claim loop still
 * claims whatever no ride covers: the first jobs, and room a ride did not
 * fill (an emptier queue, a failed call, a server that ignored the claim).
 *
 * Two claimers must not fill the same room twice, so every claim on the wire
 * (the loop's poll, each ride) holds a reservation of its limit until its
 * jobs are taken, and each asks only for room no reservation holds. The
 * room counted for rides includes what the releases of the rides on the
 * wire will free (ClaimAheadBuffer.claimLimitAfter); the loop's is only the
 * room free now, less what the rides hold beyond their own releases. A
 * ride's jobs are taken before its releases settle, so for a moment the
 * Worker holds more jobs than its slots; they wait in the buffer until the
 * finished ones leave.
 *
 * A ride is sent once (completeAndClaim is never retried: a second try after
 * a lost answer would claim again); the completion queue's retries of the
 * same releases go without it. A server that answers a ride without `jobs`
 * (from before rides: it ignores the field) gets none again.
 */
import { MAX_CLAIM_NEXT_LIMIT } from "../../lib/validate.js";
import type { CompleteClaimOptions, HeldJob } from "../fleet-client.js";

/** One ride: the claim a complete call carries, and what became of it. */
export interface ClaimRide {
  readonly claim: CompleteClaimOptions & { limit: number };
  /**
   * The call's outcome (the first settle counts, later ones are ignored):
   * the jobs it claimed (sent at `sentAt`), "unsupported" (answered without
   * `jobs`), or "failed" (no answer: whether it claimed is unknown, and any
   * job it did is left to its lease).
   */
  settle(outcome: readonly HeldJob[] | "unsupported" | "failed", sentAt: number): void;
}

/** What the completion queue asks before each complete call. */
export interface ClaimRider {
  /** A ride for a call of `releases` finished jobs, or null: none now. */
  ride(releases: number): ClaimRide | null;
}

export interface ClaimRidesOptions {
  /** Whether the Worker still claims (false once stop() is called). */
  isRunning: () => boolean;
  /** The room a claim may fill now (ClaimAheadBuffer.claimLimit). */
  room: () => number;
  /** The room once `ended` of the jobs held have left (ClaimAheadBuffer.claimLimitAfter). */
  roomAfter: (ended: number) => number;
  /** The Worker's claim options (its lease, prefix and queues). */
  claim: () => CompleteClaimOptions;
  /** Takes one claimed job (see ClaimLoopOptions.take); true when it added a job to start. */
  take: (held: HeldJob, sentAt: number) => boolean;
  /** Starts the jobs taken. */
  fill: () => void;
  /** Room may have been left over: the claim loop looks again. */
  roomMade: () => void;
}

export class ClaimRides implements ClaimRider {
  readonly #opts: ClaimRidesOptions;
  /** Jobs asked for by the claims on the wire (the loop's and the rides'). */
  #reserved = 0;
  /** Finished jobs whose releases ride with a claim on the wire: room once they are answered. */
  #releasesOnWire = 0;
  /** A server answered a ride without `jobs`: it ignores them. */
  #unsupported = false;
  /** Resolved as each ride on the wire settles. */
  readonly #onWire = new Set<Promise<void>>();

  constructor(opts: ClaimRidesOptions) {
    this.#opts = opts;
  }

  /** The room the claim loop may ask for now: free now, and asked for by no claim on the wire. */
  available(): number {
    return Math.min(this.#opts.room(), this.#opts.roomAfter(this.#releasesOnWire) - this.#reserved);
  }

  /** Holds `n` of the room for a claim on the wire; the returned function gives it back (once its jobs are taken). */
  reserve(n: number): () => void {
    this.#reserved += n;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#reserved -= n;
    };
  }

  ride(releases: number): ClaimRide | null {
    if (!this.#opts.isRunning() || this.#unsupported) return null;
    const limit = Math.min(MAX_CLAIM_NEXT_LIMIT, this.#opts.roomAfter(this.#releasesOnWire + releases) - this.#reserved);
    if (limit <= 0) return null;
    const unreserve = this.reserve(limit);
    this.#releasesOnWire += releases;
    let landed!: () => void;
    const onWire = new Promise<void>((resolve) => (landed = resolve));
    this.#onWire.add(onWire);
    let settled = false;
    return {
      claim: { ...this.#opts.claim(), limit },
      settle: (outcome, sentAt) => {
        if (settled) return;
        settled = true;
        if (outcome === "unsupported") this.#unsupported = true;
        else if (outcome !== "failed") {
          let added = 0;
          for (const held of outcome) if (this.#opts.take(held, sentAt)) added++;
          if (added > 0) this.#opts.fill();
        }
        unreserve();
        this.#releasesOnWire -= releases;
        this.#onWire.delete(onWire);
        landed();
        this.#opts.roomMade();
      },
    };
  }

  /** Resolves once no ride is on the wire (a stop winds the jobs down only after their jobs are taken). */
  async landed(): Promise<void> {
    while (this.#onWire.size > 0) await Promise.all([...this.#onWire]);
  }
}
