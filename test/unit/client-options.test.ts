// Worker and Sweeper refuse bad options when they are built, with a TypeError
// naming the option, instead of spinning on them later: a poll interval or a
// sweep interval of 0, below 0, NaN or Infinity, numbers out of range, and a
// worker id the server reserves for its own sweeper.
import { describe, expect, it, vi } from "vitest";
import { RESERVED_WORKER_IDS } from "../../src/lib/validate";
import { MAX_LEASE_SECONDS, MIN_LEASE_SECONDS } from "../../src/lib/lease";
import { Sweeper, type SweeperOptions } from "../../src/client/sweeper";
import { Worker, type WorkerOptions } from "../../src/client/worker";
import { FakeFleet, useFakeClock } from "./support/fake-fleet";

useFakeClock();

const NOT_POSITIVE = [0, -1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
const NOT_A_NUMBER = ["500", null, true];

/** How the message quotes a value: text in quotes, anything else as String() gives it. */
function shown(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

function worker(opts: Partial<WorkerOptions>): Worker {
  return new Worker(new FakeFleet(), { workerId: "w", handler: async () => null, ...opts });
}

function sweeper(opts: SweeperOptions): Sweeper {
  return new Sweeper(new FakeFleet(), opts);
}

describe("Worker options", () => {
  it.each(["pollInterval", "maxPollInterval"] as const)("`%s` must be a finite number of ms > 0", (name) => {
    for (const value of [...NOT_POSITIVE, ...NOT_A_NUMBER]) {
      expect(() => worker({ [name]: value as number }), `${name}: ${String(value)}`)
        .toThrow(new TypeError(`Worker: \`${name}\` must be a finite number of milliseconds > 0 (got ${shown(value)})`));
    }
    expect(() => worker({ [name]: 0 })).toThrow(TypeError);
    expect(() => worker({ [name]: 1 })).not.toThrow();
  });

  it("`reportRetryMs` must be a finite number of ms >= 0 (0: no retry)", () => {
    for (const value of [-1, Number.NaN, Number.POSITIVE_INFINITY, "60000"]) {
      expect(() => worker({ reportRetryMs: value as number })).toThrow(/^Worker: `reportRetryMs` must be a finite number of milliseconds >= 0/);
    }
    expect(() => worker({ reportRetryMs: 0 })).not.toThrow();
  });

  it("`leaseSeconds` must be within the server's lease bounds, and `concurrency` and `renewEvery` in their ranges", () => {
    for (const value of [MIN_LEASE_SECONDS - 0.5, MAX_LEASE_SECONDS + 1, Number.NaN, "30"]) {
      expect(() => worker({ leaseSeconds: value as number }))
        .toThrow(`Worker: \`leaseSeconds\` must be a number of seconds from ${MIN_LEASE_SECONDS} to ${MAX_LEASE_SECONDS}`);
    }
    expect(() => worker({ leaseSeconds: MIN_LEASE_SECONDS })).not.toThrow();
    expect(() => worker({ leaseSeconds: MAX_LEASE_SECONDS })).not.toThrow();
    for (const value of [0, 1.5, Number.POSITIVE_INFINITY]) {
      expect(() => worker({ concurrency: value })).toThrow(/^Worker: `concurrency` must be an integer >= 1/);
    }
    for (const value of [0, 1, Number.NaN]) {
      expect(() => worker({ renewEvery: value })).toThrow(/^Worker: `renewEvery` must be a fraction of the lease between 0 and 1/);
    }
  });

  it("refuses a workerId the server reserves (it would answer every claim with 400)", () => {
    for (const reserved of RESERVED_WORKER_IDS) {
      expect(() => worker({ workerId: reserved })).toThrow(
        new TypeError(`Worker: \`workerId\`: workerId "${reserved}" is reserved for pb-fleet's server sweeper: pick another id`));
    }
    expect(() => worker({ workerId: "" })).toThrow(/^Worker: `workerId` must be a non-empty string/);
  });

  it("an idle Worker with a poll interval longer than Node's longest timer waits, instead of polling every millisecond", async () => {
    const fake = new FakeFleet();
    // Even with the backoff's jitter (half to all of it) every wait is past the timer limit.
    const idle = new Worker(fake, { workerId: "w", handler: async () => null, pollInterval: 1e10, maxPollInterval: 1e10 }).start();
    await vi.advanceTimersByTimeAsync(10_000);
    await idle.stop();
    expect(fake.callsOf("claimNext")).toHaveLength(1);
  });
});

describe("Sweeper options", () => {
  it("`interval` must be a finite number of ms > 0", () => {
    for (const value of [...NOT_POSITIVE, ...NOT_A_NUMBER]) {
      expect(() => sweeper({ interval: value as number }), String(value))
        .toThrow(/^Sweeper: `interval` must be a finite number of milliseconds > 0 \(got /);
    }
    expect(() => sweeper({ interval: 1 })).not.toThrow();
  });

  it("`maxReclaimAttempts`, `batchSize` and `leaseSeconds` must be in their ranges", () => {
    for (const value of [0, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => sweeper({ maxReclaimAttempts: value })).toThrow(/^Sweeper: `maxReclaimAttempts` must be an integer >= 1/);
    }
    for (const value of [0, 501, 10.5, Number.NaN]) {
      expect(() => sweeper({ batchSize: value })).toThrow(/^Sweeper: `batchSize` must be an integer from 1 to 500/);
    }
    for (const value of [0, MAX_LEASE_SECONDS + 1, Number.NaN]) {
      expect(() => sweeper({ leaseSeconds: value })).toThrow(/^Sweeper: `leaseSeconds` must be a number of seconds from 1 to 3600/);
    }
  });

  it("refuses a reserved sweeperId (the workerId of its give-up claims)", () => {
    for (const reserved of RESERVED_WORKER_IDS) {
      expect(() => sweeper({ sweeperId: reserved })).toThrow(/^Sweeper: `sweeperId`: workerId ".*" is reserved/);
    }
  });

  it("a Sweeper whose interval is longer than Node's longest timer waits, instead of sweeping every millisecond", async () => {
    const fake = new FakeFleet();
    const running = new Sweeper(fake, { interval: 3e9 }).start();
    await vi.advanceTimersByTimeAsync(10_000);
    await running.stop();
    expect(fake.calls).toHaveLength(1);
  });
});
