// PB_FLEET_MAINTENANCE_CRON=off stops the cron's maintenance ticks (whoever
// sets it runs POST /api/fleet/maintenance itself); unset, a tick runs at every
// minute's start. Two servers wait across the same minute's start side by
// side: the one with the cron on deletes an expired finished row, the one with
// it off keeps it until asked. Any other value stops PocketBase at start.
import { afterAll, describe, expect, it } from "vitest";
import { createJob, get, pastDate, post, type RequestOptions } from "./support/fleet-api";
import { startOwnServer, type OwnServer } from "./support/own-server";
import { sleep } from "./support/race";

const servers: OwnServer[] = [];
afterAll(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function serverWith(env: Record<string, string>): Promise<RequestOptions> {
  const server = await startOwnServer({ env: { PB_FLEET_KEEP_DONE: "1s", ...env } });
  servers.push(server);
  return { baseUrl: server.url, token: server.token };
}

async function exists(id: string, on: RequestOptions): Promise<boolean> {
  return (await get(`/api/collections/probe_jobs/records/${id}`, on)).status === 200;
}

describe("PB_FLEET_MAINTENANCE_CRON", () => {
  it("off: no cron tick deletes an expired finished row; unset: the next minute's tick does", async () => {
    const [cronOn, cronOff] = await Promise.all([serverWith({}), serverWith({ PB_FLEET_MAINTENANCE_CRON: "off" })]);
    const finished = { status: "done", finished_at: pastDate(3_600_000), attempts: 1 };
    const [onRow, offRow] = await Promise.all([createJob(finished, cronOn), createJob(finished, cronOff)]);
    // Past the next minute's start, with time for a loaded machine's tick to finish.
    await sleep(60_000 - (Date.now() % 60_000) + 8_000);
    await expect.poll(() => exists(onRow.id, cronOn), { timeout: 20_000 }).toBe(false);
    expect(await exists(offRow.id, cronOff)).toBe(true);
    // Asked, the switched-off server runs the same tick.
    const tick = await post("/api/fleet/maintenance", {}, cronOff);
    expect(tick.status).toBe(200);
    expect(tick.body.retention.deleted.done).toBe(1);
    expect(await exists(offRow.id, cronOff)).toBe(false);
  }, 120_000);

  it("any other value stops PocketBase at start with a sentence naming the variable (--hooksWatch=false)", async () => {
    await expect(startOwnServer({ env: { PB_FLEET_MAINTENANCE_CRON: "*/5 * * * *" } }))
      .rejects.toThrow(/pb-fleet-maintenance: PB_FLEET_MAINTENANCE_CRON is "\*\/5 \* \* \* \*": leave it unset \(every minute\) or set it to "off"/);
  });
});
