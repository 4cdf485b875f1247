// The Worker's side of flow control (docs/flow-control.md "The client"): `handlers` per
// queue (claim-next's `queue`, each job run by its queue's handler, the
// constructor's checks), timeouts (the handler's signal aborted at deadline −
// min(2 s, timeout / 10) with a JobTimeoutError, one `retry` release while
// the lease is live, the handler's late outcome ignored, a refused release
// followed by nothing), a renew refused as "timed_out", and RateLimitedError
// released with rateLimitedFor.
//
// The server here is FlowFleet, a small FleetApi of its own that keeps the
// docs/flow-control.md rules the Worker relies on: claim-next filters by queue and gives a
// job with timeout_seconds a deadline (its claim + the timeout) that clamps
// every lease; a renew at or past the deadline answers reason "timed_out";
// a release needs the holder, its token and a live lease.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RateLimitedError } from "../../src/client/errors";
import type { FleetEvents } from "../../src/client/events";
import type {
  ClaimNextOptions, ClaimResult, ClaimedJobView, FleetApi, HeartbeatOptions, HeldJob, JobRecord, ReleaseOptions,
} from "../../src/client/fleet-client";
import { JobTimeoutError, LeaseLostError, Worker, type WorkerJob, type WorkerOptions } from "../../src/client/worker";
import { MAX_RATE_LIMITED_FOR_SECONDS } from "../../src/lib/flow-limits";
import { formatPbDate } from "../../src/lib/lease";
import { MAX_CLAIM_QUEUES } from "../../src/lib/queue-names";
import type {
  CompleteItem, CompleteResponse, HeartbeatItem, HeartbeatResponse, ReleaseResponse, ReleaseTarget, RenewResponse, SweepResponse,
} from "../../src/lib/types";

const T0 = Date.parse("2025-01-01T00:00:00Z");
beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

interface FlowJob {
  id: string;
  queue: string;
  status: "pending" | "claimed" | "running" | "done" | "failed";
  claimedBy: string;
  token: string;
  leaseEnd: number;
  /** The current attempt's deadline (the server's clock minus skewMs); null: none. */
  deadline: number | null;
  timeoutSeconds: number;
  attempts: number;
  maxAttempts: number;
  version: number;
  runAt: number;
  lastError: string;
}

/** One release the server got: a release call, or one item of a complete. */
interface SentRelease {
  op: "release" | "complete";
  jobId: string;
  status: ReleaseTarget;
  error?: string | null;
  rateLimitedFor?: number;
  result?: unknown;
  at: number;
}

class FlowFleet implements FleetApi {
  readonly jobs = new Map<string, FlowJob>();
  readonly claimNextCalls: Array<ClaimNextOptions & { at: number }> = [];
  readonly renews: Array<{ jobId: string; at: number }> = [];
  readonly releases: SentRelease[] = [];
  /** How far the server's clock is ahead of the worker's (ms): it shows in the dates of its job views. */
  skewMs = 0;
  /** false: claim-next ignores `queue` (a server from before named queues). */
  filtersQueues = true;
  /** A retry release's wait without rateLimitedFor (the server's backoff). */
  backoffMs = 1_000;
  #next = 1;

  add(fields: Partial<FlowJob> = {}): FlowJob {
    const job: FlowJob = {
      id: `job${this.#next++}`, queue: "default", status: "pending", claimedBy: "", token: "", leaseEnd: 0, deadline: null,
      timeoutSeconds: 0, attempts: 0, maxAttempts: 25, version: 0, runAt: 0, lastError: "", ...fields,
    };
    this.jobs.set(job.id, job);
    return job;
  }

  job(id: string): FlowJob {
    const job = this.jobs.get(id);
    if (job === undefined) throw new Error(`no job ${id}`);
    return job;
  }

