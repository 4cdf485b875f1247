// The completion queue cuts `complete` calls by bytes as well as by items: a
// call's body, measured as FleetClient sends it, stays within
// MAX_BATCH_BODY_BYTES (4 MiB), so 40 results of about 1 MiB finishing
// together go in calls of 3, each far below what PocketBase reads
// (MAX_REQUEST_BODY_BYTES), instead of one body of 40 MiB; a full call goes
// at once, without waiting for company.
import { describe, expect, it, vi } from "vitest";
import { CompletionQueue, COMPLETE_FLUSH_DELAY_MS, type FinishedRelease } from "../../src/client/completion-queue";
import type { FleetEvents } from "../../src/client/events";
import { FleetClient } from "../../src/client/fleet-client";
import { Worker } from "../../src/client/worker";
import { MAX_BATCH_BODY_BYTES, MAX_REQUEST_BODY_BYTES, MAX_RESULT_BYTES, jsonByteLength } from "../../src/lib/queue";
import { settle, useFakeClock, wait } from "./support/fake-fleet";
import { resultOf, SizeLimitedFleet } from "./support/size-limited-fleet";

useFakeClock();

describe("complete calls cut by bytes", () => {
  it("40 results just under MAX_RESULT_BYTES finishing together: calls of at most MAX_BATCH_BODY_BYTES (3 items), every result stored once", async () => {
    const fake = new SizeLimitedFleet({ complete: MAX_REQUEST_BODY_BYTES, release: MAX_REQUEST_BODY_BYTES, answer: "413" });
    for (let i = 0; i < 40; i++) fake.add();
    const runs = new Map<string, number>();
    const errors: Array<FleetEvents["error"][0]> = [];
    const start = Date.now();
    const worker = new Worker(fake, {
      workerId: "w1", concurrency: 40, leaseSeconds: 30, pollInterval: 60_000,
      handler: async (job, signal) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        await wait(500, signal);
        return resultOf(job.id, MAX_RESULT_BYTES);
      },
    });
    worker.on("error", (e) => errors.push(e));
    worker.start();
    await vi.advanceTimersByTimeAsync(600);
    await settle(worker.stop(), vi);

    expect(jsonByteLength(resultOf("job1", MAX_RESULT_BYTES))).toBe(MAX_RESULT_BYTES);
    const completes = fake.callsOf("complete");
    // 4 items of 1 MiB would be over 4 MiB with the envelope: 13 calls of 3 and the last one alone.
    expect(completes.map((c) => c.items!.length)).toEqual([...Array(13).fill(3), 1]);
    expect(fake.bodies.every((b) => b.op === "complete" && !b.refused && b.bytes <= MAX_BATCH_BODY_BYTES)).toBe(true);
    // Full calls go as they fill; the last waits its 10 ms for company.
    expect(completes.map((c) => c.at - start)).toEqual([...Array(13).fill(500), 500 + COMPLETE_FLUSH_DELAY_MS]);
    expect(fake.callsOf("release")).toEqual([]);
    // Each job in one call, and its result stored: no handler ran twice.
    expect(completes.flatMap((c) => c.items!.map((i) => i.jobId)).sort()).toEqual([...fake.rows.keys()].sort());
    expect([...runs.values()]).toEqual(Array(40).fill(1));
    for (const row of fake.rows.values()) {
      expect(row.status).toBe("done");
      expect((fake.results.get(row.id) as { jobId: string }).jobId).toBe(row.id);
    }
    expect(errors).toEqual([]);
  }, 30_000); // 40 MiB of JSON, written and read a few times

  it("the budget is the body FleetClient actually sends: each call within it, and the next item would not have fitted", async () => {
    const BUDGET = 10_000;
    const bodies: string[] = [];
    const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const path = new URL(String(input)).pathname;
      if (path.endsWith("auth-with-password")) return Response.json({ token: "t" });
      const body = String(init?.body);
      bodies.push(body);
      const { releases } = JSON.parse(body) as { releases: Array<{ jobId: string }> };
      return Response.json({ results: releases.map(({ jobId }) => ({ jobId, released: true, job: { id: jobId, status: "done" } })) });
    }) as typeof fetch;
    const client = new FleetClient({ url: "http://fleet.test", email: "a@x.io", password: "secret123", fetch: fetchImpl });
    const queue = new CompletionQueue({ workerId: "w1", client, reportRetryMs: 0, onError: (e) => { throw e.error; }, maxBodyBytes: BUDGET });
    // Results of varied sizes, with characters that take more than a byte in UTF-8 or as JSON.
    const releases: FinishedRelease[] = Array.from({ length: 30 }, (_, i) => ({
      jobId: `job${i}`, leaseToken: `tok${i}`, status: "done", deadline: Date.now() + 60_000,
      fields: { result: { text: "é\n\"".repeat(100 + ((i * 397) % 900)) } },
    }));
    const answers = await settle(Promise.all(releases.map((r) => queue.release(r))), vi);

    expect(answers.every((a) => a !== null && a.value.released)).toBe(true);
    const sizes = bodies.map((b) => Buffer.byteLength(b));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(BUDGET);
    const sent = bodies.map((b) => (JSON.parse(b) as { releases: Array<{ jobId: string }> }).releases.map((r) => r.jobId));
    expect(sent.flat()).toEqual(releases.map((r) => r.jobId));
    // Tight: every call but the last was cut because its next item would not have fitted.
    for (let i = 0; i < bodies.length - 1; i++) {
      const next = JSON.parse(bodies[i + 1]!).releases[0];
      expect(sizes[i]! + 1 + jsonByteLength(next), `call ${i}`).toBeGreaterThan(BUDGET);
    }
    expect(bodies.length).toBeGreaterThan(5);
  });
});
