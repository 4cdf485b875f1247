// The dashboard when its PocketBase goes away and comes back: the page says so
// (an alert, the connection marked offline, the last numbers dimmed) and, once
// the same server answers again on the same port and data, recovers by itself
// (no reload, no new sign-in): its realtime stream reconnects and changes show
// again. A PocketBase of this file's own, stopped and started.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { FleetClient } from "../../src/client/index";
import {
  expectLive, expectOnlyOwnOrigin, launchBrowser, openDashboard, readCount, startDashboardServer, type DashboardServer,
} from "./support/dashboard";

let browser: Browser;
let server: DashboardServer;

beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startDashboardServer()]);
});
afterAll(async () => {
  await Promise.allSettled([browser?.close(), server?.remove()]);
});

describe("the dashboard when PocketBase restarts", () => {
  it("shows an error state while the server is gone and recovers on its own when it is back", async () => {
    const client = new FleetClient({ url: server.url, email: server.email, password: server.password });
    await client.enqueueMany([{ probeKey: "restart/a" }, { probeKey: "restart/b" }]);
    const dashboard = await openDashboard(browser, server.url, { email: server.email, password: server.password });
    const { page } = dashboard;
    await expect.poll(() => readCount(page, "pending")).toBe(2);
    expect(await page.locator("#offline").isHidden()).toBe(true);

    const stoppedAt = Date.now();
    await server.stop();
    await page.locator("#offline").waitFor({ state: "visible", timeout: 10_000 });
    const noticedAfter = Date.now() - stoppedAt;
    expect(await page.locator("#offline").textContent()).toMatch(/stopped answering at .*reconnects by itself/);
    expect(await page.locator("#connection").getAttribute("data-state")).toBe("offline");
    expect(await page.locator("body").getAttribute("class")).toContain("stale");
    // The last numbers stay on screen.
    expect(await readCount(page, "pending")).toBe(2);

    await new Promise((r) => setTimeout(r, 2_000));
    const startedAt = Date.now();
    await server.start();
    const upAfter = Date.now() - startedAt;
    await page.locator("#offline").waitFor({ state: "hidden", timeout: 15_000 });
    await expectLive(page);
    const recoveredAfter = Date.now() - startedAt;
    expect(await page.locator("#signin").isHidden()).toBe(true);
    expect(await page.locator("body").getAttribute("class")).not.toContain("stale");

    // Live again: a change made after the restart reaches the page through the new realtime stream.
    await new FleetClient({ url: server.url, email: server.email, password: server.password }).enqueue("restart/c", { priority: 1 });
    await expect.poll(() => readCount(page, "pending"), { timeout: 5_000 }).toBe(3);
    console.log(`[dashboard] outage shown ${noticedAfter} ms after the stop; server up in ${upAfter} ms; page live ${recoveredAfter} ms after the start`);
    expectOnlyOwnOrigin(dashboard, server.url);
    await dashboard.context.close();
  });
});
