/**
 * Flow control's pure rules (docs/flow-control.md): POST /api/fleet/flow's validation, a
 * scope's settings as answered, the claim, renew and release decisions with
 * flow control, the timeout and start_by patches, the new enqueue and release
 * fields, and (over the in-memory batch, whose SQL runs on sql.js)
 * the claim gate, claim-next's limits and the maintenance upkeep.
 */
import { QUEUE_NAME_RULE } from "../../src/lib/validate";
import { describe, expect, it } from "vitest";
import { claimNext } from "../../src/lib/claim-next";
import {
  FLOW_ROW_SHAPE, flowGate, flowRowsQuery, parkFor, parkScopeOf, reExpireClaimsStatement, scopesOf, settingsOf, startByPassed,
  upsertFlowStatement, type FlowRow,
} from "../../src/lib/flow";
import { flowColumnsAt, validateFlowRequest } from "../../src/lib/flow-endpoint";
import {
  isGroupName, MAX_GROUP_KEY_CHARS, MAX_PARK_SECONDS, MAX_RATE_LIMITED_FOR_SECONDS, MAX_START_WITHIN_SECONDS, MAX_TIMEOUT_SECONDS,
} from "../../src/lib/flow-limits";
import { formatPbDate } from "../../src/lib/lease";
import { flowUpkeepBatch } from "../../src/lib/maintenance";
import { hasAttemptsLeft, MAX_ATTEMPTS_ERROR, retryBackoffMs } from "../../src/lib/queue";
import {
  deadLetterPatch, decideClaim, decideRelease, decideRenew, notStartedPatch, timeoutPatch, type FlowCheck,
} from "../../src/lib/transitions";
import type { ClaimRefusal } from "../../src/lib/types";
import { validateCompleteRequest, validateEnqueueRequest, validateReleaseRequest } from "../../src/lib/validate";
import type { StoredFlow, StoredFlowClaim } from "./support/fake-pocketbase";
import { EXPIRED, enqueued, held, LIVE, memoryBatch, NOW, row } from "./support/rows";

const at = (offsetMs: number) => formatPbDate(NOW + offsetMs);
const newToken = () => "tok-new";
const ENDS_AT_NOW = formatPbDate(NOW);

// ---- POST /api/fleet/flow ---------------------------------------------------------------

