import { describe, expect, it } from "vitest";
import { formatPbDate } from "../../src/lib/lease";
import { claimPatch, renewPatch } from "../../src/lib/answers";
import { MAX_ATTEMPTS_ERROR } from "../../src/lib/queue";
import {
  decideCancel,
  decideClaim,
  decideRelease,
  decideRenew,
  deadLetterPatch,
  dueTimeOnCreate,
  giveUpPatch,
  isClaimable,
  isDue,
  isHeldStatus,
  isRetryable,
  isTerminalStatus,
  requeuePatch,
  retryJobPatch,
} from "../../src/lib/transitions";
import type { ReleaseTarget } from "../../src/lib/types";
import { ENDS_NOW, EXPIRED, enqueued, held, LIVE, NOW, row } from "./support/rows";

const NEW_TOKEN = "tok-new";
/** Counts the tokens decideClaim asks for: one per win, none otherwise. */
let tokensIssued = 0;
const newToken = () => {
  tokensIssued++;
  return NEW_TOKEN;
};
const leaseIn = (seconds: number) => formatPbDate(NOW + seconds * 1000);

describe("status classes", () => {
  it.each<[string, boolean, boolean]>([
    ["pending", false, false],
    ["claimed", true, false],
    ["running", true, false],
    ["done", false, true],
    ["failed", false, true],
    ["cancelled", false, true],
    ["weird", false, false],
    ["", false, false],
    ["CLAIMED", false, false],
  ])("%j: held %s, terminal %s", (status, isHeld, isTerminal) => {
    expect(isHeldStatus(status)).toBe(isHeld);
    expect(isTerminalStatus(status)).toBe(isTerminal);
  });

  it.each<[string, string, boolean]>([
    ["pending", "", true],
    ["pending", LIVE, true], // a pending row's lease is only a marker
    ["claimed", EXPIRED, true],
    ["running", EXPIRED, true],
    ["claimed", "", true],
    ["running", "garbage", true],
    ["claimed", ENDS_NOW, true],
    ["claimed", LIVE, false],
    ["running", LIVE, false],
    ["done", EXPIRED, false],
    ["failed", "", false],
    ["cancelled", EXPIRED, false],
    ["cancelled", "", false],
    ["weird", EXPIRED, false],
  ])("isClaimable(%s, lease %j) = %s", (status, lease, claimable) => {
    expect(isClaimable(row({ status, lease_expires_at: lease }), NOW)).toBe(claimable);
  });

  it.each<[string, string, boolean]>([
    ["due a minute ago", formatPbDate(NOW - 60_000), true],
    ["due exactly now", formatPbDate(NOW), true],
    ["never stamped (empty)", "", true],
    ["due in a millisecond", formatPbDate(NOW + 1), false],
    ["due next year", formatPbDate(NOW + 365 * 86_400_000), false],
  ])("a pending row %s: due %s", (_name, runAt, due) => {
    const pending = row({ run_at: runAt });
    expect(isDue(pending, NOW)).toBe(due);
    expect(isClaimable(pending, NOW)).toBe(due);
  });

  it("judges a held row by its lease, not by its due time", () => {
    expect(isClaimable(held("w", EXPIRED, { run_at: formatPbDate(NOW + 60_000) }), NOW)).toBe(true);
  });

  it("stamps a row created without a due time with its creation time, and leaves a given one", () => {
    expect(dueTimeOnCreate("", NOW)).toBe(formatPbDate(NOW));
    expect(dueTimeOnCreate(formatPbDate(NOW + 5000), NOW)).toBeNull();
  });
});

