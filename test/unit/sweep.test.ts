import { describe, expect, it } from "vitest";
import { formatPbDate } from "../../src/lib/lease";
import { decideSweep } from "../../src/lib/sweep";
import { MAX_ATTEMPTS_ERROR } from "../../src/lib/queue";
import { sweepExpired } from "../../src/lib/sweep";
import { deadLetterPatch, decideRelease, ORPHAN_CAP_REASON, requeuePatch } from "../../src/lib/transitions";
import { ENDS_NOW, EXPIRED, held, LIVE, memoryBatch, NOW, row } from "./support/rows";

const CAP = 5;

describe("decideSweep", () => {
  it.each<[string, ReturnType<typeof row>]>([
    ["a pending row", row({ status: "pending", lease_expires_at: EXPIRED })],
    ["a done row", row({ status: "done", claimed_by: "w1", lease_expires_at: EXPIRED })],
    ["a failed row", row({ status: "failed", claimed_by: "w1", lease_expires_at: "" })],
    ["an unknown status", row({ status: "weird", claimed_by: "w1", lease_expires_at: EXPIRED })],
    ["a claimed row on a live lease (renewed since the query)", held("w1", LIVE)],
    ["a running row on a live lease", held("w1", LIVE, { status: "running" })],
    ["a live row already past the cap", held("w1", LIVE, { consecutive_orphan_count: CAP + 3 })],
  ])("skips %s", (_name, before) => {
    expect(decideSweep(before, NOW, CAP)).toEqual({ kind: "skip" });
  });

  it.each<[string, ReturnType<typeof row>]>([
    ["a claimed row whose lease expired", held("w1", EXPIRED, { consecutive_orphan_count: 0 })],
    ["a running row whose lease ends exactly now", held("w1", ENDS_NOW, { status: "running" })],
    ["a held row with an empty lease", held("w1", "")],
    ["a held row with an unreadable lease", held("w1", "yesterday")],
    ["a row one orphaning below the cap", held("w1", EXPIRED, { consecutive_orphan_count: CAP - 1 })],
  ])("re-queues %s like a release to pending", (_name, before) => {
    expect(decideSweep(before, NOW, CAP)).toEqual({ kind: "requeue", patch: requeuePatch(before, NOW) });
  });

  it("re-queues with the release bookkeeping: owner and token cleared, counters + 1, lease kept", () => {
    const before = held("w1", EXPIRED, { version: 2, reclaim_count: 7, consecutive_orphan_count: 1 });
    expect(decideSweep(before, NOW, CAP)).toEqual({
      kind: "requeue",
      patch: {
        status: "pending",
        claimed_by: "",
        lease_token: "",
        reclaim_count: 8,
        consecutive_orphan_count: 2,
        requeued_at: formatPbDate(NOW),
        version: 3,
      },
    });
  });

  it.each([CAP, CAP + 1, CAP + 10])("gives up at the cap (consecutive_orphan_count %d): failed, with an orphan_cap result", (count) => {
    const before = held("w-last", EXPIRED, { status: "running", version: 11, consecutive_orphan_count: count, reclaim_count: 20 });
    expect(decideSweep(before, NOW, CAP)).toEqual({
      kind: "give_up",
      patch: {
        status: "failed",
        // a dead letter too, with its own reason
        dead_lettered_at: formatPbDate(NOW),
        last_error: `pb-fleet gave up: the lease of this job expired ${count + 1} times in a row without a release`,
        claimed_by: "pb-fleet-sweeper",
        lease_token: "",
        finished_at: formatPbDate(NOW),
        result: {
          error: `pb-fleet gave up: the lease of this job expired ${count + 1} times in a row without a release`,
          reason: "orphan_cap",
          lastHolder: "w-last",
        },
        version: 12,
        // consecutive_orphan_count and the lease are kept as evidence; the holder is in result
      },
    });
  });

  it("leaves the given-up job so that its last holder's late release is refused as not the holder", () => {
    const before = held("w-last", EXPIRED, { consecutive_orphan_count: CAP, lease_token: "tok-last" });
    const decision = decideSweep(before, NOW, CAP);
    if (decision.kind !== "give_up") throw new Error("expected give_up");
    const after = { ...before, ...decision.patch } as typeof before;
    for (const leaseToken of [undefined, "tok-last"]) {
      expect(decideRelease(after, { workerId: "w-last", target: "done", leaseToken }, NOW)).toEqual({
        kind: "refused",
        reason: "refused_not_holder",
      });
    }
  });

  it("uses the cap it is given", () => {
    const before = held("w1", EXPIRED, { consecutive_orphan_count: 1 });
    expect(decideSweep(before, NOW, 1).kind).toBe("give_up");
    expect(decideSweep(before, NOW, 2).kind).toBe("requeue");
  });

  it("dead-letters an expired job that used its attempts (no claim could take it again), below the orphan cap", () => {
    const before = held("w-last", EXPIRED, { attempts: 3, max_attempts: 3, consecutive_orphan_count: 0, version: 4 });
    expect(decideSweep(before, NOW, CAP)).toEqual({ kind: "give_up", patch: deadLetterPatch(before, NOW, MAX_ATTEMPTS_ERROR) });
    expect(deadLetterPatch(before, NOW, MAX_ATTEMPTS_ERROR)).toEqual({
      status: "failed", claimed_by: "", lease_token: "", dead_lettered_at: formatPbDate(NOW), finished_at: formatPbDate(NOW),
      last_error: MAX_ATTEMPTS_ERROR, version: 5,
    });
  });

  it("checks attempts before the orphan cap", () => {
    const before = held("w-last", EXPIRED, { attempts: 9, max_attempts: 2, consecutive_orphan_count: CAP });
    expect(decideSweep(before, NOW, CAP)).toMatchObject({ kind: "give_up", patch: { last_error: MAX_ATTEMPTS_ERROR } });
  });

  it.each<[string, number, number]>([
    ["attempts left", 2, 3],
    ["no cap", 50, 0],
  ])("re-queues an expired job with %s", (_name, attempts, max) => {
    const before = held("w1", EXPIRED, { attempts, max_attempts: max, consecutive_orphan_count: 0 });
    expect(decideSweep(before, NOW, CAP).kind).toBe("requeue");
  });

  it("names the reason orphan_cap", () => {
    expect(ORPHAN_CAP_REASON).toBe("orphan_cap");
  });
});

