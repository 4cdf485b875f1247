import { describe, expect, it } from "vitest";
import { claimAnswer, claimPatch, releaseAnswer, releasePatch, renewAnswer, renewPatch } from "../../src/lib/answers";
import { jobView, parseJsonField, queueJobView, type JobPatch } from "../../src/lib/job-row";
import { formatPbDate } from "../../src/lib/lease";
import {
  decideClaim, decideRelease, decideRenew, type ClaimDecision, type ReleaseDecision, type RenewDecision,
} from "../../src/lib/transitions";
import { EXPIRED, enqueued, held, LIVE, NOW } from "./support/rows";

/** The reference's job view: exactly these keys, whatever the row carries. */
const REFERENCE_KEYS = ["claimed_by", "id", "lease_expires_at", "probe_key", "status", "version"];

describe("claimAnswer and claimPatch", () => {
  const pending = enqueued({ id: "j", payload: '{"a":1}', attempts: 1 });

  it("answers a win with the reference's view after the patch and the new token (no queue fields)", () => {
    const decision = decideClaim(pending, "w1", 60, NOW, () => "tok-new");
    const answer = claimAnswer({ row: pending, decision });
    expect(answer).toEqual({ claimed: true, job: jobView(pending, claimPatch(decision)!), leaseToken: "tok-new" });
    expect(answer.claimed && Object.keys(answer.job).sort()).toEqual(REFERENCE_KEYS);
    expect(answer.claimed && answer.job).toMatchObject({ status: "claimed", claimed_by: "w1", version: pending.version + 1 });
  });

  it("answers an already_held re-claim with the row as it is and its token, writing nothing", () => {
    const row = held("w1", LIVE);
    const decision: ClaimDecision = { kind: "already_held", leaseToken: "tok-current" };
    expect(claimAnswer({ row, decision })).toEqual({ claimed: true, alreadyHeld: true, job: jobView(row), leaseToken: "tok-current" });
    expect(claimPatch(decision)).toBeNull();
  });

  it("answers a dead-letter (give_up) as any unclaimable job, though it writes", () => {
    const spent = enqueued({ attempts: 25 });
    const decision = decideClaim(spent, "w1", 60, NOW, () => "t");
    expect(decision.kind).toBe("give_up");
    expect(claimAnswer({ row: spent, decision })).toEqual({ claimed: false });
    expect(claimPatch(decision)).toMatchObject({ status: "failed", last_error: "max attempts reached" });
  });

  it("answers a refusal, an unknown job and a rollback with claimed: false", () => {
    expect(claimAnswer({ row: held("w2", LIVE), decision: { kind: "refused" } })).toEqual({ claimed: false });
    expect(claimPatch({ kind: "refused" })).toBeNull();
    expect(claimAnswer(null)).toEqual({ claimed: false });
  });
});

describe("renewAnswer", () => {
  it("answers the reference's view after the renew, not the progress", () => {
    const row = held("w1", LIVE, { version: 4 });
    const decision = decideRenew(row, { workerId: "w1", leaseToken: undefined, leaseSeconds: 60, progress: { p: 1 } }, NOW);
    const answer = renewAnswer({ row, decision });
    expect(answer).toEqual({ renewed: true, job: { ...jobView(row), status: "running", lease_expires_at: formatPbDate(NOW + 60_000), version: 5 } });
    expect(answer.renewed && Object.keys(answer.job).sort()).toEqual(REFERENCE_KEYS);
  });

  it("answers a refusal and a rollback with renewed: false, and writes nothing for a refusal", () => {
    expect(renewAnswer({ row: held("w1", EXPIRED), decision: { kind: "refused" } })).toEqual({ renewed: false });
    expect(renewAnswer(null)).toEqual({ renewed: false });
    expect(renewPatch({ kind: "refused" })).toBeNull();
  });

  it("answers a timed-out holder with its reason (docs/flow-control.md), writing nothing", () => {
    const decision: RenewDecision = { kind: "refused", reason: "timed_out" };
    expect(renewAnswer({ row: held("w1", LIVE), decision })).toEqual({ renewed: false, reason: "timed_out" });
    expect(renewPatch(decision)).toBeNull();
  });

  it("writes the renew's patch", () => {
    const patch: JobPatch = { status: "running", lease_expires_at: formatPbDate(NOW + 30_000), version: 4 };
    expect(renewPatch({ kind: "renew", patch })).toBe(patch);
  });
});

