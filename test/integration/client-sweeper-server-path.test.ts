// Sweeper against the real server's POST /api/fleet/sweep: one call per sweep
// (no listing, no releases by the client), the server's orphan cap rather than
// maxReclaimAttempts, and swept / gave_up events carrying each job's id.
import { describe, expect, inject, it } from "vitest";
import { FleetClient, Sweeper, type GaveUpEvent, type SweptEvent } from "../../src/client/index";
import { SWEEPER_HOLDER } from "../../src/lib/config";
import { ORPHAN_CAP_REASON } from "../../src/lib/transitions";
import { createJob, futureDate, getJob, pastDate, randomKey } from "./support/fleet-api";

const admin = { email: inject("adminEmail"), password: inject("adminPassword") };

/** A client whose requests are recorded as "METHOD /path". */
function recordingClient(): { client: FleetClient; requests: string[] } {
  const requests: string[] = [];
  const client = new FleetClient({
    url: inject("pbUrl"),
    ...admin,
    fetch: (input, init) => {
      requests.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname}`);
      return fetch(input, init);
    },
  });
  return { client, requests };
}

describe("Sweeper through /api/fleet/sweep on a real server", () => {
  it("sweepOnce re-queues a job whose lease expired, in one sweep call, and the swept event carries its id", async () => {
    const prefix = randomKey("css") + "/";
    const dead = await createJob({
      probe_key: prefix + "dead", status: "running", claimed_by: "dead-worker", lease_expires_at: pastDate(), version: 3,
      consecutive_orphan_count: 1, reclaim_count: 1,
    });
    const alive = await createJob({ probe_key: prefix + "alive", status: "running", claimed_by: "w", lease_expires_at: futureDate() });
    const { client, requests } = recordingClient();
    const sweeper = new Sweeper(client, { probeKeyPrefix: prefix });
    const swept: SweptEvent[] = [];
    const errors: string[] = [];
    sweeper.on("swept", (e) => swept.push(e));
    sweeper.on("error", (e) => errors.push(e.error.message));

    const counts = await sweeper.sweepOnce();
    expect(errors).toEqual([]);
    expect(sweeper.serverSweeps).toBe(true);
    expect(requests.filter((r) => !r.endsWith("/auth-with-password"))).toEqual(["POST /api/fleet/sweep"]);
    expect(counts).toEqual({ listed: 1, requeued: 1, gaveUp: 0, skippedLive: 0, skippedRaced: 0, skippedNoHolder: 0, errors: 0 });
    expect(swept).toEqual([{ jobId: dead.id, claimedBy: "dead-worker", consecutiveOrphanCount: 2 }]);
    expect(await getJob(dead.id)).toMatchObject({
      status: "pending", claimed_by: "", version: 4, consecutive_orphan_count: 2, reclaim_count: 2,
    });
    expect(await getJob(alive.id)).toMatchObject({ status: "running", claimed_by: "w" });
  });

  it("gives a job up at the server's orphan cap (PB_FLEET_MAX_ORPHANS), not at maxReclaimAttempts", async () => {
    const prefix = randomKey("csg") + "/";
    const { client } = recordingClient();
    const { orphanCap } = await client.stats({ probeKeyPrefix: prefix });
    const capped = await createJob({
      probe_key: prefix + "capped", status: "claimed", claimed_by: "dead-again", lease_expires_at: pastDate(),
      consecutive_orphan_count: orphanCap,
    });
    const belowCap = await createJob({
      probe_key: prefix + "below", status: "running", claimed_by: "dead-once", lease_expires_at: pastDate(), consecutive_orphan_count: 1,
    });
    // maxReclaimAttempts would fail `belowCap` on a server without the sweep endpoint; here the server decides.
    const sweeper = new Sweeper(client, { probeKeyPrefix: prefix, maxReclaimAttempts: 1 });
    const swept: SweptEvent[] = [];
    const gaveUp: GaveUpEvent[] = [];
    sweeper.on("swept", (e) => swept.push(e));
    sweeper.on("gave_up", (e) => gaveUp.push(e));

    expect(await sweeper.sweepOnce()).toMatchObject({ listed: 2, requeued: 1, gaveUp: 1 });
    expect(gaveUp).toEqual([{ jobId: capped.id, claimedBy: "dead-again", consecutiveOrphanCount: orphanCap }]);
    expect(swept).toEqual([{ jobId: belowCap.id, claimedBy: "dead-once", consecutiveOrphanCount: 2 }]);
    expect(await getJob(capped.id)).toMatchObject({
      status: "failed", claimed_by: SWEEPER_HOLDER, result: { reason: ORPHAN_CAP_REASON, lastHolder: "dead-again" },
    });
    expect((await getJob(belowCap.id)).status).toBe("pending");
  });
});
