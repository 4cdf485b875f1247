// Sweeper on a server without POST /api/fleet/sweep (its list path): re-queues
// expired leases under their holder (with the row's token), skips rows whose
// holder renewed or that someone else took since the list, and gives a job up
// as failed, through claim -> release failed -> result, once it has been
// orphaned maxReclaimAttempts times in a row.
import { describe, expect, it, vi } from "vitest";
import { FleetHttpError, FleetNetworkError } from "../../src/client/errors";
import type { GaveUpEvent, SweptEvent } from "../../src/client/events";
import { Sweeper } from "../../src/client/sweeper";
import { FakeFleet, pbDateIn, useFakeClock } from "./support/fake-fleet";

useFakeClock();

/** A server that answers 404 to POST /api/fleet/sweep, so the Sweeper lists and releases itself. */
function fleetWithoutServerSweep(): FakeFleet {
  const fake = new FakeFleet();
  fake.serverSweep = false;
  return fake;
}

const EMPTY = { listed: 0, requeued: 0, gaveUp: 0, skippedLive: 0, skippedRaced: 0, skippedNoHolder: 0, errors: 0 };

describe("Sweeper without the server's sweep", () => {
  it("re-queues an expired lease under its holder, passing the row's lease token", async () => {
    const fake = fleetWithoutServerSweep();
    const { id } = fake.add({ status: "running", claimed_by: "dead", lease_expires_at: pbDateIn(-1_000), lease_token: "t1", version: 3 });
    fake.add({ status: "running", claimed_by: "alive", lease_expires_at: pbDateIn(60_000) });
    const swept: SweptEvent[] = [];
    const sweeper = new Sweeper(fake);
    sweeper.on("swept", (e) => swept.push(e));
    expect(await sweeper.sweepOnce()).toEqual({ ...EMPTY, listed: 1, requeued: 1 });
    expect(fake.callsOf("release")).toMatchObject([{ jobId: id, workerId: "dead", status: "pending", leaseToken: "t1" }]);
    expect(fake.row(id)).toMatchObject({ status: "pending", claimed_by: "", consecutive_orphan_count: 1, reclaim_count: 1, version: 4 });
    expect(swept).toEqual([{ jobId: id, claimedBy: "dead", consecutiveOrphanCount: 1 }]);
    expect(await sweeper.sweepOnce()).toEqual(EMPTY);
  });

  it("skips a row whose holder renewed after the list (refused_lease_live) and one claimed again (stale token)", async () => {
    const fake = fleetWithoutServerSweep();
    const renewed = fake.add({ status: "running", claimed_by: "slow", lease_expires_at: pbDateIn(-1), lease_token: "a" });
    const stolen = fake.add({ status: "running", claimed_by: "dead", lease_expires_at: pbDateIn(-1), lease_token: "b" });
    const list = fake.listExpiredLeases.bind(fake);
    vi.spyOn(fake, "listExpiredLeases").mockImplementationOnce(async (opts) => {
      const rows = await list(opts);
      // Between the list and the releases: the slow holder renews, and the dead
      // one's job is stolen by a worker with the same id (as a restarted process would be).
      Object.assign(fake.row(renewed.id), { lease_expires_at: pbDateIn(30_000) });
      Object.assign(fake.row(stolen.id), { lease_expires_at: pbDateIn(30_000), lease_token: "c" });
      return rows;
    });
    expect(await new Sweeper(fake).sweepOnce()).toEqual({ ...EMPTY, listed: 2, skippedLive: 1, skippedRaced: 1 });
    expect(fake.row(renewed.id)).toMatchObject({ status: "running", claimed_by: "slow" });
    expect(fake.row(stolen.id)).toMatchObject({ status: "running", claimed_by: "dead", lease_token: "c" });
  });

  it("marks a row failed at the orphan cap: claim, release failed, then the result", async () => {
    const fake = fleetWithoutServerSweep();
    const { id } = fake.add({ status: "claimed", claimed_by: "dead", lease_expires_at: pbDateIn(-1), consecutive_orphan_count: 3 });
    const gaveUp: GaveUpEvent[] = [];
    const sweeper = new Sweeper(fake, { maxReclaimAttempts: 3, sweeperId: "sweeper-1" });
    sweeper.on("gave_up", (e) => gaveUp.push(e));
    expect(await sweeper.sweepOnce()).toEqual({ ...EMPTY, listed: 1, gaveUp: 1 });
    const steps = fake.calls.filter((c) => c.jobId === id).map((c) => `${c.op}:${c.workerId ?? ""}:${c.status ?? ""}`);
    expect(steps).toEqual(["claim:sweeper-1:", "release:sweeper-1:failed", "writeResult::"]);
    expect(fake.callsOf("release")[0]!.leaseToken).toBe(fake.row(id).lease_token);
    expect(fake.row(id)).toMatchObject({ status: "failed", claimed_by: "sweeper-1", reclaim_count: 1 });
    expect(fake.results.get(id)).toEqual({ error: "gave up after 3 orphaned leases", reason: "orphan_cap", orphanedLeases: 3 });
    expect(gaveUp).toEqual([{ jobId: id, claimedBy: "dead", consecutiveOrphanCount: 3 }]);
  });

  it("re-queues a job each time its holder dies, and gives it up at maxReclaimAttempts", async () => {
    const fake = fleetWithoutServerSweep();
    const { id } = fake.add();
    const sweeper = new Sweeper(fake, { maxReclaimAttempts: 5 });
    const outcomes: string[] = [];
    for (let life = 0; life < 6; life++) {
      const claim = await fake.claim(id, `worker-${life}`, 1);
      expect(claim.claimed).toBe(true);
      vi.advanceTimersByTime(1_001); // the holder dies without a word
      const counts = await sweeper.sweepOnce();
      outcomes.push(counts.requeued ? "requeued" : counts.gaveUp ? "gave up" : "?");
    }
    expect(outcomes).toEqual(["requeued", "requeued", "requeued", "requeued", "requeued", "gave up"]);
    expect(fake.row(id).status).toBe("failed");
    expect(fake.results.get(id)).toMatchObject({ reason: "orphan_cap", error: "gave up after 5 orphaned leases" });
    // A terminal release starts a fresh budget, as the protocol says.
    expect(fake.row(id).consecutive_orphan_count).toBe(0);
  });

  it("does not give up a row another sweeper got to first", async () => {
    const fake = fleetWithoutServerSweep();
    const { id } = fake.add({ status: "claimed", claimed_by: "dead", lease_expires_at: pbDateIn(-1), consecutive_orphan_count: 5 });
    const list = fake.listExpiredLeases.bind(fake);
    vi.spyOn(fake, "listExpiredLeases").mockImplementationOnce(async (opts) => {
      const rows = await list(opts);
      await fake.claim(id, "other-sweeper", 30);
      return rows;
    });
    expect(await new Sweeper(fake).sweepOnce()).toEqual({ ...EMPTY, listed: 1, skippedRaced: 1 });
    expect(fake.callsOf("release")).toEqual([]);
    expect(fake.results.has(id)).toBe(false);
  });

  it("counts and reports a failing row without stopping the batch; a failing list rejects", async () => {
    const fake = fleetWithoutServerSweep();
    fake.add({ status: "running", claimed_by: "a", lease_expires_at: pbDateIn(-1) });
    const ok = fake.add({ status: "running", claimed_by: "b", lease_expires_at: pbDateIn(-1) });
    fake.add({ status: "running", claimed_by: "", lease_expires_at: pbDateIn(-1) });
    vi.spyOn(fake, "release").mockRejectedValueOnce(new FleetHttpError("release", 500, "boom", {}));
    const sweeper = new Sweeper(fake);
    const errors: string[] = [];
    sweeper.on("error", (e) => errors.push(e.error.message));
    expect(await sweeper.sweepOnce()).toEqual({ ...EMPTY, listed: 3, requeued: 1, errors: 1, skippedNoHolder: 1 });
    expect(fake.row(ok.id).status).toBe("pending");
    expect(errors).toEqual(["release: HTTP 500: boom"]);

    vi.spyOn(fake, "listExpiredLeases").mockRejectedValueOnce(new FleetNetworkError("listExpiredLeases", "fetch failed"));
    await expect(sweeper.sweepOnce()).rejects.toBeInstanceOf(FleetNetworkError);
  });

  it("start() sweeps every interval until stop()", async () => {
    const fake = fleetWithoutServerSweep();
    const sweeper = new Sweeper(fake, { interval: 1_000 }).start();
    await vi.advanceTimersByTimeAsync(10);
    const { id } = fake.add({ status: "running", claimed_by: "dead", lease_expires_at: pbDateIn(-1) });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(fake.row(id).status).toBe("pending");
    await vi.advanceTimersByTimeAsync(2_000);
    await sweeper.stop();
    const lists = fake.callsOf("listExpiredLeases").length;
    expect(lists).toBe(4);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(fake.callsOf("listExpiredLeases")).toHaveLength(lists);
  });

  it("pauses after a full batch it could not move, instead of listing the same rows again at once", async () => {
    const fake = fleetWithoutServerSweep();
    // A held row with no holder: the sweeper cannot release it under anyone, so it skips it.
    fake.add({ status: "running", claimed_by: "", lease_expires_at: pbDateIn(-1_000) });
    const list = fake.listExpiredLeases.bind(fake);
    let lists = 0;
    vi.spyOn(fake, "listExpiredLeases").mockImplementation(async (opts) => {
      // A spin never yields to the timers: fail the list so the loop backs off and the test ends.
      if (++lists > 20) throw new Error("listed too often");
      return list(opts);
    });
    const sweeper = new Sweeper(fake, { interval: 1_000, batchSize: 1 }).start();
    await vi.advanceTimersByTimeAsync(2_500);
    await sweeper.stop();
    // One sweep at start and one per interval: not hundreds.
    expect(lists).toBeLessThanOrEqual(4);
  });
});
