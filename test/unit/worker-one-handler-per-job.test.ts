// A Worker never runs two handlers for one job, whatever claims the server
// answers: an alreadyHeld claim of a running job starts nothing; a job won again
// while its lost run is still winding down runs again only once that run has
// ended; a fresh claim of a job it is running (the server's clock ahead of the
// worker's) carries the running handler on under the new lease.
// (Renews and releases are read per job with fake.renewsSent() and
// fake.releasesSent(): items of heartbeat/complete on a server with them.)
import { describe, expect, it, vi } from "vitest";
import { Worker, type WorkerJob } from "../../src/client/worker";
import { FakeFleet, pbDateIn, settle, useFakeClock, wait } from "./support/fake-fleet";

useFakeClock();

/** Counts handlers of one job running at once. */
function overlapMeter() {
  let running = 0;
  const meter = { peak: 0, starts: 0, enter: () => {}, leave: () => {} };
  meter.enter = () => {
    meter.starts++;
    meter.peak = Math.max(meter.peak, ++running);
  };
  meter.leave = () => {
    running--;
  };
  return meter;
}

describe("Worker: one handler per job", () => {
  it("an alreadyHeld claim of the job its handler is running starts no second handler, and is not polled for in a loop", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const claimNext = fake.claimNext.bind(fake);
    let polls = 0;
    // Once the job is held, every poll gets it again as alreadyHeld (as the
    // list-then-claim fallback does when its list is older than the claim).
    vi.spyOn(fake, "claimNext").mockImplementation(async (o) => {
      // A poll that never yields to the timers would hang the test: end it instead.
      if (++polls > 200) throw new Error("polled too often");
      if (fake.row(id).status === "pending") return claimNext(o);
      const again = await fake.claim(id, o.workerId, o.leaseSeconds);
      return again.claimed ? [again] : [];
    });
    const meter = overlapMeter();
    const worker = new Worker(fake, {
      workerId: "w1", concurrency: 2, leaseSeconds: 30, pollInterval: 100, maxPollInterval: 100,
      handler: async (_job, signal) => {
        meter.enter();
        try {
          await wait(2_000, signal);
        } finally {
          meter.leave();
        }
        return "once";
      },
    }).start();
    await vi.advanceTimersByTimeAsync(2_500);
    await settle(worker.stop(), vi);

    expect(meter).toMatchObject({ starts: 1, peak: 1 });
    expect(fake.callsOf("claim").some((c) => c.jobId === id)).toBe(true);
    expect(polls).toBeLessThan(60);
    expect(fake.releasesSent()).toHaveLength(1);
    expect(fake.row(id)).toMatchObject({ status: "done", claimed_by: "w1" });
    expect(fake.results.get(id)).toBe("once");
  });

  it("a job won again while its lost run is still winding down runs again only after that run has ended", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const runs: Array<{ start: number; end: number; leaseToken: string | undefined }> = [];
    const meter = overlapMeter();
    const worker = new Worker(fake, {
      workerId: "w1", concurrency: 2, leaseSeconds: 3, pollInterval: 100, maxPollInterval: 100,
      handler: async (job) => {
        const run = { start: Date.now(), end: 0, leaseToken: job.leaseToken };
        runs.push(run);
        meter.enter();
        try {
          // The first run takes 5 s to notice its abort (say, a probe that cannot be cut short).
          await wait(runs.length === 1 ? 5_000 : 500);
        } finally {
          meter.leave();
          run.end = Date.now();
        }
        return `run ${runs.length}`;
      },
    }).start();
    await vi.advanceTimersByTimeAsync(500);
    const firstToken = fake.row(id).lease_token;
    // Another worker takes the job on a 1 s lease and dies: w1's next renew (at
    // 1 s) is refused, and from 1.5 s w1's idle slot can steal the job back.
    Object.assign(fake.row(id), { claimed_by: "thief", lease_token: "theirs", lease_expires_at: pbDateIn(1_000) });
    await vi.advanceTimersByTimeAsync(2_000);
    const secondToken = fake.row(id).lease_token;
    expect(fake.row(id).claimed_by).toBe("w1");
    expect(secondToken).not.toBe(firstToken);
    expect(runs).toHaveLength(1);

    await vi.advanceTimersByTimeAsync(4_000);
    await settle(worker.stop(), vi);
    expect(meter).toMatchObject({ starts: 2, peak: 1 });
    expect(runs[1]!.start).toBeGreaterThanOrEqual(runs[0]!.end);
    expect(runs[1]!.leaseToken).toBe(secondToken);
    // The waiting claim's lease was kept alive until its handler ran and reported under it.
    expect(fake.releasesSent()).toMatchObject([{ jobId: id, status: "done", leaseToken: secondToken }]);
    expect(fake.row(id)).toMatchObject({ status: "done", claimed_by: "w1" });
    expect(fake.results.get(id)).toBe("run 2");
  });

  it("a fresh claim of a job whose handler is running (the server saw the lease lapse first) carries that handler on under the new lease", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const meter = overlapMeter();
    let seen: WorkerJob | null = null;
    let aborted = false;
    const worker = new Worker(fake, {
      workerId: "w1", concurrency: 2, leaseSeconds: 3, pollInterval: 100, maxPollInterval: 100,
      handler: async (job, signal) => {
        seen = job;
        meter.enter();
        signal.addEventListener("abort", () => {
          aborted = true;
        });
        try {
          await wait(2_500, signal);
        } finally {
          meter.leave();
        }
        return "finished";
      },
    }).start();
    await vi.advanceTimersByTimeAsync(1_200);
    const firstToken = fake.row(id).lease_token;
    // By the server's clock (ahead of the worker's) the lease has passed: the
    // worker's idle slot claims the job again, under a new token.
    Object.assign(fake.row(id), { lease_expires_at: pbDateIn(-1) });
    await vi.advanceTimersByTimeAsync(2_000);
    await settle(worker.stop(), vi);

    const newToken = fake.row(id).lease_token;
    expect(newToken).not.toBe(firstToken);
    expect(meter).toMatchObject({ starts: 1, peak: 1 });
    expect(aborted).toBe(false);
    expect(seen!).toMatchObject({ leaseToken: newToken, alreadyHeld: false });
    expect(fake.renewsSent().at(-1)).toMatchObject({ leaseToken: newToken });
    expect(fake.releasesSent()).toMatchObject([{ status: "done", leaseToken: newToken }]);
    expect(fake.row(id)).toMatchObject({ status: "done", claimed_by: "w1" });
    expect(fake.results.get(id)).toBe("finished");
  });

  // (Was one test, with a slow renew: on a server with the heartbeat it is the heartbeat that is slow.)
  it.each([["heartbeat"], ["renew"]] as const)("a renew sent under the lease a new claim replaced, and refused for it, does not abort the handler (%s)", async (op) => {
    const fake = new FakeFleet();
    fake.batchCalls = op === "heartbeat";
    const { id } = fake.add();
    const renew = fake.renew.bind(fake);
    const heartbeat = fake.heartbeat.bind(fake);
    // A slow network: each renew is decided by the server 400 ms after it was sent.
    if (op === "renew") {
      vi.spyOn(fake, "renew").mockImplementation(async (...args) => {
        await wait(400);
        return renew(...args);
      });
    } else {
      vi.spyOn(fake, "heartbeat").mockImplementation(async (...args) => {
        await wait(400);
        return heartbeat(...args);
      });
    }
    let aborted = false;
    const worker = new Worker(fake, {
      workerId: "w1", concurrency: 2, leaseSeconds: 3, pollInterval: 100, maxPollInterval: 100,
      handler: async (_job, signal) => {
        signal.addEventListener("abort", () => {
          aborted = true;
        });
        await wait(2_500, signal);
        return "finished";
      },
    }).start();
    await vi.advanceTimersByTimeAsync(1_050); // the first renew is on the wire, under the first token
    const firstToken = fake.row(id).lease_token;
    Object.assign(fake.row(id), { lease_expires_at: pbDateIn(-1) }); // the server's clock is ahead
    await vi.advanceTimersByTimeAsync(3_000);
    await settle(worker.stop(), vi);

    const newToken = fake.row(id).lease_token;
    expect(newToken).not.toBe(firstToken);
    // That first renew reached the server after the new claim: refused (stale token), and ignored.
    expect(fake.renewsSent()[0]).toMatchObject({ op, leaseToken: firstToken });
    expect(aborted).toBe(false);
    expect(fake.releasesSent()).toMatchObject([{ status: "done", leaseToken: newToken }]);
    expect(fake.results.get(id)).toBe("finished");
  });
});
