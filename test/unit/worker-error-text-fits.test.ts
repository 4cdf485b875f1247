// A handler's error text is cut to what the server takes (MAX_ERROR_BYTES of
// UTF-8, measured as the server measures it) before it is sent, between code
// points: a huge stack trace never fails the release, nor the results of the
// other jobs in the same `complete`. One that fits is sent whole, however
// many characters JSON would escape; and a server without the queue, which
// gets the error as the result `{ error }`, gets it cut the same way.
import { describe, expect, it, vi } from "vitest";
import { PermanentJobError } from "../../src/client/errors";
import { Worker, type WorkerOptions } from "../../src/client/worker";
import { MAX_ERROR_BYTES } from "../../src/lib/queue";
import { FakeFleet, settle, useFakeClock } from "./support/fake-fleet";

useFakeClock();

async function run(fake: FakeFleet, handler: WorkerOptions["handler"], concurrency = 1): Promise<void> {
  const worker = new Worker(fake, { workerId: "w1", leaseSeconds: 30, pollInterval: 60_000, concurrency, handler });
  worker.start();
  await vi.advanceTimersByTimeAsync(100);
  await settle(worker.stop(), vi);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe("a handler's error text", () => {
  it("a 1.2 MB stack trace of 4-byte characters is cut between code points to fit; the other job's result in the call is stored", async () => {
    const fake = new FakeFleet();
    const failing = fake.add({ max_attempts: 3 }).id;
    const fine = fake.add().id;
    // One byte ahead, so that a cut by bytes alone would land inside a character.
    const trace = "!" + "\u{1F600}".repeat(300_000);
    await run(fake, async (job) => {
      if (job.id === failing) throw new Error(trace);
      return { fine: true };
    }, 2);

    expect(fake.callsOf("complete")).toHaveLength(1);
    const stored = fake.row(failing).last_error;
    expect(fake.row(failing).status).toBe("pending"); // a retry: back to pending with its error
    expect(stored.endsWith(" [truncated]")).toBe(true);
    expect(trace.startsWith(stored.slice(0, -" [truncated]".length))).toBe(true);
    expect(LONE_SURROGATE.test(stored)).toBe(false);
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(MAX_ERROR_BYTES);
    expect(Buffer.byteLength(stored)).toBeGreaterThan(MAX_ERROR_BYTES - 4 - Buffer.byteLength(" [truncated]"));
    expect(fake.results.get(fine)).toEqual({ fine: true });
  });

  it("a stack trace of MAX_ERROR_BYTES with thousands of newlines (twice as long as JSON) fits and is sent whole", async () => {
    const fake = new FakeFleet();
    const { id } = fake.add();
    const trace = "    at run (/srv/probe.js:10:5)\n".repeat(3_000).slice(0, MAX_ERROR_BYTES);
    expect(Buffer.byteLength(trace)).toBe(MAX_ERROR_BYTES);
    await run(fake, async () => {
      throw new PermanentJobError(trace);
    });
    expect(fake.row(id)).toMatchObject({ status: "failed", last_error: trace });
  });

  it("a server without the queue gets it as the result { error }, cut the same way", async () => {
    const fake = new FakeFleet();
    fake.queue = false;
    const { id } = fake.add();
    await run(fake, async () => {
      throw new Error("é".repeat(1_000_000));
    });
    const { error } = fake.results.get(id) as { error: string };
    expect(fake.row(id).status).toBe("failed");
    expect(error.endsWith(" [truncated]")).toBe(true);
    expect(Buffer.byteLength(error)).toBeLessThanOrEqual(MAX_ERROR_BYTES);
    expect(Buffer.byteLength(error)).toBeGreaterThan(MAX_ERROR_BYTES - 20);
  });
});
