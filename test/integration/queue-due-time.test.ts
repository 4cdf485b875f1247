// Due times (docs/queue.md): a row created through the record API gets run_at = its
// creation time; nothing is claimed, by id either, before its run_at; and the
// stats count scheduled, retrying, dead-lettered and cancelled jobs.
import { describe, expect, it } from "vitest";
import { parsePbDate } from "../../src/lib/lease";
import type { ClaimedJob } from "../../src/lib/types";
import {
  claimNext, createJob, enqueueOk, futureDate, get, getQueueJob, pastDate, post, queueStats, randomKey, type JobFields, type QueueJobRecord,
} from "./support/fleet-api";
import { claim, expectStampedDuring, renew, timed } from "./support/protocol";
import { sleep } from "./support/race";

/**
 * How far apart `created` and the create hook's run_at may be: both are stamped
 * while the one insert runs (the hook may wait for a JS runtime under load).
 */
const SAME_INSERT_MS = 50;

describe("run_at of rows created through the record API", () => {
  it("a row posted with only probe_key and status gets run_at = its created, is due, and claimable at once", async () => {
    const prefix = randomKey("qdue") + "/";
    const { result: created, t0, t1 } = await timed(() => createJob({ probe_key: `${prefix}bare`, status: "pending" }));
    const row = (await getQueueJob(created.id)) as QueueJobRecord;
    expect(row.run_at).not.toBe("");
    expectStampedDuring(row.run_at, t0, t1);
    const gap = Math.abs(parsePbDate(row.run_at)! - parsePbDate(row.created)!);
    expect(gap, `run_at ${row.run_at} vs created ${row.created}`).toBeLessThanOrEqual(SAME_INSERT_MS);
    expect(row).toMatchObject({ priority: 0, attempts: 0, max_attempts: 0, payload: null, unique_key: "", last_error: "", dead_lettered_at: "" });

    const res = await claimNext({ workerId: "bare", probeKeyPrefix: prefix });
    expect(res.body.jobs.map((j: ClaimedJob) => [j.job.id, j.job.attempts, j.job.run_at])).toEqual([[row.id, 1, row.run_at]]);
  });

  it("a run_at given to the record API is kept, past or future", async () => {
    const prefix = randomKey("qdue-kept") + "/";
    const future = futureDate(3_600_000);
    const past = pastDate(3_600_000);
    const a = await createJob({ probe_key: `${prefix}future`, run_at: future } as JobFields);
    const b = await createJob({ probe_key: `${prefix}past`, run_at: past } as JobFields);
    expect((await getQueueJob(a.id)).run_at).toBe(future);
    expect((await getQueueJob(b.id)).run_at).toBe(past);
    const res = await claimNext({ workerId: "kept", limit: 10, probeKeyPrefix: prefix });
    expect(res.body.jobs.map((j: ClaimedJob) => j.job.id)).toEqual([b.id]);
  });
});

describe("claim by id before run_at", () => {
  it("a pending job with a future run_at answers {claimed:false} and is left as it was, from enqueue or the record API", async () => {
    const prefix = randomKey("qdue-id") + "/";
    const [delayed, scheduled] = await enqueueOk([
      { probeKey: `${prefix}delayed`, delaySeconds: 3600 },
      { probeKey: `${prefix}scheduled`, runAt: new Date(Date.now() + 86_400_000).toISOString() },
    ]);
    const recordApi = await createJob({ probe_key: `${prefix}record-api`, run_at: futureDate(3_600_000) } as JobFields);
    for (const id of [delayed!.id, scheduled!.id, recordApi.id]) {
      const before = await getQueueJob(id);
      expect(await claim(id, "too-early", { leaseSeconds: 60 })).toEqual({ status: 200, body: { claimed: false } });
      expect(await getQueueJob(id)).toEqual(before);
    }
  });

  it("a job due in 1 s is refused by id before, and won after", async () => {
    const prefix = randomKey("qdue-soon") + "/";
    const [soon] = await enqueueOk([{ probeKey: `${prefix}soon`, delaySeconds: 1 }]);
    const row = await getQueueJob(soon!.id);
    expect((await claim(soon!.id, "soon")).body).toEqual({ claimed: false });
    await sleep(Math.max(0, parsePbDate(row.run_at)! - Date.now()) + 100);
    expect((await claim(soon!.id, "soon")).body).toMatchObject({ claimed: true, job: { status: "claimed", claimed_by: "soon" } });
    expect((await getQueueJob(soon!.id)).attempts).toBe(1);
  });
});

