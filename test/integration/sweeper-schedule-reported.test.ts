// Whether the server sweeps is never a guess: /api/fleet/stats says if the
// sweeper is scheduled and on what schedule. An invalid PB_FLEET_SWEEP_CRON
// stops PocketBase at start with --hooksWatch=false; with --hooksWatch on
// (PocketBase's default) PocketBase only prints the load error and serves on,
// and the stats say the sweeper is not running, and why.
import { afterEach, describe, expect, it } from "vitest";
import { get } from "./support/fleet-api";
import { startOwnServer, type OwnServer } from "./support/own-server";

const servers: OwnServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function statsOf(env: Record<string, string>, hooksWatch: boolean) {
  const server = await startOwnServer({ env, hooksWatch });
  servers.push(server);
  return (await get("/api/fleet/stats", { baseUrl: server.url, token: server.token })).body;
}

describe("the sweeper's schedule in /api/fleet/stats", () => {
  it("reports a valid schedule as scheduled", async () => {
    expect((await statsOf({ PB_FLEET_SWEEP_CRON: "*/5 * * * *" }, false)).sweeper).toEqual({ scheduled: true, schedule: "*/5 * * * *" });
  });

  it("reports off as not scheduled", async () => {
    expect((await statsOf({ PB_FLEET_SWEEP_CRON: "off" }, false)).sweeper).toEqual({ scheduled: false, schedule: "off" });
  });

  it("reports an invalid schedule as not scheduled, with why, when --hooksWatch lets PocketBase serve on", async () => {
    const stats = await statsOf({ PB_FLEET_SWEEP_CRON: "61 * * * *" }, true);
    expect(stats.sweeper).toEqual({
      scheduled: false,
      schedule: "61 * * * *",
      error: expect.stringMatching(/^PB_FLEET_SWEEP_CRON="61 \* \* \* \*" is not a valid 5-field cron expression .*minute field "61"/),
    });
    expect(stats.counts).toBeDefined(); // the rest of the fleet still answers
  });

  it("stops PocketBase at start with --hooksWatch=false", async () => {
    await expect(startOwnServer({ env: { PB_FLEET_SWEEP_CRON: "61 * * * *" } })).rejects.toThrow(/pb-fleet-sweeper: PB_FLEET_SWEEP_CRON/);
  });
});