  /** claim-next's job view, dates on the server's clock. */
  #view(job: FlowJob): ClaimedJobView {
    return {
      id: job.id, probe_key: `key-${job.id}`, status: job.status as "claimed", claimed_by: job.claimedBy,
      lease_expires_at: formatPbDate(job.leaseEnd + this.skewMs), version: job.version, queue: job.queue, payload: null,
      priority: 0, run_at: formatPbDate(job.runAt + this.skewMs), attempts: job.attempts, max_attempts: job.maxAttempts,
      last_error: job.lastError, dead_lettered_at: "", unique_key: "", progress: null, group_key: "",
      timeout_seconds: job.timeoutSeconds, deadline: job.deadline === null ? null : formatPbDate(job.deadline + this.skewMs),
    };
  }

  async claimNext(opts: ClaimNextOptions): Promise<HeldJob[]> {
    this.claimNextCalls.push({ ...opts, at: Date.now() });
    const now = Date.now();
    const queues = opts.queue === undefined || !this.filtersQueues ? null : typeof opts.queue === "string" ? [opts.queue] : opts.queue;
    const won: HeldJob[] = [];
    for (const job of this.jobs.values()) {
      if (won.length >= (opts.limit ?? 1)) break;
      if (job.status !== "pending" || job.runAt > now || (queues !== null && !queues.includes(job.queue))) continue;
      job.status = "claimed";
      job.claimedBy = opts.workerId;
      job.token = `tok-${job.id}-${++job.attempts}`;
      job.version++;
      job.deadline = job.timeoutSeconds > 0 ? now + job.timeoutSeconds * 1000 : null;
      job.leaseEnd = Math.min(now + (opts.leaseSeconds ?? 30) * 1000, job.deadline ?? Infinity);
      won.push({ job: this.#view(job), leaseToken: job.token, alreadyHeld: false });
    }
    return won;
  }

  async claim(): Promise<ClaimResult> {
    return { claimed: false };
  }

  #renewOne(jobId: string, workerId: string, leaseSeconds: number | undefined, leaseToken: string | undefined): RenewResponse {
    this.renews.push({ jobId, at: Date.now() });
    const job = this.jobs.get(jobId);
    const now = Date.now();
    const holder = job !== undefined && (job.status === "claimed" || job.status === "running") && job.claimedBy === workerId &&
      (leaseToken === undefined || leaseToken === job.token);
    if (!holder) return { renewed: false };
    if (job.deadline !== null && now >= job.deadline) return { renewed: false, reason: "timed_out" };
    if (job.leaseEnd <= now) return { renewed: false };
    job.status = "running";
    job.version++;
    job.leaseEnd = Math.min(now + (leaseSeconds ?? 30) * 1000, job.deadline ?? Infinity);
    return { renewed: true, job: this.#view(job) };
  }

  async renew(jobId: string, workerId: string, leaseSeconds?: number, leaseToken?: string): Promise<RenewResponse> {
    return this.#renewOne(jobId, workerId, leaseSeconds, leaseToken);
  }

  async heartbeat(workerId: string, leases: readonly HeartbeatItem[], opts: HeartbeatOptions = {}): Promise<HeartbeatResponse> {
    return {
      results: leases.map((lease) => ({ jobId: lease.jobId, ...this.#renewOne(lease.jobId, workerId, opts.leaseSeconds, lease.leaseToken) })),
    };
  }

  #releaseOne(op: SentRelease["op"], workerId: string, item: CompleteItem): ReleaseResponse {
    const sent: SentRelease = { op, jobId: item.jobId, status: item.status, at: Date.now() };
    for (const key of ["error", "rateLimitedFor", "result"] as const) if (item[key] !== undefined) Object.assign(sent, { [key]: item[key] });
    this.releases.push(sent);
    const job = this.jobs.get(item.jobId);
    const now = Date.now();
    if (job === undefined || (job.status !== "claimed" && job.status !== "running") || job.claimedBy !== workerId ||
        (item.leaseToken !== undefined && item.leaseToken !== job.token) || job.leaseEnd <= now) {
      return { released: false, reason: "refused_not_holder" };
    }
    job.version++;
    job.lastError = item.error ?? job.lastError;
    if (item.status === "retry") {
      job.status = "pending";
      job.claimedBy = "";
      job.runAt = now + (item.rateLimitedFor !== undefined ? item.rateLimitedFor * 1000 : this.backoffMs);
      if (item.rateLimitedFor !== undefined) job.attempts--; // given back
    } else {
      job.status = item.status === "pending" ? "pending" : item.status;
    }
    return { released: true, job: this.#view(job) };
  }

  async release(jobId: string, workerId: string, status: ReleaseTarget, leaseToken?: string, req?: ReleaseOptions): Promise<ReleaseResponse> {
    const item: CompleteItem = { jobId, status };
    if (leaseToken !== undefined) item.leaseToken = leaseToken;
    if (req?.error !== undefined && req.error !== null) item.error = req.error;
    if (req?.result !== undefined) item.result = req.result;
    if (req?.rateLimitedFor !== undefined) item.rateLimitedFor = req.rateLimitedFor;
    return this.#releaseOne("release", workerId, item);
  }

  async complete(workerId: string, releases: readonly CompleteItem[]): Promise<CompleteResponse> {
    return {
      results: releases.map((item) => {
        const answer = this.#releaseOne("complete", workerId, item);
        return answer.released ? { jobId: item.jobId, released: true, job: answer.job } : { jobId: item.jobId, ...answer };
      }),
    };
  }

  async writeResult(): Promise<void> {
    throw new Error("FlowFleet: a server with the queue never needs a result write");
  }

  async listExpiredLeases(): Promise<JobRecord[]> {
    return [];
  }

  async sweep(): Promise<SweepResponse> {
    return { requeued: 0, gaveUp: 0, timedOut: 0, jobs: [] };
  }
}

/** A FlowFleet without `complete`: one release per job. */
function withoutComplete(fake: FlowFleet): FleetApi {
  return {
    claimNext: (o) => fake.claimNext(o),
    claim: () => fake.claim(),
    renew: (jobId, workerId, leaseSeconds, leaseToken) => fake.renew(jobId, workerId, leaseSeconds, leaseToken),
    heartbeat: (...a) => fake.heartbeat(...a),
    release: (...a) => fake.release(...a),
    writeResult: () => fake.writeResult(),
    listExpiredLeases: () => fake.listExpiredLeases(),
    sweep: () => fake.sweep(),
  };
}

const EVENTS = ["claimed", "renewed", "lease_lost", "released", "failed", "retried", "error"] as const;

function startWorker(client: FleetApi, opts: Partial<WorkerOptions>) {
  const events: Array<[keyof FleetEvents, any]> = [];
  const worker = new Worker(client, { workerId: "w1", leaseSeconds: 30, pollInterval: 60_000, ...opts });
  for (const name of EVENTS) worker.on(name, (e: unknown) => events.push([name, e]));
  worker.start();
  return { worker, events };
}

const named = (events: Array<[keyof FleetEvents, any]>, name: keyof FleetEvents) => events.filter(([n]) => n === name).map(([, e]) => e);

/** Advances fake time until `promise` settles (at most `limitMs`). */
async function settle<T>(promise: Promise<T>, limitMs = 120_000): Promise<T> {
  let done = false;
  promise.then(() => { done = true; }, () => { done = true; });
  for (let t = 0; !done && t < limitMs; t += 100) await vi.advanceTimersByTimeAsync(100);
  return promise;
}

/** A handler's work: resolves after `ms`, rejects with the abort reason when `signal` fires. */
function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(signal.reason);
    });
  });
}

