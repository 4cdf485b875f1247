// ClaimRides' accounting (src/client/worker/claim-rides.ts) on its own, with
// a Worker of 10 slots modelled as numbers: no room is asked for twice by
// the claim loop and the rides on the wire together, a ride counts the room
// its releases (and those of the other rides on the wire) will free, and
// each ride settles once: its jobs taken, its room given back, a server that
// ignores rides gets none again, a stop gets none and waits for those on the wire.
import { describe, expect, it } from "vitest";
import type { HeldJob } from "../../src/client/fleet-client";
import { ClaimRides } from "../../src/client/worker/claim-rides";
import { MAX_CLAIM_NEXT_LIMIT } from "../../src/lib/validate";

const SLOTS = 10;

/** A Worker of SLOTS slots holding `held` jobs (prefetch 0: a job holds its slot until its report is answered). */
function model(held: number) {
  const state = { held, running: true, taken: [] as string[], roomMade: 0, fills: 0 };
  const rides = new ClaimRides({
    isRunning: () => state.running,
    room: () => Math.max(0, SLOTS - state.held),
    roomAfter: (ended) => Math.max(0, SLOTS - state.held + ended),
    claim: () => ({ leaseSeconds: 30, queue: "q" }),
    take: (job) => {
      state.taken.push(job.job.id);
      state.held++;
      return true;
    },
    fill: () => state.fills++,
    roomMade: () => state.roomMade++,
  });
  return { state, rides };
}

const jobs = (n: number, from = 0): HeldJob[] =>
  Array.from({ length: n }, (_, i) => ({ job: { id: `j${from + i}` } as HeldJob["job"], leaseToken: "t", alreadyHeld: false }));

describe("ClaimRides", () => {
  it("a ride asks for the room free now and the room its releases free; the claim loop then has none left to ask for", () => {
    const { rides } = model(8);
    expect(rides.available()).toBe(2);
    const ride = rides.ride(5)!;
    expect(ride.claim).toEqual({ leaseSeconds: 30, queue: "q", limit: 7 });
    expect(rides.available()).toBe(0);
  });

  it("a claim-next on the wire keeps its room: a ride sent meanwhile asks only for the rest", () => {
    const { rides } = model(7);
    const unreserve = rides.reserve(rides.available());
    expect(rides.available()).toBe(0);
    expect(rides.ride(4)!.claim.limit).toBe(4);
    // The poll came back empty: its 3 are free again (once only), the ride's 4 are still its own.
    unreserve();
    unreserve();
    expect(rides.available()).toBe(3);
  });

  it("two rides on the wire: the second counts the first's releases and reservation, and each its own", () => {
    const { rides } = model(10);
    const first = rides.ride(5)!;
    const second = rides.ride(3)!;
    expect([first.claim.limit, second.claim.limit]).toEqual([5, 3]);
    expect(rides.ride(0)).toBeNull();
    expect(rides.available()).toBe(0);
  });

  it("settling takes the jobs, gives the room back and wakes the claim loop; a second settle does nothing", () => {
    const { state, rides } = model(10);
    const ride = rides.ride(4)!;
    ride.settle(jobs(3), 0);
    expect(state.taken).toEqual(["j0", "j1", "j2"]);
    expect([state.fills, state.roomMade]).toEqual([1, 1]);
    // The 4 finished jobs leave; 13 - 4 = 9 held: one slot for the loop.
    state.held -= 4;
    expect(rides.available()).toBe(1);
    ride.settle(jobs(2, 10), 0);
    expect(state.taken).toHaveLength(3);
    expect(state.roomMade).toBe(1);
  });

  it("a failed ride takes nothing and gives its room back; rides go on", () => {
    const { state, rides } = model(10);
    rides.ride(2)!.settle("failed", 0);
    expect(state.taken).toEqual([]);
    expect(rides.available()).toBe(0);
    expect(rides.ride(2)!.claim.limit).toBe(2);
  });

  it("a server that ignores rides (an answer without jobs): no ride after it", () => {
    const { rides } = model(10);
    rides.ride(2)!.settle("unsupported", 0);
    expect(rides.ride(2)).toBeNull();
  });

  it("at most claim-next's limit a ride, and none for a stopped Worker", () => {
    const big = new ClaimRides({
      isRunning: () => true, room: () => 500, roomAfter: (e) => 500 + e, claim: () => ({}),
      take: () => true, fill: () => {}, roomMade: () => {},
    });
    expect(big.ride(50)!.claim.limit).toBe(MAX_CLAIM_NEXT_LIMIT);
    const { state, rides } = model(10);
    state.running = false;
    expect(rides.ride(5)).toBeNull();
  });

  it("landed() resolves once every ride on the wire has settled", async () => {
    const { rides } = model(10);
    const a = rides.ride(2)!;
    const b = rides.ride(2)!;
    let done = false;
    const landed = rides.landed().then(() => (done = true));
    a.settle(jobs(1), 0);
    await Promise.resolve();
    expect(done).toBe(false);
    b.settle("failed", 0);
    await landed;
    expect(done).toBe(true);
  });
});
