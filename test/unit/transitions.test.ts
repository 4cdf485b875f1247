import { describe, expect, it } from "vitest";
import { formatPbDate } from "../../src/lib/lease";
import {
  decideClaim,
  decideRelease,
  decideRenew,
  giveUpPatch,
  isClaimable,
  isHeldStatus,
  isTerminalStatus,
  requeuePatch,
} from "../../src/lib/transitions";
import type { ReleaseTarget } from "../../src/lib/types";
import { ENDS_NOW, EXPIRED, held, LIVE, NOW, row } from "./support/rows";

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
    ["weird", EXPIRED, false],
  ])("isClaimable(%s, lease %j) = %s", (status, lease, claimable) => {
    expect(isClaimable(row({ status, lease_expires_at: lease }), NOW)).toBe(claimable);
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
      status: "running",
      lease_expires_at: leaseIn(30),
      version: 6,
    });
  });

  it("clamps the renewed lease", () => {
    expect(decideRenew(held("w1", LIVE), renew(undefined, 1e9), NOW)?.lease_expires_at).toBe(leaseIn(3600));
    expect(decideRenew(held("w1", LIVE), renew(undefined, 120), NOW)?.lease_expires_at).toBe(leaseIn(120));
  });

  it("accepts the current token", () => {
    expect(decideRenew(held("w1", LIVE), renew("tok-current"), NOW)).toMatchObject({ status: "running" });
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
  ])("refuses %s", (_name, makeRow, req) => {
    expect(decideRenew(makeRow(), req, NOW)).toBeNull();
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
