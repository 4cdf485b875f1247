// The dashboard's "Queues" card (docs/flow-control.md "The client") in a real Chromium,
// against a PocketBase of this file's own (its queues and groups are only
// those these tests make, under names of their own): two queues with their
// held and due counts, a concurrency and a rate limit; one paused from the
// page (claim-next then gets nothing of it, and the jobs are kept) and resumed
// (claimable again); the groups that are parked, paused or at their limit
// listed, and an open one not; a park lifted through the API leaving the list
// by the page's polling alone; and a /api/fleet/flow that answers 503 or 403
// or not at all, or refuses a Pause, said on the card while the rest of the
// page keeps working.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page, Route } from "playwright-core";
import type { FleetStats, FlowRequest } from "../../src/lib/types";
import { randomKey } from "./support/fleet-api";
import {
  expectLive, expectOnlyOwnOrigin, launchBrowser, openDashboard, readCount, signIn, startDashboardServer, type Dashboard, type DashboardServer,
} from "./support/dashboard";

let browser: Browser;
let server: DashboardServer;
const opened: Dashboard[] = [];

beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startDashboardServer()]);
});
afterAll(async () => {
  await Promise.allSettled(opened.map((d) => d.context.close()));
  await Promise.allSettled([browser?.close(), server?.remove()]);
});

const FLOW = "/api/fleet/flow";
const WORKER = "dashboard-queues-worker";

/** Any path as the server's admin. */
async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(server.url + path, {
    method,
    headers: { Authorization: server.token, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : JSON.parse(text) };
}

async function setFlow(request: FlowRequest): Promise<any> {
  const res = await api("POST", FLOW, request);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.flow;
}

async function enqueue(queue: string, count: number, group?: string): Promise<void> {
  const jobs = Array.from({ length: count }, () => ({ probeKey: randomKey(`${queue}/job`), queue, ...(group === undefined ? {} : { group }) }));
  const res = await api("POST", "/api/fleet/enqueue", { jobs });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.jobs).toHaveLength(count);
}

/** The ids claim-next hands out of `queue` (at most `limit`), with a lease that outlasts the test. */
async function claimNext(queue: string, limit = 1): Promise<string[]> {
  const res = await api("POST", "/api/fleet/claim-next", { workerId: WORKER, queue, limit, leaseSeconds: 600 });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  for (const item of res.body.jobs) expect(item.job.queue).toBe(queue);
  return res.body.jobs.map((item: { job: { id: string } }) => item.job.id);
}

async function queueState(queue: string): Promise<any> {
  const res = await api("GET", `${FLOW}?queue=${encodeURIComponent(queue)}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.queues).toHaveLength(1);
  return res.body.queues[0];
}

/** The page, signed in, with the errors its console reports (0.22's expected 404 of the line detection left out). */
async function open(): Promise<{ dashboard: Dashboard; page: Page; consoleErrors: string[] }> {
  const dashboard = await openDashboard(browser, server.url, { signIn: false });
  const consoleErrors: string[] = [];
  dashboard.page.on("console", (message) => {
    const text = `${message.text()} (${message.location().url})`;
    if (message.type() === "error" && !text.includes("/api/collections/_superusers/auth-methods")) consoleErrors.push(text);
  });
  await dashboard.page.reload();
  await signIn(dashboard.page, server.email, server.password);
  opened.push(dashboard);
  return { dashboard, page: dashboard.page, consoleErrors };
}

const scopeRow = (page: Page, table: "queues" | "groups", name: string) => page.locator(`#${table} tbody tr[data-scope="${name}"]`);
/** A row's cells as the reader sees them: name, state, held, due, rate window (and the button's text). */
const cells = (page: Page, table: "queues" | "groups", name: string) => scopeRow(page, table, name).locator("td").allTextContents();
const names = (page: Page, table: "queues" | "groups") =>
  page.locator(`#${table} tbody tr`).evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset["scope"]));
const isHeldBack = (page: Page, name: string) => scopeRow(page, "queues", name).evaluate((el) => el.classList.contains("held-back"));

