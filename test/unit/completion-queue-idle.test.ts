// The completion queue's natural batching: with no `complete` call on the
// wire a release goes at once (COMPLETE_FLUSH_DELAY_MS: the end of the
// current turn, not a fixed 10 ms); while a call is on the wire, the releases
// that finish meanwhile gather and go together as soon as it has answered
// (or after COMPLETE_BUSY_MAX_WAIT_MS, should it be slow); full calls still
// go at once, and nothing is dropped.
import { describe, expect, it, vi } from "vitest";
import { COMPLETE_BUSY_MAX_WAIT_MS, COMPLETE_FLUSH_DELAY_MS, CompletionQueue, type FinishedRelease } from "../../src/client/completion-queue";
import type { FleetApi } from "../../src/client/fleet-client";
import type { CompleteItem, CompleteResponse } from "../../src/lib/types";
import { Worker } from "../../src/client/worker";
import { FakeFleet, settle, useFakeClock, wait } from "./support/fake-fleet";

useFakeClock();

/** A client whose `complete` answers after `latencyMs` (fake time), every item released; the calls as sent. */
function slowClient(latencyMs: number) {
  const calls: Array<{ at: number; jobIds: string[]; answeredAt?: number }> = [];
  const client: Pick<FleetApi, "complete" | "release" | "timeoutMs"> = {
    timeoutMs: 10_000,
    async complete(_workerId: string, releases: readonly CompleteItem[]): Promise<CompleteResponse> {
      const call: { at: number; jobIds: string[]; answeredAt?: number } = { at: Date.now(), jobIds: releases.map((r) => r.jobId) };
      calls.push(call);
      await wait(latencyMs);
      call.answeredAt = Date.now();
      return {
        results: releases.map((r) => ({
          jobId: r.jobId, released: true as const,
          job: { id: r.jobId, probe_key: r.jobId, status: "done" as const, claimed_by: "w1", lease_expires_at: "", version: 2 },
        })),
      };
    },
    async release() {
      throw new Error("not used");
    },
  };
  return { client, calls };
}

const release = (jobId: string): FinishedRelease => ({
  jobId, leaseToken: `tok-${jobId}`, status: "done", fields: { result: { jobId } }, deadline: Date.now() + 30_000,
});

