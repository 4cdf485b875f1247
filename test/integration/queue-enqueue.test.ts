// POST /api/fleet/enqueue: up to 1,000 jobs in one all-or-nothing call, answers
// in request order, a bad item refuses the whole call and writes nothing,
// unique keys dedupe against live jobs (also under concurrency) and are freed
// by terminal ones, and payloads round-trip exactly.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ClaimedJob, EnqueueItem } from "../../src/lib/types";
import {
  claimNext, countJobsByPrefix, enqueue, enqueueOk, getQueueJob, listJobsByPrefix, post, randomKey,
} from "./support/fleet-api";
import { together } from "./support/race";

/** Claims the job (the only one due under prefix) and releases it with status. */
async function finish(prefix: string, jobId: string, status: "done" | "failed"): Promise<void> {
  const res = await claimNext({ workerId: "finisher", probeKeyPrefix: prefix });
  const jobs = res.body.jobs as ClaimedJob[];
  expect(jobs.map((j) => j.job.id)).toEqual([jobId]);
  const released = await post("/api/fleet/release", { jobId, workerId: "finisher", status, leaseToken: jobs[0]!.leaseToken });
  expect(released.body).toMatchObject({ released: true, job: { status } });
}

describe("POST /api/fleet/enqueue", () => {
  it("1,000 jobs in one call: all created, distinct ids, answered in request order with probeKey echoed", async () => {
    const prefix = randomKey("qenq") + "/";
    // probe keys in no particular order, and two items sharing one (probe_key is not unique).
    const items: EnqueueItem[] = Array.from({ length: 1000 }, (_, i) => ({ probeKey: `${prefix}${randomBytes(3).toString("hex")}-${i}` }));
    items[11] = { probeKey: items[10]!.probeKey };
    const answer = await enqueueOk(items);
    expect(answer).toHaveLength(1000);
    answer.forEach((a, i) => expect(a, `item ${i}`).toEqual({ id: expect.any(String), probeKey: items[i]!.probeKey, created: true }));
    expect(new Set(answer.map((a) => a.id)).size).toBe(1000);

    const rows = new Map((await listJobsByPrefix(prefix)).map((r) => [r.id, r]));
    expect(rows.size).toBe(1000);
    answer.forEach((a, i) => {
      expect(rows.get(a.id), `item ${i}`).toMatchObject({
        probe_key: items[i]!.probeKey, status: "pending", enqueue_index: i, priority: 0, attempts: 0, max_attempts: 25,
        payload: null, unique_key: "", last_error: "", dead_lettered_at: "", claimed_by: "", version: 0,
      });
    });
  });

  const BAD_ITEMS: [string, (probeKey: string) => unknown, RegExp][] = [
    ["priority 1.5", (probeKey) => ({ probeKey, priority: 1.5 }), /priority/],
    ["priority 1001", (probeKey) => ({ probeKey, priority: 1001 }), /priority/],
    ["runAt without a zone", (probeKey) => ({ probeKey, runAt: "2026-12-01T09:30:00" }), /runAt/],
    ["runAt on Feb 30", (probeKey) => ({ probeKey, runAt: "2026-02-30T09:30:00Z" }), /runAt/],
    ["runAt and delaySeconds", (probeKey) => ({ probeKey, runAt: "2026-12-01T09:30:00Z", delaySeconds: 5 }), /runAt or delaySeconds/],
    ["delaySeconds -1", (probeKey) => ({ probeKey, delaySeconds: -1 }), /delaySeconds/],
    ["a payload over 1 MB", (probeKey) => ({ probeKey, payload: "x".repeat(1_048_577) }), /payload/],
    ["maxAttempts 1001", (probeKey) => ({ probeKey, maxAttempts: 1001 }), /maxAttempts/],
    ["maxAttempts -1", (probeKey) => ({ probeKey, maxAttempts: -1 }), /maxAttempts/],
    ["an empty probeKey", () => ({ probeKey: "" }), /probeKey/],
    ["a numeric uniqueKey", (probeKey) => ({ probeKey, uniqueKey: 7 }), /uniqueKey/],
    ["null", () => null, /object/],
  ];

  it.each(BAD_ITEMS)("a batch whose 500th item has %s is a 400 naming jobs[499], and writes nothing", async (_what, bad, message) => {
    const prefix = randomKey("qenq-bad") + "/";
    await enqueueOk([{ probeKey: `${prefix}seed` }]);
    expect(await countJobsByPrefix(prefix)).toBe(1);
    const items: unknown[] = Array.from({ length: 1000 }, (_, i) => ({ probeKey: `${prefix}${i}`, uniqueKey: `${prefix}u${i}` }));
    items[499] = bad(`${prefix}499`);
    const res = await enqueue(items);
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
    expect(Object.keys(res.body)).toEqual(["error"]);
    expect(res.body.error).toMatch(/^jobs\[499\]: /);
    expect(res.body.error).toMatch(message);
    expect(await countJobsByPrefix(prefix)).toBe(1);
    // The unique keys of the refused call were not taken either.
    expect((await enqueueOk([{ probeKey: `${prefix}again`, uniqueKey: `${prefix}u0` }]))[0]!.created).toBe(true);
  });

  it("20 concurrent enqueues of one uniqueKey create exactly one job, and all 20 answers carry its id", async () => {
    const prefix = randomKey("qenq-uk") + "/";
    const uniqueKey = randomKey("uk");
    const answers = await together(20, (i) => enqueue([{ probeKey: `${prefix}${i}`, uniqueKey }]));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const jobs = answers.map((a) => a.body.jobs[0] as { id: string; probeKey: string; created: boolean });
    expect(jobs.filter((j) => j.created)).toHaveLength(1);
    expect(new Set(jobs.map((j) => j.id)).size).toBe(1);
    jobs.forEach((j, i) => expect(j.probeKey).toBe(`${prefix}${i}`));
    const rows = await listJobsByPrefix(prefix);
    expect(rows.map((r) => r.id)).toEqual([jobs[0]!.id]);
    expect(rows[0]).toMatchObject({ unique_key: uniqueKey, status: "pending" });
  });

  it("a uniqueKey repeated within one call: the later items answer the first one's id and write nothing", async () => {
    const prefix = randomKey("qenq-uk1") + "/";
    const [a, b] = [randomKey("uka"), randomKey("ukb")];
    const answer = await enqueueOk([
      { probeKey: `${prefix}0`, uniqueKey: a },
      { probeKey: `${prefix}1`, uniqueKey: a },
      { probeKey: `${prefix}2`, uniqueKey: b },
      { probeKey: `${prefix}3` },
      { probeKey: `${prefix}4`, uniqueKey: b },
    ]);
    expect(answer.map((j) => j.created)).toEqual([true, false, true, true, false]);
    expect(answer[1]!.id).toBe(answer[0]!.id);
    expect(answer[4]!.id).toBe(answer[2]!.id);
    expect(answer.map((j) => j.probeKey)).toEqual([0, 1, 2, 3, 4].map((i) => `${prefix}${i}`));
    expect(await countJobsByPrefix(prefix)).toBe(3);
  });

  it("a uniqueKey held by a live job answers that job; freed by done, failed or cancelled, it can be enqueued again", async () => {
    const prefix = randomKey("qenq-free") + "/";
    const uniqueKey = randomKey("ukf");
    const enqueueKey = async (n: string) => (await enqueueOk([{ probeKey: `${prefix}${n}`, uniqueKey }]))[0]!;

    const first = await enqueueKey("1");
    expect(first.created).toBe(true);
    expect(await enqueueKey("1-dup")).toEqual({ id: first.id, probeKey: `${prefix}1-dup`, created: false });
    await finish(prefix, first.id, "done");

    const second = await enqueueKey("2");
    expect(second.created).toBe(true);
    expect(second.id).not.toBe(first.id);
    expect((await enqueueKey("2-dup")).id).toBe(second.id);
    expect((await post("/api/fleet/cancel", { jobId: second.id })).body).toMatchObject({ cancelled: true });

    const third = await enqueueKey("3");
    expect(third.created).toBe(true);
    expect(new Set([first.id, second.id, third.id]).size).toBe(3);
    await finish(prefix, third.id, "failed");

    const fourth = await enqueueKey("4");
    expect(fourth.created).toBe(true);
    expect(await countJobsByPrefix(prefix)).toBe(4);
    expect((await getQueueJob(first.id)).status).toBe("done");
    expect((await getQueueJob(second.id)).status).toBe("cancelled");
    expect((await getQueueJob(third.id)).status).toBe("failed");
    expect((await getQueueJob(fourth.id)).status).toBe("pending");
  });

  it("payloads round-trip exactly, as claim-next's job.payload and through the record API", async () => {
    const prefix = randomKey("qenq-pl") + "/";
    const payloads: unknown[] = [
      "123", "true", "null", "false", "0", "", " 123 ", "1e3", '{"a":1}', "[1,2]",
      123, 0, -1.5, 1e-7, true, false, [], {}, [null, "null", 0, ""],
      { a: { b: [1, "2", null, { c: "null", d: "true", e: "123" }] }, "": "empty key", "ü ñ": "✓" },
      "héllo wörld — 日本語 🚀 עברית \u200b end",
      'quote " backslash \\ slash / newline \n tab \t cr \r',
      "\u2028\u2029 line separators",
      { deep: { er: { and: { deeper: { still: ["🚀", { n: -0.25 }] } } } } },
    ];
    const answer = await enqueueOk(payloads.map((payload, i) => ({ probeKey: `${prefix}${String(i).padStart(2, "0")}`, payload })));
    const res = await claimNext({ workerId: "payloads", limit: 100, probeKeyPrefix: prefix });
    expect(res.status).toBe(200);
    const claimed = new Map((res.body.jobs as ClaimedJob[]).map((j) => [j.job.id, j.job]));
    expect(claimed.size).toBe(payloads.length);
    for (let i = 0; i < payloads.length; i++) {
      const id = answer[i]!.id;
      expect(claimed.get(id)!.payload, `claim-next payload ${i}: ${JSON.stringify(payloads[i])}`).toStrictEqual(payloads[i]);
      expect((await getQueueJob(id)).payload, `stored payload ${i}: ${JSON.stringify(payloads[i])}`).toStrictEqual(payloads[i]);
    }
  });
});
