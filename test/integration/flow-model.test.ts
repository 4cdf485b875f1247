// Model-based property for flow control (docs/flow-control.md), in the manner of
// queue-model.test.ts: random sequences of calls from three workers against a
// model of queues, groups and their limits, checked against the real server.
// The calls: enqueue into two queues of the run, in two groups or none;
// claim-next for any queue (the run's prefix), for one queue or a list of
// them (with and without the prefix); claim by id; release and complete (done,
// failed, retry, retry with rateLimitedFor, by the holder or not, with and
// without the lease token); POST /api/fleet/flow on the four scopes (pause,
// resume, concurrency, rate limits, parks, and malformed ones); GET
// /api/fleet/flow; waits (due times, parks and rate windows pass).
//
// The model decides each answer at the server's instant: a claim's instant is
// read from its answer (lease_expires_at - leaseSeconds); where an answer
// carries no instant (a refusal, an empty claim-next, a GET), the answer must
// be the model's at some instant inside the request (the model's answer
// changes only at due times, park ends and the rate windows' edges, so it is
// evaluated at each of those inside the request and at its ends). After every
// step:
//   - the answer is the model's: claim-next's jobs exactly (which, in which
//     order), claim by id's answer and reason, each release's result, the
//     flow settings as stored, GET /flow's figures;
//   - no limit is ever exceeded: at each winning claim (read from the answer,
//     whatever the model says), its queue and group hold at most their
//     concurrency and have at most `limit` claims in the rate window;
//   - the rows are the model's (status, holder, token, attempts, version,
//     queue, group, due time, claimed_at, last_error, finished_at), and a step
//     the model says writes nothing left every row exactly as it was.
// Leases are 600 s: none lapses in a run (lapses are other tests' subject).
// Seeded: PB_FLEET_FLOW_MODEL_SEED explores other seeds; fast-check prints
// the seed and path of a failure, and the error lists the run's calls.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatPbDate, parsePbDate } from "../../src/lib/lease";
import { BACKOFF_BASE_MS, BACKOFF_CAP_MS, BACKOFF_JITTER } from "../../src/lib/queue";
import { get, listJobsByPrefix, post, randomKey, type ApiResponse, type QueueJobRecord } from "./support/fleet-api";
import { sleep } from "./support/race";

const RUNS = 36;
const SEED = Number(process.env["PB_FLEET_FLOW_MODEL_SEED"] ?? 20261202);
const MIN_STEPS = 12;
const MAX_STEPS = 36;
const LEASE_SECONDS = 600;
/** Slack between this process's clock and the server's (one machine, one clock). */
const EPS_MS = 5;
const WORKERS = ["w1", "w2", "w3"] as const;
const UNKNOWN_ID = "zzzzzzzzzzzzzz0";
/** The run's scopes: two queues, two groups; each with its own rate period, fixed for the run (see flow-control.md on changing it). */
const SCOPES = [
  { kind: "queue", tag: "qa", period: 2 },
  { kind: "queue", tag: "qb", period: 5 },
  { kind: "group", tag: "ga", period: 5 },
  { kind: "group", tag: "gb", period: 2 },
] as const;

type Status = "pending" | "claimed" | "running" | "done" | "failed" | "cancelled";
const isHeld = (s: Status) => s === "claimed" || s === "running";
const isTerminal = (s: Status) => s === "done" || s === "failed" || s === "cancelled";

interface MJob {
  id: string;
  probeKey: string;
  queue: string;
  group: string;
  priority: number;
  created: string;
  enqueueIndex: number;
  status: Status;
  attempts: number;
  claimedBy: string;
  leaseToken: string;
  leaseExpiresAt: string;
  claimedAt: string;
  runAt: string;
  version: number;
  lastError: string;
}

interface MScope {
  kind: "queue" | "group";
  name: string;
  period: number;
  /** Has a probe_flow row (a setting was written, or a rate-limited release parked it). */
  exists: boolean;
  paused: boolean;
  concurrency: number | null;
  rateLimit: number | null;
  parkedUntil: number | null;
  /** Instants of the winning claims made while the scope had a rate limit (flow-control.md: a limit counts from when it is set). */
  log: number[];
}

// ---- operations ---------------------------------------------------------------------------

/** "limited": a pending job one of whose scopes has a setting that may hold it back. */
type JobKind = "held" | "pending" | "limited" | "finished" | "any" | "unknown";
interface JobPick {
  kind: JobKind;
  n: number;
}
type WorkerPick = "holder" | 0 | 1 | 2;
type TokenPick = "own" | "none" | "wrong";
type ReleaseHow = "done" | "failed" | "retry" | "rateLimited";
type Filter = "any" | "a" | "b" | "ab" | "ba";
type FlowSetting =
  | "pause" | "resume" | "pausedNull" | "conc1" | "conc2" | "concNull" | "rate1" | "rate2" | "rateNull" | "park1" | "park2" | "park0"
  | "pause+conc1";
type FlowSpoil = "none" | "concurrency 0" | "both scopes" | "no setting" | "rate extra key" | "paused string" | "park both";

