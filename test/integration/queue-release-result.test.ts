// A release's `result` and `error`, and a renew's `progress` (docs/queue.md): written
// in the same write as the status change (or the lease extension), never by a
// refused call, and refused with a 400 (nothing written) when too large.
import { describe, expect, it } from "vitest";
import { MAX_PROGRESS_BYTES, MAX_RESULT_BYTES } from "../../src/lib/queue";
import type { ClaimedJob } from "../../src/lib/types";
import { claimNext, enqueueOk, getQueueJob, post, randomKey } from "./support/fleet-api";
import { expectStampedDuring, renew, timed } from "./support/protocol";
import { sleep } from "./support/race";

interface Held {
  id: string;
  prefix: string;
  workerId: string;
  leaseToken: string;
}

/** A job enqueued and claimed by workerId, alone under its own prefix. */
async function heldJob(workerId: string, leaseSeconds = 120): Promise<Held> {
  const prefix = randomKey("qrr") + "/";
  const [enq] = await enqueueOk([{ probeKey: `${prefix}job` }]);
  const res = await claimNext({ workerId, probeKeyPrefix: prefix, leaseSeconds });
  const jobs = res.body.jobs as ClaimedJob[];
  expect(jobs.map((j) => j.job.id)).toEqual([enq!.id]);
  return { id: enq!.id, prefix, workerId, leaseToken: jobs[0]!.leaseToken };
}

function release(job: Held, body: object) {
  return post("/api/fleet/release", { jobId: job.id, workerId: job.workerId, leaseToken: job.leaseToken, ...body });
}

const RESULT = { ok: true, items: [1, "two", null, { three: 3 }], text: "résumé ✓ 🚀", asString: "123" };

describe("release with result and error", () => {
  it.each(["done", "failed"] as const)("a %s release writes result and error with the status, in one write", async (status) => {
    const job = await heldJob("rr-w");
    const before = await getQueueJob(job.id);
    const { result: res, t0, t1 } = await timed(() => release(job, { status, result: RESULT, error: `it went ${status}` }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ released: true, job: { id: job.id, status, version: before.version + 1 } });
    const row = await getQueueJob(job.id);
    // One version step: status, result and last_error were one write.
    expect(row).toMatchObject({ status, result: RESULT, last_error: `it went ${status}`, version: before.version + 1 });
    expectStampedDuring(row.finished_at, t0, t1);
  });

  it("a retry release writes result and error too", async () => {
    const job = await heldJob("rr-retry");
    const before = await getQueueJob(job.id);
    const res = await release(job, { status: "retry", result: { partial: 1 }, error: "try again" });
    expect(res.body).toMatchObject({ released: true, job: { status: "pending" } });
    expect(await getQueueJob(job.id)).toMatchObject({ status: "pending", result: { partial: 1 }, last_error: "try again", version: before.version + 1 });
  });

  it("null result and error mean absent: nothing is written for them", async () => {
    const job = await heldJob("rr-null");
    const res = await release(job, { status: "done", result: null, error: null });
    expect(res.body).toMatchObject({ released: true, job: { status: "done" } });
    expect(await getQueueJob(job.id)).toMatchObject({ status: "done", result: null, last_error: "" });
  });

  it("a result of exactly 1 MB as JSON is stored", async () => {
    const job = await heldJob("rr-1mb");
    const result = "r".repeat(MAX_RESULT_BYTES - 2); // plus its two quotes
    const res = await release(job, { status: "done", result });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    expect(res.body).toMatchObject({ released: true });
    const row = await getQueueJob(job.id);
    expect(row.status).toBe("done");
    expect(row.result).toBe(result);
  });

  it("a result over 1 MB is a 400 and nothing is written", async () => {
    const job = await heldJob("rr-big");
    const before = await getQueueJob(job.id);
    const res = await release(job, { status: "done", result: "r".repeat(MAX_RESULT_BYTES - 1), error: "too big" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.stringMatching(/result/) });
    expect(await getQueueJob(job.id)).toEqual(before);
    // The holder still holds it and can release it properly.
    expect((await release(job, { status: "done" })).body).toMatchObject({ released: true });
  });

  it("refused releases write neither result nor error", async () => {
    const job = await heldJob("rr-holder");
    const before = await getQueueJob(job.id);
    const attempts: [object, string][] = [
      [{ workerId: "someone-else", status: "done" }, "refused_not_holder"],
      [{ leaseToken: "not-the-token", status: "done" }, "refused_stale_token"],
      [{ leaseToken: "not-the-token", status: "failed" }, "refused_stale_token"],
      [{ status: "pending" }, "refused_lease_live"],
    ];
    for (const [body, reason] of attempts) {
      const res = await release(job, { ...body, result: { sneaky: true }, error: "sneaky" });
      expect(res.body, JSON.stringify(body)).toEqual({ released: false, reason });
      expect(await getQueueJob(job.id)).toEqual(before);
    }
    // Once finished, the same holder's second release writes nothing either.
    expect((await release(job, { status: "done", result: { first: true } })).body).toMatchObject({ released: true });
    const done = await getQueueJob(job.id);
    expect((await release(job, { status: "failed", result: { second: true }, error: "second" })).body)
      .toEqual({ released: false, reason: "refused_terminal_same_holder" });
    expect(await getQueueJob(job.id)).toEqual(done);
  });

  it("a release after the lease expired is refused and writes nothing", async () => {
    const job = await heldJob("rr-expired", 1);
    await sleep(1100);
    const before = await getQueueJob(job.id);
    expect((await release(job, { status: "done", result: { late: true }, error: "late" })).body)
      .toEqual({ released: false, reason: "refused_not_holder" });
    expect(await getQueueJob(job.id)).toEqual(before);
  });
});

