// Model-based property: random sequences of the queue's calls (enqueue with
// unique keys, priorities, due times and small maxAttempts; claim-next; claim
// by id; renew with and without progress and token; release done / failed /
// retry / pending with result and error; cancel; retry; some malformed) against
// a model of docs/queue.md kept here. After every step:
//   - the answer is HTTP 200 or 400, never a 5xx; a 400 changes nothing, and
//     neither does a 200 the model says writes nothing (rows compared in full);
//   - the answer is the one the model predicts (claim-next: its jobs in claim
//     order, allowing for jobs whose due time falls inside the request);
//   - every row under the run's prefix is the model's row (status, attempts,
//     holder, lease token, version, progress, result, last_error, due time,
//     dead letter) and holds the invariants: a status of the six, attempts <=
//     max_attempts when capped (and below it while pending), one non-terminal
//     row per unique_key, held rows with a holder, a token and a live lease,
//     finished_at exactly on terminal rows, dead_lettered_at only on failed rows.
// Leases are long: no lease lapses inside a run (lapsed leases are the subject
// of the poison-job and sweeper tests). Each run has its own prefix and keys.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatPbDate, parsePbDate } from "../../src/lib/lease";
import { BACKOFF_BASE_MS, BACKOFF_CAP_MS, BACKOFF_JITTER, DEFAULT_MAX_ATTEMPTS, MAX_ATTEMPTS_ERROR } from "../../src/lib/queue";
import { get, listJobsByPrefix, post, randomKey, type ApiResponse, type QueueJobRecord } from "./support/fleet-api";
import { sleep } from "./support/race";

const RUNS = 30;
/**
 * fast-check's seed: fixed, so the runs (and the transitions they reach, which
 * the test requires) are the same each time; PB_FLEET_MODEL_SEED explores others.
 */
const SEED = Number(process.env["PB_FLEET_MODEL_SEED"] ?? 20261201);
const MIN_STEPS = 10;
const MAX_STEPS = 40;
const LEASE_SECONDS = 600;
/** Slack between this process's clock and the server's (the same machine's clock). */
const EPS_MS = 5;
const WORKERS = ["w1", "w2", "w3"] as const;
/** A well-formed id no row has. */
const UNKNOWN_ID = "zzzzzzzzzzzzzz0";
const PAST = { iso: "2020-01-01T00:00:00Z", offset: "2020-01-01T02:00:00+02:00", pb: "2020-01-01 00:00:00.000Z" };

const STATUSES = ["pending", "claimed", "running", "done", "failed", "cancelled"] as const;
type Status = (typeof STATUSES)[number];
const isHeld = (s: Status) => s === "claimed" || s === "running";
const isTerminal = (s: Status) => s === "done" || s === "failed" || s === "cancelled";

/** The model's job. JSON values are kept as their JSON text. */
interface MJob {
  id: string;
  probeKey: string;
  created: string;
  /** Which enqueue call of the run made it, and its place in that call. */
  call: number;
  enqueueIndex: number;
  priority: number;
  maxAttempts: number;
  uniqueKey: string;
  payload: string;
  status: Status;
  attempts: number;
  claimedBy: string;
  leaseToken: string;
  leaseExpiresAt: string;
  runAt: string;
  version: number;
  progress: string;
  result: string;
  lastError: string;
  finished: boolean;
  deadLettered: boolean;
}

/** JSON text with object keys sorted (JSON objects are unordered; PocketBase may reorder them). */
function json(v: unknown): string {
  const sorted = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sorted);
    if (x !== null && typeof x === "object") {
      return Object.fromEntries(Object.keys(x).sort().map((k) => [k, sorted((x as Record<string, unknown>)[k])]));
    }
    return x;
  };
  return JSON.stringify(sorted(v === undefined ? null : v));
}

// ---- operations (what fast-check generates) ---------------------------------------------

type Payload = { given: false } | { given: true; value: unknown };
interface ItemSpec {
  payload: Payload;
  when: "now" | "past" | "pastOffset" | "delaySmall" | "delayLong";
  priority?: number;
  maxAttempts?: number;
  uniqueKey?: string;
}
type EnqueueSpoil = "none" | "priority 1.5" | "priority 1001" | "maxAttempts -1" | "maxAttempts 2.5" | "runAt without zone" | "runAt and delaySeconds" | "empty probeKey" | "uniqueKey number" | "delaySeconds -1" | "no jobs";
type WorkerPick = "holder" | 0 | 1 | 2;
/** Which job an op names: the n-th of a kind (any job when there is none of it), or an id no row has. */
type JobKind = "held" | "pending" | "finished" | "any" | "unknown";
interface JobPick {
  kind: JobKind;
  n: number;
}
type TokenPick = "none" | "own" | "wrong" | "empty";

