/**
 * The worker's side of the protocol: the compare-and-set endpoints (claim,
 * claim-next, renew, release, their batches heartbeat and complete) and the
 * sweep, each with its retry rule; and which of the later endpoints the server
 * has, found out by their first 404. FleetClient documents each call.
 */
import { MAX_BATCH_ITEMS } from "../../lib/queue.js";
import type {
  ClaimNextRequest,
  ClaimRequest,
  CompleteItem,
  CompleteRequest,
  CompleteResponse,
  CompleteResult,
  HeartbeatItem,
  HeartbeatRequest,
  HeartbeatResponse,
  HeartbeatResult,
  ReleaseRequest,
  ReleaseResponse,
  ReleaseTarget,
  RenewRequest,
  RenewResponse,
  SweepRequest,
  SweepResponse,
} from "../../lib/types.js";
import { MAX_CLAIM_NEXT_LIMIT } from "../../lib/validate.js";
import { FleetHttpError, isMissingEndpoint } from "../errors.js";
import { isObject } from "../json-object.js";
import { checkBatchList, checkBatchWorkerId, checkClaimQueue, checkLeaseSeconds, checkProgress, checkReleaseFields, toCompleteItem, toHeartbeatItem } from "../queue-options.js";
import {
  parseClaim, parseClaimNext, parseCompleteResults, parseHeartbeatResults, parseRelease, parseRenew, parseSweep,
} from "./answers.js";
import type { JobRecords } from "./records.js";
import { retryOnce, type AuthorizedCalls } from "./transport.js";
import type {
  ClaimNextOptions, ClaimResult, CompleteAndClaimResponse, CompleteClaimOptions, HeartbeatOptions, HeldJob, ReleaseOptions,
  RenewOptions, RequestOptions,
} from "./types.js";

export class ProtocolCalls {
  readonly #calls: AuthorizedCalls;
  /** Where a server without claim-next finds claimable rows. */
  readonly #records: JobRecords;
  /** undefined until the first claimNext tells whether the server has /api/fleet/claim-next. */
  #hasClaimNext: boolean | undefined;
  /** undefined until the first heartbeat (complete) tells whether the server has /api/fleet/heartbeat (/complete). */
  #hasHeartbeat: boolean | undefined;
  #hasComplete: boolean | undefined;

  constructor(calls: AuthorizedCalls, records: JobRecords) {
    this.#calls = calls;
    this.#records = records;
  }

  get hasClaimNext(): boolean | undefined {
    return this.#hasClaimNext;
  }

  get hasHeartbeat(): boolean | undefined {
    return this.#hasHeartbeat;
  }

  get hasComplete(): boolean | undefined {
    return this.#hasComplete;
  }

  async claim(jobId: string, workerId: string, leaseSeconds?: number, req?: RequestOptions): Promise<ClaimResult> {
    const body = await retryOnce(() =>
      this.#calls.post("claim", "/api/fleet/claim", { jobId, workerId, leaseSeconds } satisfies ClaimRequest, req));
    return parseClaim("claim", body);
  }

  async renew(
    jobId: string, workerId: string, leaseSeconds?: number, leaseToken?: string, req?: RenewOptions,
  ): Promise<RenewResponse> {
    const progress = req?.progress ?? undefined;
    checkProgress("renew", progress);
    const body = await retryOnce(() =>
      this.#calls.post("renew", "/api/fleet/renew", { jobId, workerId, leaseSeconds, leaseToken, progress } satisfies RenewRequest, req));
    return parseRenew(body);
  }

  async release(
    jobId: string, workerId: string, status: ReleaseTarget, leaseToken?: string, req?: ReleaseOptions,
  ): Promise<ReleaseResponse> {
    const result = req?.result ?? undefined;
    const error = req?.error ?? undefined;
    const rateLimitedFor = req?.rateLimitedFor;
    checkReleaseFields("release", status, { result, error, rateLimitedFor });
    const body = await retryOnce(() =>
      this.#calls.post("release", "/api/fleet/release", {
        jobId, workerId, status, leaseToken, result, error, rateLimitedFor,
      } satisfies ReleaseRequest, req));
    return parseRelease(body);
  }