describe("decideClaim", () => {
  it("asks for a lease token only when the claim wins (most claimers of a contended job lose)", () => {
    tokensIssued = 0;
    decideClaim(held("w-other", LIVE), "w1", 30, NOW, newToken);
    decideClaim(held("w1", LIVE), "w1", 30, NOW, newToken);
    decideClaim(row({ status: "done" }), "w1", 30, NOW, newToken);
    expect(tokensIssued).toBe(0);
    decideClaim(row({ status: "pending" }), "w1", 30, NOW, newToken);
    expect(tokensIssued).toBe(1);
  });

  it("wins a pending row: claimed by the caller, new lease and token, version + 1, claimed_at stamped, no reclaim", () => {
    expect(decideClaim(row({ status: "pending" }), "w1", undefined, NOW, newToken)).toEqual({
      kind: "win",
      steal: false,
      patch: {
        status: "claimed",
        claimed_by: "w1",
        lease_expires_at: leaseIn(30),
        lease_token: NEW_TOKEN,
        version: 4,
        claimed_at: formatPbDate(NOW),
        attempts: 1,
      },
    });
  });

  it("wins a pending row that still carries an old (even live-looking) lease marker", () => {
    const decision = decideClaim(row({ lease_expires_at: LIVE, claimed_by: "" }), "w1", 10, NOW, newToken);
    expect(decision).toMatchObject({ kind: "win", steal: false, patch: { lease_expires_at: leaseIn(10) } });
  });

  it.each<[string, unknown, number]>([
    ["120", 120, 120],
    ["1e9 (capped)", 1e9, 3600],
    ["0.001 (floored)", 0.001, 1],
    ["a string (default)", "120", 30],
    ["null (default)", null, 30],
  ])("sets a lease of the clamped length for leaseSeconds %s", (_name, leaseSeconds, seconds) => {
    const decision = decideClaim(row(), "w1", leaseSeconds, NOW, newToken);
    expect(decision.kind === "win" && decision.patch.lease_expires_at).toBe(leaseIn(seconds));
  });

  it.each<[string, string]>([
    ["claimed", EXPIRED],
    ["running", EXPIRED],
    ["claimed", ENDS_NOW],
    ["running", ""],
    ["claimed", "unreadable"],
  ])("steals a %s row whose lease is %j: reclaim_count + 1, back to claimed", (status, lease) => {
    const before = held("w-dead", lease, { status, version: 7, reclaim_count: 2, consecutive_orphan_count: 1 });
    expect(decideClaim(before, "w2", 60, NOW, newToken)).toEqual({
      kind: "win",
      steal: true,
      patch: {
        status: "claimed",
        claimed_by: "w2",
        lease_expires_at: leaseIn(60),
        lease_token: NEW_TOKEN,
        version: 8,
        claimed_at: formatPbDate(NOW),
        attempts: 1,
        reclaim_count: 3,
        // consecutive_orphan_count is the sweeper's: a steal leaves it alone.
      },
    });
  });

  it("lets the holder whose own lease expired win again, as a steal", () => {
    const decision = decideClaim(held("w1", EXPIRED), "w1", undefined, NOW, newToken);
    expect(decision).toMatchObject({ kind: "win", steal: true, patch: { reclaim_count: 3, lease_token: NEW_TOKEN } });
  });

  it.each(["claimed", "running"])("refuses a %s row another worker holds on a live lease", (status) => {
    expect(decideClaim(held("w-other", LIVE, { status }), "w1", 30, NOW, newToken)).toEqual({ kind: "refused" });
  });

  it.each(["claimed", "running"])(
    "tells the holder of a live %s lease it already holds the job, with the current token and no write",
    (status) => {
      expect(decideClaim(held("w1", LIVE, { status }), "w1", 30, NOW, newToken)).toEqual({
        kind: "already_held",
        leaseToken: "tok-current",
      });
    },
  );

  it("keeps the reference's bookkeeping by default: a steal does not count as an orphaning, even past any cap", () => {
    const decision = decideClaim(held("w-dead", EXPIRED, { consecutive_orphan_count: 99 }), "w1", 30, NOW, newToken);
    expect(decision.kind).toBe("win");
    expect(decision.kind === "win" && "consecutive_orphan_count" in decision.patch).toBe(false);
  });

  describe("with claim-next's steal rule (count_orphans)", () => {
    const rule = { kind: "count_orphans", cap: 3 } as const;

    it("counts a steal below the cap as an orphaning", () => {
      expect(decideClaim(held("w-dead", EXPIRED, { consecutive_orphan_count: 2 }), "w1", 30, NOW, newToken, rule))
        .toMatchObject({ kind: "win", steal: true, patch: { consecutive_orphan_count: 3, reclaim_count: 3 } });
    });

    it("gives the job up at the cap, with the sweeper's give-up, and issues no token", () => {
      tokensIssued = 0;
      const before = held("w-dead", EXPIRED, { consecutive_orphan_count: 3 });
      expect(decideClaim(before, "w1", 30, NOW, newToken, rule)).toEqual({ kind: "give_up", patch: giveUpPatch(before, NOW) });
      expect(tokensIssued).toBe(0);
      expect(giveUpPatch(before, NOW)).toMatchObject({
        status: "failed", claimed_by: "pb-fleet-sweeper", lease_token: "", version: 4,
        result: { reason: "orphan_cap", lastHolder: "w-dead" },
      });
      expect("consecutive_orphan_count" in giveUpPatch(before, NOW)).toBe(false); // kept as evidence
    });

    it("hands out a pending row whatever its count (only a steal is an orphaning)", () => {
      expect(decideClaim(row({ consecutive_orphan_count: 3 }), "w1", 30, NOW, newToken, rule))
        .toMatchObject({ kind: "win", steal: false });
    });
  });

  it("repeats an empty token to the holder of a row claimed before fencing existed", () => {
    expect(decideClaim(held("w1", LIVE, { lease_token: "" }), "w1", 30, NOW, newToken)).toEqual({
      kind: "already_held",
      leaseToken: "",
    });
  });

  it.each<[string, string, string]>([
    ["done", "w1", EXPIRED],
    ["done", "w-other", ""],
    ["failed", "w1", LIVE],
    ["failed", "w-other", EXPIRED],
    ["weird", "", ""],
    ["weird", "w1", LIVE],
    ["", "", ""],
    ["PENDING", "", ""],
  ])("never claims a %j row (claimed_by %j, lease %j)", (status, claimedBy, lease) => {
    const before = row({ status, claimed_by: claimedBy, lease_expires_at: lease, lease_token: "tok-current" });
    expect(decideClaim(before, "w1", 30, NOW, newToken)).toEqual({ kind: "refused" });
  });
});