type Op =
  | { kind: "enqueue"; items: ItemSpec[]; spoil: EnqueueSpoil; spoilAt: number }
  | { kind: "claimNext"; worker: number; limit: number; spoil: "none" | "limit 0" | "limit 101" | "reserved worker" | "no worker" }
  | { kind: "claim"; job: JobPick; worker: WorkerPick; spoil: "none" | "no worker" | "jobId number" }
  | { kind: "renew"; job: JobPick; worker: WorkerPick; token: TokenPick; progress: Payload | { big: true } }
  | { kind: "release"; job: JobPick; worker: WorkerPick; token: TokenPick; status: "done" | "failed" | "retry" | "pending" | "bogus" | "missing"; result: Payload; error: "absent" | "null" | "text" | "empty" | "number" }
  | { kind: "cancel"; job: JobPick; spoil: "none" | "jobId number" | "no jobId" }
  | { kind: "retry"; job: JobPick; spoil: "none" | "jobId number" | "no jobId" }
  | { kind: "wait"; ms: number };

const valueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom("123", "true", "null", "", "text", '{"a":1}'),
  fc.boolean(),
  fc.record({ a: fc.integer(), b: fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }) }),
  fc.array(fc.integer(), { maxLength: 3 }),
);
const payloadArb: fc.Arbitrary<Payload> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Payload>({ given: false }) },
  { weight: 1, arbitrary: fc.constant<Payload>({ given: true, value: null }) },
  { weight: 3, arbitrary: valueArb.map((value): Payload => ({ given: true, value })) },
);
const itemArb: fc.Arbitrary<ItemSpec> = fc.record(
  {
    payload: payloadArb,
    when: fc.constantFrom("now", "now", "now", "now", "now", "past", "pastOffset", "delaySmall", "delayLong"),
    priority: fc.constantFrom(-1, 0, 1, 2),
    maxAttempts: fc.constantFrom(0, 1, 1, 2, 2, 3),
    uniqueKey: fc.constantFrom("u1", "u2", ""),
  },
  { requiredKeys: ["payload", "when"] },
);
function jobArb(...kinds: JobKind[]): fc.Arbitrary<JobPick> {
  return fc.record({ kind: fc.constantFrom(...kinds), n: fc.nat({ max: 9 }) });
}
const workerArb: fc.Arbitrary<WorkerPick> = fc.constantFrom<WorkerPick>("holder", "holder", "holder", "holder", "holder", 0, 1, 2);
const tokenArb: fc.Arbitrary<TokenPick> = fc.constantFrom<TokenPick>("own", "own", "own", "own", "none", "none", "wrong", "empty");

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("enqueue" as const),
      items: fc.array(itemArb, { minLength: 1, maxLength: 3 }),
      spoil: fc.oneof(
        { weight: 12, arbitrary: fc.constant<EnqueueSpoil>("none") },
        { weight: 1, arbitrary: fc.constantFrom<EnqueueSpoil>("priority 1.5", "priority 1001", "maxAttempts -1", "maxAttempts 2.5", "runAt without zone", "runAt and delaySeconds", "empty probeKey", "uniqueKey number", "delaySeconds -1", "no jobs") },
      ),
      spoilAt: fc.nat({ max: 2 }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("claimNext" as const),
      worker: fc.nat({ max: 2 }),
      limit: fc.constantFrom(1, 1, 1, 2, 3),
      spoil: fc.oneof({ weight: 15, arbitrary: fc.constant("none" as const) }, { weight: 1, arbitrary: fc.constantFrom("limit 0", "limit 101", "reserved worker", "no worker") }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("claim" as const),
      job: jobArb("pending", "pending", "any", "held", "unknown"),
      worker: workerArb,
      spoil: fc.oneof({ weight: 15, arbitrary: fc.constant("none" as const) }, { weight: 1, arbitrary: fc.constantFrom("no worker", "jobId number") }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("renew" as const),
      job: jobArb("held", "held", "held", "any", "unknown"),
      worker: workerArb,
      token: tokenArb,
      progress: fc.oneof({ weight: 8, arbitrary: payloadArb }, { weight: 1, arbitrary: fc.constant({ big: true as const }) }),
    }),
  },
  {
    weight: 7,
    arbitrary: fc.record({
      kind: fc.constant("release" as const),
      job: jobArb("held", "held", "held", "held", "any", "unknown"),
      worker: workerArb,
      token: tokenArb,
      status: fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom("done", "failed", "retry", "retry", "pending") },
        { weight: 1, arbitrary: fc.constantFrom("bogus", "missing") },
      ) as fc.Arbitrary<"done" | "failed" | "retry" | "pending" | "bogus" | "missing">,
      result: payloadArb,
      error: fc.constantFrom("absent", "absent", "absent", "absent", "null", "text", "text", "text", "empty", "number") as fc.Arbitrary<"absent" | "null" | "text" | "empty" | "number">,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("cancel" as const),
      job: jobArb("any", "held", "pending", "finished", "unknown"),
      spoil: fc.oneof({ weight: 15, arbitrary: fc.constant("none" as const) }, { weight: 1, arbitrary: fc.constantFrom("jobId number", "no jobId") }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("retry" as const),
      job: jobArb("finished", "finished", "finished", "any", "unknown"),
      spoil: fc.oneof({ weight: 15, arbitrary: fc.constant("none" as const) }, { weight: 1, arbitrary: fc.constantFrom("jobId number", "no jobId") }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 200, max: 1300 }) }) },
);

