/**
 * The Worker's claim loop: claim-next while the Worker runs, as many jobs as
 * the claim-ahead buffer asks for (see claim-ahead.ts), with backoff after an
 * empty or failed poll, and a wait for room when there is none. A worker
 * identity's client first has its identity read, whose id the Worker claims
 * under (see WorkerOptions.workerId).
 */
import { MAX_CLAIM_NEXT_LIMIT } from "../../lib/validate.js";
import { backoffDelay, sleep } from "../backoff.js";
import { toError } from "../errors.js";
import type { FleetApi, HeldJob, WorkerIdentity } from "../fleet-client.js";
import type { WorkerEvents } from "./events.js";

export interface ClaimLoopOptions {
  client: Pick<FleetApi, "claimNext" | "identity" | "isWorkerIdentity">;
  /** The id claims go under. */
  workerId: () => string;
  /** The client's worker identity was read, before any claim: the Worker claims under it from now on. */
  onIdentity: (identity: WorkerIdentity) => void;
  leaseSeconds: number;
  probeKeyPrefix: string | undefined;
  queue: string | string[] | undefined;
  poll: { initialMs: number; maxMs: number };
  events: WorkerEvents;
  /** Whether the Worker still claims (false once stop() is called). */
  isRunning: () => boolean;
  /** How many jobs the next claim asks for; 0: none now (the loop waits for roomMade()). */
  claimLimit: () => number;
  /** Holds `n` of the room while a claim is on the wire; the function returned gives it back (see claim-rides.ts). */
  reserve: (n: number) => () => void;
  /** Takes one claim (sent at `sentAt`); true when it added a job to start. */
  take: (held: HeldJob, sentAt: number) => boolean;
  /** Starts the jobs the claims added. */
  fill: () => void;
}

export class ClaimLoop {
  readonly #opts: ClaimLoopOptions;
  /** Aborted by stop() to cut a poll wait short. */
  readonly #wake = new AbortController();
  /** Wakes the loop waiting for room (a slot freed, the buffer drained, stop). */
  #roomMade: (() => void) | null = null;

  constructor(opts: ClaimLoopOptions) {
    this.#opts = opts;
  }

  /** Wakes the loop waiting for room, when there is some now (or it is stopping). */
  roomMade(): void {
    const wake = this.#roomMade;
    if (wake !== null && (!this.#opts.isRunning() || this.#opts.claimLimit() > 0)) {
      this.#roomMade = null;
      wake();
    }
  }

  /** Cuts the loop's waits short: the Worker is stopping (isRunning() is false already). */
  stop(): void {
    this.#wake.abort();
    this.roomMade();
  }

  /** Claims until the Worker stops. */
  async run(): Promise<void> {
    const { client, events } = this.#opts;
    // (Only then: an admin's first claim goes out at once, within start(), as it always has.)
    if (typeof client.identity === "function" && client.isWorkerIdentity !== false) await this.#readIdentity();
    let emptyPolls = 0;
    while (this.#opts.isRunning()) {
      const limit = this.#opts.claimLimit();
      if (limit <= 0) {
        await new Promise<void>((resolve) => {
          this.#roomMade = resolve;
        });
        this.#roomMade = null;
        continue;
      }
      const sentAt = Date.now();
      // The server's claim-next takes at most 100 a call: more free slots are filled by the next poll, at once.
      const asked = Math.min(limit, MAX_CLAIM_NEXT_LIMIT);
      const unreserve = this.#opts.reserve(asked);
      let held: HeldJob[];
      try {
        held = await client.claimNext({
          workerId: this.#opts.workerId(),
          leaseSeconds: this.#opts.leaseSeconds,
          limit: asked,
          probeKeyPrefix: this.#opts.probeKeyPrefix,
          ...(this.#opts.queue !== undefined ? { queue: this.#opts.queue } : {}),
        });
      } catch (err) {
        unreserve();
        events.report("error", { op: "claimNext", error: toError(err) });
        await sleep(backoffDelay(emptyPolls++, this.#opts.poll), this.#wake.signal);
        continue;
      }
      // Claims of jobs already running here start nothing: polling again at
      // once would only get them again, so such a poll counts as empty.
      let added = 0;
      for (const h of held) if (this.#opts.take(h, sentAt)) added++;
      unreserve();
      if (added > 0) this.#opts.fill();
      if (added === 0) {
        await sleep(backoffDelay(emptyPolls++, this.#opts.poll), this.#wake.signal);
        continue;
      }
      emptyPolls = 0;
    }
  }

  /**
   * Before the first claim: the client's worker identity, whose id the
   * workerId must be or begin with. A failure (a sign-in refused, the server
   * away) is reported and tried again after a pause, as a failed poll is.
   */
  async #readIdentity(): Promise<void> {
    for (let attempt = 0; this.#opts.isRunning(); attempt++) {
      let identity: WorkerIdentity | null;
      try {
        identity = await this.#opts.client.identity!();
      } catch (err) {
        this.#opts.events.report("error", { op: "identity", error: toError(err) });
        await sleep(backoffDelay(attempt, this.#opts.poll), this.#wake.signal);
        continue;
      }
      if (identity !== null) this.#opts.onIdentity(identity);
      return;
    }
  }
}