describe("decideRenew", () => {
  const renew = (leaseToken?: string, leaseSeconds: unknown = undefined) => ({ workerId: "w1", leaseToken, leaseSeconds });

  it.each(["claimed", "running"])("lets the holder of a live %s lease renew: running, new lease, version + 1", (status) => {
    expect(decideRenew(held("w1", LIVE, { status, version: 5 }), renew(), NOW)).toEqual({
      kind: "renew",
      patch: { status: "running", lease_expires_at: leaseIn(30), version: 6 },
    });
  });

  it("clamps the renewed lease", () => {
    expect(renewPatch(decideRenew(held("w1", LIVE), renew(undefined, 1e9), NOW))?.lease_expires_at).toBe(leaseIn(3600));
    expect(renewPatch(decideRenew(held("w1", LIVE), renew(undefined, 120), NOW))?.lease_expires_at).toBe(leaseIn(120));
  });

  it("accepts the current token", () => {
    expect(decideRenew(held("w1", LIVE), renew("tok-current"), NOW)).toMatchObject({ kind: "renew", patch: { status: "running" } });
  });

  it.each<[string, () => ReturnType<typeof held>, ReturnType<typeof renew>]>([
    ["a stale token", () => held("w1", LIVE), renew("tok-old")],
    ["a token on a row that has none", () => held("w1", LIVE, { lease_token: "" }), renew("tok-current")],
    ["another worker", () => held("w-other", LIVE), renew()],
    ["another worker with the right token", () => held("w-other", LIVE), renew("tok-current")],
    ["an expired lease", () => held("w1", EXPIRED), renew()],
    ["a lease ending exactly now", () => held("w1", ENDS_NOW), renew("tok-current")],
    ["an empty lease", () => held("w1", ""), renew()],
    ["an unreadable lease", () => held("w1", "2999-02-30 00:00:00.000Z"), renew()],
    ["a pending row", () => held("w1", LIVE, { status: "pending" }), renew()],
    ["a done row", () => held("w1", LIVE, { status: "done" }), renew()],
    ["a failed row", () => held("w1", LIVE, { status: "failed" }), renew()],
    ["an unknown status", () => held("w1", LIVE, { status: "weird" }), renew()],
  ])("refuses %s, without a reason", (_name, makeRow, req) => {
    expect(decideRenew(makeRow(), req, NOW)).toEqual({ kind: "refused" });
  });
});