// ---- the model's rules ------------------------------------------------------------------

/**
 * docs/queue.md's claim order: priority descending, then run_at, then the jobs of
 * one enqueue call in request order, then created, then id. Negative: a first;
 * 0: either may come first (jobs of two calls saved in the same millisecond,
 * which docs/queue.md leaves open).
 */
function claimOrder(a: MJob, b: MJob): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.runAt !== b.runAt) return a.runAt < b.runAt ? -1 : 1;
  if (a.call === b.call) return a.enqueueIndex - b.enqueueIndex;
  if (a.created !== b.created) return a.created < b.created ? -1 : 1;
  return 0;
}

type Due = "due" | "not_due" | "maybe";
/** Whether a pending job was due while the request was in flight, as far as the test's clock can tell. */
function dueness(job: MJob, sent: number, recv: number): Due {
  const t = parsePbDate(job.runAt)!;
  if (t <= sent - EPS_MS) return "due";
  if (t > recv + EPS_MS) return "not_due";
  return "maybe";
}

function hasAttemptsLeft(job: MJob): boolean {
  return job.maxAttempts === 0 || job.attempts < job.maxAttempts;
}

/** The backoff before the next attempt after `attempts` (docs/queue.md: from 1 s, doubling, capped at 1 h, jitter never below). */
function backoffRange(attempts: number): [number, number] {
  const base = BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1);
  return [Math.min(BACKOFF_CAP_MS, Math.max(BACKOFF_BASE_MS, base)), Math.min(BACKOFF_CAP_MS, base * (1 + BACKOFF_JITTER))];
}

// ---- a run ------------------------------------------------------------------------------

/** A time field the server sets, checked against a range once the row is read, then kept. */
interface TimeExpect {
  id: string;
  field: "run_at" | "lease_expires_at";
  lo: number;
  hi: number;
}

class Run {
  readonly prefix = randomKey("qm") + "/";
  readonly jobs: MJob[] = [];
  readonly log: string[] = [];
  rows: QueueJobRecord[] = [];
  /** What the steps did, for the coverage line. */
  readonly outcomes: Record<string, number> = {};
  private serial = 0;
  private calls = 0;
  private times: TimeExpect[] = [];
  private pendingNew: { id: string; index: number; item: ItemSpec; uniqueKey: string; probeKey: string; sent: number; recv: number }[] = [];

  byId(id: string): MJob | undefined {
    return this.jobs.find((j) => j.id === id);
  }

  pick({ kind, n }: JobPick): MJob | undefined {
    if (kind === "unknown") return undefined;
    const of = (k: JobKind) => this.jobs.filter((j) =>
      k === "any" || (k === "held" && isHeld(j.status)) || (k === "pending" && j.status === "pending") || (k === "finished" && isTerminal(j.status)));
    const some = of(kind).length > 0 ? of(kind) : of("any");
    return some.length === 0 ? undefined : some[n % some.length];
  }

  workerOf(pick: WorkerPick, job: MJob | undefined): string {
    if (pick === "holder") return job?.claimedBy || "w1";
    return WORKERS[pick];
  }

  tokenOf(pick: TokenPick, job: MJob | undefined): string | undefined {
    if (pick === "own") return job?.leaseToken || undefined;
    if (pick === "wrong") return "not-the-lease-token";
    if (pick === "empty") return "";
    return undefined;
  }

  uniqueKey(k: string | undefined): string {
    return k === undefined || k === "" ? "" : `${this.prefix}${k}`;
  }

  liveWithKey(key: string, except?: MJob): MJob | undefined {
    return this.jobs.find((j) => j !== except && j.uniqueKey === key && key !== "" && !isTerminal(j.status));
  }

