// Timeouts (docs/flow-control.md "Timeouts"): a job enqueued with timeoutSeconds has, from
// each winning claim at T, the deadline T + timeout. No lease reaches past it
// (claim-next, claim by id, a steal, renew and heartbeat; the deadline wins
// over the 1-second floor), and claim-next's job view carries it. At the
// deadline the holder's renew or heartbeat answers { renewed: false, reason:
// "timed_out" } and writes nothing (other refusals stay as they were), and its
// release is refused as for any expired lease. Once it has passed, the sweep,
// claim by id ({ claimed: false }) and claim-next's steal path write the
// timeout instead: a failed attempt by the retry rules (backoff, or the dead
// letter at max_attempts) with last_error "timed out after N s", the orphan
// count left as it was.
import { describe, expect, it } from "vitest";
import { formatPbDate, parsePbDate } from "../../src/lib/lease";
import { retryBackoffMs } from "../../src/lib/queue";
import type { ClaimedJob } from "../../src/lib/types";
import { claimNext, enqueueOk, getQueueJob, patchJob, post, randomKey, type QueueJobRecord } from "./support/fleet-api";
import { claim, renew, timed } from "./support/protocol";
import { sleep } from "./support/race";

/** Until just past a stored deadline. */
async function sleepPast(deadline: string, extraMs = 30): Promise<void> {
  await sleep(parsePbDate(deadline)! - Date.now() + extraMs);
}