describe("decideRelease", () => {
  const release = (target: ReleaseTarget, leaseToken?: string, workerId = "w1") => ({ workerId, target, leaseToken });

  it.each(["done", "failed"] as const)(
    "finishes a live holder's job as %s: finished_at, orphan streak reset, claimed_by and token kept",
    (target) => {
      const before = held("w1", LIVE, { status: "running", version: 9, consecutive_orphan_count: 3, reclaim_count: 4 });
      expect(decideRelease(before, release(target), NOW)).toEqual({
        kind: "release",
        patch: { status: target, finished_at: formatPbDate(NOW), consecutive_orphan_count: 0, version: 10 },
      });
      expect(decideRelease(before, release(target, "tok-current"), NOW)).toMatchObject({ kind: "release" });
    },
  );

  it.each<[string, string]>([
    ["expired", EXPIRED],
    ["ending exactly now", ENDS_NOW],
    ["empty", ""],
  ])("re-queues a holder's job whose lease is %s: pending, owner and token cleared, counters + 1, lease kept", (_n, lease) => {
    const before = held("w1", lease, { version: 9, reclaim_count: 4, consecutive_orphan_count: 2 });
    const expected = {
      status: "pending",
      claimed_by: "",
      lease_token: "",
      reclaim_count: 5,
      consecutive_orphan_count: 3,
      requeued_at: formatPbDate(NOW),
      version: 10,
    };
    expect(decideRelease(before, release("pending"), NOW)).toEqual({ kind: "release", patch: expected });
    expect(requeuePatch(before, NOW)).toEqual(expected);
    expect(expected).not.toHaveProperty("lease_expires_at");
  });

  type Case = [string, ReturnType<typeof row>, ReturnType<typeof release>, string];
  it.each<Case>([
    // rows that are not held
    ["the caller's own done row", row({ status: "done", claimed_by: "w1" }), release("done"), "refused_terminal_same_holder"],
    ["the caller's own failed row, releasing to pending", row({ status: "failed", claimed_by: "w1" }), release("pending"), "refused_terminal_same_holder"],
    ["the caller's own done row, with its token", row({ status: "done", claimed_by: "w1", lease_token: "t1" }), release("done", "t1"), "refused_terminal_same_holder"],
    ["the caller's own done row, with a stale token", row({ status: "done", claimed_by: "w1", lease_token: "t2" }), release("done", "t1"), "refused_stale_token"],
    ["another worker's done row", row({ status: "done", claimed_by: "w-other" }), release("done"), "refused_not_holder"],
    ["another worker's done row, with a stale token", row({ status: "done", claimed_by: "w-other", lease_token: "t2" }), release("done", "t1"), "refused_not_holder"],
    ["a pending row", row({ status: "pending" }), release("pending"), "refused_not_holder"],
    ["an unknown status naming the caller", row({ status: "weird", claimed_by: "w1" }), release("done"), "refused_not_holder"],
    // held rows
    ["a row another worker holds", held("w-other", LIVE), release("done"), "refused_not_holder"],
    ["a row another worker holds, with its token", held("w-other", EXPIRED), release("pending", "tok-current"), "refused_not_holder"],
    ["a stale token on the caller's live row", held("w1", LIVE), release("done", "tok-old"), "refused_stale_token"],
    ["a stale token on the caller's expired row, to pending", held("w1", EXPIRED), release("pending", "tok-old"), "refused_stale_token"],
    ["a stale token on the caller's expired row, to done", held("w1", EXPIRED), release("done", "tok-old"), "refused_stale_token"],
    ["done on an expired lease", held("w1", EXPIRED), release("done"), "refused_not_holder"],
    ["failed on a lease ending exactly now", held("w1", ENDS_NOW), release("failed"), "refused_not_holder"],
    ["done on an empty lease", held("w1", ""), release("done", "tok-current"), "refused_not_holder"],
    ["pending on a live lease", held("w1", LIVE), release("pending"), "refused_lease_live"],
    ["pending on a live running lease, with its token", held("w1", LIVE, { status: "running" }), release("pending", "tok-current"), "refused_lease_live"],
  ])("refuses %s", (_name, before, req, reason) => {
    expect(decideRelease(before, req, NOW)).toEqual({ kind: "refused", reason });
  });
});