describe("renew with progress", () => {
  it("a successful renew stores progress; a later one replaces it; a renew without progress keeps it", async () => {
    const job = await heldJob("rp-w");
    const first = await renew(job.id, job.workerId, { leaseToken: job.leaseToken, progress: { step: 1, of: 3, note: "début ✓" } });
    expect(first.body).toMatchObject({ renewed: true, job: { status: "running" } });
    expect((await getQueueJob(job.id)).progress).toEqual({ step: 1, of: 3, note: "début ✓" });
    await renew(job.id, job.workerId, { leaseToken: job.leaseToken, progress: "half" });
    expect((await getQueueJob(job.id)).progress).toBe("half");
    await renew(job.id, job.workerId, { leaseToken: job.leaseToken, progress: 0.75 });
    expect((await getQueueJob(job.id)).progress).toBe(0.75);
    const plain = await renew(job.id, job.workerId, { leaseToken: job.leaseToken });
    expect(plain.body).toMatchObject({ renewed: true });
    expect((await getQueueJob(job.id)).progress).toBe(0.75);
  });

  it("a refused renew stores no progress", async () => {
    const job = await heldJob("rp-holder");
    await renew(job.id, job.workerId, { leaseToken: job.leaseToken, progress: { mine: true } });
    const before = await getQueueJob(job.id);
    for (const [workerId, extra] of [["someone-else", {}], [job.workerId, { leaseToken: "stale" }]] as const) {
      expect((await renew(job.id, workerId, { ...extra, progress: { theirs: true } })).body).toEqual({ renewed: false });
      expect(await getQueueJob(job.id)).toEqual(before);
    }
  });

  it("an expired holder's renew stores no progress", async () => {
    const job = await heldJob("rp-expired", 1);
    await sleep(1100);
    const before = await getQueueJob(job.id);
    expect((await renew(job.id, job.workerId, { leaseToken: job.leaseToken, progress: { late: true } })).body).toEqual({ renewed: false });
    expect(await getQueueJob(job.id)).toEqual(before);
  });

  it.each([
    ["ASCII", "p", 1],
    ["2-byte UTF-8", "é", 2],
    ["4-byte UTF-8", "🚀", 4],
  ])("progress of exactly 4096 bytes (%s) is stored; one more character is a 400 and nothing is written", async (_what, ch, bytes) => {
    const job = await heldJob("rp-size");
    const fits = ch.repeat(Math.floor((MAX_PROGRESS_BYTES - 2) / bytes));
    const padding = "x".repeat(MAX_PROGRESS_BYTES - 2 - Buffer.byteLength(fits)); // the quotes take 2
    const exact = padding + fits;
    expect(Buffer.byteLength(JSON.stringify(exact))).toBe(MAX_PROGRESS_BYTES);
    const ok = await renew(job.id, job.workerId, { leaseToken: job.leaseToken, progress: exact });
    expect(ok.body).toMatchObject({ renewed: true });
    const before = await getQueueJob(job.id);
    expect(before.progress).toBe(exact);

    const over = exact + ch;
    const res = await renew(job.id, job.workerId, { leaseToken: job.leaseToken, progress: over });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.stringMatching(/progress/) });
    expect(await getQueueJob(job.id)).toEqual(before);
  });

  it("progress over 4096 bytes as an object is a 400, and the lease is not extended either", async () => {
    const job = await heldJob("rp-obj");
    const before = await getQueueJob(job.id);
    const res = await renew(job.id, job.workerId, { leaseToken: job.leaseToken, leaseSeconds: 600, progress: { log: "l".repeat(4090) } });
    expect(res.status).toBe(400);
    expect(await getQueueJob(job.id)).toEqual(before);
  });
});