describe("releaseAnswer and releasePatch", () => {
  it("answers a retry with the job's new status (pending) and no holder", () => {
    const row = held("w1", LIVE, { attempts: 1, max_attempts: 3 });
    const decision = decideRelease(row, { workerId: "w1", leaseToken: "tok-current", target: "retry", jitter: 0 }, NOW);
    expect(releaseAnswer({ row, decision })).toEqual({
      released: true,
      job: { ...jobView(row), status: "pending", claimed_by: "", lease_expires_at: "", version: row.version + 1 },
    });
    expect(releasePatch(decision)).toMatchObject({ run_at: formatPbDate(NOW + 1000) });
  });

  it("answers a retry at max attempts with failed", () => {
    const row = held("w1", LIVE, { attempts: 3, max_attempts: 3 });
    const decision = decideRelease(row, { workerId: "w1", leaseToken: undefined, target: "retry", error: "boom" }, NOW);
    expect(releaseAnswer({ row, decision })).toMatchObject({ released: true, job: { status: "failed", claimed_by: "" } });
  });

  it("answers a refusal with its reason, and an unknown job or a rollback as not the holder", () => {
    const decision: ReleaseDecision = { kind: "refused", reason: "refused_stale_token" };
    expect(releaseAnswer({ row: held("w1", LIVE), decision })).toEqual({ released: false, reason: "refused_stale_token" });
    expect(releasePatch(decision)).toBeNull();
    expect(releaseAnswer(null)).toEqual({ released: false, reason: "refused_not_holder" });
  });
});

describe("queueJobView", () => {
  it("adds the queue's fields to the reference's view, JSON fields parsed, after the patch", () => {
    const row = enqueued({
      id: "j", payload: '{"n":[1,"é"]}', progress: '{"step":2}', priority: -3, run_at: formatPbDate(NOW - 1000),
      attempts: 2, max_attempts: 5, last_error: "e", dead_lettered_at: "", unique_key: "k",
    });
    expect(queueJobView(row, { status: "claimed", attempts: 3, version: 1 })).toEqual({
      ...jobView(row), status: "claimed", version: 1,
      payload: { n: [1, "é"] }, priority: -3, run_at: formatPbDate(NOW - 1000), attempts: 3, max_attempts: 5,
      last_error: "e", dead_lettered_at: "", unique_key: "k", queue: "default", progress: { step: 2 },
      // Flow control's (docs/flow-control.md): no group, no timeout, so no deadline.
      group_key: "", timeout_seconds: 0, deadline: null,
    });
  });

  it("carries the group and timeout, and the held attempt's deadline (claim + timeout) after the patch; null when not held", () => {
    const claimedAt = formatPbDate(NOW);
    const row = enqueued({ group_key: "host-a", timeout_seconds: 90 });
    expect(queueJobView(row, { status: "claimed", claimed_at: claimedAt })).toMatchObject({
      group_key: "host-a", timeout_seconds: 90, deadline: formatPbDate(NOW + 90_000),
    });
    const running = enqueued({ status: "running", claimed_at: formatPbDate(NOW - 10_000), timeout_seconds: 30 });
    expect(queueJobView(running).deadline).toBe(formatPbDate(NOW + 20_000));
    // Back to pending (or finished): no current attempt, no deadline.
    expect(queueJobView(running, { status: "pending" }).deadline).toBeNull();
    expect(queueJobView(enqueued({ claimed_at: claimedAt, timeout_seconds: 30 })).deadline).toBeNull();
    // Held without a timeout: none.
    expect(queueJobView(enqueued({ status: "claimed", claimed_at: claimedAt })).deadline).toBeNull();
  });

  it("carries the row's queue, and reads a row's empty queue as the default queue (docs/flow-control.md)", () => {
    expect(queueJobView(enqueued({ queue: "emails" })).queue).toBe("emails");
    expect(queueJobView(enqueued({ queue: "" })).queue).toBe("default");
  });

  it("shows the progress a patch clears as null, and a JSON string payload as that string", () => {
    const row = enqueued({ payload: '"123"', progress: '{"step":2}' });
    const view = queueJobView(row, { progress: null });
    expect(view.progress).toBeNull();
    expect(view.payload).toBe("123");
  });

  it.each<[string, string, unknown]>([
    ["empty (a NULL column)", "", null],
    ["JSON null", "null", null],
    ["a number", "123", 123],
    ["false", "false", false],
    ["unreadable (hand-edited)", "{oops", null],
  ])("reads a JSON field that is %s", (_name, text, value) => {
    expect(parseJsonField(text)).toEqual(value);
    expect(queueJobView(enqueued({ payload: text })).payload).toEqual(value);
  });
});