describe("decideClaim: attempts (docs/queue.md)", () => {
  const rule = { kind: "count_orphans", cap: 3 } as const;
  const deadLetter = (before: ReturnType<typeof row>) => ({
    status: "failed",
    claimed_by: "",
    lease_token: "",
    dead_lettered_at: formatPbDate(NOW),
    finished_at: formatPbDate(NOW),
    last_error: MAX_ATTEMPTS_ERROR,
    version: before.version + 1,
  });

  it.each<[string, number, number, number]>([
    ["a first claim", 0, 25, 1],
    ["a claim below the cap", 4, 5, 5],
    ["a claim with no cap (0)", 999, 0, 1000],
  ])("counts %s as an attempt", (_name, attempts, max, after) => {
    const decision = decideClaim(enqueued({ attempts, max_attempts: max }), "w1", 30, NOW, newToken);
    expect(decision).toMatchObject({ kind: "win", patch: { attempts: after } });
  });

  it("counts a steal as an attempt", () => {
    const decision = decideClaim(held("w-dead", EXPIRED, { attempts: 2, max_attempts: 5 }), "w1", 30, NOW, newToken);
    expect(decision).toMatchObject({ kind: "win", steal: true, patch: { attempts: 3 } });
  });

  it.each<[string, number, number]>([
    ["reached", 3, 3],
    ["passed (a hand-edited row)", 7, 3],
    ["reached at a cap of 1", 1, 1],
  ])("dead-letters a pending job whose attempts %s max_attempts, issuing no token", (_name, attempts, max) => {
    tokensIssued = 0;
    const before = enqueued({ attempts, max_attempts: max, version: 6 });
    const decision = decideClaim(before, "w1", 30, NOW, newToken);
    expect(decision).toEqual({ kind: "give_up", patch: deadLetter(before) });
    expect(decision).toEqual({ kind: "give_up", patch: deadLetterPatch(before, NOW, MAX_ATTEMPTS_ERROR) });
    expect(tokensIssued).toBe(0);
    expect(claimPatch(decision)).toEqual(deadLetter(before));
  });

  it("dead-letters a steal at max attempts, so the last holder's late release is refused as not the holder", () => {
    const before = held("w-dead", EXPIRED, { attempts: 2, max_attempts: 2, lease_token: "tok-dead" });
    const decision = decideClaim(before, "w1", 30, NOW, newToken);
    if (decision.kind !== "give_up") throw new Error(`expected give_up, got ${decision.kind}`);
    const after = { ...before, ...decision.patch } as typeof before;
    for (const leaseToken of [undefined, "tok-dead"]) {
      expect(decideRelease(after, { workerId: "w-dead", target: "done", leaseToken }, NOW))
        .toEqual({ kind: "refused", reason: "refused_not_holder" });
    }
  });

  it("checks attempts before the orphan cap: a job past both is dead-lettered for its attempts", () => {
    const before = held("w-dead", EXPIRED, { attempts: 5, max_attempts: 5, consecutive_orphan_count: 9 });
    const decision = decideClaim(before, "w1", 30, NOW, newToken, rule);
    expect(decision).toEqual({ kind: "give_up", patch: deadLetter(before) });
    expect(decision.kind === "give_up" && "result" in decision.patch).toBe(false);
  });

  it("gives a job at the orphan cap up with the orphan reason while it has attempts left", () => {
    const before = held("w-dead", EXPIRED, { attempts: 1, max_attempts: 5, consecutive_orphan_count: 3 });
    expect(decideClaim(before, "w1", 30, NOW, newToken, rule)).toEqual({ kind: "give_up", patch: giveUpPatch(before, NOW) });
    expect(giveUpPatch(before, NOW)).toMatchObject({
      dead_lettered_at: formatPbDate(NOW),
      last_error: "pb-fleet gave up: the lease of this job expired 4 times in a row without a release",
    });
  });

  it.each<[string, string]>([
    ["a millisecond from now", formatPbDate(NOW + 1)],
    ["an hour from now", formatPbDate(NOW + 3_600_000)],
  ])("refuses a pending job due %s, writing nothing, even when it used its attempts", (_name, runAt) => {
    tokensIssued = 0;
    for (const before of [enqueued({ run_at: runAt }), enqueued({ run_at: runAt, attempts: 25 })]) {
      const decision = decideClaim(before, "w1", 30, NOW, newToken);
      expect(decision).toEqual({ kind: "refused" });
      expect(claimPatch(decision)).toBeNull();
    }
    expect(tokensIssued).toBe(0);
  });

  it("wins a pending job due exactly now", () => {
    expect(decideClaim(enqueued({ run_at: formatPbDate(NOW) }), "w1", 30, NOW, newToken).kind).toBe("win");
  });

  it("answers an already_held re-claim without a patch and without counting an attempt, even at max attempts", () => {
    const before = held("w1", LIVE, { attempts: 3, max_attempts: 3 });
    const decision = decideClaim(before, "w1", 30, NOW, newToken);
    expect(decision).toEqual({ kind: "already_held", leaseToken: "tok-current" });
    expect(claimPatch(decision)).toBeNull();
  });
});