describe("validateFlowRequest", () => {
  const QUEUE_RULE = `queue must be a queue name (${QUEUE_NAME_RULE})`;
  const GROUP_RULE = "group must be a group name (a group is 1 to 200 characters with no control characters)";
  const CONCURRENCY_RULE = "concurrency must be an integer from 1 to 100000, or null";
  const RATE_RULE = "rateLimit must be { limit: an integer from 1 to 100000, periodSeconds: an integer from 1 to 86400 }, or null";
  const PARK_SECONDS_RULE = "parkSeconds must be a number from 0 to 604800 (0 clears the park)";
  const PARK_UNTIL_RULE = "parkUntil must be a date with a zone, after now and at most 7 days ahead, or null";
  const valid = (body: unknown) => validateFlowRequest(body, NOW);
  const error = (body: unknown) => {
    const answer = valid(body);
    return answer.ok ? null : answer.error;
  };
  const columns = (body: Record<string, unknown>) => {
    const answer = valid(body);
    if (!answer.ok) throw new Error(answer.error);
    return flowColumnsAt(answer.value, NOW);
  };

  it.each([undefined, null, [], "q", 5])("answers 400 for a body that is not an object (%j)", (body) => {
    expect(error(body)).toBe("the body must be a JSON object");
  });

  it("wants exactly one of queue and group", () => {
    expect(error({ paused: true })).toBe("give exactly one of queue and group");
    expect(error({ queue: "q", group: "g", paused: true })).toBe("give exactly one of queue and group");
  });

  it("names the scope: a queue or a group", () => {
    expect(valid({ queue: "emails", paused: true })).toEqual({ ok: true, value: { scope: { scope: "queue", name: "emails" }, columns: { paused: 1 } } });
    expect(valid({ group: "host a/é", paused: true })).toEqual({
      ok: true, value: { scope: { scope: "group", name: "host a/é" }, columns: { paused: 1 } },
    });
  });

  it.each<unknown>(["", "bad name", "-lead", "a".repeat(65), 5, null, ["q"]])("refuses a queue that is not a queue name (%j)", (queue) => {
    expect(error({ queue, paused: true })).toBe(QUEUE_RULE);
  });

  it("takes a queue name of 64 characters", () => {
    expect(error({ queue: "a".repeat(64), paused: true })).toBeNull();
  });

  it.each<[string, unknown]>([
    ["empty", ""],
    ["NUL", "a\u0000"],
    ["a tab", "a\tb"],
    ["a newline", "a\n"],
    ["U+001F", "\u001f"],
    ["DEL (U+007F)", "x\u007f"],
    ["U+0080", "\u0080x"],
    ["U+009F", "\u009f"],
    ["201 code points", "g".repeat(MAX_GROUP_KEY_CHARS + 1)],
    ["a number", 7],
    ["null", null],
  ])("refuses a group that is not a group name: %s", (_name, group) => {
    expect(error({ group, paused: true })).toBe(GROUP_RULE);
  });

  it("takes a group of 200 code points (astral ones count once) and characters outside Cc", () => {
    expect(MAX_GROUP_KEY_CHARS).toBe(200);
    expect(error({ group: "g".repeat(200), paused: true })).toBeNull();
    expect(error({ group: "\u{1F600}".repeat(200), paused: true })).toBeNull();
    expect(error({ group: "\u{1F600}".repeat(201), paused: true })).toBe(GROUP_RULE);
    // U+00A0 (no-break space) and U+200B are not category Cc.
    expect(error({ group: "\u00a0\u200b", paused: true })).toBeNull();
  });

  it("wants at least one setting, whatever else the body holds", () => {
    const message = "give at least one setting: paused, concurrency, rateLimit, parkSeconds or parkUntil";
    expect(error({ queue: "q" })).toBe(message);
    expect(error({ group: "g", name: "x", limit: 3 })).toBe(message);
  });

  it("writes only the settings given (the others keep their values)", () => {
    expect(columns({ queue: "q", concurrency: 3 })).toEqual({ concurrency: 3 });
    expect(columns({ queue: "q", rateLimit: { limit: 5, periodSeconds: 60 } })).toEqual({ rate_limit: 5, rate_period: 60 });
    expect(columns({ queue: "q", paused: false, parkSeconds: 10 })).toEqual({ paused: 0, parked_until: at(10_000) });
  });

  it("takes paused as a boolean, null clearing it (false)", () => {
    expect(columns({ queue: "q", paused: true })).toEqual({ paused: 1 });
    expect(columns({ queue: "q", paused: false })).toEqual({ paused: 0 });
    expect(columns({ queue: "q", paused: null })).toEqual({ paused: 0 });
    for (const paused of ["true", 1, 0, {}]) expect(error({ queue: "q", paused })).toBe("paused must be true, false or null");
  });

  it("takes concurrency as an integer from 1 to 100000, null clearing it", () => {
    expect(columns({ queue: "q", concurrency: 1 })).toEqual({ concurrency: 1 });
    expect(columns({ queue: "q", concurrency: 100_000 })).toEqual({ concurrency: 100_000 });
    expect(columns({ queue: "q", concurrency: null })).toEqual({ concurrency: 0 });
    for (const concurrency of [0, -1, 100_001, 1.5, "3", true]) expect(error({ queue: "q", concurrency })).toBe(CONCURRENCY_RULE);
  });

  it("takes rateLimit whole, each bound inclusive, null clearing it", () => {
    expect(columns({ group: "g", rateLimit: { limit: 1, periodSeconds: 1 } })).toEqual({ rate_limit: 1, rate_period: 1 });
    expect(columns({ group: "g", rateLimit: { limit: 100_000, periodSeconds: 86_400 } })).toEqual({ rate_limit: 100_000, rate_period: 86_400 });
    expect(columns({ group: "g", rateLimit: null })).toEqual({ rate_limit: 0, rate_period: 0 });
  });

  it.each<[string, unknown]>([
    ["a limit of 0", { limit: 0, periodSeconds: 60 }],
    ["a limit above 100000", { limit: 100_001, periodSeconds: 60 }],
    ["a fractional limit", { limit: 1.5, periodSeconds: 60 }],
    ["a period of 0", { limit: 5, periodSeconds: 0 }],
    ["a period above a day", { limit: 5, periodSeconds: 86_401 }],
    ["a fractional period", { limit: 5, periodSeconds: 0.5 }],
    ["no period (replaced whole: a half is not merged)", { limit: 5 }],
    ["no limit", { periodSeconds: 60 }],
    ["a key besides the two", { limit: 5, periodSeconds: 60, burst: 2 }],
    ["an array", [5, 60]],
    ["a number", 5],
    ["text", "5/60"],
  ])("refuses a rateLimit with %s", (_name, rateLimit) => {
    expect(error({ queue: "q", rateLimit })).toBe(RATE_RULE);
  });

  it("parks for parkSeconds from now (a number 0 to 604800), 0 clearing the park", () => {
    expect(MAX_PARK_SECONDS).toBe(604_800);
    expect(columns({ group: "g", parkSeconds: 30 })).toEqual({ parked_until: at(30_000) });
    expect(columns({ group: "g", parkSeconds: 1.5 })).toEqual({ parked_until: at(1500) });
    expect(columns({ group: "g", parkSeconds: 604_800 })).toEqual({ parked_until: at(604_800_000) });
    expect(columns({ group: "g", parkSeconds: 0 })).toEqual({ parked_until: "" });
    for (const parkSeconds of [-1, 604_801, "30", null, true]) expect(error({ group: "g", parkSeconds })).toBe(PARK_SECONDS_RULE);
  });

  it("dates parkSeconds from the write's instant, not the request's (a call that waited for the writer still parks N seconds)", () => {
    const answer = valid({ group: "g", parkSeconds: 1 });
    if (!answer.ok) throw new Error(answer.error);
    expect(flowColumnsAt(answer.value, NOW + 5000)).toEqual({ parked_until: at(6000) });
    const cleared = valid({ group: "g", parkSeconds: 0 });
    if (!cleared.ok) throw new Error(cleared.error);
    expect(flowColumnsAt(cleared.value, NOW + 5000)).toEqual({ parked_until: "" });
  });

  it("parks until parkUntil (a zoned date after now, at most 7 days ahead), null clearing the park", () => {
    expect(columns({ group: "g", parkUntil: "2025-01-15T13:00:00Z" })).toEqual({ parked_until: at(3_600_000) });
    expect(columns({ group: "g", parkUntil: "2025-01-15T14:00:00+01:00" })).toEqual({ parked_until: at(3_600_000) });
    expect(columns({ group: "g", parkUntil: "2025-01-15 12:00:00.001Z" })).toEqual({ parked_until: at(1) });
    expect(columns({ group: "g", parkUntil: at(7 * 86_400_000) })).toEqual({ parked_until: at(7 * 86_400_000) });
    expect(columns({ group: "g", parkUntil: null })).toEqual({ parked_until: "" });
  });

  it.each<[string, unknown]>([
    ["now itself", "2025-01-15T12:00:00Z"],
    ["the past", "2025-01-15T11:59:59Z"],
    ["more than 7 days ahead", at(7 * 86_400_000 + 1)],
    ["no zone", "2025-01-15T13:00:00"],
    ["an impossible date", "2025-02-30T13:00:00Z"],
    ["not a date", "tomorrow"],
    ["a number", NOW + 60_000],
  ])("refuses a parkUntil of %s", (_name, parkUntil) => {
    expect(error({ group: "g", parkUntil })).toBe(PARK_UNTIL_RULE);
  });

  it("refuses parkSeconds and parkUntil together, even when each would clear", () => {
    expect(error({ group: "g", parkSeconds: 10, parkUntil: "2025-01-15T13:00:00Z" })).toBe("give parkSeconds or parkUntil, not both");
    expect(error({ group: "g", parkSeconds: 0, parkUntil: null })).toBe("give parkSeconds or parkUntil, not both");
  });

  it("checks every setting given, whichever fails", () => {
    expect(error({ queue: "q", paused: true, concurrency: 0 })).toBe(CONCURRENCY_RULE);
    expect(error({ queue: "q", concurrency: 2, rateLimit: { limit: 0, periodSeconds: 1 } })).toBe(RATE_RULE);
    expect(error({ queue: "q", paused: true, parkSeconds: -5 })).toBe(PARK_SECONDS_RULE);
  });
});

// ---- a scope's settings as answered --------------------------------------------------------

describe("settingsOf", () => {
  const flowRow = (fields: Partial<FlowRow> = {}): FlowRow => ({ ...FLOW_ROW_SHAPE, scope: "group", name: "g", ...fields });

  it("answers a scope without a row as unset: not paused, null for the rest", () => {
    expect(settingsOf(null, NOW)).toEqual({ paused: false, concurrency: null, rateLimit: null, parkedUntil: null });
  });

  it("reads 0 and \"\" as unset", () => {
    expect(settingsOf(flowRow(), NOW)).toEqual({ paused: false, concurrency: null, rateLimit: null, parkedUntil: null });
  });

  it("answers every setting as stored", () => {
    const stored = flowRow({ paused: 1, concurrency: 4, rate_limit: 10, rate_period: 60, parked_until: at(5000) });
    expect(settingsOf(stored, NOW)).toEqual({
      paused: true, concurrency: 4, rateLimit: { limit: 10, periodSeconds: 60 }, parkedUntil: at(5000),
    });
  });

  it("reads a park that has passed, or ends now, as null", () => {
    expect(settingsOf(flowRow({ parked_until: at(-1) }), NOW).parkedUntil).toBeNull();
    expect(settingsOf(flowRow({ parked_until: at(0) }), NOW).parkedUntil).toBeNull();
    expect(settingsOf(flowRow({ parked_until: at(1) }), NOW).parkedUntil).toBe(at(1));
  });
});

