// A probe_key filter change on the dashboard: from the moment the filter changes
// until the new filter's reads answer, nothing of the old filter is shown (its
// counts, its "N jobs match", its in-flight rows), whatever order the reads
// answer in. The page's reads are held in a real Chromium with page.route, so
// the order is the test's, not the machine's.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Browser, Route } from "playwright-core";
import { FleetClient } from "../../src/client/index";
import { JOBS_COLLECTION } from "../../src/lib/job-row";
import { randomKey } from "./support/fleet-api";
import { expectOnlyOwnOrigin, filterByPrefix, launchBrowser, openDashboard, readCount } from "./support/dashboard";

const url = inject("pbUrl");
const client = new FleetClient({ url, email: inject("adminEmail"), password: inject("adminPassword") });
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** Requests to `path` wait until `release` is called; then they and later ones go through. */
function gate(): { hold: (route: Route) => Promise<void>; release: () => void } {
  let release = () => {};
  const opened = new Promise<void>((resolve) => (release = resolve));
  return { hold: async (route) => { await opened; await route.continue(); }, release };
}

describe("the dashboard's probe_key filter", () => {
  it("shows nothing of the old filter while the new filter's stats and lists are on their way", async () => {
    const root = randomKey("dash-filter");
    const held = `${root}-a/`;
    const other = `${root}-b/`;
    const [a1, a2, b1] = await client.enqueueMany([`${held}1`, `${held}2`, `${other}1`].map((probeKey) => ({ probeKey })));
    await client.enqueue(`${other}2`);
    for (const job of [a1!, a2!, b1!]) expect(await client.claim(job.id, randomKey("holder"), 600)).toMatchObject({ claimed: true });

    const dashboard = await openDashboard(browser, url);
    const { page } = dashboard;
    await filterByPrefix(page, held, 2);
    await expect.poll(() => page.locator("#in-flight tr[data-job-id]").count(), { timeout: 5_000 }).toBe(2);
    expect(await readCount(page, "in-flight")).toBe(2);

    const stats = gate();
    const lists = gate();
    // The chart's read with the stats: it is of the filter too.
    await page.route((u) => u.pathname === "/api/fleet/stats" || u.pathname === "/api/fleet/completions", stats.hold);
    await page.route((u) => u.pathname === `/api/collections/${JOBS_COLLECTION}/records`, lists.hold);
    await page.locator("#filter-prefix").fill(other);
    await page.waitForURL((u) => u.searchParams.get("prefix") === other, { timeout: 5_000 });

    // Neither answer has come: the old filter's figures are gone, and no new ones are made up (not even "none").
    await expect.poll(() => page.locator("#in-flight tr[data-job-id]").count(), { timeout: 5_000 }).toBe(0);
    expect(await page.locator("#filter-note").textContent()).toBe("");
    expect(await readCount(page, "in-flight")).toBeNaN(); // "–"
    expect(await readCount(page, "total")).toBeNaN();
    expect(await page.locator("#in-flight-empty").isHidden()).toBe(true);
    expect(await page.locator("#chart-note").textContent()).toBe("");

    // The stats answer first: its counts are shown, and still no row of the old filter.
    stats.release();
    await expect.poll(() => page.locator("#filter-note").textContent(), { timeout: 10_000 }).toBe("2 jobs match");
    expect(await readCount(page, "pending")).toBe(1);
    expect(await readCount(page, "in-flight")).toBe(1);
    expect(await page.locator("#in-flight tr[data-job-id]").count()).toBe(0);

    // Then the lists: the new filter's own job in flight, and only it.
    lists.release();
    await expect.poll(() => page.locator("#in-flight tr[data-job-id]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-job-id"))), { timeout: 10_000 })
      .toEqual([b1!.id]);

    // And back: the first filter's rows come back with its reads.
    await filterByPrefix(page, held, 2);
    await expect.poll(() => page.locator("#in-flight tr[data-job-id]").count(), { timeout: 5_000 }).toBe(2);
    expectOnlyOwnOrigin(dashboard, url);
    await dashboard.context.close();
  });
});
