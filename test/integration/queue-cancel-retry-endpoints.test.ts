// POST /api/fleet/cancel and POST /api/fleet/retry (docs/queue.md): cancel finishes
// a job not yet finished and locks its holder out; retry brings a failed or
// cancelled job back, unless its unique key now belongs to another live job;
// every other case answers false and changes nothing.
import { describe, expect, it } from "vitest";
import type { ClaimedJob } from "../../src/lib/types";
import { claimNext, enqueueOk, getQueueJob, post, randomKey, type QueueJobRecord } from "./support/fleet-api";
import { claim, expectStampedDuring, renew, timed } from "./support/protocol";

type State = "pending" | "claimed" | "running" | "done" | "failed" | "cancelled";

interface Setup {
  id: string;
  prefix: string;
  workerId: string;
  /** The holder's token, for states that had one. */
  leaseToken: string;
}

/** A job brought to `state` through the endpoints, alone under its own prefix. */
async function jobIn(state: State, extra: { uniqueKey?: string } = {}): Promise<Setup> {
  const prefix = randomKey(`qcr-${state}`) + "/";
  const workerId = `holder-${state}`;
  const [enq] = await enqueueOk([{ probeKey: `${prefix}job`, ...extra }]);
  const setup: Setup = { id: enq!.id, prefix, workerId, leaseToken: "" };
  if (state === "pending") return setup;
  if (state === "cancelled") {
    expect((await post("/api/fleet/cancel", { jobId: setup.id })).body).toMatchObject({ cancelled: true });
    return setup;
  }
  const res = await claimNext({ workerId, probeKeyPrefix: prefix, leaseSeconds: 120 });
  const jobs = res.body.jobs as ClaimedJob[];
  expect(jobs.map((j) => j.job.id)).toEqual([setup.id]);
  setup.leaseToken = jobs[0]!.leaseToken;
  if (state === "claimed") return setup;
  expect((await renew(setup.id, workerId, { leaseToken: setup.leaseToken, leaseSeconds: 120 })).body).toMatchObject({ renewed: true });
  if (state === "running") return setup;
  const released = await post("/api/fleet/release", { jobId: setup.id, workerId, status: state, leaseToken: setup.leaseToken, error: `${state} on purpose` });
  expect(released.body).toMatchObject({ released: true, job: { status: state } });
  return setup;
}

function cancel(jobId: unknown) {
  return post("/api/fleet/cancel", { jobId });
}

function retry(jobId: unknown) {
  return post("/api/fleet/retry", { jobId });
}

describe("POST /api/fleet/cancel", () => {
  it.each(["pending", "claimed", "running"] as const)("a %s job is cancelled (finished_at set), and its holder is locked out", async (state) => {
    const job = await jobIn(state);
    const before = await getQueueJob(job.id);
    const { result: res, t0, t1 } = await timed(() => cancel(job.id));
    expect(res.status).toBe(200);
    const row = await getQueueJob(job.id);
    expect(res.body).toMatchObject({ cancelled: true, job: { id: job.id, status: "cancelled", version: before.version + 1 } });
    expect(row).toMatchObject({ status: "cancelled", version: before.version + 1, lease_token: "" });
    expectStampedDuring(row.finished_at, t0, t1);

    // The holder's renew and release (with its token or without), and anyone's claim, change nothing.
    for (const extra of [{ leaseToken: job.leaseToken || undefined }, {}]) {
      expect((await renew(job.id, job.workerId, { ...extra, progress: { p: 1 } })).body).toEqual({ renewed: false });
      for (const status of ["done", "failed", "retry", "pending"]) {
        const released = await post("/api/fleet/release", { jobId: job.id, workerId: job.workerId, status, result: { r: 1 }, error: "late", ...extra });
        expect(released.body, `release ${status}`).toEqual({ released: false, reason: "refused_not_holder" });
      }
    }
    expect((await claim(job.id, "thief")).body).toEqual({ claimed: false });
    expect((await claimNext({ workerId: "thief", probeKeyPrefix: job.prefix })).body).toEqual({ jobs: [] });
    const after = await getQueueJob(job.id);
    expect(after).toEqual(row);
    expect(after).toMatchObject({ status: "cancelled", version: row.version });
  });

  it.each(["done", "failed", "cancelled"] as const)("a %s job answers {cancelled:false} and is left as it was", async (state) => {
    const job = await jobIn(state);
    const before = await getQueueJob(job.id);
    expect(await cancel(job.id)).toEqual({ status: 200, body: { cancelled: false } });
    expect(await getQueueJob(job.id)).toEqual(before);
  });

  it("an unknown job answers {cancelled:false}", async () => {
    expect(await cancel("nosuchjob000000")).toEqual({ status: 200, body: { cancelled: false } });
  });
});