// ---- claims -------------------------------------------------------------------------------

describe("decideClaim with a flow check", () => {
  /** A flow check that always answers `reason`, and counts its calls. */
  function check(reason: ClaimRefusal | null): FlowCheck & { calls: number } {
    const fn = ((_row) => {
      fn.calls++;
      return reason;
    }) as FlowCheck & { calls: number };
    fn.calls = 0;
    return fn;
  }
  const claim = (r: ReturnType<typeof row>, flow: FlowCheck) => decideClaim(r, "w1", 30, NOW, newToken, undefined, flow);

  it.each<ClaimRefusal>(["paused", "concurrency_limit", "rate_limit"])("refuses a job it would win with the flow check's %s, writing nothing", (reason) => {
    const flow = check(reason);
    const decision = claim(enqueued(), flow);
    expect(decision).toEqual({ kind: "refused", reason });
    expect(flow.calls).toBe(1);
  });

  it("wins when the flow check allows it, asking it about the row", () => {
    const seen: string[] = [];
    const decision = claim(enqueued({ id: "j9", group_key: "h" }), (r) => {
      seen.push(`${r.id}/${r.group_key}`);
      return null;
    });
    expect(decision.kind).toBe("win");
    expect(seen).toEqual(["j9/h"]);
  });

  it("refuses a steal the flow check holds back too (every winning claim counts)", () => {
    expect(claim(held("w-dead", EXPIRED), check("concurrency_limit"))).toEqual({ kind: "refused", reason: "concurrency_limit" });
  });

  it("never refuses an alreadyHeld re-claim, nor asks the flow check", () => {
    const flow = check("paused");
    expect(claim(held("w1", LIVE), flow)).toEqual({ kind: "already_held", leaseToken: "tok-current" });
    expect(flow.calls).toBe(0);
  });

  it("answers a job it would not win anyway as today, without a reason and without asking", () => {
    const flow = check("rate_limit");
    for (const r of [held("w2", LIVE), enqueued({ run_at: at(60_000) }), enqueued({ status: "done" })]) {
      expect(claim(r, flow)).toEqual({ kind: "refused" });
    }
    expect(flow.calls).toBe(0);
  });

  it("dead-letters a job out of attempts before any flow reason (as docs/queue.md, no reason)", () => {
    const flow = check("paused");
    const spent = enqueued({ attempts: 3, max_attempts: 3 });
    expect(claim(spent, flow)).toEqual({ kind: "give_up", patch: deadLetterPatch(spent, NOW, MAX_ATTEMPTS_ERROR) });
    expect(flow.calls).toBe(0);
  });

  it("refuses start_by_passed before any flow reason, writing nothing", () => {
    const flow = check("paused");
    expect(claim(enqueued({ start_by: at(-1) }), flow)).toEqual({ kind: "refused", reason: "start_by_passed" });
    expect(claim(enqueued({ start_by: at(0) }), flow)).toEqual({ kind: "refused", reason: "start_by_passed" });
    expect(flow.calls).toBe(0);
    // Not passed yet: the flow check decides.
    expect(claim(enqueued({ start_by: at(1) }), flow)).toEqual({ kind: "refused", reason: "paused" });
  });

  // The dead letter and start_by_passed never meet on one row: start_by applies
  // only before the first attempt, and no cap refuses a job that has made none.
  it("has the dead letter and start_by_passed never both apply (so their order cannot show)", () => {
    for (const max of [-1, 0, 1, 25]) {
      const r = enqueued({ attempts: 0, max_attempts: max, start_by: at(-1) });
      expect(startByPassed(r, NOW)).toBe(true);
      expect(hasAttemptsLeft(r.attempts, r.max_attempts)).toBe(true);
      expect(claim(r, check(null))).toEqual({ kind: "refused", reason: "start_by_passed" });
    }
  });

  it("ignores start_by once the job has started (attempts > 0), and on a held row", () => {
    expect(claim(enqueued({ attempts: 1, start_by: at(-60_000) }), check(null)).kind).toBe("win");
    expect(claim(held("w-dead", EXPIRED, { attempts: 0, start_by: at(-60_000) }), check(null)).kind).toBe("win");
  });

  it("writes the timeout instead of stealing a held job past its deadline, before the dead letter and the flow check", () => {
    const flow = check("paused");
    const late = held("w-dead", at(-1000), { claimed_at: at(-11_000), timeout_seconds: 10, attempts: 2, max_attempts: 5 });
    expect(claim(late, flow)).toEqual({ kind: "timed_out", patch: timeoutPatch(late, NOW) });
    const spent = { ...late, attempts: 5 };
    expect(claim(spent, flow)).toEqual({ kind: "timed_out", patch: timeoutPatch(spent, NOW) });
    expect(flow.calls).toBe(0);
  });

  it("steals a held job whose lease ran out before its deadline: a new attempt, with a new deadline", () => {
    const lapsed = held("w-dead", at(-1000), { claimed_at: at(-5000), timeout_seconds: 10, attempts: 1, max_attempts: 5 });
    expect(claim(lapsed, check(null))).toMatchObject({
      kind: "win", patch: { claimed_by: "w1", claimed_at: at(0), attempts: 2, lease_expires_at: at(10_000) },
    });
  });

  it("never sets a lease past the deadline of the attempt it starts (the deadline beats the lease asked for)", () => {
    const decision = decideClaim(enqueued({ timeout_seconds: 10 }), "w1", 60, NOW, newToken);
    expect(decision).toMatchObject({ kind: "win", patch: { claimed_at: at(0), lease_expires_at: at(10_000) } });
    const shortLease = decideClaim(enqueued({ timeout_seconds: 100 }), "w1", 20, NOW, newToken);
    expect(shortLease).toMatchObject({ kind: "win", patch: { lease_expires_at: at(20_000) } });
  });
});

// ---- renews -------------------------------------------------------------------------------

