// The Worker's claims that ride on its complete calls (src/client/worker/claim-rides.ts):
// once the server is known to have complete, each complete call asks for the
// jobs its releases make room for, so a busy Worker claims with one request
// per batch instead of two; the claim loop covers what no ride does; no room
// is asked for twice (never more handlers than slots, every job run once); a
// server that ignores the claim gets no second ride; a ride whose answer is
// lost is not sent again, its releases are, and its jobs come back when
// their leases lapse; a stop waits for the rides on the wire.
import { describe, expect, it, vi } from "vitest";
import { FleetForbiddenError, FleetHttpError, FleetNetworkError } from "../../src/client/errors";
import type { FleetApi } from "../../src/client/fleet-client";
import type { WorkerOptions } from "../../src/client/worker";
import { FakeFleet, settle, useFakeClock, wait } from "./support/fake-fleet";
import { named, startRecordedWorker } from "./support/recorded-worker";

useFakeClock();

const EVENTS = ["claimed", "released", "lease_lost", "error"] as const;
const startWorker = (fake: FleetApi, opts: Partial<WorkerOptions> & Pick<WorkerOptions, "handler">) =>
  startRecordedWorker(fake, { pollInterval: 100, maxPollInterval: 100, ...opts }, EVENTS);

/** A handler of `ms` that counts the handlers running at once, and the runs of each job. */
function countingHandler(ms: number) {
  const seen = { running: 0, maxRunning: 0, runs: new Map<string, number>() };
  const handler = async (job: { id: string }, signal: AbortSignal) => {
    seen.running++;
    seen.maxRunning = Math.max(seen.maxRunning, seen.running);
    seen.runs.set(job.id, (seen.runs.get(job.id) ?? 0) + 1);
    try {
      await wait(ms, signal);
      return { ok: true };
    } finally {
      seen.running--;
    }
  };
  return { seen, handler };
}

/** Rows held by `workerId` now. */
const heldBy = (fake: FakeFleet, workerId: string) => [...fake.rows.values()].filter((r) => r.status === "claimed" && r.claimed_by === workerId).length;