describe("POST /api/fleet/retry", () => {
  it.each(["pending", "claimed", "running", "done"] as const)("a %s job answers {retried:false} and is left as it was", async (state) => {
    const job = await jobIn(state);
    const before = await getQueueJob(job.id);
    expect(await retry(job.id)).toEqual({ status: 200, body: { retried: false } });
    expect(await getQueueJob(job.id)).toEqual(before);
  });

  it.each(["failed", "cancelled"] as const)("a %s job goes back to pending, due now, attempts 0, last_error kept, and is claimable", async (state) => {
    const job = await jobIn(state);
    const before = await getQueueJob(job.id);
    const { result: res, t0, t1 } = await timed(() => retry(job.id));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ retried: true, job: { id: job.id, status: "pending", attempts: 0, last_error: before.last_error, dead_lettered_at: "" } });
    const row = await getQueueJob(job.id);
    expect(row).toMatchObject({ status: "pending", attempts: 0, finished_at: "", dead_lettered_at: "", last_error: before.last_error, version: before.version + 1 });
    expectStampedDuring(row.run_at, t0, t1);
    const again = await claimNext({ workerId: "again", probeKeyPrefix: job.prefix });
    expect(again.body.jobs.map((j: ClaimedJob) => [j.job.id, j.job.attempts])).toEqual([[job.id, 1]]);
  });

  it("a failed job whose unique_key now belongs to another live job: {retried:false, reason:\"unique_key_taken\"}, nothing changes", async () => {
    const uniqueKey = randomKey("qcr-uk");
    const failed = await jobIn("failed", { uniqueKey });
    const [other] = await enqueueOk([{ probeKey: `${failed.prefix}other`, uniqueKey }]);
    expect(other!.created).toBe(true);
    const failedBefore = await getQueueJob(failed.id);
    const otherBefore = await getQueueJob(other!.id);
    expect(failedBefore).toMatchObject({ status: "failed", unique_key: uniqueKey });

    expect(await retry(failed.id)).toEqual({ status: 200, body: { retried: false, reason: "unique_key_taken" } });
    expect(await getQueueJob(failed.id)).toEqual(failedBefore);
    expect(await getQueueJob(other!.id)).toEqual(otherBefore);

    // Once the other job is finished, the key is free again and the retry goes through.
    expect((await cancel(other!.id)).body).toMatchObject({ cancelled: true });
    expect((await retry(failed.id)).body).toMatchObject({ retried: true, job: { id: failed.id, status: "pending", unique_key: uniqueKey } });
  });

  it("an unknown job answers {retried:false}", async () => {
    expect(await retry("nosuchjob000000")).toEqual({ status: 200, body: { retried: false } });
  });
});

describe("cancel and retry: bad requests", () => {
  const BAD: [string, unknown, string][] = [
    ["no jobId", {}, "jobId is required"],
    ["an empty jobId", { jobId: "" }, "jobId is required"],
    ["a null jobId", { jobId: null }, "jobId is required"],
    ["a numeric jobId", { jobId: 5 }, "jobId must be a string"],
    ["a boolean jobId", { jobId: true }, "jobId must be a string"],
    ["an array jobId", { jobId: ["abc"] }, "jobId must be a string"],
    ["an object jobId", { jobId: { id: "abc" } }, "jobId must be a string"],
  ];
  for (const path of ["/api/fleet/cancel", "/api/fleet/retry"]) {
    it.each(BAD)(`${path} with %s is a 400`, async (_what, body, error) => {
      expect(await post(path, body)).toEqual({ status: 400, body: { error } });
    });

    it(`${path} without a token is a 401, and changes nothing`, async () => {
      const job = await jobIn("pending");
      const before = await getQueueJob(job.id);
      expect((await post(path, { jobId: job.id }, { token: null })).status).toBe(401);
      expect(await getQueueJob(job.id)).toEqual(before);
    });
  }

  it("a cancel of a live job by a 400 body changes nothing", async () => {
    const job: QueueJobRecord = await getQueueJob((await jobIn("claimed")).id);
    expect((await post("/api/fleet/cancel", { jobId: [job.id] })).status).toBe(400);
    expect(await getQueueJob(job.id)).toEqual(job);
  });
});