describe("decideRenew and the deadline (docs/flow-control.md \"Timeouts\")", () => {
  const renew = (fields: { workerId?: string; leaseToken?: string; leaseSeconds?: unknown } = {}) =>
    ({ workerId: "w1", leaseToken: undefined, leaseSeconds: 60, ...fields });
  /** Held by w1 under tok-current, claimed `claimedAgoMs` ago with a `timeout` s timeout. */
  const timed = (claimedAgoMs: number, timeout: number, lease = LIVE) =>
    held("w1", lease, { claimed_at: at(-claimedAgoMs), timeout_seconds: timeout });

  it("tells the holder timed_out at the deadline and after it, and writes nothing", () => {
    expect(decideRenew(timed(10_000, 10, ENDS_AT_NOW), renew(), NOW)).toEqual({ kind: "refused", reason: "timed_out" });
    expect(decideRenew(timed(15_000, 10, at(-5000)), renew(), NOW)).toEqual({ kind: "refused", reason: "timed_out" });
    // With its current token, and as a running job, alike.
    expect(decideRenew(timed(15_000, 10, at(-5000)), renew({ leaseToken: "tok-current" }), NOW)).toEqual({ kind: "refused", reason: "timed_out" });
    expect(decideRenew({ ...timed(10_000, 10, ENDS_AT_NOW), status: "running" }, renew(), NOW)).toEqual({ kind: "refused", reason: "timed_out" });
  });

  it("renews the holder just before the deadline, the lease ending at the deadline", () => {
    expect(decideRenew(timed(9999, 10, at(1)), renew(), NOW)).toEqual({
      kind: "renew", patch: { status: "running", lease_expires_at: at(1), version: 4 },
    });
  });

  it("lets the deadline beat the 1-second floor of a lease", () => {
    // 0.2 s asked for is clamped up to 1 s; the deadline 300 ms away wins.
    expect(decideRenew(timed(9700, 10, at(300)), renew({ leaseSeconds: 0.2 }), NOW)).toMatchObject({
      kind: "renew", patch: { lease_expires_at: at(300) },
    });
    // Without a deadline the floor holds.
    expect(decideRenew(held("w1", LIVE), renew({ leaseSeconds: 0.2 }), NOW)).toMatchObject({ kind: "renew", patch: { lease_expires_at: at(1000) } });
  });

  it("keeps the lease asked for when the deadline is further", () => {
    expect(decideRenew(timed(1000, 3600, at(5000)), renew({ leaseSeconds: 30 }), NOW)).toMatchObject({
      kind: "renew", patch: { lease_expires_at: at(30_000) },
    });
  });

  it.each<[string, () => ReturnType<typeof held>, ReturnType<typeof renew>]>([
    ["another worker", () => timed(20_000, 10, at(-10_000)), renew({ workerId: "w2" })],
    ["a stale token", () => timed(20_000, 10, at(-10_000)), renew({ leaseToken: "tok-old" })],
    ["a job back to pending", () => ({ ...timed(20_000, 10, at(-10_000)), status: "pending" }), renew()],
    ["a finished job", () => ({ ...timed(20_000, 10, at(-10_000)), status: "done" }), renew()],
  ])("refuses %s past the deadline as today, without a reason", (_name, make, req) => {
    expect(decideRenew(make(), req, NOW)).toEqual({ kind: "refused" });
  });

  it("never answers timed_out without a timeout, or without a claim to count from", () => {
    expect(decideRenew(held("w1", EXPIRED, { claimed_at: at(-3_600_000) }), renew(), NOW)).toEqual({ kind: "refused" });
    expect(decideRenew(held("w1", EXPIRED, { timeout_seconds: 5, claimed_at: "" }), renew(), NOW)).toEqual({ kind: "refused" });
  });
});

// ---- releases -----------------------------------------------------------------------------

describe("decideRelease to pending past the deadline", () => {
  it("writes the timeout (a failed attempt, the orphan count kept), not an orphaning", () => {
    const row = held("w1", at(-500), { attempts: 1, max_attempts: 5, timeout_seconds: 10, claimed_at: at(-10_500), consecutive_orphan_count: 2 });
    const decision = decideRelease(row, { workerId: "w1", leaseToken: undefined, target: "pending" }, NOW);
    expect(decision).toMatchObject({ kind: "release", patch: { status: "pending", last_error: "timed out after 10 s", claimed_by: "" } });
    if (decision.kind !== "release") throw new Error("not released");
    expect(decision.patch.consecutive_orphan_count).toBeUndefined();
    expect(decision.patch.reclaim_count).toBeUndefined();
    // Without a timeout it is the sweeper's re-queue, as before.
    const plain = decideRelease(held("w1", at(-500), { consecutive_orphan_count: 2 }), { workerId: "w1", leaseToken: undefined, target: "pending" }, NOW);
    expect(plain).toMatchObject({ kind: "release", patch: { consecutive_orphan_count: 3 } });
  });
});

describe("decideRelease with rateLimitedFor", () => {
  const release = (fields: Record<string, unknown> = {}) =>
    ({ workerId: "w1", leaseToken: "tok-current", target: "retry" as const, jitter: 0, rateLimitedFor: 30, ...fields });

  it("gives the attempt back, makes the job due in N seconds (not the backoff), and asks for the park", () => {
    const before = held("w1", LIVE, { status: "running", attempts: 2, max_attempts: 5, version: 6, consecutive_orphan_count: 2, progress: '{"p":1}' });
    expect(decideRelease(before, release({ error: "429 Too Many Requests" }), NOW)).toEqual({
      kind: "release",
      park: 30,
      patch: {
        status: "pending", run_at: at(30_000), attempts: 1, claimed_by: "", lease_token: "", lease_expires_at: "",
        consecutive_orphan_count: 0, progress: null, version: 7, last_error: "429 Too Many Requests",
      },
    });
  });

  it("does not consult max_attempts: waiting out a rate limit never dead-letters a job", () => {
    const last = held("w1", LIVE, { attempts: 3, max_attempts: 3 });
    expect(decideRelease(last, release(), NOW)).toMatchObject({ kind: "release", park: 30, patch: { status: "pending", attempts: 2 } });
    // Without rateLimitedFor the same retry is the dead letter.
    expect(decideRelease(last, release({ rateLimitedFor: undefined }), NOW)).toMatchObject({ kind: "release", patch: { status: "failed" } });
  });

  it("takes a fractional N to the millisecond, and never makes attempts negative", () => {
    expect(decideRelease(held("w1", LIVE, { attempts: 0 }), release({ rateLimitedFor: 1.5 }), NOW)).toMatchObject({
      kind: "release", park: 1.5, patch: { run_at: at(1500), attempts: 0 },
    });
  });

  it("parks nothing on a plain retry: the backoff, the attempt kept", () => {
    const decision = decideRelease(held("w1", LIVE, { attempts: 1, max_attempts: 5 }), release({ rateLimitedFor: undefined }), NOW);
    expect(decision).toEqual({
      kind: "release",
      patch: expect.objectContaining({ status: "pending", run_at: at(retryBackoffMs(1, 0)) }),
    });
    expect(decision.kind === "release" && decision.patch.attempts).toBeUndefined();
  });

  it("is refused as any release on a lease that is not the caller's or not live, parking nothing", () => {
    expect(decideRelease(held("w1", EXPIRED), release(), NOW)).toEqual({ kind: "refused", reason: "refused_not_holder" });
    expect(decideRelease(held("w2", LIVE), release(), NOW)).toEqual({ kind: "refused", reason: "refused_not_holder" });
    expect(decideRelease(held("w1", LIVE), release({ leaseToken: "tok-old" }), NOW)).toEqual({ kind: "refused", reason: "refused_stale_token" });
  });

  it("parks the job's group, or its queue when it has none", () => {
    expect(parkScopeOf(enqueued({ queue: "emails", group_key: "host-a" }))).toEqual({ scope: "group", name: "host-a" });
    expect(parkScopeOf(enqueued({ queue: "emails" }))).toEqual({ scope: "queue", name: "emails" });
    expect(parkScopeOf(enqueued({ queue: "" }))).toEqual({ scope: "queue", name: "default" });
  });
});