describe("Worker with handlers per queue", () => {
  it("claims only from the handlers' queues (claim-next's `queue`, an array) and runs each job with its queue's handler", async () => {
    const fake = new FlowFleet();
    const email = fake.add({ queue: "emails" });
    const probe = fake.add({ queue: "probes" });
    const other = fake.add({ queue: "reports" });
    const ran: string[] = [];
    const { worker } = startWorker(fake, {
      concurrency: 5,
      handlers: {
        emails: async (job) => void ran.push(`emails:${job.id}`),
        probes: async (job) => void ran.push(`probes:${job.id}`),
      },
    });
    await vi.advanceTimersByTimeAsync(100);
    await settle(worker.stop());

    expect(fake.claimNextCalls[0]).toMatchObject({ queue: ["emails", "probes"], workerId: "w1" });
    expect(fake.claimNextCalls.every((c) => JSON.stringify(c.queue) === '["emails","probes"]')).toBe(true);
    expect(ran.sort()).toEqual([`emails:${email.id}`, `probes:${probe.id}`]);
    expect(fake.job(email.id).status).toBe("done");
    expect(fake.job(probe.id).status).toBe("done");
    expect(fake.job(other.id).status).toBe("pending");
  });

  it("a job of a queue it has no handler for (a server that ignored `queue`) runs no handler and is released retry saying so", async () => {
    const fake = new FlowFleet();
    fake.filtersQueues = false;
    const stray = fake.add({ queue: "reports" });
    const emails = vi.fn(async () => "sent");
    const { worker } = startWorker(fake, { handlers: { emails } });
    await vi.advanceTimersByTimeAsync(100);
    await settle(worker.stop());

    expect(emails).not.toHaveBeenCalled();
    expect(fake.releases).toEqual([expect.objectContaining({ jobId: stray.id, status: "retry" })]);
    expect(fake.releases[0]!.error).toBe('Worker: no handler for queue "reports" (this worker has handlers for emails)');
  });

  it("a single handler keeps today's claims: no `queue` in claim-next, or the `queue` option as given", async () => {
    const fake = new FlowFleet();
    fake.add({ queue: "emails" });
    const a = startWorker(fake, { handler: async () => "ok" });
    await vi.advanceTimersByTimeAsync(100);
    await settle(a.worker.stop());
    expect(fake.claimNextCalls[0]).not.toHaveProperty("queue");

    const b = startWorker(fake, { handler: async () => "ok", queue: ["emails", "probes"] });
    await vi.advanceTimersByTimeAsync(100);
    await settle(b.worker.stop());
    expect(fake.claimNextCalls.at(-1)).toMatchObject({ queue: ["emails", "probes"] });
  });

  it(`takes up to ${MAX_CLAIM_QUEUES} queues, all of them sent to claim-next`, async () => {
    const fake = new FlowFleet();
    const names = Array.from({ length: MAX_CLAIM_QUEUES }, (_, i) => `q${i}`);
    const handlers = Object.fromEntries(names.map((name) => [name, async () => name]));
    const { worker } = startWorker(fake, { handlers });
    await vi.advanceTimersByTimeAsync(100);
    await settle(worker.stop());
    expect(fake.claimNextCalls[0]!.queue).toEqual(names);
  });

  const fn = async () => null;
  it.each([
    ["handler and handlers", { handler: fn, handlers: { emails: fn } }, /give `handler` \(one for every job\) or `handlers` \(one per queue\), not both/],
    ["neither", {}, /`handler` must be a function .* or give `handlers`/],
    ["a handler that is not a function", { handler: "run" }, /`handler` must be a function/],
    ["queue with handlers", { handlers: { emails: fn }, queue: "emails" }, /give `queue` or `handlers`, not both/],
    ["no handlers", { handlers: {} }, new RegExp(`\`handlers\` must name 1 to ${MAX_CLAIM_QUEUES} queues .*got 0`)],
    ["17 handlers", { handlers: Object.fromEntries(Array.from({ length: MAX_CLAIM_QUEUES + 1 }, (_, i) => [`q${i}`, fn])) },
      new RegExp(`must name 1 to ${MAX_CLAIM_QUEUES} queues .*got ${MAX_CLAIM_QUEUES + 1}`)],
    ["a bad queue name", { handlers: { "no spaces": fn } }, /`handlers`: "no spaces" is not a queue name/],
    ["handlers an array", { handlers: [fn] }, /`handlers` must be an object/],
    ["a handler of handlers that is not a function", { handlers: { emails: fn, probes: 5 } }, /`handlers.probes` must be a function/],
  ])("the constructor refuses %s with a TypeError", (_what, opts, says) => {
    const fake = new FlowFleet();
    expect(() => new Worker(fake, { workerId: "w1", ...(opts as Partial<WorkerOptions>) })).toThrow(TypeError);
    expect(() => new Worker(fake, { workerId: "w1", ...(opts as Partial<WorkerOptions>) })).toThrow(says);
  });
});