describe("completion queue: natural batching", () => {
  it(`an idle pipe sends a release at once (within ${COMPLETE_FLUSH_DELAY_MS} ms, not the 10 ms of before)`, async () => {
    expect(COMPLETE_FLUSH_DELAY_MS).toBeLessThanOrEqual(1);
    const { client, calls } = slowClient(5);
    const queue = new CompletionQueue({ workerId: "w1", client, reportRetryMs: 0, onError: (e) => { throw e.error; } });
    const start = Date.now();
    const answer = queue.release(release("a"));
    await vi.advanceTimersByTimeAsync(COMPLETE_FLUSH_DELAY_MS);
    expect(calls.map((c) => [c.at - start, c.jobIds])).toEqual([[COMPLETE_FLUSH_DELAY_MS, ["a"]]]);
    expect((await settle(answer, vi))?.value.released).toBe(true);
  });

  it("releases of the same turn share a call; those that join while it is on the wire go together the moment it answers", async () => {
    const { client, calls } = slowClient(50);
    const queue = new CompletionQueue({ workerId: "w1", client, reportRetryMs: 0, onError: (e) => { throw e.error; } });
    const start = Date.now();
    const answers = [queue.release(release("a")), queue.release(release("b"))];
    await vi.advanceTimersByTimeAsync(10);
    // While [a, b] is on the wire (50 ms), five more finish, 5 ms apart.
    for (const id of ["c", "d", "e", "f", "g"]) {
      answers.push(queue.release(release(id)));
      await vi.advanceTimersByTimeAsync(5);
    }
    const all = await settle(Promise.all(answers), vi);
    expect(all.every((a) => a?.value.released === true)).toBe(true);
    expect(calls.map((c) => c.jobIds)).toEqual([["a", "b"], ["c", "d", "e", "f", "g"]]);
    // The second call went right after the first answered, not after a fixed delay.
    expect(calls[0]!.at - start).toBe(COMPLETE_FLUSH_DELAY_MS);
    expect(calls[1]!.at - calls[0]!.answeredAt!).toBeLessThanOrEqual(COMPLETE_FLUSH_DELAY_MS);
  });

  it("behind a slow call, a release whose lease ends sooner than COMPLETE_BUSY_MAX_WAIT_MS goes before its lease does", async () => {
    const { client, calls } = slowClient(5_000);
    const queue = new CompletionQueue({ workerId: "w1", client, reportRetryMs: 0, onError: (e) => { throw e.error; } });
    const answers = [queue.release(release("a"))];
    await vi.advanceTimersByTimeAsync(100);
    // 400 ms of lease left: past the urgent margin (so it may wait for company), short of the busy wait.
    const queuedAt = Date.now();
    const short: FinishedRelease = { ...release("b"), deadline: queuedAt + 400 };
    answers.push(queue.release(short));
    await vi.advanceTimersByTimeAsync(COMPLETE_BUSY_MAX_WAIT_MS);
    expect(calls.map((c) => c.jobIds)).toEqual([["a"], ["b"]]);
    expect(calls[1]!.at).toBeLessThan(short.deadline);
    expect(calls[1]!.at - queuedAt).toBeLessThan(COMPLETE_BUSY_MAX_WAIT_MS);
    await settle(Promise.all(answers), vi);
  });

  it(`behind a slow call, releases wait at most COMPLETE_BUSY_MAX_WAIT_MS (${COMPLETE_BUSY_MAX_WAIT_MS} ms), then go in a call of their own`, async () => {
    const { client, calls } = slowClient(5_000);
    const queue = new CompletionQueue({ workerId: "w1", client, reportRetryMs: 0, onError: (e) => { throw e.error; } });
    const start = Date.now();
    const answers = [queue.release(release("a"))];
    await vi.advanceTimersByTimeAsync(100);
    const joinedAt = Date.now();
    answers.push(queue.release(release("b")));
    await vi.advanceTimersByTimeAsync(COMPLETE_BUSY_MAX_WAIT_MS);
    expect(calls.map((c) => [c.at - start, c.jobIds])).toEqual([
      [COMPLETE_FLUSH_DELAY_MS, ["a"]], [joinedAt - start + COMPLETE_BUSY_MAX_WAIT_MS, ["b"]],
    ]);
    expect((await settle(Promise.all(answers), vi)).every((a) => a?.value.released === true)).toBe(true);
  });

  it("a full call still goes at once, whatever is on the wire; no release is dropped", async () => {
    const { client, calls } = slowClient(200);
    const queue = new CompletionQueue({ workerId: "w1", client, reportRetryMs: 0, onError: (e) => { throw e.error; } });
    const answers = [queue.release(release("first"))];
    await vi.advanceTimersByTimeAsync(10);
    for (let i = 0; i < 250; i++) answers.push(queue.release(release(`j${i}`)));
    const all = await settle(Promise.all(answers), vi);
    expect(all.every((a) => a?.value.released === true)).toBe(true);
    expect(calls.map((c) => c.jobIds.length)).toEqual([1, 100, 100, 50]);
    expect(calls[1]!.at).toBe(calls[2]!.at); // the full ones together, at once
    expect(calls.flatMap((c) => c.jobIds).sort()).toEqual(["first", ...Array.from({ length: 250 }, (_, i) => `j${i}`)].sort());
  });
});

describe("Worker reports on an idle pipe", () => {
  it("one job's release goes within COMPLETE_FLUSH_DELAY_MS of its handler's return, not 10 ms later", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const start = Date.now();
    const worker = new Worker(fake, {
      workerId: "w1", leaseSeconds: 30, pollInterval: 60_000, handler: (_job, signal) => wait(200, signal).then(() => "ok"),
    }).start();
    await vi.advanceTimersByTimeAsync(200 + COMPLETE_FLUSH_DELAY_MS);
    expect(fake.releasesSent().map((c) => [c.jobId, c.at - start])).toEqual([[id, 200 + COMPLETE_FLUSH_DELAY_MS]]);
    await settle(worker.stop(), vi);
    expect(fake.row(id).status).toBe("done");
  });
});