// ---- timeouts and start_by ----------------------------------------------------------------

describe("timeoutPatch", () => {
  it("is a failed attempt with attempts left: back to pending after the backoff, the timeout as its error, the orphan count kept", () => {
    const before = held("w1", at(-1), {
      status: "running", attempts: 2, max_attempts: 5, timeout_seconds: 45, consecutive_orphan_count: 3, version: 8, progress: '{"p":1}',
    });
    const patch = timeoutPatch(before, NOW);
    expect(patch).toEqual({
      status: "pending", run_at: at(retryBackoffMs(2, 0.5)), claimed_by: "", lease_token: "", lease_expires_at: "", progress: null,
      version: 9, last_error: "timed out after 45 s",
    });
    // Not reset to 0 (a release would), not bumped (an orphaning would).
    expect(patch).not.toHaveProperty("consecutive_orphan_count");
    expect(patch).not.toHaveProperty("attempts");
  });

  it("dead-letters at max_attempts, with the timeout as its error, the orphan count kept", () => {
    const before = held("w1", at(-1), { attempts: 3, max_attempts: 3, timeout_seconds: 7, consecutive_orphan_count: 2 });
    const patch = timeoutPatch(before, NOW);
    expect(patch).toEqual(deadLetterPatch(before, NOW, "timed out after 7 s"));
    expect(patch).toMatchObject({ status: "failed", dead_lettered_at: at(0), finished_at: at(0) });
    expect(patch).not.toHaveProperty("consecutive_orphan_count");
  });

  it("retries without a cap (max_attempts 0)", () => {
    expect(timeoutPatch(held("w1", at(-1), { attempts: 40, max_attempts: 0, timeout_seconds: 1 }), NOW).status).toBe("pending");
  });
});

describe("notStartedPatch", () => {
  it("fails the job now with the start_by in PocketBase's format; not a dead letter", () => {
    const before = enqueued({ start_by: "2025-01-15 11:59:00.000Z", version: 4 });
    const patch = notStartedPatch(before, NOW);
    expect(patch).toEqual({ status: "failed", finished_at: at(0), last_error: "not started by 2025-01-15 11:59:00.000Z", version: 5 });
    expect(patch).not.toHaveProperty("dead_lettered_at");
  });
});

describe("startByPassed", () => {
  it("is a pending job never started, its start_by come", () => {
    expect(startByPassed(enqueued({ start_by: at(0) }), NOW)).toBe(true);
    expect(startByPassed(enqueued({ start_by: at(1) }), NOW)).toBe(false);
    expect(startByPassed(enqueued({ start_by: "" }), NOW)).toBe(false);
    expect(startByPassed(enqueued({ start_by: at(-1), attempts: 1 }), NOW)).toBe(false);
    expect(startByPassed(held("w1", LIVE, { start_by: at(-1), attempts: 0 }), NOW)).toBe(false);
  });
});

// ---- enqueue fields -----------------------------------------------------------------------

describe("validateEnqueueRequest: flow control's fields", () => {
  const T = Date.UTC(2026, 11, 1, 9, 30, 0, 0);
  const GROUP_ERROR = 'jobs[0]: group must be a group name (a group is 1 to 200 characters with no control characters), or "" for none';
  const one = (item: Record<string, unknown>) => validateEnqueueRequest({ jobs: [{ probeKey: "p", ...item }] }, T);
  const field = (item: Record<string, unknown>) => {
    const answer = one(item);
    if (!answer.ok) throw new Error(answer.error);
    const [first] = answer.value;
    return { groupKey: first!.groupKey, timeoutSeconds: first!.timeoutSeconds, startBy: first!.startBy };
  };
  const error = (item: Record<string, unknown>) => {
    const answer = one(item);
    return answer.ok ? null : answer.error;
  };

  it("reads an absent, null or empty group as none", () => {
    expect(field({}).groupKey).toBe("");
    expect(field({ group: null }).groupKey).toBe("");
    expect(field({ group: "" }).groupKey).toBe("");
    expect(field({ group: "tenant:42" }).groupKey).toBe("tenant:42");
  });

  it.each<[string, unknown]>([
    ["NUL", "\u0000"],
    ["a tab", "a\tb"],
    ["DEL", "\u007f"],
    ["a C1 control", "x\u0085"],
    ["201 code points", "h".repeat(201)],
    ["201 astral code points", "\u{1F600}".repeat(201)],
    ["a number", 42],
    ["an object", { host: "a" }],
  ])("refuses a group with %s", (_name, group) => {
    expect(error({ group })).toBe(GROUP_ERROR);
  });

  it("takes a group of 200 code points", () => {
    expect(field({ group: "\u{1F600}".repeat(200) }).groupKey).toBe("\u{1F600}".repeat(200));
    expect(isGroupName("h".repeat(200))).toBe(true);
  });

  it("takes timeoutSeconds as an integer from 1 to 86400 (absent or null: none)", () => {
    expect(MAX_TIMEOUT_SECONDS).toBe(86_400);
    expect(field({}).timeoutSeconds).toBe(0);
    expect(field({ timeoutSeconds: null }).timeoutSeconds).toBe(0);
    expect(field({ timeoutSeconds: 1 }).timeoutSeconds).toBe(1);
    expect(field({ timeoutSeconds: 86_400 }).timeoutSeconds).toBe(86_400);
    for (const timeoutSeconds of [0, 86_401, 1.5, -3, "60", true]) {
      expect(error({ timeoutSeconds })).toBe("jobs[0]: timeoutSeconds must be an integer from 1 to 86400");
    }
  });

  it("sets start_by to the job's run_at + startWithinSeconds (an integer from 1 to 2592000)", () => {
    expect(MAX_START_WITHIN_SECONDS).toBe(2_592_000);
    expect(field({}).startBy).toBe("");
    expect(field({ startWithinSeconds: null }).startBy).toBe("");
    expect(field({ startWithinSeconds: 60 }).startBy).toBe(formatPbDate(T + 60_000));
    expect(field({ startWithinSeconds: 60, delaySeconds: 10 }).startBy).toBe(formatPbDate(T + 70_000));
    expect(field({ startWithinSeconds: 1, runAt: "2026-12-24T00:00:00Z" }).startBy).toBe("2026-12-24 00:00:01.000Z");
    expect(field({ startWithinSeconds: 2_592_000 }).startBy).toBe(formatPbDate(T + 2_592_000_000));
    for (const startWithinSeconds of [0, 2_592_001, 2.5, "60"]) {
      expect(error({ startWithinSeconds })).toBe("jobs[0]: startWithinSeconds must be an integer from 1 to 2592000");
    }
  });
});

// ---- release and complete fields ----------------------------------------------------------