type Op =
  | { kind: "enqueue"; items: { q: number; g: number; p: number }[] }
  | { kind: "claimNext"; worker: number; limit: number; filter: Filter; prefix: boolean; spoil: "none" | "queue empty" | "queue bad" | "queue 17" }
  | { kind: "claim"; job: JobPick; worker: WorkerPick }
  | { kind: "release"; job: JobPick; worker: WorkerPick; token: TokenPick; how: ReleaseHow; seconds: number; error: boolean }
  | { kind: "complete"; picks: number[]; worker: number; hows: ReleaseHow[]; seconds: number }
  | { kind: "flow"; scope: number; setting: FlowSetting; spoil: FlowSpoil }
  | { kind: "inspect" }
  | { kind: "wait"; ms: number };

const jobArb = (...kinds: JobKind[]) => fc.record({ kind: fc.constantFrom(...kinds), n: fc.nat({ max: 9 }) });
const howArb = fc.constantFrom<ReleaseHow>("done", "done", "failed", "retry", "rateLimited", "rateLimited");

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("enqueue" as const),
      items: fc.array(fc.record({ q: fc.nat({ max: 1 }), g: fc.nat({ max: 2 }), p: fc.nat({ max: 1 }) }), { minLength: 1, maxLength: 4 }),
    }),
  },
  {
    weight: 9,
    arbitrary: fc.record({
      kind: fc.constant("claimNext" as const),
      worker: fc.nat({ max: 2 }),
      limit: fc.constantFrom(1, 2, 3, 5),
      filter: fc.constantFrom<Filter>("any", "any", "a", "b", "ab", "ba"),
      prefix: fc.boolean(),
      spoil: fc.oneof(
        { weight: 20, arbitrary: fc.constant("none" as const) },
        { weight: 1, arbitrary: fc.constantFrom("queue empty" as const, "queue bad" as const, "queue 17" as const) },
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("claim" as const),
      job: jobArb("pending", "pending", "limited", "limited", "limited", "held", "any", "unknown"),
      worker: fc.constantFrom<WorkerPick>("holder", "holder", 0, 1, 2),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("release" as const),
      job: jobArb("held", "held", "held", "held", "held", "held", "held", "any", "unknown"),
      worker: fc.constantFrom<WorkerPick>("holder", "holder", "holder", "holder", 0, 1, 2),
      token: fc.constantFrom<TokenPick>("own", "own", "own", "none", "wrong"),
      how: howArb,
      seconds: fc.constantFrom(1, 2),
      error: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("complete" as const),
      picks: fc.uniqueArray(fc.nat({ max: 5 }), { minLength: 1, maxLength: 3 }),
      worker: fc.nat({ max: 2 }),
      hows: fc.array(howArb, { minLength: 3, maxLength: 3 }),
      seconds: fc.constantFrom(1, 2),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("flow" as const),
      scope: fc.nat({ max: SCOPES.length - 1 }),
      setting: fc.constantFrom<FlowSetting>(
        "pause", "resume", "resume", "resume", "pausedNull", "conc1", "conc2", "conc2", "concNull", "concNull",
        "rate1", "rate1", "rate2", "rate2", "rateNull", "park1", "park2", "park0", "pause+conc1",
      ),
      spoil: fc.oneof(
        { weight: 15, arbitrary: fc.constant<FlowSpoil>("none") },
        { weight: 1, arbitrary: fc.constantFrom<FlowSpoil>("concurrency 0", "both scopes", "no setting", "rate extra key", "paused string", "park both") },
      ),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "inspect" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 300, max: 1200 }) }) },
);

// ---- the model's rules ---------------------------------------------------------------------

/** The server's claim order (docs/queue.md; the claim index): priority descending, run_at, created, place in the enqueue call, id. */
function claimOrder(a: MJob, b: MJob): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  for (const [x, y] of [[a.runAt, b.runAt], [a.created, b.created]] as const) if (x !== y) return x < y ? -1 : 1;
  if (a.enqueueIndex !== b.enqueueIndex) return a.enqueueIndex - b.enqueueIndex;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function backoffRange(attempts: number): [number, number] {
  const base = BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1);
  return [Math.min(BACKOFF_CAP_MS, Math.max(BACKOFF_BASE_MS, base)), Math.min(BACKOFF_CAP_MS, base * (1 + BACKOFF_JITTER))];
}

type Refusal = "paused" | "concurrency_limit" | "rate_limit";

/** A time field of a row the server set, checked against a range when the row is read, then taken into the model. */
interface Resolve {
  id: string;
  lo: number;
  hi: number;
  /** A rate-limited release: its row's run_at is now + seconds, and the park scope gets max(park, run_at). */
  park?: MScope;
  seconds?: number;
}

class Run {
  readonly base = randomKey("fm");
  readonly prefix = `${this.base}/`;
  readonly scopes: MScope[] = SCOPES.map((s) => ({
    kind: s.kind, name: `${this.base}-${s.tag}`, period: s.period,
    exists: false, paused: false, concurrency: null, rateLimit: null, parkedUntil: null, log: [],
  }));
  readonly jobs: MJob[] = [];
  readonly log: string[] = [];
  readonly outcomes: Record<string, number> = {};
  rows: QueueJobRecord[] = [];
  private serial = 0;
  private resolves: Resolve[] = [];
  private fresh: string[] = [];