describe("sweepExpired", () => {
  it("handles the longest-expired rows first, at most `limit`, and reports each outcome", () => {
    const batch = memoryBatch([
      held("w-a", formatPbDate(NOW - 5000), { id: "a", consecutive_orphan_count: 0 }),
      held("w-b", formatPbDate(NOW - 9000), { id: "b", attempts: 1, max_attempts: 1 }),
      held("w-c", formatPbDate(NOW - 7000), { id: "c", consecutive_orphan_count: CAP }),
      held("w-live", LIVE, { id: "live" }),
      row({ id: "pending", lease_expires_at: EXPIRED }),
    ]);
    expect(sweepExpired(batch, NOW, CAP, "", 2)).toEqual({
      requeued: 0,
      gaveUp: 2,
      timedOut: 0,
      jobs: [
        { id: "b", outcome: "gave_up", claimedBy: "w-b", consecutiveOrphanCount: 1 },
        { id: "c", outcome: "gave_up", claimedBy: "w-c", consecutiveOrphanCount: CAP },
      ],
    });
    expect(batch.row("b")).toMatchObject({ status: "failed", last_error: MAX_ATTEMPTS_ERROR, claimed_by: "" });
    expect(sweepExpired(batch, NOW, CAP, "", 2)).toMatchObject({
      requeued: 1, gaveUp: 0, timedOut: 0, jobs: [{ id: "a", consecutiveOrphanCount: 1 }],
    });
    expect(batch.row("live").status).toBe("claimed");
  });

  it("writes the timeout of a held job past its deadline (docs/flow-control.md): a failed attempt, counted apart, the orphan count kept", () => {
    // Claimed 60 s ago with a 30 s timeout: its lease ended at the deadline.
    const claimedAt = formatPbDate(NOW - 60_000);
    const deadline = formatPbDate(NOW - 30_000);
    const batch = memoryBatch([
      held("w-t", deadline, { id: "t", claimed_at: claimedAt, timeout_seconds: 30, attempts: 1, max_attempts: 3, consecutive_orphan_count: 2 }),
      held("w-o", formatPbDate(NOW - 1000), { id: "o", consecutive_orphan_count: 0 }),
    ]);
    expect(sweepExpired(batch, NOW, CAP, "", 10)).toEqual({
      requeued: 1,
      gaveUp: 0,
      timedOut: 1,
      jobs: [
        { id: "t", outcome: "timed_out", claimedBy: "w-t", consecutiveOrphanCount: 2 },
        { id: "o", outcome: "requeued", claimedBy: "w-o", consecutiveOrphanCount: 1 },
      ],
    });
    expect(batch.row("t")).toMatchObject({
      status: "pending", claimed_by: "", lease_token: "", attempts: 1, consecutive_orphan_count: 2, last_error: "timed out after 30 s",
    });
  });
});