describe("GET /api/fleet/stats for a prefix", () => {
  it("counts pending/claimed/running/done/failed/cancelled, scheduled, retrying and deadLettered", async () => {
    const prefix = randomKey("qdue-stats") + "/";
    const key = (name: string) => `${prefix}${name}`;
    const empty = await queueStats(prefix);
    expect(empty).toMatchObject({ total: 0, scheduled: 0, retrying: 0, deadLettered: 0 });

    /** Enqueues one job alone under prefix/name/ and claims it; answers id, token and its prefix. */
    const claimedJob = async (name: string, maxAttempts?: number) => {
      const sub = `${prefix}${name}/`;
      const [enq] = await enqueueOk([{ probeKey: `${sub}job`, ...(maxAttempts === undefined ? {} : { maxAttempts }) }]);
      const res = await claimNext({ workerId: `w-${name}`, probeKeyPrefix: sub, leaseSeconds: 600 });
      expect(res.body.jobs.map((j: ClaimedJob) => j.job.id)).toEqual([enq!.id]);
      return { id: enq!.id, workerId: `w-${name}`, leaseToken: res.body.jobs[0].leaseToken as string };
    };
    const releaseAs = (j: { id: string; workerId: string; leaseToken: string }, status: string, error?: string) =>
      post("/api/fleet/release", { jobId: j.id, workerId: j.workerId, leaseToken: j.leaseToken, status, error });

    // pending, due
    await enqueueOk([{ probeKey: key("due") }]);
    // pending, scheduled (not yet due)
    await enqueueOk([{ probeKey: key("delayed"), delaySeconds: 3600 }, { probeKey: key("run-at"), runAt: "2999-01-01T00:00:00Z" }]);
    // pending after an attempt: one not yet due (scheduled too), one due
    await createJob({ probe_key: key("retry-later"), attempts: 1, max_attempts: 5, run_at: futureDate(3_600_000) } as JobFields);
    await createJob({ probe_key: key("retry-due"), attempts: 2, max_attempts: 5 } as JobFields);
    // dead-lettered (failed), and then one dead-lettered and retried (pending again, attempts 0, no dead letter)
    const dead = await claimedJob("dead", 1);
    expect((await releaseAs(dead, "retry", "gave up")).body).toMatchObject({ released: true, job: { status: "failed" } });
    const revived = await claimedJob("revived", 1);
    expect((await releaseAs(revived, "retry", "gave up")).body).toMatchObject({ released: true, job: { status: "failed" } });
    expect((await post("/api/fleet/retry", { jobId: revived.id })).body).toMatchObject({ retried: true });
    // failed by its worker: not a dead letter
    const failed = await claimedJob("failed");
    expect((await releaseAs(failed, "failed", "nope")).body).toMatchObject({ released: true });
    // cancelled: one while pending, one while claimed
    const [toCancel] = await enqueueOk([{ probeKey: key("cancel-pending") }]);
    expect((await post("/api/fleet/cancel", { jobId: toCancel!.id })).body).toMatchObject({ cancelled: true });
    const heldThenCancelled = await claimedJob("cancel-held");
    expect((await post("/api/fleet/cancel", { jobId: heldThenCancelled.id })).body).toMatchObject({ cancelled: true });
    // claimed, running, done
    await claimedJob("claimed");
    const running = await claimedJob("running");
    expect((await renew(running.id, running.workerId, { leaseToken: running.leaseToken })).body).toMatchObject({ renewed: true });
    const done = await claimedJob("done");
    expect((await releaseAs(done, "done")).body).toMatchObject({ released: true });

    const stats = await queueStats(prefix);
    expect(stats.counts).toEqual({ pending: 6, claimed: 1, running: 1, done: 1, failed: 2, cancelled: 2 });
    expect(stats).toMatchObject({ total: 13, scheduled: 3, retrying: 2, deadLettered: 1 });

    const prom = await get(`/api/fleet/stats?format=prometheus&probeKeyPrefix=${encodeURIComponent(prefix)}`);
    expect(prom.status).toBe(200);
    const text = String(prom.body);
    for (const line of [
      'pb_fleet_jobs{status="cancelled"} 2',
      "pb_fleet_scheduled_jobs 3",
      "pb_fleet_retrying_jobs 2",
      "pb_fleet_dead_lettered_jobs 1",
    ]) {
      expect(text.split("\n"), line).toContain(line);
    }
  });
});