  async send(path: string, body: unknown): Promise<{ res: ApiResponse; sent: number; recv: number }> {
    const sent = Date.now();
    const res = await post(path, body);
    const recv = Date.now();
    this.log.push(`${path} ${JSON.stringify(body)} -> ${res.status} ${JSON.stringify(res.body)}`);
    expect([200, 400], `HTTP ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
    return { res, sent, recv };
  }

  expectTime(id: string, field: TimeExpect["field"], lo: number, hi: number): void {
    this.times.push({ id, field, lo: lo - EPS_MS, hi: hi + EPS_MS });
  }

  note(what: string): void {
    this.outcomes[what] = (this.outcomes[what] ?? 0) + 1;
  }

  /** A 400 with an error text; the rows are checked unchanged afterwards. */
  bad(res: ApiResponse): false {
    this.note("400");
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(typeof res.body?.error).toBe("string");
    expect(res.body.error).not.toBe("");
    return false;
  }

  /** Runs one op; true when the model says it wrote something. */
  async step(op: Op): Promise<boolean> {
    switch (op.kind) {
      case "enqueue": return this.enqueue(op);
      case "claimNext": return this.claimNext(op);
      case "claim": return this.claim(op);
      case "renew": return this.renew(op);
      case "release": return this.release(op);
      case "cancel": return this.cancelOrRetry(op, "cancel");
      case "retry": return this.cancelOrRetry(op, "retry");
      case "wait":
        await sleep(op.ms);
        this.log.push(`wait ${op.ms} ms`);
        return false;
    }
  }

  async enqueue(op: Extract<Op, { kind: "enqueue" }>): Promise<boolean> {
    const items = op.items.map((item) => {
      const body: Record<string, unknown> = { probeKey: `${this.prefix}j${this.serial++}` };
      if (item.payload.given) body.payload = item.payload.value;
      if (item.when === "past") body.runAt = PAST.iso;
      if (item.when === "pastOffset") body.runAt = PAST.offset;
      if (item.when === "delaySmall") body.delaySeconds = 0.6;
      if (item.when === "delayLong") body.delaySeconds = 3600;
      if (item.priority !== undefined) body.priority = item.priority;
      if (item.maxAttempts !== undefined) body.maxAttempts = item.maxAttempts;
      if (item.uniqueKey !== undefined) body.uniqueKey = this.uniqueKey(item.uniqueKey);
      return body;
    });
    const spoilAt = op.spoilAt % items.length;
    const target = items[spoilAt]!;
    switch (op.spoil) {
      case "priority 1.5": target.priority = 1.5; break;
      case "priority 1001": target.priority = 1001; break;
      case "maxAttempts -1": target.maxAttempts = -1; break;
      case "maxAttempts 2.5": target.maxAttempts = 2.5; break;
      case "runAt without zone": delete target.delaySeconds; target.runAt = "2020-01-01T00:00:00"; break;
      case "runAt and delaySeconds": target.runAt = PAST.iso; target.delaySeconds = 1; break;
      case "empty probeKey": target.probeKey = ""; break;
      case "uniqueKey number": target.uniqueKey = 7; break;
      case "delaySeconds -1": delete target.runAt; target.delaySeconds = -1; break;
      default: break;
    }
    const body = op.spoil === "no jobs" ? { jobs: [] } : { jobs: items };
    const { res, sent, recv } = await this.send("/api/fleet/enqueue", body);
    if (op.spoil !== "none") return this.bad(res);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const answers = res.body.jobs as { id: string; probeKey: string; created: boolean }[];
    expect(answers).toHaveLength(items.length);
    const inCall = new Map<string, string>();
    this.calls++;
    let wrote = false;
    op.items.forEach((item, i) => {
      const answer = answers[i]!;
      const probeKey = items[i]!.probeKey as string;
      expect(answer.probeKey).toBe(probeKey);
      const key = this.uniqueKey(item.uniqueKey);
      const known = key === "" ? undefined : inCall.get(key) ?? this.liveWithKey(key)?.id;
      if (known !== undefined) {
        expect(answer, `item ${i}: its unique key belongs to ${known}`).toEqual({ id: known, probeKey, created: false });
        this.note("enqueue: deduplicated");
        return;
      }
      this.note("enqueue: created");
      expect(answer.created, `item ${i}`).toBe(true);
      expect(this.byId(answer.id)).toBeUndefined();
      if (key !== "") inCall.set(key, answer.id);
      this.pendingNew.push({ id: answer.id, index: i, item, uniqueKey: key, probeKey, sent, recv });
      // A placeholder until the row is read (created, version and run_at come from the server).
      this.jobs.push({
        id: answer.id, probeKey, created: "", call: this.calls, enqueueIndex: i, priority: item.priority ?? 0,
        maxAttempts: item.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, uniqueKey: key,
        payload: json(item.payload.given ? item.payload.value : null), status: "pending", attempts: 0, claimedBy: "",
        leaseToken: "", leaseExpiresAt: "", runAt: "", version: 0, progress: "null", result: "null", lastError: "",
        finished: false, deadLettered: false,
      });
      wrote = true;
    });
    return wrote;
  }

  /** The model's job after a winning claim, with the answer's token; its lease end is checked on the row. */
  win(job: MJob, worker: string, token: string, sent: number, recv: number): void {
    expect(typeof token).toBe("string");
    expect(token).not.toBe("");
    expect(this.jobs.some((j) => j.leaseToken === token)).toBe(false);
    Object.assign(job, { status: "claimed", claimedBy: worker, leaseToken: token, attempts: job.attempts + 1, version: job.version + 1 });
    this.expectTime(job.id, "lease_expires_at", sent + LEASE_SECONDS * 1000, recv + LEASE_SECONDS * 1000);
  }

  async claimNext(op: Extract<Op, { kind: "claimNext" }>): Promise<boolean> {
    const worker = WORKERS[op.worker % WORKERS.length]!;
    const body: Record<string, unknown> = { workerId: worker, probeKeyPrefix: this.prefix, leaseSeconds: LEASE_SECONDS, limit: op.limit };
    if (op.spoil === "limit 0") body.limit = 0;
    if (op.spoil === "limit 101") body.limit = 101;
    if (op.spoil === "reserved worker") body.workerId = "pb-fleet-sweeper";
    if (op.spoil === "no worker") delete body.workerId;
    const { res, sent, recv } = await this.send("/api/fleet/claim-next", body);
    if (op.spoil !== "none") return this.bad(res);
    expect(res.status).toBe(200);
    const got = res.body.jobs as { job: Record<string, unknown>; leaseToken: string }[];
    expect(got.length).toBeLessThanOrEqual(op.limit);
    const won = got.map(({ job }) => this.byId(job.id as string));
    for (const [i, job] of won.entries()) {
      expect(job, `claim-next handed out ${String(got[i]!.job.id)}, not one of this run's jobs`).toBeDefined();
      expect(job!.status, `claim-next handed out ${job!.id}`).toBe("pending");
      expect(dueness(job!, sent, recv), `claim-next handed out ${job!.id}, not due (run_at ${job!.runAt})`).not.toBe("not_due");
      expect(hasAttemptsLeft(job!)).toBe(true);
      if (i > 0) expect(claimOrder(won[i - 1]!, job!), "claim-next's jobs are in claim order").toBeLessThanOrEqual(0);
    }
    // Every job surely due and not handed out comes after the last one handed out, and only when the limit was reached.
    const last = won[won.length - 1];
    for (const job of this.jobs) {
      if (job.status !== "pending" || won.includes(job) || dueness(job, sent, recv) !== "due") continue;
      expect(won.length, `${job.id} was due but claim-next handed out ${won.length} of ${op.limit}`).toBe(op.limit);
      expect(claimOrder(last!, job), `${job.id} was due and comes before ${last!.id} in claim order`).toBeLessThanOrEqual(0);
    }
    this.note(`claim-next: ${won.length} of ${op.limit}`);
    for (const [i, job] of won.entries()) {
      if (job!.attempts > 0) this.note("claim-next: a retried job");
      this.win(job!, worker, got[i]!.leaseToken, sent, recv);
      this.resolveFromAnswer(job!, got[i]!.job.lease_expires_at as string);
      this.expectQueueView(got[i]!.job, job!);
    }
    return won.length > 0;
  }

