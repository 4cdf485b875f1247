/**
 * An in-memory FleetApi for the Worker and Sweeper unit tests: the rows live in
 * a Map and every claim/renew/release/sweep/cancel is decided by the project's
 * real protocol functions (src/lib), on Date.now() (which vi.useFakeTimers
 * moves). Only the selection of candidate rows, which the server does in SQL,
 * is done here, with the same lib predicates. Every call is logged in order so
 * tests can check what was sent when.
 *
 * By default it is a server with the queue (docs/queue.md): claim-next answers the
 * queue's job view (payload, attempts, ...), renew stores progress, release
 * takes result/error and "retry", and it has the batch calls heartbeat and
 * complete. `queue = false` makes it a server from before the queue: the
 * reference's job view, no progress, result and error ignored, "retry" a 400,
 * and no batch calls (404). `batchCalls = false` is a server with the queue
 * but from before heartbeat and complete (404).
 *
 * heartbeat and complete check their request with the server's own
 * validation (a 400 for the whole call) and judge each item with decideRenew
 * and decideRelease, the model src/lib/batch-plans.ts is checked against. renewsSent() and
 * releasesSent() list what the server got per job, whichever way it came.
 */
import { afterEach, beforeEach, vi } from "vitest";
import { FleetHttpError } from "../../../src/client/errors";
import type {
  ClaimNextOptions, ClaimResult, CompleteAndClaimResponse, CompleteClaimOptions, FleetApi, HeartbeatOptions, HeldJob, JobRecord,
  ListOptions, ReleaseOptions, RenewOptions,
} from "../../../src/client/fleet-client";
import { DEFAULT_ORPHAN_CAP, SWEEP_BATCH } from "../../../src/lib/config";
import { jobView, parseJsonField, queueJobView, type JobBatch, type JobPatch, type JobRow } from "../../../src/lib/job-row";
import { blankJobRow } from "../../../src/lib/job-schema";
import { formatPbDate } from "../../../src/lib/lease";
import { firstInClaimOrder } from "../../../src/lib/queries";
import { sweepExpired } from "../../../src/lib/sweep";
import {
  decideCancel, decideClaim, decideRelease, decideRenew, isClaimable, isHeldStatus,
} from "../../../src/lib/transitions";
import type {
  CancelResponse, CompleteItem, CompleteResponse, HeartbeatItem, HeartbeatResponse, ReleaseResponse, ReleaseTarget,
  RenewResponse, SweepRequest, SweepResponse,
} from "../../../src/lib/types";
import { validateCompleteRequest, validateHeartbeatRequest } from "../../../src/lib/validate";

export interface FakeCall {
  op:
    | "claimNext" | "claim" | "renew" | "release" | "writeResult" | "listExpiredLeases" | "sweep" | "cancel"
    | "heartbeat" | "complete";
  jobId?: string;
  workerId?: string;
  status?: ReleaseTarget;
  leaseSeconds?: number;
  leaseToken?: string;
  /** writeResult's result, or the result a release carried. */
  result?: unknown;
  /** The error a release carried. */
  error?: string | null;
  /** The progress a renew carried. */
  progress?: unknown;
  probeKeyPrefix?: string;
  /** A heartbeat's leases or a complete's releases, as sent (JSON: undefined fields left out). */
  items?: Array<HeartbeatItem | CompleteItem>;
  /** Answered 404: a server without heartbeat/complete. */
  notFound?: true;
  /** claimNext's limit; a complete's claimNext limit (completeAndClaim). */
  limit?: number;
  claimLimit?: number;
  at: number;
}

/** Held, with a lease that has passed (or is unreadable): claimable by a steal, and the sweeper's work. */
function hasExpiredLease(row: JobRow, nowMs: number): boolean {
  return isHeldStatus(row.status) && isClaimable(row, nowMs);
}

export class FakeFleet implements FleetApi {
  readonly rows = new Map<string, JobRow>();
  readonly results = new Map<string, unknown>();
  readonly calls: FakeCall[] = [];
  /** While true, claimNext finds nothing (so a lost job is not simply claimed again by the same worker). */
  pauseClaims = false;
  /** false: a server without POST /api/fleet/sweep (sweep answers 404), as before it existed. */
  serverSweep = true;
  /** The server's PB_FLEET_MAX_ORPHANS (claim-next steals and server sweeps give up at it). */
  orphanCap = DEFAULT_ORPHAN_CAP;
  /** false: a server from before the queue (see the top of this file). */
  queue = true;
  /** false: a server without POST /api/fleet/heartbeat and /complete (both answer 404). */
  batchCalls = true;
  /**
   * completeAndClaim, absent unless a test turns it on (the Worker then claims
   * with its complete calls): `enableClaimRides("claims")`, a server that
   * claims in a complete; `"ignores"`, one from before that, answering no jobs.
   */
  completeAndClaim?: (workerId: string, releases: readonly CompleteItem[], claim: CompleteClaimOptions) => Promise<CompleteAndClaimResponse>;
  #nextId = 1;
  #nextToken = 1;
  #lastCreatedMs = 0;