describe("rateLimitedFor on release and complete", () => {
  const RANGE = "rateLimitedFor must be a number from 1 to 86400";
  const release = (fields: Record<string, unknown>) => validateReleaseRequest({ jobId: "j", workerId: "w", status: "retry", ...fields });

  it("takes a number from 1 to 86400 with status retry (fractions too)", () => {
    expect(MAX_RATE_LIMITED_FOR_SECONDS).toBe(86_400);
    for (const rateLimitedFor of [1, 1.5, 30, 86_400]) {
      expect(release({ rateLimitedFor })).toMatchObject({ ok: true, value: { target: "retry", rateLimitedFor } });
    }
  });

  it("reads absent and null as none", () => {
    expect(release({})).toMatchObject({ ok: true, value: { rateLimitedFor: undefined } });
    expect(release({ rateLimitedFor: null })).toMatchObject({ ok: true, value: { rateLimitedFor: undefined } });
    expect(release({ status: "done", rateLimitedFor: null }).ok).toBe(true);
  });

  it.each([0, 0.999, -1, 86_400.5, 86_401, "30", true])("refuses %j", (rateLimitedFor) => {
    expect(release({ rateLimitedFor })).toEqual({ ok: false, error: RANGE });
  });

  it.each(["done", "failed", "pending"])("refuses it with status %s", (status) => {
    expect(release({ status, rateLimitedFor: 30 })).toEqual({ ok: false, error: "rateLimitedFor is only for status retry" });
  });

  it("checks it per item of complete, naming the item", () => {
    const complete = (releases: unknown[]) => validateCompleteRequest({ workerId: "w", releases });
    const answer = complete([{ jobId: "a", status: "done" }, { jobId: "b", status: "retry", rateLimitedFor: 5 }]);
    expect(answer.ok && answer.value.map((r) => r.rateLimitedFor)).toEqual([undefined, 5]);
    expect(complete([{ jobId: "a", status: "retry" }, { jobId: "b", status: "done", rateLimitedFor: 5 }]))
      .toEqual({ ok: false, error: "releases[1]: rateLimitedFor is only for status retry" });
    expect(complete([{ jobId: "a", status: "retry", rateLimitedFor: 0 }])).toEqual({ ok: false, error: `releases[0]: ${RANGE}` });
  });
});

// ---- the gate and claim-next over the in-memory batch ------------------------------------

/** A probe_flow row as stored. */
function flowRow(fields: Partial<StoredFlow> & { scope: string; name: string }): StoredFlow {
  return {
    id: `f-${fields.scope}-${fields.name}`, paused: 0, concurrency: 0, rate_limit: 0, rate_period: 0, parked_until: "",
    created: at(-60_000), updated: at(-60_000), ...fields,
  };
}

/** Due pending jobs in claim order (oldest first), each of a group. */
function dueJobs(prefix: string, groups: string[], fields: Partial<ReturnType<typeof enqueued>> = {}) {
  return groups.map((group_key, i) => enqueued({
    id: `${prefix}${String(i).padStart(3, "0")}`, group_key, created: at(-100_000 + i), run_at: at(-100_000 + i), ...fields,
  }));
}

const claimReq = (limit: number, queues: string[] | null = null) => ({ workerId: "w", leaseSeconds: 30, limit, probeKeyPrefix: "", queues });

describe("flowGate", () => {
  it("reads no counts for scopes without settings, and only the counts a scope's limits need", () => {
    const batch = memoryBatch([enqueued({ id: "a", group_key: "g" })], {
      flow: [flowRow({ scope: "group", name: "g", concurrency: 2 })],
    });
    const gate = flowGate(batch, NOW);
    gate.load([batch.row("a")]);
    // One query for the settings, one for the group's held count; no window count without a rate limit.
    expect(batch.calls.map((c) => [c.op, /FROM (\w+)/.exec(c.query.sql)?.[1]])).toEqual([["queryAll", "probe_flow"], ["queryOne", "probe_jobs"]]);
    // Loaded once: asking again reads nothing more.
    expect(gate.refusal(batch.row("a"))).toBeNull();
    expect(batch.calls).toHaveLength(2);
  });

  it("checks paused before concurrency before the rate limit, the queue before the group", () => {
    const job = enqueued({ id: "a", queue: "q", group_key: "g" });
    const claims: StoredFlowClaim[] = [{ scope: "group", name: "g", at: NOW - 1000, expires: NOW + 59_000 }];
    const heldJob = held("w9", LIVE, { id: "h", queue: "q", group_key: "g" });
    const gateWith = (flow: StoredFlow[]) => {
      const batch = memoryBatch([job, heldJob], { flow, flowClaims: claims });
      return flowGate(batch, NOW).refusal(batch.row("a"));
    };
    const limits = { concurrency: 1, rate_limit: 1, rate_period: 60 };
    expect(gateWith([flowRow({ scope: "group", name: "g", paused: 1, ...limits })])).toEqual({ reason: "paused", scope: { scope: "group", name: "g" } });
    expect(gateWith([flowRow({ scope: "group", name: "g", ...limits })])).toEqual({ reason: "concurrency_limit", scope: { scope: "group", name: "g" } });
    expect(gateWith([flowRow({ scope: "group", name: "g", rate_limit: 1, rate_period: 60 })])).toEqual({ reason: "rate_limit", scope: { scope: "group", name: "g" } });
    // The queue's reason comes first among equals; a later kind of reason waits for every scope's earlier one.
    expect(gateWith([flowRow({ scope: "group", name: "g", concurrency: 1 }), flowRow({ scope: "queue", name: "q", concurrency: 1 })]))
      .toEqual({ reason: "concurrency_limit", scope: { scope: "queue", name: "q" } });
    expect(gateWith([flowRow({ scope: "group", name: "g", parked_until: at(1) }), flowRow({ scope: "queue", name: "q", concurrency: 1 })]))
      .toEqual({ reason: "paused", scope: { scope: "group", name: "g" } });
    // A park that has passed holds nothing back.
    expect(gateWith([flowRow({ scope: "group", name: "g", parked_until: at(0) })])).toBeNull();
  });

  it("counts only held jobs under a live lease, and only claims inside the window (now - period, now]", () => {
    const jobs = [
      enqueued({ id: "a", group_key: "g" }),
      held("w1", LIVE, { id: "live", group_key: "g" }),
      held("w2", EXPIRED, { id: "lapsed", group_key: "g" }),
      held("w3", LIVE, { id: "other", group_key: "g2" }),
    ];
    const atConcurrency = (concurrency: number) => {
      const batch = memoryBatch(jobs, { flow: [flowRow({ scope: "group", name: "g", concurrency })] });
      return flowGate(batch, NOW).refusal(batch.row("a"))?.reason ?? null;
    };
    expect(atConcurrency(1)).toBe("concurrency_limit");
    expect(atConcurrency(2)).toBeNull();
    const claimsAt = (...offsets: number[]) => offsets.map((o) => ({ scope: "group", name: "g", at: NOW + o, expires: NOW + o + 10_000 }));
    const withClaims = (claims: StoredFlowClaim[]) => {
      const batch = memoryBatch(jobs, { flow: [flowRow({ scope: "group", name: "g", rate_limit: 2, rate_period: 10 })], flowClaims: claims });
      return flowGate(batch, NOW).refusal(batch.row("a"))?.reason ?? null;
    };
    expect(withClaims(claimsAt(-9999, 0))).toBe("rate_limit");
    // A claim exactly a period ago has left the window.
    expect(withClaims(claimsAt(-10_000, 0))).toBeNull();
    expect(withClaims([{ scope: "group", name: "other", at: NOW, expires: NOW + 1 }, ...claimsAt(0)])).toBeNull();
  });

  it("logs each winning claim of a rate-limited scope at its instant, kept for the period, in one statement at flush", () => {
    const batch = memoryBatch([enqueued({ id: "a", queue: "q", group_key: "g" }), enqueued({ id: "b", queue: "r", group_key: "g" })], {
      flow: [
        flowRow({ scope: "group", name: "g", rate_limit: 5, rate_period: 60 }), flowRow({ scope: "queue", name: "q", concurrency: 3 }),
        flowRow({ scope: "queue", name: "r", rate_limit: 9, rate_period: 2 }),
      ],
    });
    const gate = flowGate(batch, NOW);
    gate.load([batch.row("a"), batch.row("b")]);
    gate.claimed(batch.row("a"));
    gate.claimed(batch.row("b"));
    expect(batch.flowClaims).toEqual([]);
    gate.flush();
    expect(batch.calls.filter((c) => c.op === "execute")).toHaveLength(1);
    expect(batch.flowClaims.sort((x, y) => x.expires - y.expires)).toEqual([
      { scope: "queue", name: "r", at: NOW, expires: NOW + 2_000 },
      { scope: "group", name: "g", at: NOW, expires: NOW + 60_000 }, { scope: "group", name: "g", at: NOW, expires: NOW + 60_000 },
    ]);
    gate.flush();
    expect(batch.flowClaims).toHaveLength(3);
  });

  it("names a job's scopes: its queue (\"\" read as default), and its group when it has one", () => {
    expect(scopesOf(enqueued({ queue: "" }))).toEqual([{ scope: "queue", name: "default" }]);
    expect(scopesOf(enqueued({ queue: "q", group_key: "g" }))).toEqual([{ scope: "queue", name: "q" }, { scope: "group", name: "g" }]);
  });
});

