/**
 * An in-memory FleetApi for the Worker and Sweeper unit tests: the rows live in
 * a Map and every claim/renew/release is decided by the project's real protocol
 * functions (src/lib/transitions), on Date.now() (which vi.useFakeTimers moves).
 * Every call is logged in order so tests can check what was sent when.
 */
import { afterEach, beforeEach, vi } from "vitest";
import type {
  ClaimNextOptions, ClaimResult, FleetApi, HeldJob, JobRecord, ListOptions,
} from "../../../src/client/fleet-client";
import { jobView, type JobRow } from "../../../src/lib/job-row";
import { isLeaseLive } from "../../../src/lib/lease";
import { decideClaim, decideRelease, decideRenew, isClaimable, isHeldStatus } from "../../../src/lib/transitions";
import type { ReleaseResponse, ReleaseTarget, RenewResponse } from "../../../src/lib/types";

export interface FakeCall {
  op: "claimNext" | "claim" | "renew" | "release" | "writeResult" | "listExpiredLeases";
  jobId?: string;
  workerId?: string;
  status?: ReleaseTarget;
  leaseSeconds?: number;
  leaseToken?: string;
  result?: unknown;
  at: number;
}

export class FakeFleet implements FleetApi {
  readonly rows = new Map<string, JobRow & { created: number }>();
  readonly results = new Map<string, unknown>();
  readonly calls: FakeCall[] = [];
  /** While true, claimNext finds nothing (so a lost job is not simply claimed again by the same worker). */
  pauseClaims = false;
  #nextId = 1;
  #nextToken = 1;

  add(fields: Partial<JobRow> = {}): JobRow {
    const id = fields.id ?? `job${this.#nextId++}`;
    const row = {
      id, probe_key: `key-${id}`, status: "pending", claimed_by: "", lease_expires_at: "", version: 0,
      reclaim_count: 0, consecutive_orphan_count: 0, lease_token: "", ...fields, created: this.#nextId,
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

  async claimNext(opts: ClaimNextOptions): Promise<HeldJob[]> {
    this.calls.push({ op: "claimNext", workerId: opts.workerId, at: Date.now() });
    if (this.pauseClaims) return [];
    const now = Date.now();
    const candidates = [...this.rows.values()]
      .filter((r) => isClaimable(r, now) && r.probe_key.startsWith(opts.probeKeyPrefix ?? ""))
      .sort((a, b) => a.created - b.created)
      .slice(0, opts.limit ?? 1);
    const won: HeldJob[] = [];
    for (const row of candidates) {
      const answer = this.#claim(row.id, opts.workerId, opts.leaseSeconds);
      if (answer.claimed) won.push(answer);
    }
    return won;
  }

  async claim(jobId: string, workerId: string, leaseSeconds?: number): Promise<ClaimResult> {
    this.calls.push({ op: "claim", jobId, workerId, leaseSeconds, at: Date.now() });
    return this.#claim(jobId, workerId, leaseSeconds);
  }

  #claim(jobId: string, workerId: string, leaseSeconds?: number): ClaimResult {
    const row = this.rows.get(jobId);
    if (!row) return { claimed: false };
    const token = `tok${this.#nextToken++}`;
    const decision = decideClaim(row, workerId, leaseSeconds, Date.now(), () => token);
    if (decision.kind === "refused") return { claimed: false };
    if (decision.kind === "already_held") {
      return { claimed: true, job: jobView(row), leaseToken: decision.leaseToken, alreadyHeld: true };
    }
    Object.assign(row, decision.patch);
    return { claimed: true, job: jobView(row), leaseToken: token, alreadyHeld: false };
  }

  async renew(jobId: string, workerId: string, leaseSeconds?: number, leaseToken?: string): Promise<RenewResponse> {
    this.calls.push({ op: "renew", jobId, workerId, leaseSeconds, leaseToken, at: Date.now() });
    const row = this.rows.get(jobId);
    if (!row) return { renewed: false };
    const patch = decideRenew(row, { workerId, leaseToken, leaseSeconds }, Date.now());
    if (patch === null) return { renewed: false };
    Object.assign(row, patch);
    return { renewed: true, job: jobView(row) };
  }

  async release(jobId: string, workerId: string, status: ReleaseTarget, leaseToken?: string): Promise<ReleaseResponse> {
    this.calls.push({ op: "release", jobId, workerId, status, leaseToken, at: Date.now() });
    const row = this.rows.get(jobId);
    if (!row) return { released: false, reason: "refused_not_holder" };
    const decision = decideRelease(row, { workerId, leaseToken, target: status }, Date.now());
    if (decision.kind === "refused") return { released: false, reason: decision.reason };
    Object.assign(row, decision.patch);
    return { released: true, job: jobView(row) };
  }

  async writeResult(jobId: string, result: unknown): Promise<void> {
    this.calls.push({ op: "writeResult", jobId, result, at: Date.now() });
    this.results.set(jobId, result);
  }

  async listExpiredLeases(opts: ListOptions = {}): Promise<JobRecord[]> {
    this.calls.push({ op: "listExpiredLeases", at: Date.now() });
    const now = Date.now();
    return [...this.rows.values()]
      .filter((r) => isHeldStatus(r.status) && !isLeaseLive(r.lease_expires_at, now))
      .filter((r) => r.probe_key.startsWith(opts.probeKeyPrefix ?? ""))
      .slice(0, opts.limit ?? 50)
      .map((r) => ({
        ...r, status: r.status as JobRecord["status"], created: "", updated: "", claimed_at: "", finished_at: "",
        requeued_at: "", result: this.results.get(r.id) ?? null,
      }));
  }
}

/** PocketBase's date text for `ms` from now (fake-timer clock). */
export function pbDateIn(ms: number): string {
  return new Date(Date.now() + ms).toISOString().replace("T", " ");
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