  get queues(): MScope[] {
    return this.scopes.filter((s) => s.kind === "queue");
  }
  get groups(): MScope[] {
    return this.scopes.filter((s) => s.kind === "group");
  }
  scopeOf(kind: "queue" | "group", name: string): MScope | undefined {
    return this.scopes.find((s) => s.kind === kind && s.name === name);
  }
  scopesOfJob(job: MJob): MScope[] {
    const q = this.scopeOf("queue", job.queue)!;
    return job.group === "" ? [q] : [q, this.scopeOf("group", job.group)!];
  }
  byId(id: string): MJob | undefined {
    return this.jobs.find((j) => j.id === id);
  }
  note(what: string): void {
    this.outcomes[what] = (this.outcomes[what] ?? 0) + 1;
  }

  pick({ kind, n }: JobPick): MJob | undefined {
    if (kind === "unknown") return undefined;
    const limited = (j: MJob) => j.status === "pending" &&
      this.scopesOfJob(j).some((s) => s.paused || s.parkedUntil !== null || s.concurrency !== null || s.rateLimit !== null);
    const of = (k: JobKind) => this.jobs.filter((j) =>
      k === "any" || (k === "held" && isHeld(j.status)) || (k === "pending" && j.status === "pending") || (k === "limited" && limited(j)) ||
      (k === "finished" && isTerminal(j.status)));
    const some = of(kind).length > 0 ? of(kind) : of("any");
    return some.length === 0 ? undefined : some[n % some.length];
  }
  workerOf(pick: WorkerPick, job: MJob | undefined): string {
    return pick === "holder" ? job?.claimedBy || "w1" : WORKERS[pick];
  }

  // -- the model at an instant --

  held(scope: MScope): number {
    return this.jobs.filter((j) => isHeld(j.status) && this.scopesOfJob(j).includes(scope)).length;
  }
  windowCount(scope: MScope, now: number): number {
    return scope.log.filter((at) => at > now - scope.period * 1000 && at <= now).length;
  }
  isParked(scope: MScope, now: number): boolean {
    return scope.parkedUntil !== null && scope.parkedUntil > now;
  }
  isDue(job: MJob, now: number): boolean {
    return job.status === "pending" && parsePbDate(job.runAt)! <= now;
  }

  /** Why flow control holds a job back at `now`, given the counts so far in the call; docs/flow-control.md's order: paused, concurrency, rate; queue before group. */
  refusal(job: MJob, now: number, held: Map<MScope, number>, window: Map<MScope, number>): Refusal | null {
    const scopes = this.scopesOfJob(job);
    if (scopes.some((s) => s.paused || this.isParked(s, now))) return "paused";
    if (scopes.some((s) => s.concurrency !== null && held.get(s)! >= s.concurrency)) return "concurrency_limit";
    if (scopes.some((s) => s.rateLimit !== null && window.get(s)! >= s.rateLimit)) return "rate_limit";
    return null;
  }
  counts(now: number): { held: Map<MScope, number>; window: Map<MScope, number> } {
    return {
      held: new Map(this.scopes.map((s) => [s, this.held(s)])),
      window: new Map(this.scopes.map((s) => [s, this.windowCount(s, now)])),
    };
  }

  /** claim-next's answer at `now`: the first `limit` due jobs in claim order that their scopes allow, counting each claim as it is made. */
  expectedClaimNext(now: number, queues: string[] | null, limit: number): { jobs: MJob[]; skipped: Refusal[] } {
    const { held, window } = this.counts(now);
    const out: MJob[] = [];
    const skipped: Refusal[] = [];
    const candidates = this.jobs.filter((j) => this.isDue(j, now) && (queues === null || queues.includes(j.queue))).sort(claimOrder);
    for (const job of candidates) {
      if (out.length >= limit) break;
      const why = this.refusal(job, now, held, window);
      if (why !== null) {
        skipped.push(why);
        continue;
      }
      out.push(job);
      for (const s of this.scopesOfJob(job)) {
        held.set(s, held.get(s)! + 1);
        if (s.rateLimit !== null) window.set(s, window.get(s)! + 1);
      }
    }
    return { jobs: out, skipped };
  }

  /** Claim by id's answer at `now` (its win shown as "win"). */
  expectedClaim(job: MJob | undefined, worker: string, now: number): "win" | { claimed: false; reason?: Refusal } | "alreadyHeld" {
    if (job === undefined || isTerminal(job.status)) return { claimed: false };
    if (isHeld(job.status)) return job.claimedBy === worker ? "alreadyHeld" : { claimed: false };
    if (!this.isDue(job, now)) return { claimed: false };
    const { held, window } = this.counts(now);
    const why = this.refusal(job, now, held, window);
    return why === null ? "win" : { claimed: false, reason: why };
  }

  /** Instants at which the model's answers may change, inside [lo, hi], with both ends. */
  instants(sent: number, recv: number): number[] {
    const lo = sent - EPS_MS;
    const hi = recv + EPS_MS;
    const edges: number[] = [];
    for (const j of this.jobs) if (j.status === "pending") edges.push(parsePbDate(j.runAt)!);
    for (const s of this.scopes) {
      if (s.parkedUntil !== null) edges.push(s.parkedUntil);
      for (const at of s.log) edges.push(at + s.period * 1000);
    }
    const out = new Set<number>([lo, hi]);
    for (const e of edges) for (const t of [e - 1, e]) if (t >= lo && t <= hi) out.add(t);
    return [...out].sort((a, b) => a - b);
  }

