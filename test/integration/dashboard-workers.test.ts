// The dashboard's "Worker identities" card in a real Chromium, against a
// PocketBase of this file's own (its fleet_workers holds only what these tests
// make): the empty state; two identities made through the record API shown
// live with their queues and can-enqueue, sorted by name; a last_seen_at
// stamp shown as a ticking "ago"; one disabled and enabled again from the
// page (each after a confirmation, read back through the record API); the
// list bounded to the first 200 by name; and, last, a server without the
// collection (an install older than its migration), where the card says so
// and the rest of the page works.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { FleetClient } from "../../src/client/index";
import { stampLastSeenStatement, WORKER_FIELDS, WORKERS_COLLECTION } from "../../src/lib/identity";
import { formatPbDate } from "../../src/lib/lease";
import { pbLine } from "./support/pocketbase-line";
import {
  confirmDialog, expectLive, expectOnlyOwnOrigin, launchBrowser, openDashboard, readCount, signIn, startDashboardServer, type Dashboard,
  type DashboardServer,
} from "./support/dashboard";
import { send, type ApiResponse, type RequestOptions } from "./support/fleet-api";
import { rawSql, type SqlParams } from "./support/raw-sql";

let browser: Browser;
let server: DashboardServer;
const opened: { dashboard: Dashboard; consoleErrors: string[] }[] = [];

beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startDashboardServer({ testHooks: ["raw-sql.pb.js"] })]);
});
afterAll(async () => {
  await Promise.allSettled(opened.map((o) => o.dashboard.context.close()));
  await Promise.allSettled([browser?.close(), server?.remove()]);
});

const RECORDS = `/api/collections/${WORKERS_COLLECTION}/records`;

/** The record API (or any path) as the server's admin. */
function api(method: string, path: string, body?: unknown): Promise<ApiResponse> {
  return send(method, path, body, on());
}

const on = (): RequestOptions => ({ baseUrl: server.url, token: server.token });