  async heartbeat(workerId: string, leases: readonly HeartbeatItem[], opts: HeartbeatOptions): Promise<HeartbeatResponse> {
    const op = "heartbeat";
    checkBatchWorkerId(op, workerId);
    checkLeaseSeconds(op, opts.leaseSeconds);
    const items = checkBatchList(op, "leases", leases).map((lease, i) => toHeartbeatItem(`${op}: leases[${i}]`, lease));
    const results: HeartbeatResult[] = [];
    for (let start = 0; start < items.length; start += MAX_BATCH_ITEMS) {
      const chunk = items.slice(start, start + MAX_BATCH_ITEMS);
      const body = await this.#batchCall(op, start, {
        workerId, leaseSeconds: opts.leaseSeconds, leases: chunk,
      } satisfies HeartbeatRequest, opts);
      results.push(...parseHeartbeatResults(body, chunk));
    }
    return { results };
  }

  async complete(workerId: string, releases: readonly CompleteItem[], req?: RequestOptions): Promise<CompleteResponse> {
    const op = "complete";
    checkBatchWorkerId(op, workerId);
    const items = checkBatchList(op, "releases", releases).map((release, i) => toCompleteItem(`${op}: releases[${i}]`, release));
    const results: CompleteResult[] = [];
    for (let start = 0; start < items.length; start += MAX_BATCH_ITEMS) {
      const chunk = items.slice(start, start + MAX_BATCH_ITEMS);
      const body = await this.#batchCall(op, start, { workerId, releases: chunk } satisfies CompleteRequest, req);
      results.push(...parseCompleteResults(body, chunk));
    }
    return { results };
  }

  async completeAndClaim(
    workerId: string, releases: readonly CompleteItem[], claim: CompleteClaimOptions, req?: RequestOptions,
  ): Promise<CompleteAndClaimResponse> {
    const op = "completeAndClaim";
    checkBatchWorkerId(op, workerId);
    const items = checkBatchList(op, "releases", releases).map((release, i) => toCompleteItem(`${op}: releases[${i}]`, release));
    if (items.length > MAX_BATCH_ITEMS) {
      throw new TypeError(`${op}: releases must be at most ${MAX_BATCH_ITEMS} items (one transaction); got ${items.length}`);
    }
    const queue = checkClaimQueue(op, claim.queue);
    const claimNext: CompleteRequest["claimNext"] = {
      leaseSeconds: claim.leaseSeconds, limit: claim.limit, probeKeyPrefix: claim.probeKeyPrefix || undefined, queue,
    };
    // Sent once: a retry after a lost answer would claim a second time.
    const body = await this.#batchCall("complete", 0, { workerId, releases: items, claimNext } satisfies CompleteRequest, req, false);
    const results = parseCompleteResults(body, items);
    // A server from before claimNext in complete ignores it: no `jobs`.
    const jobs = isObject(body) && body["jobs"] !== undefined ? parseClaimNext({ jobs: body["jobs"] }) : null;
    return { results, jobs };
  }

  /**
   * One chunk of heartbeat or complete, retried once unless `retry` is false;
   * a 404 to the first chunk says the server has no such endpoint.
   */
  async #batchCall(
    op: "heartbeat" | "complete", start: number, body: HeartbeatRequest | CompleteRequest, req?: RequestOptions, retry = true,
  ): Promise<unknown> {
    const path = `/api/fleet/${op}`;
    let answer: unknown;
    try {
      const send = () => this.#calls.post(op, path, body as unknown as Record<string, unknown>, req);
      answer = await (retry ? retryOnce(send) : send());
    } catch (err) {
      // Only a 404 before the server ever answered one is a probe: a server
      // that has answered a chunk has the endpoint.
      const known = op === "heartbeat" ? this.#hasHeartbeat : this.#hasComplete;
      if (start > 0 || known === true || !isMissingEndpoint(err)) throw err;
      if (op === "heartbeat") this.#hasHeartbeat = false;
      else this.#hasComplete = false;
      const instead = op === "heartbeat" ? "renew" : "release";
      throw new FleetHttpError(op, 404, `this server has no POST ${path} (a pb-fleet from before it): ${instead} each job instead`,
        (err as FleetHttpError).body, { cause: err });
    }
    if (op === "heartbeat") this.#hasHeartbeat = true;
    else this.#hasComplete = true;
    return answer;
  }

  async claimNext(opts: ClaimNextOptions, req?: RequestOptions): Promise<HeldJob[]> {
    const queue = checkClaimQueue("claimNext", opts.queue);
    if (this.#hasClaimNext !== false) {
      try {
        const body = await this.#calls.post("claimNext", "/api/fleet/claim-next", {
          workerId: opts.workerId,
          leaseSeconds: opts.leaseSeconds,
          limit: opts.limit,
          probeKeyPrefix: opts.probeKeyPrefix || undefined,
          queue,
        } satisfies ClaimNextRequest, req);
        const held = parseClaimNext(body);
        this.#hasClaimNext = true;
        return held;
      } catch (err) {
        if (!(this.#hasClaimNext === undefined && isMissingEndpoint(err))) throw err;
        this.#hasClaimNext = false;
      }
    }
    // Listing cannot filter by queue: a server without claim-next has no queues.
    if (queue !== undefined) {
      throw new FleetHttpError("claimNext", 404, "this server has no POST /api/fleet/claim-next (a pb-fleet from before it), " +
        "which `queue` needs; nothing was claimed", {});
    }
    return this.#claimNextByList(opts, req);
  }

  async #claimNextByList(opts: ClaimNextOptions, req?: RequestOptions): Promise<HeldJob[]> {
    const limit = Math.max(1, Math.min(opts.limit ?? 1, MAX_CLAIM_NEXT_LIMIT));
    // A window wider than `limit`, tried in random order: workers polling at
    // once then mostly try different rows instead of all racing for the oldest.
    // Only a server without claim-next comes here, and claim-next came before run_at: it has no run_at to filter on.
    const listed = await this.#records.listClaimable({ limit: limit * 4 + 4, probeKeyPrefix: opts.probeKeyPrefix }, req, false);
    const candidates = shuffle(listed);
    const won: HeldJob[] = [];
    for (const row of candidates) {
      if (won.length >= limit) break;
      let answer: ClaimResult;
      try {
        answer = await this.claim(row.id, opts.workerId, opts.leaseSeconds, req);
      } catch (err) {
        // Jobs already won are ours under live leases: dropping them would leave
        // them unworked until the leases lapse. Hand them over and stop (the
        // server is failing); a lasting error shows again on the next call.
        if (won.length === 0) throw err;
        break;
      }
      if (answer.claimed) won.push({ job: answer.job, leaseToken: answer.leaseToken, alreadyHeld: answer.alreadyHeld });
    }
    return won;
  }

  async sweep(opts: SweepRequest, req?: RequestOptions): Promise<SweepResponse> {
    const body = await this.#calls.post("sweep", "/api/fleet/sweep", {
      probeKeyPrefix: opts.probeKeyPrefix || undefined,
    } satisfies SweepRequest, req);
    return parseSweep(body);
  }
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}