describe("the dashboard's Queues card", () => {
  it("shows each queue with its counts and limits, and pauses and resumes one from the page", async () => {
    const { dashboard, page, consoleErrors } = await open();
    // A fresh server: no queue has jobs or settings yet.
    await page.locator("#queues-empty").waitFor({ state: "visible", timeout: 10_000 });
    expect(await page.locator("#queues-empty").textContent()).toBe("No queue has unfinished jobs or settings.");
    expect(await page.locator("#queues").isHidden()).toBe(true);
    expect(await page.locator("#groups-empty").textContent()).toBe("No group is paused, parked or at its limit.");
    expect(await page.locator("#groups-empty").isVisible()).toBe(true);

    const [a, b] = [randomKey("qa"), randomKey("qb")];
    await setFlow({ queue: a, rateLimit: { limit: 100, periodSeconds: 60 } });
    await setFlow({ queue: b, concurrency: 1 });
    await enqueue(a, 3);
    await enqueue(b, 2);
    expect(await claimNext(a)).toHaveLength(1);
    expect(await claimNext(b, 2)).toHaveLength(1); // its concurrency: one at a time

    // The writes' events bring the figures.
    await expect.poll(() => cells(page, "queues", a), { timeout: 10_000 }).toEqual([a, "open", "1, no limit", "2", "1 of 100 per 60 s", "Pause"]);
    await expect.poll(() => cells(page, "queues", b), { timeout: 10_000 }).toEqual([b, "at its concurrency limit", "1 of 1", "1", "no limit", "Pause"]);
    expect(await names(page, "queues")).toEqual([a, b].sort());
    expect(await page.locator("#queues thead th").allTextContents()).toEqual(["Queue", "State", "Held", "Due", "Rate window", "Actions"]);
    expect(await page.locator("#queues-empty").isHidden()).toBe(true);
    expect(await page.locator("#queues-note").textContent()).toBe("");
    expect(await isHeldBack(page, a)).toBe(false);
    expect(await isHeldBack(page, b)).toBe(true);
    expect(await page.locator("#queues-error").isHidden()).toBe(true);

    // Pause a: said in words on its row and its button, at once, and done on the server.
    const pause = page.getByRole("button", { name: `Pause ${a}`, exact: true });
    await pause.click();
    await expect.poll(() => cells(page, "queues", a), { timeout: 5_000 }).toEqual([a, "paused", "1, no limit", "2", "1 of 100 per 60 s", "Resume"]);
    await expect.poll(() => page.locator("#notice").textContent()).toBe(`Paused ${a}.`);
    const resume = page.getByRole("button", { name: `Resume ${a}`, exact: true });
    expect(await resume.evaluate((el) => el === document.activeElement), "the focus stays on the button").toBe(true);
    expect(await isHeldBack(page, a)).toBe(true);
    expect((await queueState(a)).paused).toBe(true);
    expect((await queueState(b)).paused).toBe(false);
    // Nothing of a is handed out, and its jobs are kept.
    expect(await claimNext(a, 5)).toEqual([]);
    expect((await queueState(a)).due).toBe(2);
    // Re-read (the quiet refresh, at the latest), the card still says paused.
    await page.waitForTimeout(2_500);
    expect(await cells(page, "queues", a)).toEqual([a, "paused", "1, no limit", "2", "1 of 100 per 60 s", "Resume"]);

    await resume.click();
    await expect.poll(() => cells(page, "queues", a), { timeout: 5_000 }).toEqual([a, "open", "1, no limit", "2", "1 of 100 per 60 s", "Pause"]);
    await expect.poll(() => page.locator("#notice").textContent()).toBe(`Resumed ${a}.`);
    expect((await queueState(a)).paused).toBe(false);
    expect(await claimNext(a)).toHaveLength(1);
    await expect.poll(() => cells(page, "queues", a), { timeout: 10_000 }).toEqual([a, "open", "2, no limit", "1", "2 of 100 per 60 s", "Pause"]);
    expect(await cells(page, "queues", b)).toEqual([b, "at its concurrency limit", "1 of 1", "1", "no limit", "Pause"]);

    expectOnlyOwnOrigin(dashboard, server.url);
    expect(consoleErrors, "errors in the page's console").toEqual([]);
  });

  it("lists the groups that are parked, paused or at their limit, and no others", async () => {
    const { dashboard, page, consoleErrors } = await open();
    const q = randomKey("qc");
    const [parked, paused, full, idle] = [randomKey("g-parked"), randomKey("g-paused"), randomKey("g-full"), randomKey("g-idle")];
    await setFlow({ group: idle, concurrency: 5 });
    await setFlow({ group: full, concurrency: 1 });
    await setFlow({ group: paused, paused: true });
    const park = await setFlow({ group: parked, parkSeconds: 300 });
    expect(park.parkedUntil).not.toBeNull();
    await enqueue(q, 2, full);
    expect(await claimNext(q, 2)).toHaveLength(1);

    await expect.poll(() => names(page, "groups"), { timeout: 10_000 }).toEqual([full, parked, paused].sort());
    expect(await page.locator("#groups thead th").allTextContents()).toEqual(["Group", "State", "Held", "Due", "Rate window"]);
    expect(await page.locator("#groups-empty").isHidden()).toBe(true);
    expect(await cells(page, "groups", full)).toEqual([full, "at its concurrency limit", "1 of 1", "1", "no limit"]);
    expect(await cells(page, "groups", paused)).toEqual([paused, "paused", "0, no limit", "0", "no limit"]);
    const parkedState = scopeRow(page, "groups", parked).locator("td").nth(1);
    expect(await parkedState.textContent()).toMatch(/^parked, 4 min [45]\d s left$/);
    // The time left counts down.
    const first = await parkedState.textContent();
    await expect.poll(() => parkedState.textContent(), { timeout: 5_000 }).not.toBe(first);
    expect(await parkedState.textContent()).toMatch(/^parked, 4 min [45]\d s left$/);
    // Groups have no buttons: the card pauses queues.
    expect(await page.locator("#groups button").count()).toBe(0);
    // Their queue is listed with the jobs (its own figures).
    expect(await cells(page, "queues", q)).toEqual([q, "open", "1, no limit", "1", "no limit", "Pause"]);

    // Lifted through the API (a SQL write: no realtime event): the page's polling takes it off the list.
    const lifted = await setFlow({ group: parked, parkSeconds: 0 });
    expect(lifted.parkedUntil).toBeNull();
    await expect.poll(() => names(page, "groups"), { timeout: 15_000, interval: 500 }).toEqual([full, paused].sort());

    expectOnlyOwnOrigin(dashboard, server.url);
    expect(consoleErrors, "errors in the page's console").toEqual([]);
  });

  it("says on the card when /api/fleet/flow fails or refuses, and the rest of the page keeps working", async () => {
    const { dashboard, page, consoleErrors } = await open();
    const q = randomKey("qd");
    await enqueue(q, 1);
    await scopeRow(page, "queues", q).waitFor({ timeout: 10_000 });
    const error = page.locator("#queues-error");
    expect(await error.isHidden()).toBe(true);
    const isFlow = (url: URL) => url.pathname === FLOW;
    let answer: (route: Route) => Promise<void> = (route) => route.continue();
    await page.route(isFlow, (route) => answer(route));
    const pending = async () => readCount(page, "pending");
    const serverPending = async () => {
      const res = await api("GET", "/api/fleet/stats");
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body as FleetStats).counts.pending;
    };

    // A 503: the card says so, keeps its last figures, and the counts stay live.
    answer = (route) => route.fulfill({ status: 503, contentType: "application/json", body: JSON.stringify({ error: "the transaction failed; try again" }) });
    // From the server, not the page: the page may not show the last enqueue yet.
    const before = await serverPending();
    await enqueue(q, 1);
    await expect.poll(() => error.textContent(), { timeout: 10_000 }).toMatch(
      /^Reading the queues failed \(HTTP 503\): the transaction failed; try again\. The figures shown are from \d\d:\d\d:\d\d\.$/,
    );
    expect(await error.isVisible()).toBe(true);
    expect(await error.getAttribute("role")).toBe("alert");
    await expect.poll(pending, { timeout: 5_000 }).toBe(before + 1);
    expect(await cells(page, "queues", q)).toEqual([q, "open", "0, no limit", "1", "no limit", "Pause"]);

    // A 403 is the card's matter too: the session goes on.
    answer = (route) => route.fulfill({ status: 403, contentType: "application/json", body: JSON.stringify({ code: 403, message: "Not allowed here.", data: {} }) });
    await enqueue(q, 1);
    await expect.poll(() => error.textContent(), { timeout: 10_000 }).toMatch(/^Reading the queues failed \(HTTP 403\): Not allowed here\./);
    await expect.poll(pending, { timeout: 5_000 }).toBe(before + 2);
    expect(await page.locator("#signin").isHidden()).toBe(true);

    // No answer at all (of this endpoint only): said on the card, and the page stays live, with no outage banner.
    answer = (route) => route.abort("failed");
    await enqueue(q, 1);
    await expect.poll(() => error.textContent(), { timeout: 10_000 }).toMatch(/^Reading the queues failed \(no answer\): /);
    await expect.poll(pending, { timeout: 5_000 }).toBe(before + 3);
    await expectLive(page);
    expect(await page.locator("#offline").isHidden()).toBe(true);

    // Answering again: the message goes and the figures are current.
    answer = (route) => route.continue();
    await expect.poll(() => error.isHidden(), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => cells(page, "queues", q), { timeout: 10_000 }).toEqual([q, "open", "0, no limit", "4", "no limit", "Pause"]);

    // A refused Pause: said on the card; nothing changed, here or on the server.
    answer = (route) =>
      route.request().method() === "POST"
        ? route.fulfill({ status: 400, contentType: "application/json", body: JSON.stringify({ error: "exactly one of queue or group" }) })
        : route.continue();
    await page.getByRole("button", { name: `Pause ${q}`, exact: true }).click();
    await expect.poll(() => error.textContent(), { timeout: 5_000 }).toBe(`Pausing ${q} failed (HTTP 400): exactly one of queue or group`);
    expect((await queueState(q)).paused).toBe(false);
    expect(await cells(page, "queues", q)).toEqual([q, "open", "0, no limit", "4", "no limit", "Pause"]);
    // A Pause that goes through clears it.
    answer = (route) => route.continue();
    await page.getByRole("button", { name: `Pause ${q}`, exact: true }).click();
    await expect.poll(() => cells(page, "queues", q), { timeout: 5_000 }).toEqual([q, "paused", "0, no limit", "4", "no limit", "Resume"]);
    expect(await error.isHidden()).toBe(true);
    expect((await queueState(q)).paused).toBe(true);
    await page.unroute(isFlow);

    expectOnlyOwnOrigin(dashboard, server.url);
    // The browser logs the failed responses it was given: those of /api/fleet/flow only.
    expect(consoleErrors.length).toBeGreaterThan(0);
    expect(consoleErrors.filter((e) => !e.includes(FLOW)), consoleErrors.join("\n")).toEqual([]);
  });
});
