// Sweeper on a server with POST /api/fleet/sweep: one call per sweep, the
// server's orphan cap (not maxReclaimAttempts), counts and swept/gave_up events
// from the server's answer; the endpoint is probed once, and a server without
// it (404) is swept by listing and releasing from then on.
import { describe, expect, it, vi } from "vitest";
import { FleetHttpError } from "../../src/client/errors";
import type { GaveUpEvent, SweptEvent } from "../../src/client/events";
import { Sweeper } from "../../src/client/sweeper";
import { SWEEP_BATCH } from "../../src/lib/config";
import { ORPHAN_CAP_REASON } from "../../src/lib/transitions";
import { FakeFleet, pbDateIn, useFakeClock } from "./support/fake-fleet";

useFakeClock();

const EMPTY = { listed: 0, requeued: 0, gaveUp: 0, skippedLive: 0, skippedRaced: 0, skippedNoHolder: 0, errors: 0 };

describe("Sweeper through the server's sweep", () => {
  it("makes one sweep call per sweep and reports each job it moved; the server's orphan cap applies, not maxReclaimAttempts", async () => {
    const fake = new FakeFleet();
    fake.orphanCap = 4;
    const dead = fake.add({ probe_key: "p/dead", status: "running", claimed_by: "dead", lease_expires_at: pbDateIn(-2_000), consecutive_orphan_count: 2 });
    const capped = fake.add({ probe_key: "p/capped", status: "claimed", claimed_by: "gone", lease_expires_at: pbDateIn(-1_000), consecutive_orphan_count: 4 });
    const alive = fake.add({ probe_key: "p/alive", status: "running", claimed_by: "w", lease_expires_at: pbDateIn(60_000) });
    const other = fake.add({ probe_key: "q/dead", status: "running", claimed_by: "dead", lease_expires_at: pbDateIn(-1_000) });
    const sweeper = new Sweeper(fake, { maxReclaimAttempts: 1, probeKeyPrefix: "p/" });
    const swept: SweptEvent[] = [];
    const gaveUp: GaveUpEvent[] = [];
    sweeper.on("swept", (e) => swept.push(e));
    sweeper.on("gave_up", (e) => gaveUp.push(e));

    expect(await sweeper.sweepOnce()).toEqual({ ...EMPTY, listed: 2, requeued: 1, gaveUp: 1 });
    expect(sweeper.serverSweeps).toBe(true);
    expect(fake.calls.map((c) => c.op)).toEqual(["sweep"]);
    expect(fake.callsOf("sweep")).toMatchObject([{ probeKeyPrefix: "p/" }]);
    expect(swept).toEqual([{ jobId: dead.id, claimedBy: "dead", consecutiveOrphanCount: 3 }]);
    expect(gaveUp).toEqual([{ jobId: capped.id, claimedBy: "gone", consecutiveOrphanCount: 4 }]);
    expect(fake.row(dead.id)).toMatchObject({ status: "pending", claimed_by: "" });
    expect(fake.row(capped.id).status).toBe("failed");
    expect(fake.results.get(capped.id)).toMatchObject({ reason: ORPHAN_CAP_REASON });
    expect(fake.row(alive.id).status).toBe("running");
    expect(fake.row(other.id).status).toBe("running");

    expect(await sweeper.sweepOnce()).toEqual(EMPTY);
    expect(fake.calls.map((c) => c.op)).toEqual(["sweep", "sweep"]);
  });

  it("a server without the endpoint (404) is probed once, then swept by listing and releasing", async () => {
    const fake = new FakeFleet();
    fake.serverSweep = false;
    const { id } = fake.add({ status: "running", claimed_by: "dead", lease_expires_at: pbDateIn(-1_000) });
    const sweeper = new Sweeper(fake);
    expect(await sweeper.sweepOnce()).toEqual({ ...EMPTY, listed: 1, requeued: 1 });
    expect(sweeper.serverSweeps).toBe(false);
    await sweeper.sweepOnce();
    expect(fake.calls.map((c) => c.op)).toEqual(["sweep", "listExpiredLeases", "release", "listExpiredLeases"]);
    expect(fake.row(id).status).toBe("pending");
  });

  it("once the server has swept, a 404 is an error (rejected), not a reason to sweep by listing", async () => {
    const fake = new FakeFleet();
    const sweeper = new Sweeper(fake);
    await sweeper.sweepOnce();
    fake.serverSweep = false;
    await expect(sweeper.sweepOnce()).rejects.toBeInstanceOf(FleetHttpError);
    expect(sweeper.serverSweeps).toBe(true);
    expect(fake.callsOf("listExpiredLeases")).toEqual([]);
  });

  it("a failed first call (server away) is no answer to the probe: the next sweep asks again", async () => {
    const fake = new FakeFleet();
    vi.spyOn(fake, "sweep").mockRejectedValueOnce(new FleetHttpError("sweep", 503, "busy", {}));
    const sweeper = new Sweeper(fake);
    await expect(sweeper.sweepOnce()).rejects.toMatchObject({ status: 503 });
    expect(sweeper.serverSweeps).toBeUndefined();
    await sweeper.sweepOnce();
    expect(sweeper.serverSweeps).toBe(true);
    expect(fake.callsOf("listExpiredLeases")).toEqual([]);
  });

  it("start(): a sweep that moved a whole server batch is followed at once by another", async () => {
    const fake = new FakeFleet();
    for (let i = 0; i < SWEEP_BATCH + 3; i++) {
      fake.add({ status: "running", claimed_by: `dead-${i}`, lease_expires_at: pbDateIn(-1_000) });
    }
    const swept: string[] = [];
    const sweeper = new Sweeper(fake, { interval: 60_000 });
    sweeper.on("swept", (e) => swept.push(e.jobId));
    sweeper.start();
    await vi.advanceTimersByTimeAsync(10);
    await sweeper.stop();
    expect(fake.callsOf("sweep")).toHaveLength(2);
    expect(new Set(swept).size).toBe(SWEEP_BATCH + 3);
    expect([...fake.rows.values()].every((r) => r.status === "pending")).toBe(true);
  });
});
