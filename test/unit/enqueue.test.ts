import { describe, expect, it } from "vitest";
import { claimNext } from "../../src/lib/claim-next";
import { enqueueJobs } from "../../src/lib/enqueue";
import { formatPbDate } from "../../src/lib/lease";
import { validateEnqueueRequest, type EnqueueItemFields } from "../../src/lib/validate";
import { enqueued, memoryBatch, NOW } from "./support/rows";

const item = (probeKey: string, fields: Partial<EnqueueItemFields> = {}): EnqueueItemFields => ({
  probeKey, queue: "default", payload: null, runAt: formatPbDate(NOW), priority: 0, maxAttempts: 25, uniqueKey: "",
  groupKey: "", timeoutSeconds: 0, startBy: "", ...fields,
});

/** An insert's flow control fields when the item sets none: no group, no timeout, no start_by. */
const NO_FLOW = { group_key: "", timeout_seconds: 0, start_by: "" };

describe("enqueueJobs", () => {
  it("writes every item, in request order, with its position as enqueue_index, and answers its id", () => {
    const batch = memoryBatch();
    const items = [
      item("a", { payload: { n: 1 }, priority: 7, maxAttempts: 0, runAt: formatPbDate(NOW + 5000) }),
      item("b", { payload: "123" }),
      item("a"),
    ];
    const answer = enqueueJobs(batch, items);
    expect(answer).toEqual(batch.inserts.map((ins, i) => ({ id: ins.id, probeKey: items[i]!.probeKey, created: true })));
    expect(batch.inserts.map((ins) => ins.fields)).toEqual([
      { probe_key: "a", queue: "default", status: "pending", payload: { n: 1 }, run_at: formatPbDate(NOW + 5000), priority: 7, max_attempts: 0, unique_key: "", enqueue_index: 0, ...NO_FLOW },
      { probe_key: "b", queue: "default", status: "pending", payload: "123", run_at: formatPbDate(NOW), priority: 0, max_attempts: 25, unique_key: "", enqueue_index: 1, ...NO_FLOW },
      { probe_key: "a", queue: "default", status: "pending", payload: null, run_at: formatPbDate(NOW), priority: 0, max_attempts: 25, unique_key: "", enqueue_index: 2, ...NO_FLOW },
    ]);
    expect(new Set(answer.map((j) => j.id)).size).toBe(3);
  });

  it("writes each item's group, timeout and start_by (docs/flow-control.md)", () => {
    const batch = memoryBatch();
    const startBy = formatPbDate(NOW + 90_000);
    enqueueJobs(batch, [item("g", { groupKey: "host-a", timeoutSeconds: 45, startBy }), item("plain")]);
    expect(batch.inserts.map((ins) => [ins.fields.group_key, ins.fields.timeout_seconds, ins.fields.start_by])).toEqual([
      ["host-a", 45, startBy], ["", 0, ""],
    ]);
    expect(batch.row(batch.inserts[0]!.id)).toMatchObject({ group_key: "host-a", timeout_seconds: 45, start_by: startBy });
  });

  it.each(["pending", "claimed", "running"])("answers a unique key held by a %s job with that job, writing nothing", (status) => {
    const live = enqueued({ id: "live", status, unique_key: "k" });
    const batch = memoryBatch([live]);
    expect(enqueueJobs(batch, [item("p", { uniqueKey: "k" })])).toEqual([{ id: "live", probeKey: "p", created: false }]);
    expect(batch.inserts).toEqual([]);
    expect(batch.row("live")).toMatchObject({ status, unique_key: "k" });
  });

  it.each(["done", "failed", "cancelled"])("creates a job for a unique key whose only holder is %s", (status) => {
    const batch = memoryBatch([enqueued({ id: "old", status, unique_key: "k" })]);
    const [job] = enqueueJobs(batch, [item("p", { uniqueKey: "k" })]);
    expect(job).toMatchObject({ probeKey: "p", created: true });
    expect(job!.id).not.toBe("old");
  });

  it("deduplicates within one call: a later item with an earlier item's key gets that item's id", () => {
    const batch = memoryBatch();
    const answer = enqueueJobs(batch, [item("a", { uniqueKey: "k" }), item("b", { uniqueKey: "other" }), item("c", { uniqueKey: "k" })]);
    expect(answer.map((j) => [j.probeKey, j.created])).toEqual([["a", true], ["b", true], ["c", false]]);
    expect(answer[2]!.id).toBe(answer[0]!.id);
    expect(batch.inserts.map((ins) => [ins.fields.probe_key, ins.fields.enqueue_index])).toEqual([["a", 0], ["b", 1]]);
  });

  it("answers every item with a live job's key with that job, asking the database once per key", () => {
    const batch = memoryBatch([enqueued({ id: "live", unique_key: "k" })]);
    const answer = enqueueJobs(batch, [item("a", { uniqueKey: "k" }), item("b"), item("c", { uniqueKey: "k" })]);
    expect(answer.map((j) => [j.id === "live", j.created])).toEqual([[true, false], [false, true], [true, false]]);
    expect(batch.calls.filter((c) => c.op === "queryOne")).toHaveLength(1);
    // b keeps its position in the call.
    expect(batch.inserts.map((ins) => ins.fields.enqueue_index)).toEqual([1]);
  });

  it("never deduplicates the empty key", () => {
    const batch = memoryBatch([enqueued({ id: "live" })]);
    expect(enqueueJobs(batch, [item("a"), item("a")]).map((j) => j.created)).toEqual([true, true]);
    expect(batch.calls.filter((c) => c.op === "queryOne")).toEqual([]);
  });

  it("hands one call's jobs out in request order (same due time and priority)", () => {
    const batch = memoryBatch();
    const valid = validateEnqueueRequest({ jobs: ["x", "y", "z"].map((probeKey) => ({ probeKey })) }, NOW);
    if (!valid.ok) throw new Error(valid.error);
    const ids = enqueueJobs(batch, valid.value).map((j) => j.id);
    const claimed = claimNext(batch, { workerId: "w", leaseSeconds: 30, limit: 3, probeKeyPrefix: "", queues: null }, NOW, 5, () => "t");
    expect(claimed.map((c) => c.row.id)).toEqual(ids);
    expect(claimed.map((c) => [c.row.probe_key, c.row.max_attempts, c.patch.attempts])).toEqual([["x", 25, 1], ["y", 25, 1], ["z", 25, 1]]);
  });

  it("hands out a higher priority first and a delayed job only once due", () => {
    const batch = memoryBatch();
    const [later, low, high] = enqueueJobs(batch, [
      item("later", { priority: 100, runAt: formatPbDate(NOW + 60_000) }),
      item("low", { priority: -1 }),
      item("high", { priority: 1 }),
    ]);
    const claim = (now: number) => claimNext(batch, { workerId: "w", leaseSeconds: 3600, limit: 10, probeKeyPrefix: "", queues: null }, now, 5, () => "t");
    expect(claim(NOW).map((c) => c.row.id)).toEqual([high!.id, low!.id]);
    expect(claim(NOW + 59_999)).toEqual([]);
    expect(claim(NOW + 60_000).map((c) => c.row.id)).toEqual([later!.id]);
  });
});