describe("claims that ride on complete calls", () => {
  it("200 jobs at concurrency 10: after the first claim-next and the first complete, the complete calls claim the next jobs; every job runs once, never more than 10 at a time", async () => {
    const fake = new FakeFleet();
    fake.enableClaimRides();
    for (let i = 0; i < 200; i++) fake.add();
    let maxHeld = 0;
    const complete = fake.complete.bind(fake);
    fake.complete = async (...args) => {
      maxHeld = Math.max(maxHeld, heldBy(fake, "w1"));
      return complete(...args);
    };
    const { seen, handler } = countingHandler(20);
    const { worker, events } = startWorker(fake, { concurrency: 10, handler });
    await vi.advanceTimersByTimeAsync(2_000);
    await settle(worker.stop(), vi);

    expect([...fake.rows.values()].every((r) => r.status === "done")).toBe(true);
    expect(seen.runs.size).toBe(200);
    expect([...seen.runs.values()].every((n) => n === 1)).toBe(true);
    expect(seen.maxRunning).toBe(10);
    expect(maxHeld).toBeLessThanOrEqual(10);
    expect(named(events, "lease_lost")).toEqual([]);
    expect(named(events, "error")).toEqual([]);
    const completes = fake.callsOf("complete");
    const rides = completes.filter((c) => c.claimLimit !== undefined);
    // The first complete tells the server has the endpoint; from then on each one claims for its releases.
    expect(completes[0]!.claimLimit).toBeUndefined();
    expect(rides.length).toBe(completes.length - 1);
    for (const ride of rides) expect(ride.claimLimit).toBeLessThanOrEqual(10);
    // The claim loop, until the last job was done: its first poll and the room the first plain complete freed
    // (afterwards it polls the empty queue every 100 ms).
    const lastDone = completes[completes.length - 1]!.at;
    const loopClaims = fake.callsOf("claimNext").filter((c) => c.at <= lastDone);
    expect(loopClaims.length).toBeLessThanOrEqual(3);
    expect(loopClaims.length + completes.length).toBeLessThanOrEqual(200 / 10 + 3);
  });

  it("a server that ignores the claim (no `jobs` in its answer): one ride, then the claim loop alone, every job done", async () => {
    const fake = new FakeFleet();
    fake.enableClaimRides("ignores");
    for (let i = 0; i < 60; i++) fake.add();
    const { seen, handler } = countingHandler(20);
    const { worker } = startWorker(fake, { concurrency: 10, handler });
    await vi.advanceTimersByTimeAsync(2_000);
    await settle(worker.stop(), vi);
    expect([...fake.rows.values()].every((r) => r.status === "done")).toBe(true);
    expect([...seen.runs.values()].every((n) => n === 1)).toBe(true);
    expect(fake.callsOf("complete").filter((c) => c.claimLimit !== undefined)).toHaveLength(1);
    expect(fake.callsOf("claimNext").length).toBeGreaterThanOrEqual(6);
  });

  it("a ride refused for its claim (a 400 about claimNext): its releases go at once in a plain complete, and no ride follows", async () => {
    const fake = new FakeFleet();
    fake.enableClaimRides();
    for (let i = 0; i < 40; i++) fake.add();
    let refused = 0;
    fake.completeAndClaim = async () => {
      refused++;
      throw new FleetHttpError("complete", 400, "claimNext: queue must be ...", { error: "claimNext: queue must be ..." });
    };
    const { seen, handler } = countingHandler(20);
    const { worker, events } = startWorker(fake, { concurrency: 10, handler });
    await vi.advanceTimersByTimeAsync(2_000);
    await settle(worker.stop(), vi);
    expect(refused).toBe(1);
    expect([...fake.rows.values()].every((r) => r.status === "done")).toBe(true);
    expect([...seen.runs.values()].every((n) => n === 1)).toBe(true);
    // Every release went in a complete (none fell back to a plain release), and none was reported as given up.
    expect(fake.callsOf("release")).toEqual([]);
    expect(fake.releasesSent()).toHaveLength(40);
    expect(named(events, "released")).toHaveLength(40);
  });

  it("a 403 to a ride whose plain complete is refused too was the releases' own: rides go on; a 403 the plain complete passes stops them", async () => {
    for (const plainRefusedToo of [true, false]) {
      const fake = new FakeFleet();
      fake.enableClaimRides();
      for (let i = 0; i < 40; i++) fake.add();
      const ride = fake.completeAndClaim!;
      const complete = fake.complete.bind(fake);
      let rides = 0;
      let plainAfterRefusal = false;
      fake.completeAndClaim = async (workerId, releases, claim) => {
        if (rides++ === 0) {
          plainAfterRefusal = plainRefusedToo;
          throw new FleetForbiddenError("complete", "complete: HTTP 403", { error: "not yours" });
        }
        return ride(workerId, releases, claim);
      };
      fake.complete = async (...args) => {
        if (plainAfterRefusal) {
          plainAfterRefusal = false;
          throw new FleetForbiddenError("complete", "complete: HTTP 403", { error: "not yours" });
        }
        return complete(...args);
      };
      const { handler } = countingHandler(20);
      const { worker } = startWorker(fake, { concurrency: 10, handler });
      await vi.advanceTimersByTimeAsync(2_000);
      await settle(worker.stop(), vi);
      if (plainRefusedToo) expect(rides, "rides after a 403 that was the releases'").toBeGreaterThan(1);
      else expect(rides, "rides after a 403 that was the claim's").toBe(1);
    }
  });

  it("a ride whose answer is lost: the releases go again without a claim (read as the worker's own), the jobs it claimed come back once their leases lapse, each job done once", async () => {
    const fake = new FakeFleet();
    fake.enableClaimRides();
    for (let i = 0; i < 30; i++) fake.add();
    const ride = fake.completeAndClaim!;
    let lost = 0;
    let lostJobs: string[] = [];
    fake.completeAndClaim = async (workerId, releases, claim) => {
      const answer = await ride(workerId, releases, claim);
      if (lost++ === 0) {
        // Committed, then the answer never came.
        lostJobs = (answer.jobs ?? []).map((h) => h.job.id);
        throw new FleetNetworkError("complete", "socket hang up (ECONNRESET)");
      }
      return answer;
    };
    const { seen, handler } = countingHandler(20);
    const { worker, events } = startWorker(fake, { concurrency: 5, leaseSeconds: 3, handler });
    await vi.advanceTimersByTimeAsync(8_000);
    await settle(worker.stop(), vi);

    expect(lostJobs.length).toBeGreaterThan(0);
    expect([...fake.rows.values()].every((r) => r.status === "done")).toBe(true);
    expect([...seen.runs.values()].every((n) => n === 1)).toBe(true);
    // Not run before their leases lapsed (3 s): then stolen by the claim loop or a ride, and run.
    for (const id of lostJobs) {
      expect(fake.row(id).reclaim_count).toBe(1);
      expect(named(events, "claimed").filter((e) => e.jobId === id)).toHaveLength(1);
    }
    // The releases of the lost call went once more, in a plain complete, and counted as released.
    const failedRide = fake.callsOf("complete").find((c) => c.claimLimit !== undefined)!;
    const again = fake.callsOf("complete").find((c) => c.at >= failedRide.at && c !== failedRide && c.claimLimit === undefined &&
      c.items!.some((i) => i.jobId === failedRide.items![0]!.jobId));
    expect(again).toBeDefined();
    expect(named(events, "released")).toHaveLength(30);
  });

  it("stop() while a ride is on the wire: the jobs it brings are run (finish) or left (abandon), and stop resolves", async () => {
    for (const mode of ["finish", "abandon"] as const) {
      const fake = new FakeFleet();
      fake.enableClaimRides();
      for (let i = 0; i < 12; i++) fake.add();
      const ride = fake.completeAndClaim!;
      let slowRides = 0;
      let stopping: Promise<void> | null = null;
      // eslint-disable-next-line prefer-const
      let worker: { stop: (o?: { mode?: "finish" | "abandon" }) => Promise<void> };
      fake.completeAndClaim = async (workerId, releases, claim) => {
        const answer = await ride(workerId, releases, claim);
        if (slowRides++ === 0) {
          // The stop comes while this answer is on its way.
          stopping = worker.stop({ mode });
          await wait(200);
        }
        return answer;
      };
      const { seen, handler } = countingHandler(20);
      ({ worker } = startWorker(fake, { concurrency: 4, handler }));
      await vi.advanceTimersByTimeAsync(1_000);
      expect(stopping).not.toBeNull();
      await settle(stopping!, vi);
      const rows = [...fake.rows.values()];
      if (mode === "finish") {
        // What was claimed ran and was released; nothing is left held.
        expect(rows.filter((r) => r.status === "claimed")).toEqual([]);
        expect([...seen.runs.values()].every((n) => n === 1)).toBe(true);
      } else {
        // The ride's jobs were never started: left held, to lapse.
        expect(rows.some((r) => r.status === "claimed" && !seen.runs.has(r.id))).toBe(true);
      }
    }
  });
});