describe("claimNext with flow control", () => {
  it("holds a group's concurrency for the whole call, then claims other scopes' jobs in claim order", () => {
    const batch = memoryBatch([...dueJobs("g", Array(10).fill("busy")), ...dueJobs("o", ["x", "y"], { created: at(-50_000), run_at: at(-50_000) })], {
      flow: [flowRow({ scope: "group", name: "busy", concurrency: 3 })],
    });
    const claimed = claimNext(batch, claimReq(10), NOW, 5, newToken).map((c) => c.row.id);
    expect(claimed).toEqual(["g000", "g001", "g002", "o000", "o001"]);
  });

  it("counts held jobs already out against the limit", () => {
    const batch = memoryBatch([held("w9", LIVE, { id: "out", group_key: "busy" }), ...dueJobs("g", ["busy", "busy", "busy"])], {
      flow: [flowRow({ scope: "group", name: "busy", concurrency: 2 })],
    });
    expect(claimNext(batch, claimReq(10), NOW, 5, newToken).map((c) => c.row.id)).toEqual(["g000"]);
  });

  it("skips a paused queue's jobs, pending and stealable alike, without blocking the next queue's (no head-of-line blocking)", () => {
    const batch = memoryBatch([
      ...dueJobs("p", ["", ""], { queue: "paused" }),
      held("w-dead", EXPIRED, { id: "p-lapsed", queue: "paused", created: at(-200_000) }),
      ...dueJobs("q", ["", ""], { queue: "open", created: at(-10_000), run_at: at(-10_000) }),
    ], { flow: [flowRow({ scope: "queue", name: "paused", paused: 1 })] });
    expect(claimNext(batch, claimReq(5), NOW, 5, newToken).map((c) => c.row.id)).toEqual(["q000", "q001"]);
    expect(claimNext(batch, claimReq(5, ["paused"]), NOW, 5, newToken)).toEqual([]);
    expect(batch.row("p-lapsed")).toMatchObject({ status: "claimed", claimed_by: "w-dead" });
  });

  it("skips a held-back group inside the queues asked for, and goes on in claim order", () => {
    const batch = memoryBatch([
      ...dueJobs("g", ["parked", "parked"], { queue: "q" }),
      held("w-dead", EXPIRED, { id: "g-lapsed", queue: "q", group_key: "parked", created: at(-200_000) }),
      ...dueJobs("o", ["", "other"], { queue: "q", created: at(-10_000), run_at: at(-10_000) }),
      ...dueJobs("x", [""], { queue: "elsewhere", created: at(-300_000), run_at: at(-300_000) }),
    ], { flow: [flowRow({ scope: "group", name: "parked", parked_until: at(60_000) })] });
    expect(claimNext(batch, claimReq(5, ["q"]), NOW, 5, newToken).map((c) => c.row.id)).toEqual(["o000", "o001"]);
    expect(batch.row("g-lapsed").claimed_by).toBe("w-dead");
  });

  it("logs a call's claims in the rate windows by one statement, however many it claims", () => {
    const batch = memoryBatch(dueJobs("r", ["api", "api", "api", "web", "web"]), {
      flow: [flowRow({ scope: "group", name: "api", rate_limit: 10, rate_period: 20 }), flowRow({ scope: "queue", name: "default", rate_limit: 50, rate_period: 5 })],
    });
    expect(claimNext(batch, claimReq(5), NOW, 5, newToken)).toHaveLength(5);
    expect(batch.calls.filter((c) => c.op === "execute")).toHaveLength(1);
    expect(batch.flowClaims.map((c) => `${c.scope}:${c.name}:${c.expires - c.at}`).sort()).toEqual([
      "group:api:20000", "group:api:20000", "group:api:20000",
      "queue:default:5000", "queue:default:5000", "queue:default:5000", "queue:default:5000", "queue:default:5000",
    ]);
  });

  it("holds a rate limit for the call and logs every claim it counts", () => {
    const batch = memoryBatch(dueJobs("r", ["api", "api", "api", "api"]), {
      flow: [flowRow({ scope: "group", name: "api", rate_limit: 2, rate_period: 20 })],
      flowClaims: [{ scope: "group", name: "api", at: NOW - 15_000, expires: NOW + 5000 }],
    });
    expect(claimNext(batch, claimReq(4), NOW, 5, newToken).map((c) => c.row.id)).toEqual(["r000"]);
    expect(batch.flowClaims).toEqual([
      { scope: "group", name: "api", at: NOW - 15_000, expires: NOW + 5000 },
      { scope: "group", name: "api", at: NOW, expires: NOW + 20_000 },
    ]);
    expect(claimNext(batch, claimReq(4), NOW + 4999, 5, newToken)).toEqual([]);
    // Once the old claim has left the window (now - 20 s, now], one more (r000's lease is still live).
    expect(claimNext(batch, claimReq(4), NOW + 5000, 5, newToken).map((c) => c.row.id)).toEqual(["r001"]);
  });

  it("many held-back scopes in front never block the free job behind them (paused and parked from the start, limits round by round)", () => {
    const groups = Array.from({ length: 12 }, (_, i) => `g${String(i).padStart(2, "0")}`);
    // Each group's one due job sorts before the free one.
    const front = groups.flatMap((g, i) => dueJobs(`${g}-`, [g], { created: at(-100_000 + i), run_at: at(-100_000 + i) }));
    const free = enqueued({ id: "free", created: at(-1000), run_at: at(-1000) });
    const stopped = groups.map((g, i) => flowRow({ id: `f${i}`, scope: "group", name: g, ...(i % 2 === 0 ? { paused: 1 } : { parked_until: at(60_000) }) }));
    expect(claimNext(memoryBatch([...front, free], { flow: stopped }), claimReq(1), NOW, 5, newToken).map((c) => c.row.id)).toEqual(["free"]);
    // At their concurrency limit (one held each): found one round at a time, past the 4 rounds of give-ups.
    const busy = groups.map((g, i) => held("w9", LIVE, { id: `out-${g}`, group_key: g, created: at(-200_000 + i) }));
    const limited = groups.map((g, i) => flowRow({ id: `f${i}`, scope: "group", name: g, concurrency: 1 }));
    expect(claimNext(memoryBatch([...busy, ...front, free], { flow: limited }), claimReq(1), NOW, 5, newToken).map((c) => c.row.id)).toEqual(["free"]);
  });

  it("never hands out a never-started job past its start_by, and writes the timeout of a held one past its deadline", () => {
    const batch = memoryBatch([
      enqueued({ id: "late", start_by: at(-1), created: at(-9000), run_at: at(-9000) }),
      held("w-dead", at(-1000), { id: "timed", claimed_at: at(-11_000), timeout_seconds: 10, attempts: 1, max_attempts: 5 }),
      enqueued({ id: "fine", start_by: at(60_000), created: at(-5000), run_at: at(-5000) }),
    ]);
    expect(claimNext(batch, claimReq(5), NOW, 5, newToken).map((c) => c.row.id)).toEqual(["fine"]);
    expect(batch.row("late")).toMatchObject({ status: "pending", attempts: 0 });
    expect(batch.row("timed")).toMatchObject({ status: "pending", claimed_by: "", last_error: "timed out after 10 s", attempts: 1 });
  });
});