  /** A winning claim at `now`, into the model (its limits were checked by expectLimitsHold). */
  win(job: MJob, worker: string, token: string, leaseExpiresAt: string, now: number): void {
    expect(typeof token).toBe("string");
    expect(token).not.toBe("");
    expect(this.jobs.some((j) => j.leaseToken === token), "a lease token handed out twice").toBe(false);
    Object.assign(job, {
      status: "claimed", claimedBy: worker, leaseToken: token, attempts: job.attempts + 1, version: job.version + 1,
      leaseExpiresAt, claimedAt: formatPbDate(now),
    });
    for (const s of this.scopesOfJob(job)) if (s.rateLimit !== null) s.log.push(now);
  }

  /**
   * No limit is exceeded by these winning claims at `now` (read from an answer, before the model's own
   * answer is compared): every scope of theirs was neither paused nor parked, and holds at most its
   * concurrency, and has at most `limit` claims in its window, with them counted.
   */
  expectLimitsHold(won: (MJob | undefined)[], now: number): void {
    const { held, window } = this.counts(now);
    for (const job of won) {
      expect(job, "a job handed out that is not the run's").toBeDefined();
      expect(job!.status, `${job!.id} handed out while ${job!.status}`).toBe("pending");
      for (const s of this.scopesOfJob(job!)) {
        held.set(s, held.get(s)! + 1);
        if (s.rateLimit !== null) window.set(s, window.get(s)! + 1);
        const where = `${s.kind} ${s.name} at ${formatPbDate(now)}`;
        expect(s.paused || this.isParked(s, now), `${where}: a claim while paused or parked`).toBe(false);
        if (s.concurrency !== null) expect(held.get(s)!, `${where}: held over its concurrency ${s.concurrency}`).toBeLessThanOrEqual(s.concurrency);
        if (s.rateLimit !== null) expect(window.get(s)!, `${where}: claims in its window over its limit ${s.rateLimit}`).toBeLessThanOrEqual(s.rateLimit);
      }
    }
  }

  /** The instant of a claim, from its answer's lease (now + leaseSeconds), within the request. */
  claimInstant(leaseExpiresAt: string, sent: number, recv: number): number {
    const lease = parsePbDate(leaseExpiresAt);
    expect(lease, `lease_expires_at ${leaseExpiresAt}`).not.toBeNull();
    const now = lease! - LEASE_SECONDS * 1000;
    expect(now, "the claim's instant is inside its request").toBeGreaterThanOrEqual(sent - EPS_MS);
    expect(now, "the claim's instant is inside its request").toBeLessThanOrEqual(recv + EPS_MS);
    return now;
  }

  view(job: MJob) {
    return { id: job.id, probe_key: job.probeKey, status: job.status, claimed_by: job.claimedBy, lease_expires_at: job.leaseExpiresAt, version: job.version };
  }

  // -- the calls --