describe("Worker timeouts", () => {
  it.each([
    [30, 28_000], // min(2 s, 3 s)
    [10, 9_000], // min(2 s, 1 s)
    [1, 900], // min(2 s, 0.1 s)
  ])("timeout %i s: the handler's signal aborts at %i ms with a JobTimeoutError, and ONE retry release goes while the lease is live", async (timeoutSeconds, abortAt) => {
    const fake = new FlowFleet();
    const { id } = fake.add({ timeoutSeconds });
    let reason: unknown;
    let abortedAt = -1;
    const { worker, events } = startWorker(fake, {
      handler: async (_job, signal) => {
        signal.addEventListener("abort", () => {
          reason = signal.reason;
          abortedAt = Date.now() - T0;
        });
        await wait(10 * 60_000, signal);
        return "never";
      },
    });
    await vi.advanceTimersByTimeAsync(abortAt - 1);
    expect(abortedAt).toBe(-1);
    expect(fake.releases).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(abortedAt).toBe(abortAt);
    expect(reason).toBeInstanceOf(JobTimeoutError);
    expect(reason).toMatchObject({ message: `timed out after ${timeoutSeconds} s`, jobId: id, timeoutSeconds });
    await vi.advanceTimersByTimeAsync(50);
    await settle(worker.stop());

    expect(fake.releases).toEqual([
      { op: "complete", jobId: id, status: "retry", error: `timed out after ${timeoutSeconds} s`, at: expect.any(Number) },
    ]);
    const releasedAt = fake.releases[0]!.at - T0;
    expect(releasedAt).toBeGreaterThanOrEqual(abortAt);
    expect(releasedAt).toBeLessThan(timeoutSeconds * 1000); // before the deadline: the server took it
    expect(fake.job(id)).toMatchObject({ status: "pending", lastError: `timed out after ${timeoutSeconds} s` });
    expect(named(events, "retried")).toEqual([
      { jobId: id, workerId: "w1", error: `timed out after ${timeoutSeconds} s`, attempt: 1, maxAttempts: 25 },
    ]);
    expect(named(events, "lease_lost")).toEqual([]);
  });

  it("the handler's later return is ignored: no second release, and its slot is free once it returns", async () => {
    const fake = new FlowFleet();
    fake.backoffMs = 10 * 60_000; // not claimed again meanwhile
    const { id } = fake.add({ timeoutSeconds: 30 });
    const { worker, events } = startWorker(fake, {
      // Ignores its signal, and returns long after the deadline.
      handler: async () => {
        await wait(45_000);
        return "late result";
      },
    });
    await vi.advanceTimersByTimeAsync(29_000);
    expect(fake.releases.map((r) => r.status)).toEqual(["retry"]);
    expect(worker.inFlight).toBe(1); // its handler still runs
    await vi.advanceTimersByTimeAsync(20_000);
    expect(worker.inFlight).toBe(0);
    await settle(worker.stop());

    expect(fake.releases).toEqual([expect.objectContaining({ jobId: id, status: "retry", error: "timed out after 30 s" })]);
    expect(fake.releases.some((r) => r.status === "done" || r.result !== undefined)).toBe(false);
    expect(named(events, "released")).toHaveLength(1);
  });

  it("claimed again while its timed-out handler still runs, the job's next run starts only once that handler has returned", async () => {
    const fake = new FlowFleet();
    const { id } = fake.add({ timeoutSeconds: 30 });
    const runs: Array<{ attempt: number; from: number; to: number }> = [];
    const { worker } = startWorker(fake, {
      concurrency: 2, pollInterval: 500, maxPollInterval: 500,
      handler: async (job) => {
        const from = Date.now() - T0;
        await wait(job.attempt === 1 ? 40_000 : 1_000); // the first ignores its signal
        runs.push({ attempt: job.attempt, from, to: Date.now() - T0 });
        return "second run";
      },
    });
    await vi.advanceTimersByTimeAsync(35_000);
    // Released retry at 28 s, due again at 29 s, claimed again by the next poll: its run waits.
    expect(fake.job(id)).toMatchObject({ claimedBy: "w1", attempts: 2 });
    expect(["claimed", "running"]).toContain(fake.job(id).status);
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(10_000);
    await settle(worker.stop());

    expect(runs).toEqual([{ attempt: 1, from: 0, to: 40_000 }, { attempt: 2, from: 40_000, to: 41_000 }]);
    expect(fake.releases.map((r) => [r.status, r.error ?? r.result])).toEqual([["retry", "timed out after 30 s"], ["done", "second run"]]);
    expect(fake.job(id).status).toBe("done");
  });

  it("a handler that throws once aborted (the usual) is not reported either: the timeout's release is the job's one report", async () => {
    const fake = new FlowFleet();
    fake.backoffMs = 10 * 60_000; // not claimed again meanwhile
    const { id } = fake.add({ timeoutSeconds: 20, maxAttempts: 0 });
    const { worker } = startWorker(fake, { handler: async (_job, signal) => wait(60_000, signal) });
    await vi.advanceTimersByTimeAsync(25_000);
    await settle(worker.stop());
    // Retry even without an attempt cap (as the server's own timeout does), and once.
    expect(fake.releases).toEqual([expect.objectContaining({ jobId: id, status: "retry", error: "timed out after 20 s" })]);
  });

  it("if the timeout's release is refused, nothing more is written for the job: no renew, no release", async () => {
    const fake = new FlowFleet();
    const { id } = fake.add({ timeoutSeconds: 30 });
    const { worker, events } = startWorker(fake, {
      leaseSeconds: 9, // renewed every 3 s
      handler: async () => {
        await wait(40_000);
        return "late";
      },
    });
    await vi.advanceTimersByTimeAsync(27_000);
    const renewsBefore = fake.renews.length;
    expect(renewsBefore).toBeGreaterThan(0);
    // Another holder by the server's reckoning: the release will be refused.
    fake.job(id).claimedBy = "w2";
    await vi.advanceTimersByTimeAsync(1_100);
    expect(fake.releases).toEqual([expect.objectContaining({ jobId: id, status: "retry" })]);
    expect(named(events, "lease_lost")).toEqual([{ jobId: id, workerId: "w1", reason: "refused_not_holder" }]);
    await vi.advanceTimersByTimeAsync(20_000);
    await settle(worker.stop());

    expect(fake.releases).toHaveLength(1);
    expect(fake.renews.length).toBe(renewsBefore);
    expect(named(events, "released")).toEqual([]);
  });

  it.each([
    ["an hour ahead", 3_600_000],
    ["an hour behind", -3_600_000],
  ])("the server's clock %s changes nothing: the deadline is read from the claim's answer, not this machine's clock", async (_what, skewMs) => {
    const fake = new FlowFleet();
    fake.skewMs = skewMs;
    const { id } = fake.add({ timeoutSeconds: 30 });
    let abortedAt = -1;
    const { worker } = startWorker(fake, {
      handler: async (_job, signal) => {
        signal.addEventListener("abort", () => {
          abortedAt = Date.now() - T0;
        });
        await wait(60_000, signal);
      },
    });
    await vi.advanceTimersByTimeAsync(30_000);
    await settle(worker.stop());
    expect(abortedAt).toBe(28_000);
    expect(fake.releases).toEqual([expect.objectContaining({ jobId: id, status: "retry", error: "timed out after 30 s" })]);
    expect(fake.job(id).status).toBe("pending");
  });

  it("the handler sees its job's timeout_seconds and deadline; a job without a deadline is never timed out", async () => {
    const fake = new FlowFleet();
    fake.add({ timeoutSeconds: 0 });
    const seen: WorkerJob[] = [];
    const { worker } = startWorker(fake, {
      handler: async (job, signal) => {
        seen.push(job);
        await wait(90_000, signal);
        return "slow but fine";
      },
    });
    await vi.advanceTimersByTimeAsync(91_000);
    await settle(worker.stop());
    expect(seen[0]).toMatchObject({ timeout_seconds: 0, deadline: null });
    expect(fake.releases).toEqual([expect.objectContaining({ status: "done", result: "slow but fine" })]);
  });

  it("a renew refused with reason \"timed_out\" loses the lease with that reason and writes nothing", async () => {
    const fake = new FlowFleet();
    const { id } = fake.add();
    vi.spyOn(fake, "heartbeat").mockResolvedValueOnce({ results: [{ jobId: id, renewed: false, reason: "timed_out" }] });
    let reason: unknown;
    const { worker, events } = startWorker(fake, {
      leaseSeconds: 3,
      handler: async (_job, signal) => {
        await wait(10_000, signal).catch((err) => {
          reason = err;
          throw err;
        });
      },
    });
    await vi.advanceTimersByTimeAsync(1_500);
    await settle(worker.stop());
    expect(named(events, "lease_lost")).toEqual([{ jobId: id, workerId: "w1", reason: "timed_out" }]);
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect(reason).toMatchObject({ reason: "timed_out" });
    expect(fake.releases).toEqual([]);
  });
});