  add(fields: Partial<JobRow> = {}): JobRow {
    const id = fields.id ?? `job${this.#nextId++}`;
    // Distinct and increasing, so oldest-first is the order rows were added.
    this.#lastCreatedMs = Math.max(Date.now(), this.#lastCreatedMs + 1);
    // JSON fields (payload, progress) are JSON text, as in JobRow: pass JSON.stringify(value).
    const row: JobRow = {
      ...blankJobRow(), id, created: formatPbDate(this.#lastCreatedMs), probe_key: `key-${id}`, status: "pending", queue: "default", ...fields,
    };
    this.rows.set(id, row);
    return row;
  }

  row(id: string): JobRow {
    const row = this.rows.get(id);
    if (!row) throw new Error(`no row ${id}`);
    return row;
  }

  callsOf(op: FakeCall["op"]): FakeCall[] {
    return this.calls.filter((c) => c.op === op);
  }

  /**
   * Every renew the server got, one entry per lease in order: a renew call as
   * logged, or one item of a heartbeat (op "heartbeat", with the call's
   * workerId, leaseSeconds and time). A heartbeat answered 404 renewed nothing.
   */
  renewsSent(): FakeCall[] {
    return this.#perJob("renew", "heartbeat");
  }

  /** Every release the server got, one entry per job in order: a release call, or one item of a complete (op "complete"). */
  releasesSent(): FakeCall[] {
    return this.#perJob("release", "complete");
  }

  #perJob(single: FakeCall["op"], batch: FakeCall["op"]): FakeCall[] {
    return this.calls.flatMap((c): FakeCall[] => {
      if (c.op === single) return [c];
      if (c.op !== batch || c.notFound) return [];
      const common: FakeCall = { op: batch, workerId: c.workerId, at: c.at };
      if (c.leaseSeconds !== undefined) common.leaseSeconds = c.leaseSeconds;
      return (c.items ?? []).map((item) => ({ ...common, ...item }));
    });
  }

  /** The progress stored for a job (null when none). */
  progressOf(id: string): unknown {
    return parseJsonField(this.row(id).progress);
  }

