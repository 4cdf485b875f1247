// job.progress() is stored soon, not only at the next renew (a third of the
// lease away): a value goes out within PROGRESS_FLUSH_MS of being recorded,
// values recorded close together share one heartbeat (the latest wins), a
// Worker sends at most one progress heartbeat per PROGRESS_FLUSH_MS whatever
// its handlers do, the regular tick carries progress when it comes first (no
// extra call), and progress recorded while that lease's renew is on the wire
// goes right after its answer.
import { describe, expect, it, vi } from "vitest";
import type { FleetEvents } from "../../src/client/events";
import { PROGRESS_FLUSH_MS, Worker, type WorkerOptions } from "../../src/client/worker";
import { FakeFleet, settle, useFakeClock, wait } from "./support/fake-fleet";

useFakeClock();

/** A time since `start`, to the 10 ms (a timer due "at once" fires in the next millisecond). */
const after = (start: number, at: number) => Math.round((at - start) / 10) * 10;

function startWorker(fake: FakeFleet, opts: Partial<WorkerOptions> & Pick<WorkerOptions, "handler">) {
  const errors: Array<FleetEvents["error"][0]> = [];
  const worker = new Worker(fake, { workerId: "w1", leaseSeconds: 30, pollInterval: 60_000, ...opts });
  worker.on("error", (e) => errors.push(e));
  worker.start();
  return { worker, errors };
}

describe("Worker progress flush", () => {
  it(`a value is stored within ${PROGRESS_FLUSH_MS} ms, not at the next renew (10 s away with a 30 s lease); close values share one call`, async () => {
    expect(PROGRESS_FLUSH_MS).toBe(1_000);
    const fake = new FakeFleet();
    const { id } = fake.add();
    const start = Date.now();
    const { worker, errors } = startWorker(fake, {
      handler: async (job, signal) => {
        job.progress({ step: 1 });
        await wait(300, signal);
        job.progress({ step: 2 });
        await wait(300, signal);
        job.progress({ step: 3 }); // replaces step 2, not sent yet
        await wait(5_000, signal);
        return "ok";
      },
    });
    await vi.advanceTimersByTimeAsync(50);
    expect(fake.progressOf(id)).toEqual({ step: 1 });
    await vi.advanceTimersByTimeAsync(900); // t = 950
    expect(fake.progressOf(id)).toEqual({ step: 1 });
    await vi.advanceTimersByTimeAsync(100); // t = 1050
    expect(fake.progressOf(id)).toEqual({ step: 3 });
    await vi.advanceTimersByTimeAsync(5_000);
    await settle(worker.stop(), vi);

    const renews = fake.renewsSent();
    expect(renews.map((r) => [after(start, r.at), r.progress])).toEqual([[0, { step: 1 }], [PROGRESS_FLUSH_MS, { step: 3 }]]);
    // They are renews like any other: each carries the claim's token, and the lease moves on.
    expect(renews.every((r) => r.leaseToken === fake.row(id).lease_token && r.leaseSeconds === 30)).toBe(true);
    expect(fake.row(id).status).toBe("done");
    expect(errors).toEqual([]);
  });

  it(`the cost: 10 handlers recording progress every 50 ms for 5 s get one heartbeat call per ${PROGRESS_FLUSH_MS} ms, each carrying all 10 latest values`, async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < 10; i++) fake.add();
    const start = Date.now();
    const { worker } = startWorker(fake, {
      concurrency: 10,
      handler: async (job, signal) => {
        for (let n = 1; n <= 100; n++) {
          job.progress({ job: job.id, n });
          await wait(50, signal);
        }
        return "ok";
      },
    });
    await vi.advanceTimersByTimeAsync(5_100);
    await settle(worker.stop(), vi);

    const heartbeats = fake.callsOf("heartbeat");
    // 1 000 progress() calls; 6 heartbeat calls (the last as the handlers return).
    expect(heartbeats.map((c) => after(start, c.at))).toEqual([0, 1_000, 2_000, 3_000, 4_000, 5_000]);
    expect(heartbeats.every((c) => c.items!.length === 10)).toBe(true);
    // Each carries each job's latest value at its send (n = 20 was recorded at 950 ms), the last one n = 100.
    expect(heartbeats.map((c) => (c.items![0] as { progress: { n: number } }).progress.n)).toEqual([1, 20, 40, 60, 80, 100]);
    expect(fake.callsOf("renew")).toEqual([]);
    expect([...fake.rows.values()].map((r) => fake.progressOf(r.id))).toEqual(
      [...fake.rows.keys()].map((job) => ({ job, n: 100 })));
  });

  it("when the regular tick comes first it carries the progress: no extra call (lease 3 s, a tick every second)", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const start = Date.now();
    const { worker } = startWorker(fake, {
      leaseSeconds: 3,
      handler: async (job, signal) => {
        job.progress({ step: 1 }); // t = 0: at once
        await wait(400, signal);
        job.progress({ step: 2 }); // a progress call would be due at 1 000: the tick is, too
        await wait(2_100, signal);
        job.progress({ step: 3 }); // t = 2 500: the last progress call was at 0, so at once
        await wait(1_000, signal);
        return "ok";
      },
    });
    await vi.advanceTimersByTimeAsync(3_600);
    await settle(worker.stop(), vi);

    expect(fake.renewsSent().map((r) => [after(start, r.at), r.progress])).toEqual([
      [0, { step: 1 }], [1_000, { step: 2 }], [2_000, undefined], [2_500, { step: 3 }], [3_000, undefined],
    ]);
    expect(fake.progressOf(id)).toEqual({ step: 3 });
  });

  it("progress recorded while its lease's renew is on the wire goes right after that renew answers", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const heartbeat = fake.heartbeat.bind(fake);
    vi.spyOn(fake, "heartbeat").mockImplementation(async (...args) => {
      const answer = await heartbeat(...args);
      await wait(1_500); // a slow answer
      return answer;
    });
    const start = Date.now();
    const { worker } = startWorker(fake, {
      handler: async (job, signal) => {
        job.progress({ step: 1 });
        await wait(100, signal);
        job.progress({ step: 2 }); // its heartbeat would be due at 1 000, when step 1's is still on the wire
        await wait(3_000, signal);
        return "ok";
      },
    });
    await vi.advanceTimersByTimeAsync(3_500);
    await settle(worker.stop(), vi);

    expect(fake.renewsSent().map((r) => [after(start, r.at), r.progress])).toEqual([[0, { step: 1 }], [1_500, { step: 2 }]]);
    expect(fake.progressOf(id)).toEqual({ step: 2 });
  });
});