// ---- writes: the park and the settings -----------------------------------------------------

describe("the park and the settings as written", () => {
  const read = (batch: ReturnType<typeof memoryBatch>, scope: "queue" | "group", name: string) =>
    settingsOf(batch.queryOne(flowRowsQuery([{ scope, name }]), FLOW_ROW_SHAPE), NOW);

  it("parks a scope without a row, and only lengthens a park (max of the two)", () => {
    const batch = memoryBatch();
    parkFor(batch, enqueued({ group_key: "host" }), 30, NOW);
    expect(read(batch, "group", "host").parkedUntil).toBe(at(30_000));
    parkFor(batch, enqueued({ group_key: "host" }), 10, NOW);
    expect(read(batch, "group", "host").parkedUntil).toBe(at(30_000));
    parkFor(batch, enqueued({ group_key: "host" }), 60, NOW);
    expect(read(batch, "group", "host").parkedUntil).toBe(at(60_000));
    expect(batch.flow.size).toBe(1);
  });

  it("keeps the settings not written when another is", () => {
    const batch = memoryBatch();
    batch.execute(upsertFlowStatement({ scope: "queue", name: "q" }, { concurrency: 4 }, NOW));
    batch.execute(upsertFlowStatement({ scope: "queue", name: "q" }, { rate_limit: 9, rate_period: 30 }, NOW));
    expect(read(batch, "queue", "q")).toEqual({ paused: false, concurrency: 4, rateLimit: { limit: 9, periodSeconds: 30 }, parkedUntil: null });
    batch.execute(upsertFlowStatement({ scope: "queue", name: "q" }, { concurrency: 0 }, NOW));
    expect(read(batch, "queue", "q").concurrency).toBeNull();
  });

  it("keeps a scope's logged claims for a new period (so a longer window still counts them), and no other scope's", () => {
    const batch = memoryBatch([], {
      flowClaims: [
        { scope: "group", name: "g", at: NOW - 50_000, expires: NOW - 40_000 },
        { scope: "group", name: "other", at: NOW - 50_000, expires: NOW - 40_000 },
      ],
    });
    expect(batch.execute(reExpireClaimsStatement({ scope: "group", name: "g" }, 120))).toBe(1);
    expect(batch.flowClaims.map((c) => c.expires)).toEqual([NOW + 70_000, NOW - 40_000]);
    expect(flowUpkeepBatch(batch, NOW).claims).toBe(1);
    expect(batch.flowClaims.map((c) => c.name)).toEqual(["g"]);
  });
});

// ---- the maintenance tick -----------------------------------------------------------------

describe("flowUpkeepBatch", () => {
  it("fails never-started jobs past their start_by, trims the rate window's log, and deletes group rows with nothing in force", () => {
    const batch = memoryBatch([
      enqueued({ id: "late", start_by: at(-1) }),
      enqueued({ id: "started", start_by: at(-1), attempts: 1 }),
      enqueued({ id: "fresh", start_by: at(1) }),
      held("w1", LIVE, { id: "held", start_by: at(-1), attempts: 0 }),
    ], {
      flow: [
        flowRow({ scope: "group", name: "passed", parked_until: at(-1) }),
        flowRow({ scope: "group", name: "still", parked_until: at(1) }),
        flowRow({ scope: "group", name: "limited", parked_until: at(-1), concurrency: 2 }),
        flowRow({ scope: "queue", name: "q", parked_until: at(-1) }),
        // Every setting cleared (POST /api/fleet/flow with nulls): nothing in force, deleted too.
        flowRow({ scope: "group", name: "cleared" }),
      ],
      flowClaims: [
        { scope: "group", name: "g", at: NOW - 60_000, expires: NOW },
        { scope: "group", name: "g", at: NOW - 30_000, expires: NOW + 30_000 },
      ],
    });
    expect(flowUpkeepBatch(batch, NOW)).toEqual({ notStarted: 1, claims: 1, parks: 2 });
    expect(batch.row("late")).toMatchObject({
      status: "failed", finished_at: at(0), last_error: `not started by ${at(-1)}`, dead_lettered_at: "",
    });
    for (const id of ["started", "fresh"]) expect(batch.row(id).status).toBe("pending");
    expect(batch.row("held").status).toBe("claimed");
    expect([...batch.flow.values()].map((f) => f.name).sort()).toEqual(["limited", "q", "still"]);
    expect(batch.flowClaims).toEqual([{ scope: "group", name: "g", at: NOW - 30_000, expires: NOW + 30_000 }]);
    expect(flowUpkeepBatch(batch, NOW)).toEqual({ notStarted: 0, claims: 0, parks: 0 });
  });
});