  /** Gives this fake completeAndClaim (see there): the releases as complete judges them, then a claim as claimNext makes. */
  enableClaimRides(server: "claims" | "ignores" = "claims"): void {
    this.completeAndClaim = async (workerId, releases, claim) => {
      const { results } = await this.complete(workerId, releases);
      const call = this.calls[this.calls.length - 1]!;
      call.claimLimit = claim.limit ?? 1;
      if (server === "ignores") return { results, jobs: null };
      return { results, jobs: this.#claimNext({ ...claim, workerId }) };
    };
  }

  /** claim-next: the oldest claimable rows, a steal counting as an orphaning (given up at orphanCap), as the server does. */
  async claimNext(opts: ClaimNextOptions): Promise<HeldJob[]> {
    this.calls.push({ op: "claimNext", workerId: opts.workerId, limit: opts.limit ?? 1, at: Date.now() });
    return this.#claimNext(opts);
  }

  #claimNext(opts: ClaimNextOptions): HeldJob[] {
    if (this.pauseClaims) return [];
    const now = Date.now();
    const limit = opts.limit ?? 1;
    const candidates = firstInClaimOrder(this.#withPrefix(opts.probeKeyPrefix).filter((r) => isClaimable(r, now)), Infinity);
    const won: HeldJob[] = [];
    for (const row of candidates) {
      if (won.length >= limit) break;
      const token = this.#newToken();
      const decision = decideClaim(row, opts.workerId, opts.leaseSeconds, now, () => token,
        { kind: "count_orphans", cap: this.orphanCap });
      if (decision.kind === "give_up") this.#write(row, decision.patch);
      if (decision.kind !== "win") continue;
      this.#write(row, decision.patch);
      won.push({ job: this.queue ? queueJobView(row) : jobView(row), leaseToken: token, alreadyHeld: false });
    }
    return won;
  }

  async claim(jobId: string, workerId: string, leaseSeconds?: number): Promise<ClaimResult> {
    this.calls.push({ op: "claim", jobId, workerId, leaseSeconds, at: Date.now() });
    const row = this.rows.get(jobId);
    if (!row) return { claimed: false };
    const token = this.#newToken();
    const decision = decideClaim(row, workerId, leaseSeconds, Date.now(), () => token);
    if (decision.kind === "already_held") {
      return { claimed: true, job: jobView(row), leaseToken: decision.leaseToken, alreadyHeld: true };
    }
    if (decision.kind !== "win") return { claimed: false };
    this.#write(row, decision.patch);
    return { claimed: true, job: jobView(row), leaseToken: token, alreadyHeld: false };
  }

  async renew(
    jobId: string, workerId: string, leaseSeconds?: number, leaseToken?: string, req?: RenewOptions,
  ): Promise<RenewResponse> {
    const call: FakeCall = { op: "renew", jobId, workerId, leaseSeconds, leaseToken, at: Date.now() };
    if (req?.progress !== undefined) call.progress = req.progress;
    this.calls.push(call);
    const row = this.rows.get(jobId);
    if (!row) return { renewed: false };
    // A server without the queue ignores a field it does not know; null means absent.
    const progress = this.queue ? req?.progress ?? undefined : undefined;
    const decision = decideRenew(row, { workerId, leaseToken, leaseSeconds, progress }, Date.now());
    if (decision.kind === "refused") return decision.reason === undefined ? { renewed: false } : { renewed: false, reason: decision.reason };
    this.#write(row, decision.patch);
    return { renewed: true, job: jobView(row) };
  }

  async release(
    jobId: string, workerId: string, status: ReleaseTarget, leaseToken?: string, req?: ReleaseOptions,
  ): Promise<ReleaseResponse> {
    const call: FakeCall = { op: "release", jobId, workerId, status, leaseToken, at: Date.now() };
    if (req?.result !== undefined) call.result = req.result;
    if (req?.error !== undefined) call.error = req.error;
    this.calls.push(call);
    if (!this.queue && status === "retry") {
      throw new FleetHttpError("release", 400, "status must be done|failed|pending", { error: "status must be done|failed|pending" });
    }
    const row = this.rows.get(jobId);
    if (!row) return { released: false, reason: "refused_not_holder" };
    const outcome = this.queue ? { result: req?.result ?? undefined, error: req?.error ?? undefined } : {};
    const decision = decideRelease(row, { workerId, leaseToken, target: status, ...outcome }, Date.now());
    if (decision.kind === "refused") return { released: false, reason: decision.reason };
    this.#write(row, decision.patch);
    return { released: true, job: jobView(row) };
  }

  /** POST /api/fleet/heartbeat: each lease judged as renew judges it, in one go. */
  async heartbeat(workerId: string, leases: readonly HeartbeatItem[], opts: HeartbeatOptions = {}): Promise<HeartbeatResponse> {
    // What the server gets: JSON.
    const body = JSON.parse(JSON.stringify({ workerId, leaseSeconds: opts.leaseSeconds, leases }));
    const call: FakeCall = { op: "heartbeat", workerId, items: body.leases, at: Date.now() };
    if (opts.leaseSeconds !== undefined) call.leaseSeconds = opts.leaseSeconds;
    this.calls.push(call);
    this.#batchEndpoint(call);
    const valid = validateHeartbeatRequest(body);
    if (!valid.ok) throw new FleetHttpError("heartbeat", 400, valid.error, { error: valid.error });
    const now = Date.now();
    return {
      results: valid.value.map((renewal) => {
        const row = this.rows.get(renewal.jobId);
        const decision = row ? decideRenew(row, renewal, now) : null;
        if (!row || decision === null || decision.kind === "refused") return { jobId: renewal.jobId, renewed: false } as const;
        const patch = decision.patch;
        const job = jobView(row, patch);
        this.#write(row, patch);
        return { jobId: renewal.jobId, renewed: true, job } as const;
      }),
    };
  }

  /** POST /api/fleet/complete: each release judged as release judges it, in one go. */
  async complete(workerId: string, releases: readonly CompleteItem[]): Promise<CompleteResponse> {
    const body = JSON.parse(JSON.stringify({ workerId, releases }));
    const call: FakeCall = { op: "complete", workerId, items: body.releases, at: Date.now() };
    this.calls.push(call);
    this.#batchEndpoint(call);
    const valid = validateCompleteRequest(body);
    if (!valid.ok) throw new FleetHttpError("complete", 400, valid.error, { error: valid.error });
    const now = Date.now();
    return {
      results: valid.value.map((release) => {
        const row = this.rows.get(release.jobId);
        if (!row) return { jobId: release.jobId, released: false, reason: "refused_not_holder" } as const;
        const decision = decideRelease(row, release, now);
        if (decision.kind === "refused") return { jobId: release.jobId, released: false, reason: decision.reason } as const;
        const job = jobView(row, decision.patch);
        this.#write(row, decision.patch);
        return { jobId: release.jobId, released: true, job } as const;
      }),
    };
  }

  /** A server without the batch calls answers 404, as PocketBase does for a route it does not have. */
  #batchEndpoint(call: FakeCall): void {
    if (this.queue && this.batchCalls) return;
    call.notFound = true;
    throw new FleetHttpError(call.op, 404, "Not Found.", { code: 404, message: "Not Found.", data: {} });
  }