describe("RateLimitedError", () => {
  it("releases retry with rateLimitedFor (rounded up) and the error's message: due again then, the attempt given back", async () => {
    const fake = new FlowFleet();
    const { id } = fake.add({ maxAttempts: 3 });
    const { worker, events } = startWorker(fake, {
      handler: async () => {
        throw new RateLimitedError({ retryAfterSeconds: 12.3, message: "429 from api.example.com" });
      },
    });
    await vi.advanceTimersByTimeAsync(100);
    await settle(worker.stop());

    expect(fake.releases).toEqual([
      { op: "complete", jobId: id, status: "retry", error: "429 from api.example.com", rateLimitedFor: 13, at: expect.any(Number) },
    ]);
    expect(fake.job(id)).toMatchObject({ status: "pending", attempts: 0, runAt: fake.releases[0]!.at + 13_000 });
    expect(named(events, "retried")).toEqual([
      { jobId: id, workerId: "w1", error: "429 from api.example.com", attempt: 1, maxAttempts: 3, rateLimitedFor: 13 },
    ]);
  });

  it.each([
    [0, 1],
    [-5, 1],
    [0.2, 1],
    [1e9, MAX_RATE_LIMITED_FOR_SECONDS],
    [Number.POSITIVE_INFINITY, MAX_RATE_LIMITED_FOR_SECONDS],
  ])("retryAfterSeconds %s is sent as rateLimitedFor %s", async (retryAfterSeconds, sent) => {
    const fake = new FlowFleet();
    fake.add();
    const { worker } = startWorker(fake, {
      handler: async () => {
        throw new RateLimitedError({ retryAfterSeconds });
      },
    });
    await vi.advanceTimersByTimeAsync(100);
    await settle(worker.stop());
    expect(fake.releases).toEqual([expect.objectContaining({ status: "retry", rateLimitedFor: sent })]);
  });

  it("goes as a plain release on a FleetApi without complete; a job without an attempt cap is retried too, not failed", async () => {
    const fake = new FlowFleet();
    const { id } = fake.add({ maxAttempts: 0 });
    const { worker } = startWorker(withoutComplete(fake), {
      handler: async () => {
        throw new RateLimitedError({ retryAfterSeconds: 60 });
      },
    });
    await vi.advanceTimersByTimeAsync(100);
    await settle(worker.stop());
    expect(fake.releases).toEqual([
      { op: "release", jobId: id, status: "retry", error: "rate limited: retry after 60 s", rateLimitedFor: 60, at: expect.any(Number) },
    ]);
  });

  it("an error named RateLimitedError with a retryAfterSeconds (another copy of the class) counts too; one without is a plain retry", async () => {
    const fake = new FlowFleet();
    fake.add();
    fake.add();
    let calls = 0;
    const { worker } = startWorker(fake, {
      concurrency: 2,
      handler: async () => {
        throw calls++ === 0
          ? Object.assign(new Error("copy"), { name: "RateLimitedError", retryAfterSeconds: 5 })
          : Object.assign(new Error("no wait given"), { name: "RateLimitedError" });
      },
    });
    await vi.advanceTimersByTimeAsync(100);
    await settle(worker.stop());
    expect(fake.releases).toEqual([
      expect.objectContaining({ status: "retry", error: "copy", rateLimitedFor: 5 }),
      expect.objectContaining({ status: "retry", error: "no wait given" }),
    ]);
    expect(fake.releases[1]).not.toHaveProperty("rateLimitedFor");
  });

  it("the constructor refuses a retryAfterSeconds that is not a number", () => {
    expect(() => new RateLimitedError({ retryAfterSeconds: Number.NaN })).toThrow(/`retryAfterSeconds` must be a number/);
    expect(() => new RateLimitedError({ retryAfterSeconds: "5" as unknown as number })).toThrow(TypeError);
    expect(new RateLimitedError({ retryAfterSeconds: 3 })).toMatchObject({ name: "RateLimitedError", retryAfterSeconds: 3, message: "rate limited: retry after 3 s" });
  });
});
