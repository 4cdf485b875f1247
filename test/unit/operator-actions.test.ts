import { describe, expect, it } from "vitest";
import { queueJobView } from "../../src/lib/job-row";
import { formatPbDate } from "../../src/lib/lease";
import { cancelJob, retryJob } from "../../src/lib/operator-actions";
import { decideRelease, decideRenew } from "../../src/lib/transitions";
import { EXPIRED, enqueued, held, LIVE, memoryBatch, NOW } from "./support/rows";

const deadLetter = (fields = {}) => enqueued({
  id: "dead", status: "failed", claimed_by: "", attempts: 25, dead_lettered_at: formatPbDate(NOW - 5000),
  last_error: "max attempts reached", version: 30, run_at: formatPbDate(NOW - 86_400_000), ...fields,
});

describe("retryJob", () => {
  it.each(["failed", "cancelled"])("brings a %s job back, due now, with fresh attempts, keeping last_error", (status) => {
    const before = deadLetter({ status });
    const batch = memoryBatch([before, { ...deadLetter(), id: "other", status: "failed" }]);
    const answer = retryJob(batch, "dead", NOW);
    expect(answer).toEqual({ retried: true, job: queueJobView(before, batch.writes[0]!.patch) });
    expect(answer.retried && answer.job).toMatchObject({
      status: "pending", attempts: 0, run_at: formatPbDate(NOW), dead_lettered_at: "", last_error: "max attempts reached", version: 31,
    });
    expect(batch.row("dead")).toMatchObject({ status: "pending", attempts: 0, finished_at: "", dead_lettered_at: "", last_error: "max attempts reached" });
    expect(batch.writes.map((w) => w.id)).toEqual(["dead"]);
  });

  it.each(["pending", "claimed", "running", "done"])("refuses a %s job without a reason, writing nothing", (status) => {
    const batch = memoryBatch([status === "pending" ? enqueued({ id: "dead" }) : held("w", LIVE, { id: "dead", status })]);
    expect(retryJob(batch, "dead", NOW)).toEqual({ retried: false });
    expect(batch.writes).toEqual([]);
  });

  it("refuses an unknown job", () => {
    expect(retryJob(memoryBatch([deadLetter()]), "nosuch", NOW)).toEqual({ retried: false });
  });

  it.each(["pending", "claimed", "running"])("refuses a job whose unique key a %s job now holds: unique_key_taken", (status) => {
    const batch = memoryBatch([deadLetter({ unique_key: "k" }), enqueued({ id: "newer", status, unique_key: "k" })]);
    expect(retryJob(batch, "dead", NOW)).toEqual({ retried: false, reason: "unique_key_taken" });
    expect(batch.writes).toEqual([]);
  });

  it("brings a job back when the other holders of its key are finished", () => {
    const batch = memoryBatch([deadLetter({ unique_key: "k" }), enqueued({ id: "done", status: "done", unique_key: "k" })]);
    expect(retryJob(batch, "dead", NOW)).toMatchObject({ retried: true, job: { unique_key: "k", status: "pending" } });
  });

  it("checks the status before the key: a live job is refused without a reason", () => {
    // Another live holder of "k" beside a live job is a state the unique index forbids (the batch is real SQLite now):
    // the order shows in the calls instead, the key never asked about.
    const batch = memoryBatch([enqueued({ id: "dead", unique_key: "k" })]);
    expect(retryJob(batch, "dead", NOW)).toEqual({ retried: false });
    expect(batch.calls.map((c) => c.op)).toEqual(["find"]);
  });
});

describe("cancelJob", () => {
  it.each<[string, ReturnType<typeof enqueued>]>([
    ["a pending job", enqueued({ id: "j", version: 2 })],
    ["a job not yet due", enqueued({ id: "j", version: 2, run_at: formatPbDate(NOW + 60_000) })],
    ["a claimed job", held("w1", LIVE, { id: "j", version: 2 })],
    ["a running job past its lease", held("w1", EXPIRED, { id: "j", version: 2, status: "running" })],
  ])("cancels %s and answers the queue's view", (_name, before) => {
    const batch = memoryBatch([before]);
    const answer = cancelJob(batch, "j", NOW);
    expect(answer).toEqual({ cancelled: true, job: queueJobView(before, batch.writes[0]!.patch) });
    const after = batch.row("j");
    expect(after).toMatchObject({ status: "cancelled", finished_at: formatPbDate(NOW), lease_token: "", claimed_by: before.claimed_by, version: 3 });
    // The holder's next renew and release are refused.
    expect(decideRenew(after, { workerId: "w1", leaseToken: "tok-current", leaseSeconds: 30 }, NOW)).toEqual({ kind: "refused" });
    expect(decideRelease(after, { workerId: "w1", leaseToken: "tok-current", target: "done" }, NOW))
      .toEqual({ kind: "refused", reason: "refused_not_holder" });
  });

  it.each(["done", "failed", "cancelled"])("refuses a %s job, writing nothing", (status) => {
    const batch = memoryBatch([enqueued({ id: "j", status })]);
    expect(cancelJob(batch, "j", NOW)).toEqual({ cancelled: false });
    expect(batch.writes).toEqual([]);
  });

  it("refuses an unknown job", () => {
    expect(cancelJob(memoryBatch(), "nosuch", NOW)).toEqual({ cancelled: false });
  });

  it("frees the job's unique key for a new enqueue, and a retry of it is then unique_key_taken", () => {
    const batch = memoryBatch([enqueued({ id: "j", unique_key: "k" })]);
    cancelJob(batch, "j", NOW);
    batch.add({ ...batch.row("j"), id: "new", status: "pending", finished_at: "" });
    expect(retryJob(batch, "j", NOW)).toEqual({ retried: false, reason: "unique_key_taken" });
  });
});