  /** POST /api/fleet/cancel (not part of FleetApi: the Worker never cancels). */
  async cancel(jobId: string): Promise<CancelResponse> {
    this.calls.push({ op: "cancel", jobId, at: Date.now() });
    const row = this.rows.get(jobId);
    const patch = row ? decideCancel(row, Date.now()) : null;
    if (!row || patch === null) return { cancelled: false };
    this.#write(row, patch);
    return { cancelled: true, job: queueJobView(row) };
  }

  async writeResult(jobId: string, result: unknown): Promise<void> {
    this.calls.push({ op: "writeResult", jobId, result, at: Date.now() });
    this.results.set(jobId, result);
  }

  async listExpiredLeases(opts: ListOptions = {}): Promise<JobRecord[]> {
    this.calls.push({ op: "listExpiredLeases", at: Date.now() });
    const now = Date.now();
    return this.#withPrefix(opts.probeKeyPrefix)
      .filter((r) => hasExpiredLease(r, now))
      .slice(0, opts.limit ?? 50)
      .map((r) => ({
        ...r, status: r.status as JobRecord["status"], updated: "", claimed_at: "", finished_at: "",
        requeued_at: "", result: this.results.get(r.id) ?? null,
      }));
  }

  /** POST /api/fleet/sweep: the server's own sweep (src/lib/sweep) over this fake's rows. */
  async sweep(opts: SweepRequest = {}): Promise<SweepResponse> {
    this.calls.push({ op: "sweep", probeKeyPrefix: opts.probeKeyPrefix, at: Date.now() });
    if (!this.serverSweep) {
      throw new FleetHttpError("sweep", 404, "Not Found.", { code: 404, message: "Not Found.", data: {} });
    }
    const now = Date.now();
    const expired = this.#withPrefix(opts.probeKeyPrefix).filter((r) => hasExpiredLease(r, now));
    // The batch's query is SQL (expiredLeaseWhere); here it is the same rows, found with the lib's
    // predicates. Like the server's, it hands out rows as read, and writes go to the stored rows.
    const batch: JobBatch = {
      find: (_where, _order, limit) =>
        expired.sort((a, b) => (a.lease_expires_at < b.lease_expires_at ? -1 : a.lease_expires_at > b.lease_expires_at ? 1 : 0))
          .slice(0, limit)
          .map((r) => ({ ...r })),
      write: (row, patch) => this.#write(this.row(row.id), patch),
      // A sweep only finds and writes rows.
      insert: () => unused("insert"),
      queryOne: () => unused("queryOne"),
      queryAll: () => unused("queryAll"),
      execute: () => unused("execute"),
      noteWritten: () => unused("noteWritten"),
    };
    return sweepExpired(batch, now, this.orphanCap, opts.probeKeyPrefix ?? "", SWEEP_BATCH);
  }

  #withPrefix(prefix: string | undefined): JobRow[] {
    return [...this.rows.values()].filter((r) => r.probe_key.startsWith(prefix ?? ""));
  }

  #newToken(): string {
    return `tok${this.#nextToken++}`;
  }

  /**
   * Applies a patch; a `result` in it (a release's, or the server giving a job
   * up) goes where writeResult puts results, and progress is kept as JSON text
   * (as JobRow has it).
   */
  #write(row: JobRow, patch: JobPatch): void {
    const { result, progress, ...fields } = patch;
    Object.assign(row, fields);
    if ("progress" in patch) row.progress = progress === null || progress === undefined ? "" : JSON.stringify(progress);
    if ("result" in patch) this.results.set(row.id, result);
  }
}

function unused(what: string): never {
  throw new Error(`FakeFleet: the sweep's batch has no ${what}`);
}

/** PocketBase's date text for `ms` from now (fake-timer clock). */
export function pbDateIn(ms: number): string {
  return formatPbDate(Date.now() + ms);
}

/** Advances fake time until `promise` settles (at most `limitMs`), then returns it. */
export async function settle<T>(promise: Promise<T>, vi: { advanceTimersByTimeAsync(ms: number): Promise<unknown> }, limitMs = 120_000): Promise<T> {
  let done = false;
  promise.then(() => { done = true; }, () => { done = true; });
  for (let t = 0; !done && t < limitMs; t += 100) await vi.advanceTimersByTimeAsync(100);
  return promise;
}

/** A handler's work: resolves after `ms` (fake-timer time), rejects with the abort reason when `signal` fires. */
export function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(signal.reason);
    });
  });
}

/** Fake timers from a fixed instant for every test of the calling file. */
export function useFakeClock(): void {
  beforeEach(() => {
    vi.useFakeTimers({ now: Date.parse("2025-01-01T00:00:00Z") });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });
}