describe("decideRenew: progress", () => {
  const renew = (progress: unknown) => ({ workerId: "w1", leaseToken: "tok-current", leaseSeconds: 60, progress });

  it.each<[string, unknown]>([
    ["an object", { done: 3, of: 10 }],
    ["0", 0],
    ["false", false],
    ["an empty string", ""],
  ])("stores %s with a successful renew", (_name, progress) => {
    expect(decideRenew(held("w1", LIVE, { version: 2 }), renew(progress), NOW)).toEqual({
      kind: "renew",
      patch: { status: "running", lease_expires_at: leaseIn(60), version: 3, progress },
    });
  });

  it("leaves progress alone when none is sent", () => {
    const decision = decideRenew(held("w1", LIVE), renew(undefined), NOW);
    expect(decision.kind).toBe("renew");
    expect(renewPatch(decision)).not.toHaveProperty("progress");
  });

  it("stores nothing on a refused renew", () => {
    expect(decideRenew(held("w1", EXPIRED), renew({ p: 1 }), NOW)).toEqual({ kind: "refused" });
    expect(decideRenew(held("w1", LIVE, { status: "cancelled" }), renew({ p: 1 }), NOW)).toEqual({ kind: "refused" });
  });
});

describe("decideRelease: result, error and retry (docs/queue.md)", () => {
  const release = (target: ReleaseTarget, extra: { result?: unknown; error?: string; jitter?: number; leaseToken?: string; workerId?: string } = {}) =>
    ({ workerId: "w1", leaseToken: undefined, target, ...extra });

  it.each(["done", "failed"] as const)("carries result and error on a %s release, in the same patch as the status", (target) => {
    const before = held("w1", LIVE, { version: 4 });
    expect(decideRelease(before, release(target, { result: { rows: [1, 2] }, error: "it broke" }), NOW)).toEqual({
      kind: "release",
      patch: {
        status: target, finished_at: formatPbDate(NOW), consecutive_orphan_count: 0, version: 5,
        result: { rows: [1, 2] }, last_error: "it broke",
      },
    });
  });

  it("carries a falsy result (0, false, an empty string) and an empty error", () => {
    for (const result of [0, false, ""]) {
      const decision = decideRelease(held("w1", LIVE), release("done", { result, error: "" }), NOW);
      expect(decision.kind === "release" && decision.patch).toMatchObject({ result, last_error: "" });
    }
  });

  it("sends a retry with attempts left back to pending after the backoff: no holder, orphan count 0, progress cleared", () => {
    const before = held("w1", LIVE, {
      status: "running", attempts: 2, max_attempts: 5, version: 9, consecutive_orphan_count: 3, reclaim_count: 4,
      progress: '{"at":7}',
    });
    expect(decideRelease(before, release("retry", { jitter: 0, error: "timeout", leaseToken: "tok-current" }), NOW)).toEqual({
      kind: "release",
      patch: {
        status: "pending",
        run_at: formatPbDate(NOW + 2000), // the 2nd attempt failed: 2 s
        claimed_by: "",
        lease_token: "",
        lease_expires_at: "",
        consecutive_orphan_count: 0,
        progress: null,
        version: 10,
        last_error: "timeout",
        // reclaim_count and requeued_at count lost holders only: not here
      },
    });
  });

  it.each<[number, number, number]>([
    // attempts, jitter, delay in ms
    [1, 0, 1000],
    [1, 0.999, 1249.75],
    [3, 0.5, 4000 * 1.125],
    [13, 0, 3_600_000],
    [40, 0.9, 3_600_000],
  ])("delays a retry after attempt %d (jitter %s) by %s ms", (attempts, jitter, delay) => {
    const decision = decideRelease(held("w1", LIVE, { attempts, max_attempts: 0 }), release("retry", { jitter }), NOW);
    expect(decision.kind === "release" && decision.patch.run_at).toBe(formatPbDate(NOW + delay));
  });

  it("dead-letters a retry at max attempts, keeping the worker's error as last_error, and its result", () => {
    const before = held("w1", LIVE, { attempts: 3, max_attempts: 3, version: 2 });
    expect(decideRelease(before, release("retry", { error: "disk full", result: { partial: true } }), NOW)).toEqual({
      kind: "release",
      patch: {
        status: "failed", claimed_by: "", lease_token: "", dead_lettered_at: formatPbDate(NOW),
        finished_at: formatPbDate(NOW), last_error: "disk full", version: 3, result: { partial: true },
      },
    });
  });

  it("dead-letters a retry at max attempts without an error with the max-attempts reason", () => {
    const decision = decideRelease(held("w1", LIVE, { attempts: 3, max_attempts: 3 }), release("retry"), NOW);
    expect(decision).toMatchObject({ kind: "release", patch: { status: "failed", last_error: MAX_ATTEMPTS_ERROR } });
  });

  type Case = [string, ReturnType<typeof row>, ReturnType<typeof release>, string];
  it.each<Case>([
    ["a retry on an expired lease", held("w1", EXPIRED), release("retry"), "refused_not_holder"],
    ["a retry by another worker", held("w-other", LIVE), release("retry"), "refused_not_holder"],
    ["a retry with a stale token", held("w1", LIVE), release("retry", { leaseToken: "tok-old" }), "refused_stale_token"],
    ["a retry of a pending row", row(), release("retry"), "refused_not_holder"],
    ["a retry of the caller's own done row", row({ status: "done", claimed_by: "w1" }), release("retry"), "refused_terminal_same_holder"],
    ["the last holder's done release of a cancelled job", row({ status: "cancelled", claimed_by: "w1", lease_expires_at: LIVE }), release("done"), "refused_not_holder"],
    ["the last holder's release of a cancelled job, with its old token", row({ status: "cancelled", claimed_by: "w1", lease_token: "" }), release("failed", { leaseToken: "tok-current" }), "refused_not_holder"],
    ["the last holder's retry of a cancelled job", row({ status: "cancelled", claimed_by: "w1" }), release("retry"), "refused_not_holder"],
  ])("refuses %s", (_name, before, req, reason) => {
    expect(decideRelease(before, req, NOW)).toEqual({ kind: "refused", reason });
  });
});