async function claimNextOne(body: Record<string, unknown>): Promise<ClaimedJob> {
  const res = await claimNext({ limit: 1, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.jobs, JSON.stringify(res.body)).toHaveLength(1);
  return res.body.jobs[0];
}

function heartbeat(workerId: string, leases: { jobId: string; leaseToken?: string }[], leaseSeconds = 60) {
  return post("/api/fleet/heartbeat", { workerId, leaseSeconds, leases });
}

function plus(pbDate: string, ms: number): string {
  return formatPbDate(parsePbDate(pbDate)! + ms);
}

/** The stored retry of a timed-out attempt, written during [t0, t1] (jitter 0.5, as the server draws for timeouts). */
function expectTimedOutRetry(row: QueueJobRecord, before: QueueJobRecord, t0: number, t1: number, timeoutSeconds: number): void {
  expect(row).toMatchObject({
    status: "pending", claimed_by: "", lease_token: "", last_error: `timed out after ${timeoutSeconds} s`,
    attempts: before.attempts, consecutive_orphan_count: before.consecutive_orphan_count, reclaim_count: before.reclaim_count,
    requeued_at: before.requeued_at, dead_lettered_at: "", finished_at: "", version: before.version + 1,
  });
  const backoff = retryBackoffMs(before.attempts, 0.5);
  const runAt = parsePbDate(row.run_at)!;
  expect(runAt).toBeGreaterThanOrEqual(t0 + backoff - 2);
  expect(runAt).toBeLessThanOrEqual(t1 + backoff + 2);
}

describe("the lease never reaches past the deadline", () => {
  it("claim-next: lease = min(now + leaseSeconds, claimed_at + timeout); the job view carries deadline", async () => {
    const prefix = randomKey("fto-cn") + "/";
    const [long, short] = await enqueueOk([
      { probeKey: `${prefix}a`, timeoutSeconds: 2, priority: 2 },
      { probeKey: `${prefix}b`, timeoutSeconds: 30, priority: 1 },
    ]);
    const won = await claimNextOne({ workerId: "w", probeKeyPrefix: prefix, leaseSeconds: 60 });
    const row = await getQueueJob(long!.id);
    const deadline = plus(row.claimed_at, 2_000);
    expect(won.job).toMatchObject({ id: long!.id, timeout_seconds: 2, deadline, lease_expires_at: deadline, group_key: "", queue: "default" });
    expect(row.lease_expires_at).toBe(deadline);
    expect(row.timeout_seconds).toBe(2);

    // a lease shorter than the timeout is kept as asked; the deadline is still reported. (Long enough not to lapse
    // before the next claim on a loaded machine: the next claim would steal this job, which sorts first.)
    const other = await claimNextOne({ workerId: "w", probeKeyPrefix: prefix, leaseSeconds: 20 });
    const otherRow = await getQueueJob(short!.id);
    expect(other.job).toMatchObject({ id: short!.id, timeout_seconds: 30, deadline: plus(otherRow.claimed_at, 30_000), lease_expires_at: plus(otherRow.claimed_at, 20_000) });

    // a job without a timeout: deadline null (first in claim order, whatever the jobs above have become by now)
    const [plain] = await enqueueOk([{ probeKey: `${prefix}c`, priority: 3 }]);
    const third = await claimNextOne({ workerId: "w", probeKeyPrefix: prefix, leaseSeconds: 5 });
    expect(third.job).toMatchObject({ id: plain!.id, timeout_seconds: 0, deadline: null });
  });

  it("claim by id: the lease ends at the deadline; the answer keeps the reference's job view", async () => {
    const prefix = randomKey("fto-id") + "/";
    const [job] = await enqueueOk([{ probeKey: `${prefix}a`, timeoutSeconds: 3 }]);
    const res = await claim(job!.id, "w", { leaseSeconds: 3600 });
    expect(res.body).toMatchObject({ claimed: true });
    const row = await getQueueJob(job!.id);
    expect(row.lease_expires_at).toBe(plus(row.claimed_at, 3_000));
    expect(Object.keys(res.body.job).sort()).toEqual(["claimed_by", "id", "lease_expires_at", "probe_key", "status", "version"]);
    expect(res.body.job.lease_expires_at).toBe(row.lease_expires_at);
  });

  it("a steal of an expired lease starts a new attempt: its deadline counts from the steal", async () => {
    const prefix = randomKey("fto-st") + "/";
    const [job] = await enqueueOk([{ probeKey: `${prefix}a`, timeoutSeconds: 3 }]);
    await claimNextOne({ workerId: "w1", probeKeyPrefix: prefix, leaseSeconds: 1 });
    const first = await getQueueJob(job!.id);
    expect(first.lease_expires_at).toBe(plus(first.claimed_at, 1_000));
    await sleepPast(first.lease_expires_at);

    const stolen = await claimNextOne({ workerId: "w2", probeKeyPrefix: prefix, leaseSeconds: 60 });
    const second = await getQueueJob(job!.id);
    expect(second).toMatchObject({ claimed_by: "w2", attempts: 2, reclaim_count: 1 });
    expect(second.claimed_at > first.claimed_at).toBe(true);
    expect(second.lease_expires_at).toBe(plus(second.claimed_at, 3_000));
    expect(stolen.job).toMatchObject({ deadline: second.lease_expires_at, lease_expires_at: second.lease_expires_at });

    // and a steal by id likewise
    await patchJob(job!.id, { lease_expires_at: formatPbDate(Date.now() - 100) });
    const byId = await claim(job!.id, "w3", { leaseSeconds: 60 });
    expect(byId.body).toMatchObject({ claimed: true });
    const third = await getQueueJob(job!.id);
    expect(third).toMatchObject({ claimed_by: "w3", attempts: 3, reclaim_count: 2 });
    expect(third.lease_expires_at).toBe(plus(third.claimed_at, 3_000));
  });

  it("renew and heartbeat extend up to the deadline and no further", async () => {
    const prefix = randomKey("fto-rn") + "/";
    const [a, b] = await enqueueOk([{ probeKey: `${prefix}a`, timeoutSeconds: 30 }, { probeKey: `${prefix}b`, timeoutSeconds: 30 }]);
    const ta = (await claim(a!.id, "w", { leaseSeconds: 5 })).body.leaseToken;
    const tb = (await claim(b!.id, "w", { leaseSeconds: 5 })).body.leaseToken;
    const rowA = await getQueueJob(a!.id);
    const rowB = await getQueueJob(b!.id);
    expect(rowA.lease_expires_at).toBe(plus(rowA.claimed_at, 5_000));
    const renewed = await renew(a!.id, "w", { leaseSeconds: 3600, leaseToken: ta });
    expect(renewed.body).toMatchObject({ renewed: true, job: { lease_expires_at: plus(rowA.claimed_at, 30_000) } });
    const beat = await heartbeat("w", [{ jobId: b!.id, leaseToken: tb }], 3600);
    expect(beat.body).toMatchObject({ results: [{ jobId: b!.id, renewed: true, job: { lease_expires_at: plus(rowB.claimed_at, 30_000) } }] });
    expect((await getQueueJob(a!.id)).lease_expires_at).toBe(plus(rowA.claimed_at, 30_000));
    expect((await getQueueJob(b!.id)).lease_expires_at).toBe(plus(rowB.claimed_at, 30_000));
  });

  it("in an attempt's last second, the deadline wins over the 1-second floor (renew and heartbeat)", async () => {
    // The renew must reach the server in the deadline's last second; a late one is told timed_out, and the round is tried again.
    for (const via of ["renew", "heartbeat"] as const) {
      let checked = false;
      for (let round = 0; round < 4 && !checked; round++) {
        const prefix = randomKey("fto-fl") + "/";
        const [job] = await enqueueOk([{ probeKey: `${prefix}a`, timeoutSeconds: 2 }]);
        const token = (await claim(job!.id, "w", { leaseSeconds: 60 })).body.leaseToken as string;
        const { claimed_at: claimedAt } = await getQueueJob(job!.id);
        const deadline = plus(claimedAt, 2_000);
        await sleep(parsePbDate(claimedAt)! + 1_300 - Date.now());
        // now + 1 s (the floor for leaseSeconds 0.2) is past the deadline
        const res = via === "renew"
          ? await renew(job!.id, "w", { leaseSeconds: 0.2, leaseToken: token })
          : await heartbeat("w", [{ jobId: job!.id, leaseToken: token }], 0.2);
        const answer = via === "renew" ? res.body : res.body.results[0];
        if (answer.renewed === false && answer.reason === "timed_out") continue; // too late this round
        expect(answer, via).toMatchObject({ renewed: true, job: { lease_expires_at: deadline } });
        expect((await getQueueJob(job!.id)).lease_expires_at).toBe(deadline);
        checked = true;
      }
      expect(checked, `${via}: no round reached the server in the attempt's last second`).toBe(true);
    }
  });
});

describe("at the deadline the holder is told, and nothing is written", () => {
  it("renew and heartbeat: { renewed: false, reason: \"timed_out\" } for the holder; other refusals as today; release refused", async () => {
    const prefix = randomKey("fto-late") + "/";
    // 3 s: the first renew must come before the deadline, on a busy server too
    const [a, b] = await enqueueOk([{ probeKey: `${prefix}a`, timeoutSeconds: 3 }, { probeKey: `${prefix}b`, timeoutSeconds: 3 }]);
    const ta = (await claim(a!.id, "w", { leaseSeconds: 60 })).body.leaseToken as string;
    const tb = (await claim(b!.id, "w", { leaseSeconds: 60 })).body.leaseToken as string;
    expect((await renew(a!.id, "w", { leaseSeconds: 60, leaseToken: ta })).body).toMatchObject({ renewed: true });
    const before = [await getQueueJob(a!.id), await getQueueJob(b!.id)];
    await sleepPast(before[0]!.lease_expires_at);
    await sleepPast(before[1]!.lease_expires_at);

    expect((await renew(a!.id, "w", { leaseSeconds: 60, leaseToken: ta })).body).toEqual({ renewed: false, reason: "timed_out" });
    expect((await renew(a!.id, "w", { leaseSeconds: 60 })).body).toEqual({ renewed: false, reason: "timed_out" });
    // not the holder, or not its token: refused as today, without a reason
    expect((await renew(a!.id, "someone-else", { leaseSeconds: 60 })).body).toEqual({ renewed: false });
    expect((await renew(a!.id, "w", { leaseSeconds: 60, leaseToken: "stale" })).body).toEqual({ renewed: false });
    const beat = await heartbeat("w", [{ jobId: a!.id, leaseToken: ta }, { jobId: b!.id }, { jobId: b!.id, leaseToken: "stale" }]);
    expect(beat.body).toEqual({
      results: [
        { jobId: a!.id, renewed: false, reason: "timed_out" },
        { jobId: b!.id, renewed: false, reason: "timed_out" },
        { jobId: b!.id, renewed: false },
      ],
    });
    expect((await heartbeat("someone-else", [{ jobId: b!.id }])).body).toEqual({ results: [{ jobId: b!.id, renewed: false }] });

    // a release after the deadline is refused as for any expired lease
    for (const status of ["done", "failed", "retry"]) {
      const res = await post("/api/fleet/release", { jobId: a!.id, workerId: "w", status, leaseToken: ta, result: { late: true } });
      expect(res.body, status).toEqual({ released: false, reason: "refused_not_holder" });
    }
    const complete = await post("/api/fleet/complete", { workerId: "w", releases: [{ jobId: b!.id, leaseToken: tb, status: "done" }] });
    expect(complete.body).toEqual({ results: [{ jobId: b!.id, released: false, reason: "refused_not_holder" }] });
    expect([await getQueueJob(a!.id), await getQueueJob(b!.id)]).toEqual(before);
  });
});

describe("past the deadline, the timeout is written", () => {
  it("the sweep: back to pending after the backoff, \"timed out after N s\", the orphan count unchanged", async () => {
    const prefix = randomKey("fto-sw") + "/";
    const [job] = await enqueueOk([{ probeKey: `${prefix}a`, timeoutSeconds: 1, maxAttempts: 3 }]);
    await claimNextOne({ workerId: "w", probeKeyPrefix: prefix, leaseSeconds: 60 });
    // a job orphaned twice before: a timeout neither resets nor bumps that
    await patchJob(job!.id, { consecutive_orphan_count: 2 });
    const before = await getQueueJob(job!.id);
    await sleepPast(before.lease_expires_at);

    const { result: swept, t0, t1 } = await timed(() => post("/api/fleet/sweep", { probeKeyPrefix: prefix }));
    expect(swept.status).toBe(200);
    expect(swept.body).toEqual({
      requeued: 0, gaveUp: 0, timedOut: 1,
      jobs: [{ id: job!.id, outcome: "timed_out", claimedBy: "w", consecutiveOrphanCount: 2 }],
    });
    expectTimedOutRetry(await getQueueJob(job!.id), before, t0, t1, 1);
    // the holder's late renew: the job is no longer held
    expect((await renew(job!.id, "w", { leaseSeconds: 60 })).body).toEqual({ renewed: false });
  });

  it("the sweep dead-letters a timed-out attempt at max_attempts", async () => {
    const prefix = randomKey("fto-swd") + "/";
    const [job] = await enqueueOk([{ probeKey: `${prefix}a`, timeoutSeconds: 1, maxAttempts: 1 }]);
    await claimNextOne({ workerId: "w", probeKeyPrefix: prefix, leaseSeconds: 60 });
    const before = await getQueueJob(job!.id);
    await sleepPast(before.lease_expires_at);
    const { result: swept, t0, t1 } = await timed(() => post("/api/fleet/sweep", { probeKeyPrefix: prefix }));
    expect(swept.body).toMatchObject({ requeued: 0, gaveUp: 0, timedOut: 1, jobs: [{ id: job!.id, outcome: "timed_out" }] });
    const row = await getQueueJob(job!.id);
    expect(row).toMatchObject({ status: "failed", claimed_by: "", lease_token: "", last_error: "timed out after 1 s", attempts: 1, consecutive_orphan_count: 0 });
    for (const stamp of [row.dead_lettered_at, row.finished_at]) {
      expect(parsePbDate(stamp)!).toBeGreaterThanOrEqual(t0 - 2);
      expect(parsePbDate(stamp)!).toBeLessThanOrEqual(t1 + 2);
    }
  });

  it("claim by id past the deadline writes the timeout and answers { claimed: false }, to the holder too", async () => {
    const prefix = randomKey("fto-cid") + "/";
    const [a, b] = await enqueueOk([{ probeKey: `${prefix}a`, timeoutSeconds: 2, maxAttempts: 5 }, { probeKey: `${prefix}b`, timeoutSeconds: 1, maxAttempts: 2 }]);
    // a: its second attempt times out (the backoff grows with the attempts); the first one's lease is made to run out before its deadline
    await claim(a!.id, "w0", { leaseSeconds: 1 });
    await patchJob(a!.id, { lease_expires_at: formatPbDate(Date.now() - 10) });
    expect((await claim(a!.id, "w", { leaseSeconds: 60 })).body).toMatchObject({ claimed: true });
    await patchJob(a!.id, { consecutive_orphan_count: 1 });
    expect((await claim(b!.id, "w", { leaseSeconds: 60 })).body).toMatchObject({ claimed: true });
    const before = await getQueueJob(a!.id);
    expect(before.attempts).toBe(2);
    await sleepPast(before.lease_expires_at);

    const { result: res, t0, t1 } = await timed(() => claim(a!.id, "thief", { leaseSeconds: 60 }));
    expect(res.body).toEqual({ claimed: false });
    expectTimedOutRetry(await getQueueJob(a!.id), before, t0, t1, 2);

    // the holder asking again: not alreadyHeld (its lease ran out at the deadline), the timeout written
    const beforeB = await getQueueJob(b!.id);
    await sleepPast(beforeB.lease_expires_at);
    const { result: again, t0: s0, t1: s1 } = await timed(() => claim(b!.id, "w", { leaseSeconds: 60 }));
    expect(again.body).toEqual({ claimed: false });
    expectTimedOutRetry(await getQueueJob(b!.id), beforeB, s0, s1, 1);
  });

  it("claim-next's steal path writes the timeout instead of handing the job out, and goes on to the next job", async () => {
    const prefix = randomKey("fto-cns") + "/";
    const [slow, dead] = await enqueueOk([
      { probeKey: `${prefix}a`, timeoutSeconds: 2, maxAttempts: 3, priority: 9 },
      { probeKey: `${prefix}b`, timeoutSeconds: 2, maxAttempts: 1, priority: 9 },
    ]);
    await claimNextOne({ workerId: "w", probeKeyPrefix: prefix, leaseSeconds: 60 });
    await claimNextOne({ workerId: "w", probeKeyPrefix: prefix, leaseSeconds: 60 });
    await patchJob(slow!.id, { consecutive_orphan_count: 3 });
    const [next] = await enqueueOk([{ probeKey: `${prefix}c` }]);
    const beforeSlow = await getQueueJob(slow!.id);
    const beforeDead = await getQueueJob(dead!.id);
    await sleepPast(beforeSlow.lease_expires_at);
    await sleepPast(beforeDead.lease_expires_at);

    const { result: res, t0, t1 } = await timed(() => claimNext({ workerId: "w2", probeKeyPrefix: prefix, limit: 5, leaseSeconds: 60 }));
    expect(res.body.jobs.map((j: ClaimedJob) => j.job.id)).toEqual([next!.id]);
    // a steal would have bumped the orphan count (and reclaim_count): a timeout does neither
    expectTimedOutRetry(await getQueueJob(slow!.id), beforeSlow, t0, t1, 2);
    const deadRow = await getQueueJob(dead!.id);
    expect(deadRow).toMatchObject({ status: "failed", last_error: "timed out after 2 s", claimed_by: "", attempts: 1, reclaim_count: 0 });
    expect(deadRow.dead_lettered_at).not.toBe("");
  });
});