  async send(method: "POST" | "GET", path: string, body?: unknown): Promise<{ res: ApiResponse; sent: number; recv: number }> {
    const sent = Date.now();
    const res = method === "POST" ? await post(path, body) : await get(path);
    const recv = Date.now();
    this.log.push(`${method} ${path} ${body === undefined ? "" : JSON.stringify(body)} -> ${res.status} ${JSON.stringify(res.body)} [${sent}..${recv}]`);
    expect([200, 400], `HTTP ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
    return { res, sent, recv };
  }

  bad(res: ApiResponse): false {
    this.note("400");
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(typeof res.body?.error).toBe("string");
    return false;
  }

  async step(op: Op): Promise<boolean> {
    switch (op.kind) {
      case "enqueue": return this.enqueue(op);
      case "claimNext": return this.claimNext(op);
      case "claim": return this.claim(op);
      case "release": return this.release(op);
      case "complete": return this.complete(op);
      case "flow": return this.flow(op);
      case "inspect": return this.inspect();
      case "wait":
        this.log.push(`wait ${op.ms} ms`);
        await sleep(op.ms);
        return false;
    }
  }

  async enqueue(op: Extract<Op, { kind: "enqueue" }>): Promise<boolean> {
    const items = op.items.map((it) => {
      const item: Record<string, unknown> = { probeKey: `${this.prefix}j${this.serial++}`, queue: this.queues[it.q]!.name, priority: it.p };
      if (it.g < 2) item.group = this.groups[it.g]!.name;
      return item;
    });
    const { res } = await this.send("POST", "/api/fleet/enqueue", { jobs: items });
    expect(res.status).toBe(200);
    const answers = res.body.jobs as { id: string; probeKey: string; created: boolean }[];
    expect(answers.map((a) => [a.probeKey, a.created])).toEqual(items.map((i) => [i.probeKey, true]));
    answers.forEach((a, i) => {
      this.jobs.push({
        id: a.id, probeKey: a.probeKey, queue: items[i]!.queue as string, group: (items[i]!.group as string | undefined) ?? "",
        priority: items[i]!.priority as number, created: "", enqueueIndex: i, status: "pending", attempts: 0, claimedBy: "",
        leaseToken: "", leaseExpiresAt: "", claimedAt: "", runAt: "", version: 0, lastError: "",
      });
      this.fresh.push(a.id);
    });
    this.note("enqueue");
    return true;
  }

  async claimNext(op: Extract<Op, { kind: "claimNext" }>): Promise<boolean> {
    const worker = WORKERS[op.worker]!;
    const [a, b] = [this.queues[0]!.name, this.queues[1]!.name];
    const queues = op.filter === "any" ? null : op.filter === "a" ? [a] : op.filter === "b" ? [b] : op.filter === "ab" ? [a, b] : [b, a];
    const body: Record<string, unknown> = { workerId: worker, limit: op.limit, leaseSeconds: LEASE_SECONDS };
    // Without a queue the prefix is what keeps other tests' jobs out.
    if (queues === null || op.prefix) body.probeKeyPrefix = this.prefix;
    if (queues !== null) body.queue = queues.length === 1 && op.prefix ? queues[0] : queues;
    if (op.spoil === "queue empty") body.queue = "";
    if (op.spoil === "queue bad") body.queue = [a, "no spaces allowed"];
    if (op.spoil === "queue 17") body.queue = Array.from({ length: 17 }, (_, i) => `${this.base}-x${i}`);
    const { res, sent, recv } = await this.send("POST", "/api/fleet/claim-next", body);
    if (op.spoil !== "none") return this.bad(res);
    expect(res.status).toBe(200);
    const got = res.body.jobs as { job: Record<string, unknown> & { id: string; lease_expires_at: string }; leaseToken: string }[];
    if (got.length === 0) {
      const possible = this.instants(sent, recv).some((t) => this.expectedClaimNext(t, queues, op.limit).jobs.length === 0);
      expect(possible, `claim-next got nothing, but at every instant of the request the model hands out ${JSON.stringify(this.instants(sent, recv).map((t) => this.expectedClaimNext(t, queues, op.limit).jobs.map((j) => j.id)))}`).toBe(true);
      const skipped = this.expectedClaimNext(sent, queues, op.limit).skipped;
      this.note(skipped.length > 0 ? "claim-next: none, all held back" : "claim-next: none");
      return false;
    }
    const nows = new Set(got.map((g) => this.claimInstant(g.job.lease_expires_at, sent, recv)));
    expect(nows.size, "one call's claims share one instant").toBe(1);
    const now = [...nows][0]!;
    this.expectLimitsHold(got.map((g) => this.byId(g.job.id)), now);
    const expected = this.expectedClaimNext(now, queues, op.limit);
    expect(got.map((g) => g.job.id), `claim-next at ${formatPbDate(now)}`).toEqual(expected.jobs.map((j) => j.id));
    for (const r of new Set(expected.skipped)) this.note(`claim-next: skipped for ${r}`);
    this.note(`claim-next: ${got.length} of ${op.limit}`);
    for (const [i, job] of expected.jobs.entries()) {
      this.win(job, worker, got[i]!.leaseToken, got[i]!.job.lease_expires_at, now);
      expect(got[i]!.job).toMatchObject({
        ...this.view(job), queue: job.queue, group_key: job.group, priority: job.priority, attempts: job.attempts, timeout_seconds: 0, deadline: null,
      });
    }
    return true;
  }

  async claim(op: Extract<Op, { kind: "claim" }>): Promise<boolean> {
    const job = this.pick(op.job);
    const worker = this.workerOf(op.worker, job);
    const { res, sent, recv } = await this.send("POST", "/api/fleet/claim", { jobId: job?.id ?? UNKNOWN_ID, workerId: worker, leaseSeconds: LEASE_SECONDS });
    expect(res.status).toBe(200);
    if (res.body.claimed === true && res.body.alreadyHeld !== true) {
      const now = this.claimInstant(res.body.job?.lease_expires_at, sent, recv);
      this.expectLimitsHold([job], now);
      expect(this.expectedClaim(job, worker, now), `claim by id won at ${formatPbDate(now)}`).toBe("win");
      this.win(job!, worker, res.body.leaseToken, res.body.job.lease_expires_at, now);
      expect(res.body).toEqual({ claimed: true, leaseToken: job!.leaseToken, job: this.view(job!) });
      this.note("claim: won");
      return true;
    }
    const answers = this.instants(sent, recv).map((t) => this.expectedClaim(job, worker, t));
    if (res.body.alreadyHeld === true) {
      expect(answers).toContain("alreadyHeld");
      expect(res.body).toEqual({ claimed: true, alreadyHeld: true, leaseToken: job!.leaseToken, job: this.view(job!) });
      // Never refused by flow control: note when a limit would have refused a claim.
      const { held, window } = this.counts(sent);
      this.note(this.refusal(job!, sent, held, window) === null ? "claim: alreadyHeld" : "claim: alreadyHeld past a limit");
      return false;
    }
    const canon = (v: unknown) => JSON.stringify(v, Object.keys(v as object).sort());
    expect(answers.filter((a) => typeof a === "object").map(canon), `claim by id answered ${JSON.stringify(res.body)}; the model at the request's instants: ${JSON.stringify(answers)}`)
      .toContain(canon(res.body));
    this.note(`claim: refused${res.body.reason ? ` (${res.body.reason})` : ""}`);
    return false;
  }

  /** One release (of release or of complete) by the model: the answer it gives, and the model's job after it. */
  releaseOutcome(job: MJob | undefined, worker: string, token: string | undefined, how: ReleaseHow, seconds: number, error: string | undefined, sent: number, recv: number):
    { released: false; reason: string } | { released: true } {
    const refuse = (reason: string) => ({ released: false as const, reason });
    if (job === undefined) return refuse("refused_not_holder");
    if (!isHeld(job.status)) {
      if ((job.status === "done" || job.status === "failed") && job.claimedBy === worker) {
        return refuse(token !== undefined && token !== job.leaseToken ? "refused_stale_token" : "refused_terminal_same_holder");
      }
      return refuse("refused_not_holder");
    }
    if (job.claimedBy !== worker) return refuse("refused_not_holder");
    if (token !== undefined && token !== job.leaseToken) return refuse("refused_stale_token");
    job.version++;
    if (error !== undefined) job.lastError = error;
    if (how === "done" || how === "failed") {
      job.status = how;
    } else if (how === "retry") {
      const [lo, hi] = backoffRange(job.attempts);
      Object.assign(job, { status: "pending", claimedBy: "", leaseToken: "" });
      this.resolves.push({ id: job.id, lo: sent + lo - EPS_MS, hi: recv + hi + EPS_MS });
    } else {
      // docs/flow-control.md: due again in `seconds`, the attempt given back, its group (else its queue) parked as long.
      Object.assign(job, { status: "pending", claimedBy: "", leaseToken: "", attempts: job.attempts - 1 });
      const park = job.group === "" ? this.scopeOf("queue", job.queue)! : this.scopeOf("group", job.group)!;
      park.exists = true;
      this.resolves.push({ id: job.id, lo: sent + seconds * 1000 - EPS_MS, hi: recv + seconds * 1000 + EPS_MS, park, seconds });
    }
    return { released: true };
  }

  releaseBody(how: ReleaseHow, seconds: number): Record<string, unknown> {
    return how === "rateLimited" ? { status: "retry", rateLimitedFor: seconds } : { status: how };
  }

  async release(op: Extract<Op, { kind: "release" }>): Promise<boolean> {
    const job = this.pick(op.job);
    const worker = this.workerOf(op.worker, job);
    const token = op.token === "own" ? job?.leaseToken || undefined : op.token === "wrong" ? "not-the-token" : undefined;
    const error = op.error && (op.how === "retry" || op.how === "rateLimited" || op.how === "failed") ? `err ${this.serial++}` : undefined;
    const body: Record<string, unknown> = { jobId: job?.id ?? UNKNOWN_ID, workerId: worker, ...this.releaseBody(op.how, op.seconds) };
    if (token !== undefined) body.leaseToken = token;
    if (error !== undefined) body.error = error;
    const { res, sent, recv } = await this.send("POST", "/api/fleet/release", body);
    expect(res.status).toBe(200);
    const outcome = this.releaseOutcome(job, worker, token, op.how, op.seconds, error, sent, recv);
    this.note(outcome.released ? `release: ${op.how}` : `release: ${outcome.reason}`);
    if (!outcome.released) {
      expect(res.body).toEqual(outcome);
      return false;
    }
    expect(res.body).toMatchObject({ released: true, job: { id: job!.id, status: job!.status, claimed_by: job!.claimedBy, version: job!.version } });
    return true;
  }

  async complete(op: Extract<Op, { kind: "complete" }>): Promise<boolean> {
    // A worker that holds jobs (when one does), releasing a few of its own; else any jobs, each once.
    const holders = WORKERS.filter((w) => this.jobs.some((j) => isHeld(j.status) && j.claimedBy === w));
    const worker = holders.length > 0 ? holders[op.worker % holders.length]! : WORKERS[op.worker]!;
    const own = this.jobs.filter((j) => isHeld(j.status) && j.claimedBy === worker);
    const pool = own.length > 0 ? own : this.jobs;
    if (pool.length === 0) return false;
    const jobs = [...new Set(op.picks.map((n) => pool[n % pool.length]!))];
    const items = jobs.map((job, i) => ({ jobId: job.id, leaseToken: job.leaseToken || undefined, ...this.releaseBody(op.hows[i]!, op.seconds) }));
    const { res, sent, recv } = await this.send("POST", "/api/fleet/complete", { workerId: worker, releases: items });
    expect(res.status).toBe(200);
    const results = res.body.results as { jobId: string; released: boolean; reason?: string; job?: Record<string, unknown> }[];
    expect(results.map((r) => r.jobId)).toEqual(jobs.map((j) => j.id));
    let wrote = false;
    jobs.forEach((job, i) => {
      const outcome = this.releaseOutcome(job, worker, items[i]!.leaseToken, op.hows[i]!, op.seconds, undefined, sent, recv);
      this.note(outcome.released ? `complete: ${op.hows[i]}` : `complete: ${outcome.reason}`);
      if (!outcome.released) {
        expect(results[i]).toEqual({ jobId: job.id, ...outcome });
        return;
      }
      wrote = true;
      expect(results[i]).toMatchObject({ jobId: job.id, released: true, job: { id: job.id, status: job.status, claimed_by: job.claimedBy, version: job.version } });
    });
    return wrote;
  }

  async flow(op: Extract<Op, { kind: "flow" }>): Promise<boolean> {
    const scope = this.scopes[op.scope]!;
    const body: Record<string, unknown> = { [scope.kind]: scope.name };
    const change: Partial<Pick<MScope, "paused" | "concurrency" | "rateLimit">> & { park?: number } = {};
    switch (op.setting) {
      case "pause": body.paused = true; change.paused = true; break;
      case "resume": body.paused = false; change.paused = false; break;
      case "pausedNull": body.paused = null; change.paused = false; break;
      case "conc1": body.concurrency = 1; change.concurrency = 1; break;
      case "conc2": body.concurrency = 2; change.concurrency = 2; break;
      case "concNull": body.concurrency = null; change.concurrency = null; break;
      case "rate1": body.rateLimit = { limit: 1, periodSeconds: scope.period }; change.rateLimit = 1; break;
      case "rate2": body.rateLimit = { limit: 2, periodSeconds: scope.period }; change.rateLimit = 2; break;
      case "rateNull": body.rateLimit = null; change.rateLimit = null; break;
      case "park1": body.parkSeconds = 1; change.park = 1; break;
      case "park2": body.parkSeconds = 2; change.park = 2; break;
      case "park0": body.parkSeconds = 0; change.park = 0; break;
      case "pause+conc1": body.paused = true; body.concurrency = 1; change.paused = true; change.concurrency = 1; break;
    }
    switch (op.spoil) {
      case "concurrency 0": body.concurrency = 0; break;
      case "both scopes": body[scope.kind === "queue" ? "group" : "queue"] = this.scopes[(op.scope + 2) % 4]!.name; break;
      case "no setting": for (const k of ["paused", "concurrency", "rateLimit", "parkSeconds"]) delete body[k]; break;
      case "rate extra key": body.rateLimit = { limit: 1, periodSeconds: scope.period, burst: 2 }; break;
      case "paused string": body.paused = "yes"; break;
      case "park both": body.parkSeconds = 1; body.parkUntil = new Date(Date.now() + 60_000).toISOString(); break;
      default: break;
    }
    const { res, sent, recv } = await this.send("POST", "/api/fleet/flow", body);
    if (op.spoil !== "none") return this.bad(res);
    expect(res.status).toBe(200);
    if (change.paused !== undefined) scope.paused = change.paused;
    if (change.concurrency !== undefined) scope.concurrency = change.concurrency;
    if (change.rateLimit !== undefined) scope.rateLimit = change.rateLimit;
    scope.exists = true;
    const flow = res.body.flow as Record<string, unknown>;
    if (change.park !== undefined && change.park > 0) {
      const until = parsePbDate(flow.parkedUntil as string);
      expect(until, `parkedUntil ${String(flow.parkedUntil)}`).not.toBeNull();
      expect(until!).toBeGreaterThanOrEqual(sent + change.park * 1000 - EPS_MS);
      expect(until!).toBeLessThanOrEqual(recv + change.park * 1000 + EPS_MS);
      scope.parkedUntil = until;
    } else if (change.park === 0) {
      scope.parkedUntil = null;
    }
    const parkedUntil = this.instants(sent, recv).map((t) => (scope.parkedUntil !== null && scope.parkedUntil > t ? formatPbDate(scope.parkedUntil) : null));
    expect(parkedUntil, `parkedUntil ${String(flow.parkedUntil)}`).toContain(flow.parkedUntil);
    expect(flow).toEqual({
      [scope.kind]: scope.name, paused: scope.paused, concurrency: scope.concurrency,
      rateLimit: scope.rateLimit === null ? null : { limit: scope.rateLimit, periodSeconds: scope.period }, parkedUntil: flow.parkedUntil,
    });
    this.note(`flow: ${op.setting}`);
    return false; // no job row changes
  }

  /** GET /api/fleet/flow for each scope: its settings and figures, as the model has them at an instant of the request. */
  async inspect(): Promise<boolean> {
    for (const scope of this.scopes) {
      const { res, sent, recv } = await this.send("GET", `/api/fleet/flow?${scope.kind}=${encodeURIComponent(scope.name)}`);
      expect(res.status).toBe(200);
      const list = (scope.kind === "queue" ? res.body.queues : res.body.groups) as Record<string, unknown>[];
      expect(scope.kind === "queue" ? res.body.groups : res.body.queues).toEqual([]);
      const unfinished = this.jobs.some((j) => !isTerminal(j.status) && this.scopesOfJob(j).includes(scope));
      const onlyAPassedPark = scope.kind === "group" && !scope.paused && scope.concurrency === null && scope.rateLimit === null;
      if (list.length === 0) {
        // Absent: no settings (or, for a group, only a park that has passed, which the maintenance tick deletes) and no unfinished jobs.
        const mayBeAbsent = !scope.exists || (onlyAPassedPark && (scope.parkedUntil === null || scope.parkedUntil <= recv));
        expect(mayBeAbsent && !(scope.kind === "queue" && unfinished), `${scope.kind} ${scope.name} absent from GET /flow`).toBe(true);
        continue;
      }
      expect(list).toHaveLength(1);
      const entry = list[0]!;
      expect(scope.exists || (scope.kind === "queue" && unfinished), `${scope.kind} ${scope.name} listed`).toBe(true);
      expect(entry).toMatchObject({
        name: scope.name, paused: scope.paused, concurrency: scope.concurrency,
        rateLimit: scope.rateLimit === null ? null : { limit: scope.rateLimit, periodSeconds: scope.period }, held: this.held(scope),
      });
      const figures = (t: number) => JSON.stringify({
        parkedUntil: this.isParked(scope, t) ? formatPbDate(scope.parkedUntil!) : null,
        due: this.jobs.filter((j) => this.isDue(j, t) && this.scopesOfJob(j).includes(scope)).length,
        claimsInWindow: scope.rateLimit === null ? 0 : this.windowCount(scope, t),
      });
      const seen = JSON.stringify({ parkedUntil: entry.parkedUntil, due: entry.due, claimsInWindow: entry.claimsInWindow });
      expect(this.instants(sent, recv).map(figures), `GET /flow ${scope.kind} ${scope.name}`).toContain(seen);
    }
    this.note("inspect");
    return false;
  }

  // -- the rows --

  async check(wrote: boolean): Promise<void> {
    const before = this.rows;
    const rows = await listJobsByPrefix(this.prefix);
    if (!wrote) expect(rows, "a step the model says writes nothing changed rows").toEqual(before);
    this.rows = rows;
    const byId = new Map(rows.map((r) => [r.id, r as QueueJobRecord & { queue: string; group_key: string; claimed_at: string; timeout_seconds: number }]));
    expect([...byId.keys()].sort(), "the rows are the model's jobs").toEqual(this.jobs.map((j) => j.id).sort());
    for (const id of this.fresh.splice(0)) {
      const row = byId.get(id)!;
      const job = this.byId(id)!;
      Object.assign(job, { created: row.created, runAt: row.run_at, enqueueIndex: row.enqueue_index });
      expect(row.version).toBe(0);
      expect(parsePbDate(row.run_at), `${id} run_at ${row.run_at}`).not.toBeNull();
    }
    for (const r of this.resolves.splice(0)) {
      const row = byId.get(r.id)!;
      const job = this.byId(r.id)!;
      const ms = parsePbDate(row.run_at);
      expect(ms !== null && ms >= r.lo && ms <= r.hi, `${r.id} run_at ${row.run_at} not in [${formatPbDate(r.lo)}, ${formatPbDate(r.hi)}]`).toBe(true);
      job.runAt = row.run_at;
      if (r.park !== undefined) {
        // The release's instant is run_at - seconds; the park is at least until its due time.
        r.park.parkedUntil = Math.max(r.park.parkedUntil ?? 0, ms!);
      }
    }
    const now = Date.now();
    for (const job of this.jobs) {
      const row = byId.get(job.id)!;
      const where = `${job.id} (${job.status})`;
      expect(row, where).toMatchObject({
        probe_key: job.probeKey, status: job.status, claimed_by: job.claimedBy, attempts: job.attempts, version: job.version,
        queue: job.queue, group_key: job.group, priority: job.priority, last_error: job.lastError, timeout_seconds: 0,
        reclaim_count: 0, consecutive_orphan_count: 0,
      });
      if (job.status === "pending") expect({ run_at: row.run_at, lease_token: row.lease_token }, where).toEqual({ run_at: job.runAt, lease_token: "" });
      if (isHeld(job.status)) {
        expect({ lease_token: row.lease_token, lease_expires_at: row.lease_expires_at, claimed_at: row.claimed_at }, where)
          .toEqual({ lease_token: job.leaseToken, lease_expires_at: job.leaseExpiresAt, claimed_at: job.claimedAt });
        expect(parsePbDate(row.lease_expires_at)!, where).toBeGreaterThan(now);
      }
      expect(row.finished_at !== "", `${where} finished_at "${row.finished_at}"`).toBe(isTerminal(job.status));
    }
  }
}

describe("flow control against a model of docs/flow-control.md", () => {
  it(`random calls of three workers over two queues and two groups with limits (${RUNS} runs of up to ${MAX_STEPS} steps)`, async () => {
    const outcomes: Record<string, number> = {};
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: MIN_STEPS, maxLength: MAX_STEPS, size: "max" }), async (ops) => {
        const run = new Run();
        try {
          for (const op of ops) {
            const wrote = await run.step(op);
            await run.check(wrote);
          }
          await run.inspect();
        } catch (err) {
          (err as Error).message += `\n--- seed ${SEED} (PB_FLEET_FLOW_MODEL_SEED), run ${run.prefix}, its calls:\n${run.log.join("\n")}`;
          throw err;
        }
        for (const [k, v] of Object.entries(run.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + v;
      }),
      // No shrinking: each run is real requests, and the failing run's calls are in the error.
      { numRuns: RUNS, endOnFailure: true, seed: SEED },
    );
    console.log(`[flow-model] seed ${SEED}: ${RUNS} runs in ${((Date.now() - started) / 1000).toFixed(1)} s; what the steps did: ${JSON.stringify(Object.fromEntries(Object.entries(outcomes).sort()))}`);
    // The runs went through what matters: each limit held claims back, on both paths.
    for (const what of [
      "claim-next: skipped for paused", "claim-next: skipped for concurrency_limit", "claim-next: skipped for rate_limit",
      "claim: refused (paused)", "claim: refused (concurrency_limit)", "claim: refused (rate_limit)", "claim: won",
      "release: rateLimited", "release: done", "complete: done", "complete: rateLimited", "claim: alreadyHeld past a limit", "400",
    ]) expect(outcomes[what] ?? 0, what).toBeGreaterThan(0);
  }, 300_000);
});