describe("decideCancel", () => {
  it.each<[string, ReturnType<typeof row>]>([
    ["a pending job", row({ version: 1 })],
    ["a job not yet due", row({ version: 1, run_at: formatPbDate(NOW + 60_000) })],
    ["a claimed job", held("w1", LIVE, { version: 1 })],
    ["a running job whose lease expired", held("w1", EXPIRED, { status: "running", version: 1 })],
  ])("cancels %s: finished now, token cleared, the holder kept on record", (_name, before) => {
    const patch = decideCancel(before, NOW);
    expect(patch).toEqual({ status: "cancelled", finished_at: formatPbDate(NOW), lease_token: "", version: 2 });
    const after = { ...before, ...patch } as typeof before;
    // The holder's next renew and release are refused.
    expect(decideRenew(after, { workerId: "w1", leaseToken: undefined, leaseSeconds: 30 }, NOW)).toEqual({ kind: "refused" });
    expect(decideRelease(after, { workerId: "w1", leaseToken: "tok-current", target: "done" }, NOW))
      .toEqual({ kind: "refused", reason: "refused_not_holder" });
    expect(decideClaim(after, "w2", 30, NOW, newToken)).toEqual({ kind: "refused" });
  });

  it.each(["done", "failed", "cancelled", "weird", ""])("does not cancel a %j job", (status) => {
    expect(decideCancel(row({ status, claimed_by: "w1" }), NOW)).toBeNull();
  });
});