  async claim(op: Extract<Op, { kind: "claim" }>): Promise<boolean> {
    const job = this.pick(op.job);
    const worker = this.workerOf(op.worker, job);
    const body: Record<string, unknown> = { jobId: job?.id ?? UNKNOWN_ID, workerId: worker, leaseSeconds: LEASE_SECONDS };
    if (op.spoil === "no worker") delete body.workerId;
    if (op.spoil === "jobId number") body.jobId = 12345;
    const { res, sent, recv } = await this.send("/api/fleet/claim", body);
    if (op.spoil !== "none") return this.bad(res);
    expect(res.status).toBe(200);
    if (job === undefined) {
      expect(res.body).toEqual({ claimed: false });
      return false;
    }
    if (isHeld(job.status)) {
      // Live leases only: its holder is told it holds it (nothing written); anyone else is refused.
      if (job.claimedBy === worker) {
        this.note("claim: alreadyHeld");
        expect(res.body).toEqual({ claimed: true, alreadyHeld: true, leaseToken: job.leaseToken, job: this.view(job) });
      } else {
        expect(res.body).toEqual({ claimed: false });
      }
      return false;
    }
    const due = job.status === "pending" ? dueness(job, sent, recv) : "not_due";
    if (due === "not_due" || (due === "maybe" && res.body.claimed === false)) {
      expect(res.body, `claim of ${job.status} ${job.id} (run_at ${job.runAt})`).toEqual({ claimed: false });
      return false;
    }
    expect(hasAttemptsLeft(job)).toBe(true);
    expect(res.body, `claim of due pending ${job.id}`).toMatchObject({ claimed: true });
    expect(res.body.alreadyHeld).toBeUndefined();
    this.note(job.attempts > 0 ? "claim: won a retried job" : "claim: won");
    this.win(job, worker, res.body.leaseToken, sent, recv);
    this.resolveFromAnswer(job, res.body.job.lease_expires_at);
    expect(res.body.job).toEqual(this.view(job));
    return true;
  }

  async renew(op: Extract<Op, { kind: "renew" }>): Promise<boolean> {
    const job = this.pick(op.job);
    const worker = this.workerOf(op.worker, job);
    const token = this.tokenOf(op.token, job);
    const body: Record<string, unknown> = { jobId: job?.id ?? UNKNOWN_ID, workerId: worker, leaseSeconds: LEASE_SECONDS };
    if (token !== undefined) body.leaseToken = token;
    if ("big" in op.progress) body.progress = { text: "x".repeat(5000) };
    else if (op.progress.given) body.progress = op.progress.value;
    const { res, sent, recv } = await this.send("/api/fleet/renew", body);
    if (token === "" || "big" in op.progress) return this.bad(res);
    expect(res.status).toBe(200);
    const ok = job !== undefined && isHeld(job.status) && job.claimedBy === worker && (token === undefined || token === job.leaseToken);
    if (!ok) {
      expect(res.body).toEqual({ renewed: false });
      this.note("renew: refused");
      return false;
    }
    this.note("renew: renewed");
    job.status = "running";
    job.version++;
    if (!("big" in op.progress) && op.progress.given && op.progress.value !== null) job.progress = json(op.progress.value);
    this.expectTime(job.id, "lease_expires_at", sent + LEASE_SECONDS * 1000, recv + LEASE_SECONDS * 1000);
    this.resolveFromAnswer(job, res.body.job?.lease_expires_at);
    expect(res.body).toEqual({ renewed: true, job: this.view(job) });
    return true;
  }