async function createIdentity(name: string, queues: string[], canEnqueue: boolean): Promise<string> {
  const password = "a-long-password-for-tests";
  const res = await api("POST", RECORDS, {
    [WORKER_FIELDS.name]: name, password, passwordConfirm: password, [WORKER_FIELDS.queues]: queues, [WORKER_FIELDS.canEnqueue]: canEnqueue,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
}

async function readIdentity(id: string): Promise<Record<string, unknown>> {
  const res = await api("GET", `${RECORDS}/${id}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const sql = (statement: string, params: SqlParams = {}) => rawSql(on(), statement, params);

/**
 * The page, signed in, with the errors its console reports from its first
 * load on (listened to, then reloaded). On 0.22 the page's line detection
 * asks for 0.23's _superusers collection and gets the 404 it expects: that
 * one is left out.
 */
async function open(): Promise<{ dashboard: Dashboard; page: Page; consoleErrors: string[] }> {
  const dashboard = await openDashboard(browser, server.url, { signIn: false });
  const consoleErrors: string[] = [];
  dashboard.page.on("console", (message) => {
    const text = `${message.text()} (${message.location().url})`;
    if (message.type() === "error" && !text.includes("/api/collections/_superusers/auth-methods")) consoleErrors.push(text);
  });
  await dashboard.page.reload();
  await signIn(dashboard.page, server.email, server.password);
  opened.push({ dashboard, consoleErrors });
  return { dashboard, page: dashboard.page, consoleErrors };
}

const isMarked = (page: Page, id: string) => row(page, id).evaluate((el) => el.classList.contains("disabled"));
const row = (page: Page, id: string) => page.locator(`#workers tr[data-identity-id="${id}"]`);
const cellText = (page: Page, id: string, index: number) => row(page, id).locator("td").nth(index).textContent();

describe("the dashboard's worker identities", () => {
  it("lists identities live, shows their last activity ticking, and disables and enables one", async () => {
    const { dashboard, page, consoleErrors } = await open();
    await page.locator("#workers-empty").waitFor({ state: "visible", timeout: 10_000 });
    expect(await page.locator("#workers-empty").textContent()).toBe("No worker identities yet: npx pb-fleet worker create <name>");
    expect(await page.locator("#workers-missing").isHidden()).toBe(true);

    // Made while the page is open: the realtime stream brings them, sorted by name.
    const beta = await createIdentity("beta-worker", [], false);
    const alpha = await createIdentity("alpha-worker", ["emails", "reports"], true);
    await expect.poll(() => page.locator("#workers tbody tr").count(), { timeout: 5_000 }).toBe(2);
    expect(await page.locator("#workers tbody tr").evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset["identityId"]))).toEqual([alpha, beta]);
    expect(await page.locator("#workers-empty").isHidden()).toBe(true);
    expect(await row(page, alpha).locator(".probe-key").textContent()).toBe("alpha-worker");
    expect(await row(page, alpha).locator(".job-id").textContent()).toBe(alpha);
    expect(await cellText(page, alpha, 1)).toBe("emails, reports");
    expect(await cellText(page, alpha, 2)).toBe("yes");
    expect(await cellText(page, beta, 1)).toBe("every queue");
    expect(await cellText(page, beta, 2)).toBe("no");
    for (const id of [alpha, beta]) expect(await cellText(page, id, 3)).toBe("never");
    const headers = await page.locator("#workers thead th").allTextContents();
    expect(headers).toEqual(["Name", "Queues", "Can enqueue", "Last seen", "Actions"]);

    // As the hooks would stamp it (they write with SQL, which sends no event: here through the record API, which does).
    const stamp = await api("PATCH", `${RECORDS}/${alpha}`, { [WORKER_FIELDS.lastSeenAt]: formatPbDate(Date.now() - 90_000) });
    expect(stamp.status, JSON.stringify(stamp.body)).toBe(200);
    const seen = row(page, alpha).locator("td").nth(3);
    await expect.poll(() => seen.textContent(), { timeout: 5_000 }).toMatch(/^1 min \d\d s ago$/);
    const first = await seen.textContent();
    await expect.poll(() => seen.textContent(), { timeout: 5_000 }).not.toBe(first);
    expect(await seen.textContent()).toMatch(/^1 min \d\d s ago$/);
    expect(await cellText(page, beta, 3)).toBe("never");
    // The hooks' own stamp (SQL, which sends no realtime event) shows by the page's quiet refresh (every 10 s).
    const hooksStamp = stampLastSeenStatement(beta, Date.now() - 5_000);
    await sql(hooksStamp.sql, hooksStamp.params);
    await expect.poll(() => cellText(page, beta, 3), { timeout: 15_000, interval: 500 }).toMatch(/^\d+ s ago$/);

    // "Keep it" changes nothing.
    const disable = row(page, beta).getByRole("button", { name: "Disable beta-worker" });
    await disable.click();
    expect(await page.locator("#confirm-title").textContent()).toBe("Disable this worker identity?");
    await confirmDialog(page, "cancel");
    expect((await readIdentity(beta))[WORKER_FIELDS.disabled]).toBe(false);
    expect(await disable.evaluate((el) => el === document.activeElement)).toBe(true);

    await disable.click();
    expect(await page.locator("#confirm-text").textContent()).toContain(`beta-worker (${beta})`);
    await confirmDialog(page, "ok");
    await expect.poll(() => page.locator("#notice").textContent()).toBe("Disabled beta-worker.");
    expect((await readIdentity(beta))[WORKER_FIELDS.disabled]).toBe(true);
    await expect.poll(() => isMarked(page, beta), { timeout: 5_000 }).toBe(true);
    expect(await row(page, beta).locator(".tag").isVisible()).toBe(true);
    expect(await row(page, beta).locator(".tag").textContent()).toBe("disabled");
    expect(await isMarked(page, alpha)).toBe(false);
    expect(await row(page, alpha).locator(".tag").isVisible()).toBe(false);

    const enable = row(page, beta).getByRole("button", { name: "Enable beta-worker" });
    await enable.click();
    expect(await page.locator("#confirm-title").textContent()).toBe("Enable this worker identity?");
    await confirmDialog(page, "ok");
    await expect.poll(() => page.locator("#notice").textContent()).toBe("Enabled beta-worker.");
    expect((await readIdentity(beta))[WORKER_FIELDS.disabled]).toBe(false);
    await expect.poll(() => isMarked(page, beta), { timeout: 5_000 }).toBe(false);
    expect(await row(page, beta).locator(".tag").isVisible()).toBe(false);
    await row(page, beta).getByRole("button", { name: "Disable beta-worker" }).waitFor();

    // The page reads fleet_workers only with its own fields (never password hashes or token keys).
    const reads = dashboard.requests.filter((r) => new URL(r).pathname === RECORDS);
    expect(reads.length).toBeGreaterThan(0);
    for (const read of reads) expect(new URL(read).searchParams.get("fields")).toBe("id,username,queues,can_enqueue,disabled,last_seen_at");
    expectOnlyOwnOrigin(dashboard, server.url);
    expect(consoleErrors, "errors in the page's console").toEqual([]);
  });

  it("lists the first 200 identities by name and says how many there are", async () => {
    // 201 more, with SQL (the record API hashes each password, seconds for 200): no password, so none can sign in.
    const secret = pbLine() === "0.22" ? "passwordHash" : "password";
    await sql(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
INSERT INTO ${WORKERS_COLLECTION} (id, username, email, tokenKey, ${secret}, created, updated)
SELECT printf('bulk%011d', i), printf('bulk-%03d', i), '', printf('bulk-token-%03d', i), '', {:now}, {:now} FROM n`,
      { now: formatPbDate(Date.now()) },
    );
    try {
      const { dashboard, page, consoleErrors } = await open();
      await expect.poll(() => page.locator("#workers tbody tr").count(), { timeout: 10_000 }).toBe(200);
      expect(await page.locator("#workers-note").textContent()).toBe("200 of 203 shown");
      // By name: alpha-worker, beta-worker and bulk-000 to bulk-197.
      const names = await page.locator("#workers tbody .probe-key").allTextContents();
      expect(names.slice(0, 3)).toEqual(["alpha-worker", "beta-worker", "bulk-000"]);
      expect(names[199]).toBe("bulk-197");
      expectOnlyOwnOrigin(dashboard, server.url);
      expect(consoleErrors, "errors in the page's console").toEqual([]);
    } finally {
      await sql(`DELETE FROM ${WORKERS_COLLECTION} WHERE username LIKE 'bulk-%'`);
    }
  });

  // Last: it removes the collection.
  it("says so when the server has no fleet_workers collection, and the rest of the page works", async () => {
    const removed = await api("DELETE", `/api/collections/${WORKERS_COLLECTION}`);
    expect(removed.status, JSON.stringify(removed.body)).toBe(204);
    const { dashboard, page, consoleErrors } = await open();
    await page.locator("#workers-missing").waitFor({ state: "visible", timeout: 10_000 });
    expect(await page.locator("#workers-missing").textContent()).toBe(
      "This server has no fleet_workers collection: its pb-fleet migrations predate worker identities.",
    );
    expect(await page.locator("#workers").isHidden()).toBe(true);
    expect(await page.locator("#workers-empty").isHidden()).toBe(true);
    expect(await page.locator("#notice").textContent()).toBe("");

    // The rest is live as ever.
    await new FleetClient({ url: server.url, email: server.email, password: server.password }).enqueue("workers-missing/a");
    await expect.poll(() => readCount(page, "pending"), { timeout: 5_000 }).toBe(1);
    await expectLive(page);
    expectOnlyOwnOrigin(dashboard, server.url);
    // The one read that found no collection is the only error the browser logs (a 404 response).
    expect(consoleErrors.every((e) => e.includes("404") && e.includes(RECORDS)), consoleErrors.join("\n")).toBe(true);
  });
});