describe("retryJobPatch", () => {
  it.each(["failed", "cancelled"])("brings a %s job back: pending, due now, attempts 0, finish and dead letter cleared, last_error kept", (status) => {
    const before = row({
      status, claimed_by: "pb-fleet-sweeper", lease_token: "t", attempts: 25, max_attempts: 25, consecutive_orphan_count: 5,
      dead_lettered_at: formatPbDate(NOW - 1000), last_error: "max attempts reached", progress: '{"p":1}', version: 8,
      run_at: formatPbDate(NOW - 86_400_000),
    });
    const patch = retryJobPatch(before, NOW);
    expect(patch).toEqual({
      status: "pending", run_at: formatPbDate(NOW), attempts: 0, finished_at: "", dead_lettered_at: "", claimed_by: "",
      lease_token: "", consecutive_orphan_count: 0, progress: null, version: 9,
      // start_by guards the first start only (docs/flow-control.md): a retried job starts afresh.
      start_by: "",
    });
    expect(patch).not.toHaveProperty("last_error");
    expect(isClaimable({ ...before, ...patch } as typeof before, NOW)).toBe(true);
  });

  it.each(["pending", "claimed", "running", "done", "weird"])("leaves a %s job alone", (status) => {
    expect(isRetryable(status)).toBe(false);
    expect(retryJobPatch(row({ status }), NOW)).toBeNull();
  });
});