  async release(op: Extract<Op, { kind: "release" }>): Promise<boolean> {
    const job = this.pick(op.job);
    const worker = this.workerOf(op.worker, job);
    const token = this.tokenOf(op.token, job);
    const body: Record<string, unknown> = { jobId: job?.id ?? UNKNOWN_ID, workerId: worker };
    if (op.status !== "missing") body.status = op.status;
    if (token !== undefined) body.leaseToken = token;
    if (op.result.given) body.result = op.result.value;
    const errorText = op.error === "text" ? `error at ${Date.now()}` : op.error === "empty" ? "" : undefined;
    if (op.error === "null") body.error = null;
    if (op.error === "number") body.error = 42;
    if (errorText !== undefined) body.error = errorText;
    const { res, sent, recv } = await this.send("/api/fleet/release", body);
    if (op.status === "bogus" || op.status === "missing" || token === "" || op.error === "number") return this.bad(res);
    expect(res.status).toBe(200);
    const refuse = (reason: string) => {
      this.note(`release: ${reason}`);
      expect(res.body).toEqual({ released: false, reason });
      return false;
    };
    if (job === undefined) return refuse("refused_not_holder");
    if (!isHeld(job.status)) {
      if ((job.status === "done" || job.status === "failed") && job.claimedBy === worker) {
        return refuse(token !== undefined && token !== job.leaseToken ? "refused_stale_token" : "refused_terminal_same_holder");
      }
      return refuse("refused_not_holder");
    }
    if (job.claimedBy !== worker) return refuse("refused_not_holder");
    if (token !== undefined && token !== job.leaseToken) return refuse("refused_stale_token");
    if (op.status === "pending") return refuse("refused_lease_live"); // leases here never lapse
    // A successful release: result and error are written with the status.
    if (op.result.given && op.result.value !== null) job.result = json(op.result.value);
    if (errorText !== undefined) job.lastError = errorText;
    job.version++;
    this.note(`release: ${op.status}${op.status === "retry" && !hasAttemptsLeft(job) ? " (dead-lettered)" : ""}`);
    if (op.status === "retry" && hasAttemptsLeft(job)) {
      const [lo, hi] = backoffRange(job.attempts);
      Object.assign(job, { status: "pending", claimedBy: "", leaseToken: "", leaseExpiresAt: "", progress: "null" });
      this.expectTime(job.id, "run_at", sent + lo, recv + hi);
    } else if (op.status === "retry") {
      // Out of attempts: dead-lettered, keeping the worker's error (or saying why).
      Object.assign(job, { status: "failed", claimedBy: "", leaseToken: "", finished: true, deadLettered: true });
      if (errorText === undefined) job.lastError = MAX_ATTEMPTS_ERROR;
    } else {
      Object.assign(job, { status: op.status, finished: true });
    }
    expect(res.body).toMatchObject({ released: true, job: { id: job.id, status: job.status, version: job.version, claimed_by: job.claimedBy } });
    return true;
  }

  async cancelOrRetry(op: Extract<Op, { kind: "cancel" | "retry" }>, what: "cancel" | "retry"): Promise<boolean> {
    const job = this.pick(op.job);
    const body: Record<string, unknown> = { jobId: job?.id ?? UNKNOWN_ID };
    if (op.spoil === "jobId number") body.jobId = 7;
    if (op.spoil === "no jobId") delete body.jobId;
    const { res, sent, recv } = await this.send(`/api/fleet/${what}`, body);
    if (op.spoil !== "none") return this.bad(res);
    expect(res.status).toBe(200);
    if (what === "cancel") {
      if (job === undefined || isTerminal(job.status)) {
        expect(res.body).toEqual({ cancelled: false });
        return false;
      }
      this.note(`cancel: ${job.status}`);
      // claimed_by stays on record; the holder's renew and release are refused from now on.
      Object.assign(job, { status: "cancelled", leaseToken: "", finished: true, version: job.version + 1 });
      expect(res.body.cancelled).toBe(true);
      this.expectQueueView(res.body.job, job);
      return true;
    }
    if (job === undefined || (job.status !== "failed" && job.status !== "cancelled")) {
      expect(res.body).toEqual({ retried: false });
      return false;
    }
    if (job.uniqueKey !== "" && this.liveWithKey(job.uniqueKey, job) !== undefined) {
      expect(res.body).toEqual({ retried: false, reason: "unique_key_taken" });
      this.note("retry: unique_key_taken");
      return false;
    }
    this.note(`retry: ${job.status}${job.deadLettered ? " (dead-lettered)" : ""}`);
    Object.assign(job, {
      status: "pending", attempts: 0, finished: false, deadLettered: false, claimedBy: "", leaseToken: "",
      progress: "null", version: job.version + 1,
    });
    this.expectTime(job.id, "run_at", sent, recv);
    expect(res.body.retried).toBe(true);
    this.resolveFromAnswer(job, undefined, res.body.job.run_at);
    this.expectQueueView(res.body.job, job);
    return true;
  }

