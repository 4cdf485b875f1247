// A `complete` refused for its size (413, or 0.22's 400 to a body over
// MAX_REQUEST_BODY_BYTES) is split in halves and sent again, down to single
// items; a single item no `complete` can carry is sent as one plain release;
// only when that fails too is it given up, with an `error` event saying why.
// A 400 to a body of an ordinary size is a malformed item, not a size: each
// item goes on its own at once (no halving).
import { describe, expect, it, vi } from "vitest";
import { CompletionQueue, type FinishedRelease } from "../../src/client/completion-queue";
import { FleetHttpError } from "../../src/client/errors";
import type { FleetEvents } from "../../src/client/events";
import { Worker } from "../../src/client/worker";
import { MAX_REQUEST_BODY_BYTES, MAX_RESULT_BYTES } from "../../src/lib/queue";
import { settle, useFakeClock, wait } from "./support/fake-fleet";
import { resultOf, SizeLimitedFleet, type BodyLimits } from "./support/size-limited-fleet";

useFakeClock();

const KB = 1_000;

/** Runs jobs whose handlers return results of these sizes (bytes of JSON), all finishing together. */
async function runJobs(limits: BodyLimits, resultBytes: number[]) {
  const fake = new SizeLimitedFleet(limits);
  const ids = resultBytes.map(() => fake.add().id);
  const errors: Array<FleetEvents["error"][0]> = [];
  const released: string[] = [];
  const worker = new Worker(fake, {
    workerId: "w1", concurrency: resultBytes.length, leaseSeconds: 30, pollInterval: 60_000,
    handler: async (job, signal) => {
      await wait(100, signal);
      return resultOf(job.id, resultBytes[ids.indexOf(job.id)]!);
    },
  });
  worker.on("error", (e) => errors.push(e));
  worker.on("released", (e) => released.push(e.jobId));
  worker.start();
  await vi.advanceTimersByTimeAsync(200);
  await settle(worker.stop(), vi);
  const offered = fake.bodies.map((b) => `${b.op}(${b.jobIds.map((id) => ids.indexOf(id)).join(",")})${b.refused ? " refused" : ""}`);
  return { fake, ids, errors, released, offered };
}

describe("complete refused as too large", () => {
  it("413 (a proxy taking 2 MB): the call of 6 is split into two of 3, which go through", async () => {
    const { fake, ids, errors, offered } = await runJobs({ complete: 2_000 * KB, release: 2_000 * KB, answer: "413" }, Array(6).fill(600 * KB));
    expect(offered).toEqual(["complete(0,1,2,3,4,5) refused", "complete(0,1,2)", "complete(3,4,5)"]);
    expect(ids.every((id) => fake.row(id).status === "done" && (fake.results.get(id) as { jobId: string }).jobId === id)).toBe(true);
    expect(errors.map((e) => [e.op, (e.error as FleetHttpError).status])).toEqual([["complete", 413]]);
  });

  it("down to single items: the small ones go; one over every limit is tried once as a release, then given up saying why", async () => {
    const { fake, ids, errors, released, offered } = await runJobs(
      { complete: 500 * KB, release: 500 * KB, answer: "413" }, [10 * KB, 600 * KB, 10 * KB, 10 * KB]);
    expect(offered).toEqual([
      "complete(0,1,2,3) refused",
      "complete(0,1) refused", "complete(2,3)",
      "complete(0)", "complete(1) refused",
      "release(1) refused",
    ]);
    expect([0, 2, 3].map((i) => fake.row(ids[i]!).status)).toEqual(["done", "done", "done"]);
    expect(released.sort()).toEqual([ids[0], ids[2], ids[3]].sort());
    // The big one: still held (its lease lapses and it runs again), and the last event says why.
    expect(fake.row(ids[1]!).status).toBe("claimed");
    const last = errors.at(-1)!;
    expect(last.op).toBe("release");
    expect(last.jobId).toBe(ids[1]);
    expect(last.error.message).toContain(`gave up the done release of job ${ids[1]}`);
    expect(last.error.message).toContain("HTTP 413");
    expect(last.error.message).toContain("the release alone failed");
    expect(last.error.message).toContain("will run again");
  });

  it("a single item no complete can carry is rescued by a plain release when that one is taken", async () => {
    const { fake, ids, errors, offered } = await runJobs(
      { complete: 500 * KB, release: MAX_REQUEST_BODY_BYTES, answer: "413" }, [10 * KB, 600 * KB]);
    expect(offered).toEqual(["complete(0,1) refused", "complete(0)", "complete(1) refused", "release(1)"]);
    expect(ids.map((id) => fake.row(id).status)).toEqual(["done", "done"]);
    expect((fake.results.get(ids[1]!) as { jobId: string }).jobId).toBe(ids[1]);
    expect(errors.every((e) => !e.error.message.includes("gave up"))).toBe(true);
  });

  it("0.22's 400 to a body over MAX_REQUEST_BODY_BYTES is split like a 413 (a call cut by items only, as before)", async () => {
    const fake = new SizeLimitedFleet({ complete: MAX_REQUEST_BODY_BYTES, release: MAX_REQUEST_BODY_BYTES, answer: "0.22" });
    const releases = await heldReleases(fake, 40);
    const queue = new CompletionQueue({
      workerId: "w1", client: fake, reportRetryMs: 0, onError: () => undefined, maxBodyBytes: Number.POSITIVE_INFINITY,
    });
    const answers = await settle(Promise.all(releases.map((r) => queue.release(r))), vi);
    expect(fake.bodies.map((b) => [b.op, b.jobIds.length, b.refused])).toEqual([
      ["complete", 40, true], ["complete", 20, false], ["complete", 20, false],
    ]);
    expect(fake.bodies[0]!.bytes).toBeGreaterThan(MAX_REQUEST_BODY_BYTES);
    expect(answers.every((a) => a?.value.released === true)).toBe(true);
  }, 30_000); // 40 MiB of JSON, written and read a few times

  it("a 400 to an ordinary body is a malformed item, not a size: each item is sent alone at once, no halving", async () => {
    const fake = new SizeLimitedFleet({ complete: MAX_REQUEST_BODY_BYTES, release: MAX_REQUEST_BODY_BYTES, answer: "413" });
    const releases = await heldReleases(fake, 4, 10 * KB);
    vi.spyOn(fake, "complete").mockRejectedValueOnce(new FleetHttpError("complete", 400, "releases[2]: error must be a string when given", {}));
    const queue = new CompletionQueue({ workerId: "w1", client: fake, reportRetryMs: 0, onError: () => undefined });
    const answers = await settle(Promise.all(releases.map((r) => queue.release(r))), vi);
    expect(vi.mocked(fake.complete).mock.calls).toHaveLength(1);
    expect(fake.callsOf("release").map((c) => c.jobId)).toEqual(releases.map((r) => r.jobId));
    expect(answers.every((a) => a?.value.released === true)).toBe(true);
  });
});

/** `n` jobs claimed by w1 on the fake, as releases done with a result of `bytes` (default: MAX_RESULT_BYTES). */
async function heldReleases(fake: SizeLimitedFleet, n: number, bytes = MAX_RESULT_BYTES): Promise<FinishedRelease[]> {
  for (let i = 0; i < n; i++) fake.add();
  const held = await fake.claimNext({ workerId: "w1", leaseSeconds: 30, limit: n });
  return held.map((h) => ({
    jobId: h.job.id, leaseToken: h.leaseToken, status: "done" as const, deadline: Date.now() + 30_000,
    fields: { result: resultOf(h.job.id, bytes) },
  }));
}
