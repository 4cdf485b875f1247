/**
 * An in-memory FleetApi for the Worker and Sweeper unit tests: the rows live in
 * a Map and every claim/renew/release/sweep is decided by the project's real
 * protocol functions (src/lib), on Date.now() (which vi.useFakeTimers moves).
 * Only the selection of candidate rows, which the server does in SQL, is done
 * here, with the same lib predicates. Every call is logged in order so tests
 * can check what was sent when.
 */
import { afterEach, beforeEach, vi } from "vitest";
import { FleetHttpError } from "../../../src/client/errors";
import type {
  ClaimNextOptions, ClaimResult, FleetApi, HeldJob, JobRecord, ListOptions,
} from "../../../src/client/fleet-client";
import { DEFAULT_ORPHAN_CAP, SWEEP_BATCH } from "../../../src/lib/config";
import { jobView, type JobBatch, type JobPatch, type JobRow } from "../../../src/lib/job-row";
import { formatPbDate } from "../../../src/lib/lease";
import { oldestFirst } from "../../../src/lib/queries";
import { sweepExpired } from "../../../src/lib/sweep";
import { decideClaim, decideRelease, decideRenew, isClaimable, isHeldStatus } from "../../../src/lib/transitions";
import type {
  ReleaseResponse, ReleaseTarget, RenewResponse, SweepRequest, SweepResponse,
} from "../../../src/lib/types";

export interface FakeCall {
  op: "claimNext" | "claim" | "renew" | "release" | "writeResult" | "listExpiredLeases" | "sweep";
  jobId?: string;
  workerId?: string;
  status?: ReleaseTarget;
  leaseSeconds?: number;
  leaseToken?: string;
  result?: unknown;
  probeKeyPrefix?: string;
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
  #nextId = 1;
  #nextToken = 1;
  #lastCreatedMs = 0;

  add(fields: Partial<JobRow> = {}): JobRow {
    const id = fields.id ?? `job${this.#nextId++}`;
    // Distinct and increasing, so oldest-first is the order rows were added.
    this.#lastCreatedMs = Math.max(Date.now(), this.#lastCreatedMs + 1);
    const row: JobRow = {
      id, created: formatPbDate(this.#lastCreatedMs), probe_key: `key-${id}`, status: "pending", claimed_by: "",
      lease_expires_at: "", version: 0, reclaim_count: 0, consecutive_orphan_count: 0, lease_token: "", ...fields,
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

  /** claim-next: the oldest claimable rows, a steal counting as an orphaning (given up at orphanCap), as the server does. */
  async claimNext(opts: ClaimNextOptions): Promise<HeldJob[]> {
    this.calls.push({ op: "claimNext", workerId: opts.workerId, at: Date.now() });
    if (this.pauseClaims) return [];
    const now = Date.now();
    const limit = opts.limit ?? 1;
    const candidates = oldestFirst(this.#withPrefix(opts.probeKeyPrefix).filter((r) => isClaimable(r, now)), Infinity);
    const won: HeldJob[] = [];
    for (const row of candidates) {
      if (won.length >= limit) break;
      const token = this.#newToken();
      const decision = decideClaim(row, opts.workerId, opts.leaseSeconds, now, () => token,
        { kind: "count_orphans", cap: this.orphanCap });
      if (decision.kind === "give_up") this.#write(row, decision.patch);
      if (decision.kind !== "win") continue;
      this.#write(row, decision.patch);
      won.push({ job: jobView(row), leaseToken: token, alreadyHeld: false });
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

  async renew(jobId: string, workerId: string, leaseSeconds?: number, leaseToken?: string): Promise<RenewResponse> {
    this.calls.push({ op: "renew", jobId, workerId, leaseSeconds, leaseToken, at: Date.now() });
    const row = this.rows.get(jobId);
    if (!row) return { renewed: false };
    const patch = decideRenew(row, { workerId, leaseToken, leaseSeconds }, Date.now());
    if (patch === null) return { renewed: false };
    this.#write(row, patch);
    return { renewed: true, job: jobView(row) };
  }

  async release(jobId: string, workerId: string, status: ReleaseTarget, leaseToken?: string): Promise<ReleaseResponse> {
    this.calls.push({ op: "release", jobId, workerId, status, leaseToken, at: Date.now() });
    const row = this.rows.get(jobId);
    if (!row) return { released: false, reason: "refused_not_holder" };
    const decision = decideRelease(row, { workerId, leaseToken, target: status }, Date.now());
    if (decision.kind === "refused") return { released: false, reason: decision.reason };
    this.#write(row, decision.patch);
    return { released: true, job: jobView(row) };
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
    };
    return sweepExpired(batch, now, this.orphanCap, opts.probeKeyPrefix ?? "", SWEEP_BATCH);
  }

  #withPrefix(prefix: string | undefined): JobRow[] {
    return [...this.rows.values()].filter((r) => r.probe_key.startsWith(prefix ?? ""));
  }

  #newToken(): string {
    return `tok${this.#nextToken++}`;
  }

  /** Applies a patch; a `result` in it (the server giving a job up) goes where writeResult puts results. */
  #write(row: JobRow, patch: JobPatch): void {
    const { result, ...fields } = patch;
    Object.assign(row, fields);
    if ("result" in patch) this.results.set(row.id, result);
  }
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