  /** Takes a time the answer shows (checked against its expected range) into the model. */
  resolveFromAnswer(job: MJob, leaseExpiresAt?: string, runAt?: string): void {
    for (const [field, value] of [["lease_expires_at", leaseExpiresAt], ["run_at", runAt]] as const) {
      if (value === undefined) continue;
      const i = this.times.findIndex((t) => t.id === job.id && t.field === field);
      if (i === -1) continue;
      const t = this.times[i]!;
      const ms = parsePbDate(value);
      expect(ms, `${field} ${value}`).not.toBeNull();
      expect(ms!, `${job.id} ${field} ${value} in [${formatPbDate(t.lo)}, ${formatPbDate(t.hi)}]`).toBeGreaterThanOrEqual(t.lo);
      expect(ms!, `${job.id} ${field} ${value} in [${formatPbDate(t.lo)}, ${formatPbDate(t.hi)}]`).toBeLessThanOrEqual(t.hi);
      if (field === "run_at") job.runAt = value;
      else job.leaseExpiresAt = value;
      this.times.splice(i, 1);
    }
  }

  /** The reference's job view (claim, renew, release answers). */
  view(job: MJob) {
    return { id: job.id, probe_key: job.probeKey, status: job.status, claimed_by: job.claimedBy, lease_expires_at: job.leaseExpiresAt, version: job.version };
  }

  /** The queue's job view (claim-next, cancel, retry answers). */
  expectQueueView(view: Record<string, unknown>, job: MJob): void {
    expect(view).toMatchObject({
      id: job.id, probe_key: job.probeKey, status: job.status, claimed_by: job.claimedBy, version: job.version,
      lease_expires_at: job.leaseExpiresAt, run_at: job.runAt,
      priority: job.priority, attempts: job.attempts, max_attempts: job.maxAttempts, last_error: job.lastError, unique_key: job.uniqueKey,
    });
    expect(json(view.payload)).toBe(job.payload);
    expect(json(view.progress)).toBe(job.progress);
    expect(view.dead_lettered_at !== "").toBe(job.deadLettered);
  }

  /** Reads the rows of the run and holds them against the model; `wrote` false: they must be exactly as before. */
  async check(wrote: boolean): Promise<void> {
    const before = this.rows;
    const rows = await listJobsByPrefix(this.prefix);
    if (!wrote) expect(rows, "a step the model says writes nothing changed rows").toEqual(before);
    this.rows = rows;
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect([...byId.keys()].sort(), "the rows are the model's jobs").toEqual(this.jobs.map((j) => j.id).sort());

    for (const n of this.pendingNew.splice(0)) {
      const row = byId.get(n.id)!;
      const job = this.byId(n.id)!;
      job.created = row.created;
      job.version = row.version;
      expect(row.version).toBe(0);
      const expectedRunAt = n.item.when === "past" || n.item.when === "pastOffset" ? PAST.pb : undefined;
      if (expectedRunAt !== undefined) job.runAt = expectedRunAt;
      else {
        const delay = n.item.when === "delaySmall" ? 600 : n.item.when === "delayLong" ? 3_600_000 : 0;
        this.expectTime(n.id, "run_at", n.sent + delay, n.recv + delay);
      }
    }
    for (const t of this.times.splice(0)) {
      const row = byId.get(t.id)!;
      const job = this.byId(t.id)!;
      const value = row[t.field];
      const ms = parsePbDate(value);
      expect(ms, `${t.id} ${t.field} "${value}"`).not.toBeNull();
      expect(ms! >= t.lo && ms! <= t.hi, `${t.id} ${t.field} ${value} not in [${formatPbDate(t.lo)}, ${formatPbDate(t.hi)}]`).toBe(true);
      if (t.field === "run_at") job.runAt = value;
      else job.leaseExpiresAt = value;
    }

    const now = Date.now();
    const liveKeys = new Set<string>();
    for (const job of this.jobs) {
      const row = byId.get(job.id)!;
      const where = `${job.id} (${job.status})`;
      expect(STATUSES, where).toContain(row.status);
      expect(row, where).toMatchObject({
        probe_key: job.probeKey, status: job.status, attempts: job.attempts, max_attempts: job.maxAttempts, priority: job.priority,
        unique_key: job.uniqueKey, claimed_by: job.claimedBy, lease_token: job.leaseToken, version: job.version,
        last_error: job.lastError, run_at: job.runAt, enqueue_index: job.enqueueIndex, created: job.created,
        lease_expires_at: job.leaseExpiresAt, reclaim_count: 0, consecutive_orphan_count: 0,
      });
      expect(json(row.payload), `${where} payload`).toBe(job.payload);
      expect(json(row.progress), `${where} progress`).toBe(job.progress);
      expect(json(row.result), `${where} result`).toBe(job.result);
      // The invariants, whatever the model says.
      if (row.max_attempts > 0) expect(row.attempts, where).toBeLessThanOrEqual(row.max_attempts);
      if (row.status === "pending" && row.max_attempts > 0) expect(row.attempts, where).toBeLessThan(row.max_attempts);
      if (row.unique_key !== "" && !isTerminal(row.status as Status)) {
        expect(liveKeys.has(row.unique_key), `${where}: a second live row with unique_key ${row.unique_key}`).toBe(false);
        liveKeys.add(row.unique_key);
      }
      if (isHeld(row.status as Status)) {
        expect(row.claimed_by, where).not.toBe("");
        expect(row.lease_token, where).not.toBe("");
        expect(parsePbDate(row.lease_expires_at)!, where).toBeGreaterThan(now);
      }
      if (row.status === "pending") expect([row.claimed_by, row.lease_token], where).toEqual(["", ""]);
      expect(row.finished_at !== "", `${where} finished_at "${row.finished_at}"`).toBe(isTerminal(row.status as Status));
      expect(row.dead_lettered_at !== "", `${where} dead_lettered_at "${row.dead_lettered_at}"`).toBe(job.deadLettered);
      if (row.dead_lettered_at !== "") {
        expect(row.status, where).toBe("failed");
        expect(row.finished_at, where).toBe(row.dead_lettered_at);
      }
    }
  }

  /** GET /api/fleet/stats of the prefix agrees with the model. */
  async checkStats(): Promise<void> {
    const sent = Date.now();
    const res = await get(`/api/fleet/stats?probeKeyPrefix=${encodeURIComponent(this.prefix)}`);
    const recv = Date.now();
    expect(res.status).toBe(200);
    const counts = Object.fromEntries(STATUSES.map((s) => [s, this.jobs.filter((j) => j.status === s).length]));
    expect(res.body.counts).toEqual(counts);
    expect(res.body.total).toBe(this.jobs.length);
    expect(res.body.retrying).toBe(this.jobs.filter((j) => j.status === "pending" && j.attempts > 0).length);
    expect(res.body.deadLettered).toBe(this.jobs.filter((j) => j.deadLettered).length);
    const pending = this.jobs.filter((j) => j.status === "pending");
    expect(res.body.scheduled).toBeGreaterThanOrEqual(pending.filter((j) => dueness(j, sent, recv) === "not_due").length);
    expect(res.body.scheduled).toBeLessThanOrEqual(pending.filter((j) => dueness(j, sent, recv) !== "due").length);
  }
}

describe("the queue against a model of docs/queue.md", () => {
  it(`random sequences of enqueue, claim-next, claim, renew, release, cancel and retry (${RUNS} runs of up to ${MAX_STEPS} steps)`, async () => {
    const tally: Record<string, number> = {};
    const outcomes: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: MIN_STEPS, maxLength: MAX_STEPS, size: "max" }), async (ops) => {
        const run = new Run();
        try {
          for (const op of ops) {
            const wrote = await run.step(op);
            await run.check(wrote);
          }
          await run.checkStats();
        } catch (err) {
          // The calls of the failing run, for the report.
          (err as Error).message += `\n--- run ${run.prefix}, its calls:\n${run.log.join("\n")}`;
          throw err;
        }
        for (const [k, v] of Object.entries(run.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + v;
        for (const j of run.jobs) tally[`${j.status}${j.deadLettered ? " (dead-lettered)" : ""}`] = (tally[`${j.status}${j.deadLettered ? " (dead-lettered)" : ""}`] ?? 0) + 1;
        tally["attempts > 1"] = (tally["attempts > 1"] ?? 0) + run.jobs.filter((j) => j.attempts > 1).length;
      }),
      // No shrinking: each run is a second of real requests, and the failing run's calls are in the error.
      { numRuns: RUNS, endOnFailure: true, seed: SEED },
    );
    console.log(`[queue-model] seed ${SEED}; end states over ${RUNS} runs: ${JSON.stringify(tally)}`);
    console.log(`[queue-model] what the steps did: ${JSON.stringify(Object.fromEntries(Object.entries(outcomes).sort()))}`);
    // The runs went through the transitions that matter (each is likely many times over in these runs).
    // A retry release that dead-letters is rarer here (a few per 30 runs, sometimes none): queue-retries and
    // queue-worker-retries drive it deterministically.
    for (const what of [
      "enqueue: created", "enqueue: deduplicated", "claim: won", "claim: alreadyHeld", "renew: renewed", "renew: refused",
      "release: done", "release: failed", "release: retry", "release: refused_not_holder",
      "cancel: pending", "400",
    ]) expect(outcomes[what] ?? 0, what).toBeGreaterThan(0);
    expect((outcomes["retry: cancelled"] ?? 0) + (outcomes["retry: failed"] ?? 0) + (outcomes["retry: failed (dead-lettered)"] ?? 0), "retried jobs").toBeGreaterThan(0);
  }, 300_000);
});
