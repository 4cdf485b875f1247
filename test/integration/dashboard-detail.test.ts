// The dashboard's job detail and the legibility fixes, in a real Chromium
// against a PocketBase of this file's own serving the page (--publicDir), empty
// for the first test:
// the detail opened from each list with the job's record, progress, last error
// and its batch history from probe_job_events, followed live, and closed with
// Escape back to the button that opened it; a 1 MB payload cut to a preview and
// shown whole without freezing the page; every worker in flight listed; the
// headline rate equal to the mean of the bars it marks; long keys wrapping
// between their parts; cards that never overlap at any width; and the empty
// state's shell lines enqueueing a job exactly as printed. Each test after the
// first narrows the page to a probe_key prefix of its own.
// PB_FLEET_DASHBOARD_SCREENSHOTS=<dir> also saves the detail at desktop and phone width.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Locator, Page } from "playwright-core";
import { FleetClient } from "../../src/client/index";
import { randomKey } from "./support/fleet-api";
import {
  confirmDialog, expectLive, expectOnlyOwnOrigin, filterByPrefix, launchBrowser, openDashboard, readCount, startDashboardServer, type Dashboard,
  type DashboardServer,
} from "./support/dashboard";

const SCREENSHOTS = process.env.PB_FLEET_DASHBOARD_SCREENSHOTS ?? "";
let browser: Browser;
let server: DashboardServer;
let url: string;
let client: FleetClient;
const opened: Dashboard[] = [];

beforeAll(async () => {
  [browser, server] = await Promise.all([launchBrowser(), startDashboardServer()]);
  url = server.url;
  client = new FleetClient({ url, email: server.email, password: server.password });
});
afterAll(async () => {
  await Promise.allSettled(opened.map((d) => d.context.close()));
  await Promise.allSettled([browser?.close(), server?.remove()]);
});

async function open(opts: Parameters<typeof openDashboard>[2] = {}): Promise<Dashboard> {
  const dashboard = await openDashboard(browser, url, { email: server.email, password: server.password, ...opts });
  opened.push(dashboard);
  return dashboard;
}

/** A probe_jobs record as the record API answers it. */
async function getJob(id: string): Promise<{ [field: string]: unknown }> {
  const res = await fetch(`${url}/api/collections/probe_jobs/records/${id}`, { headers: { Authorization: server.token } });
  expect(res.status).toBe(200);
  return (await res.json()) as { [field: string]: unknown };
}

const jobRow = (page: Page, table: string, jobId: string) => page.locator(`#${table} tr[data-job-id="${jobId}"]`);
const detail = (page: Page) => page.locator("dialog#job-detail");
const isFocused = (locator: Locator) => locator.evaluate((el) => el === document.activeElement);
/**
 * The dialog's close event, which moves the focus back, is a task of its own
 * after the dialog is hidden: the focus is polled for, not read once (CI read
 * it before the task had run).
 */
const focusMovesTo = (locator: Locator, message?: string) => expect.poll(() => isFocused(locator), { message, timeout: 2_000 }).toBe(true);
const historySources = (page: Page) => page.locator("#detail-history tbody td.source").allTextContents();

/** Opens a row's detail from the keyboard (focus on the row's job button, Enter) and waits for its record. */
async function openFromRow(page: Page, table: string, jobId: string, probeKey: string): Promise<Locator> {
  const button = jobRow(page, table, jobId).locator("button[data-detail]");
  await button.focus();
  await page.keyboard.press("Enter");
  await detail(page).waitFor({ state: "visible" });
  await expect.poll(() => page.locator("#detail-title").textContent()).toBe(probeKey);
  expect(new URL(page.url()).searchParams.get("job")).toBe(jobId);
  return button;
}

describe("the empty state", () => {
  it("prints shell lines that sign in and enqueue a job exactly as printed (the server has no job yet)", async () => {
    const dashboard = await open();
    const { page } = dashboard;
    await page.locator("#empty").waitFor({ state: "visible" });
    expect(await page.locator("#empty-title").textContent()).toBe("No jobs yet");
    const printed = (await page.locator("#empty-curl").textContent()) ?? "";
    expect(printed.match(/-H 'Content-Type: application\/json'/g)).toHaveLength(2);
    expect(printed).toContain(server.email);
    execFileSync("bash", ["-euo", "pipefail", "-c", printed.replace("YOUR_PASSWORD", server.password)], { stdio: "pipe", timeout: 20_000 });
    await expect.poll(() => readCount(page, "pending"), { timeout: 5_000 }).toBe(1);
    await page.locator("#empty").waitFor({ state: "hidden" });
    expectOnlyOwnOrigin(dashboard, server.url);
  });
});

describe("the job detail", () => {
  it("opens from each list with the job's record and batch history, follows it live, and closes with Escape back to its opener", async () => {
    const prefix = randomKey("dash-detail") + "/";
    const worker = randomKey("detail-worker");
    const [held, lapsed, failing] = await client.enqueueMany([
      { probeKey: `${prefix}held`, payload: { url: "https://a.example/held" } },
      { probeKey: `${prefix}lapsed` },
      { probeKey: `${prefix}failing`, maxAttempts: 1 },
    ]);
    // Batch endpoints write probe_job_events: claim-next, heartbeat (with progress), complete.
    const [claimed] = await client.claimNext({ workerId: worker, leaseSeconds: 60, limit: 1, probeKeyPrefix: `${prefix}held` });
    expect(claimed!.job.id).toBe(held!.id);
    await client.heartbeat(worker, [{ jobId: held!.id, leaseToken: claimed!.leaseToken, progress: { step: 2, of: 5 } }], { leaseSeconds: 60 });
    const [toFail] = await client.claimNext({ workerId: worker, leaseSeconds: 60, limit: 1, probeKeyPrefix: `${prefix}failing` });
    await client.complete(worker, [{ jobId: failing!.id, leaseToken: toFail!.leaseToken, status: "failed", error: "upstream answered 502" }]);
    // A claim by id writes no event: its history is empty.
    expect(await client.claim(lapsed!.id, "gone-worker", 1)).toMatchObject({ claimed: true });

    const dashboard = await open();
    const { page } = dashboard;
    await filterByPrefix(page, prefix, 3);
    await jobRow(page, "in-flight", held!.id).waitFor();
    await jobRow(page, "failed", failing!.id).waitFor();
    await jobRow(page, "expired", lapsed!.id).waitFor({ timeout: 6_000 });

    // In flight: record, progress, payload and the batch history, newest first.
    const heldButton = await openFromRow(page, "in-flight", held!.id, `${prefix}held`);
    expect(await page.locator("#detail-status").textContent()).toBe("running");
    expect(await page.locator("#detail-fields").textContent()).toContain(`Held by${worker}`);
    expect(await page.locator("#detail-fields").textContent()).toContain("running: its holder has renewed the lease");
    expect(JSON.parse((await page.locator("#detail-progress pre").textContent()) ?? "")).toEqual({ step: 2, of: 5 });
    expect(JSON.parse((await page.locator("#detail-payload pre").textContent()) ?? "")).toEqual({ url: "https://a.example/held" });
    await expect.poll(() => historySources(page)).toEqual(["heartbeat", "claim-next"]);
    expect(await page.locator("#detail-history-note").textContent()).toContain("2 transitions");
    expect(await page.locator("#job-detail").textContent()).toContain("last 15 minutes");
    // Live: a heartbeat while it is open adds its transition with no reload.
    await client.heartbeat(worker, [{ jobId: held!.id, leaseToken: claimed!.leaseToken, progress: { step: 3, of: 5 } }], { leaseSeconds: 60 });
    await expect.poll(() => historySources(page), { timeout: 5_000 }).toEqual(["heartbeat", "heartbeat", "claim-next"]);
    await expect.poll(async () => JSON.parse((await page.locator("#detail-progress pre").textContent()) ?? "null"), { timeout: 5_000 }).toEqual({ step: 3, of: 5 });
    await page.keyboard.press("Escape");
    await detail(page).waitFor({ state: "hidden" });
    await focusMovesTo(heldButton, "the focus is back on the button that opened it");
    expect(new URL(page.url()).searchParams.get("job")).toBeNull();

    // Expired: no batch event (claimed by id), a Re-queue offered.
    const lapsedButton = await openFromRow(page, "expired", lapsed!.id, `${prefix}lapsed`);
    await expect.poll(() => page.locator("#detail-history-note").textContent()).toBe("No batch transition of this job in the last 15 minutes.");
    expect(await page.locator("#detail-actions button").allTextContents()).toEqual(["Re-queue", "Cancel job"]);
    expect(await page.locator("#detail-fields").textContent()).toContain("expired");
    await page.locator("#detail-close").click();
    await detail(page).waitFor({ state: "hidden" });
    await focusMovesTo(lapsedButton);

    // Failed: its last error, its history, and Retry from the detail, which follows the job to pending.
    await openFromRow(page, "failed", failing!.id, `${prefix}failing`);
    const deadLettered = (await getJob(failing!.id)).dead_lettered_at !== "";
    expect(await page.locator("#detail-status").textContent()).toBe(deadLettered ? "failed · dead-lettered" : "failed");
    expect(await page.locator("#detail-last-error").textContent()).toBe("upstream answered 502");
    await expect.poll(() => historySources(page)).toEqual(["complete", "claim-next"]);
    expect(await page.locator("#detail-history tbody td.status").allTextContents()).toEqual(["failed", `claimed by ${worker}`]);
    await page.locator("#detail-actions").getByRole("button", { name: "Retry" }).click();
    await confirmDialog(page, "ok");
    await expect.poll(() => page.locator("#notice").textContent()).toBe(`Retried ${prefix}failing: pending again.`);
    await expect.poll(() => page.locator("#detail-status").textContent(), { timeout: 5_000 }).toBe("pending");
    expect((await getJob(failing!.id)).status).toBe("pending");
    await jobRow(page, "failed", failing!.id).waitFor({ state: "detached" });
    await page.keyboard.press("Escape");
    await detail(page).waitFor({ state: "hidden" });
    // Its row is gone: the focus goes to the list it was opened from.
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("aria-labelledby")), { timeout: 2_000 }).toBe("failed-title");
    expectOnlyOwnOrigin(dashboard, url);
  });

  it("shows a 1 MB payload cut to a preview, and all of it on demand without freezing the page (a link to ?job= opens it)", async () => {
    const prefix = randomKey("dash-big") + "/";
    const payload = { items: Array.from({ length: 11_000 }, (_, i) => ({ i, tags: ["a", "b"], url: `https://example.com/articles/${i}/section` })) };
    const bytes = JSON.stringify(payload).length;
    expect(bytes).toBeGreaterThan(700_000);
    const { id } = await client.enqueue(`${prefix}big`, { payload });
    const dashboard = await open();
    const { page } = dashboard;
    await page.goto(`${url}/fleet/?job=${id}`);
    await expectLive(page);
    await detail(page).waitFor({ state: "visible" });
    await expect.poll(() => page.locator("#detail-title").textContent()).toBe(`${prefix}big`);
    // Its indented text has these lines and length whatever order the server gives each object's keys in (it does not keep them).
    const indented = JSON.stringify(payload, null, 2);
    const lines = indented.split("\n").length;
    const preview = ((await page.locator("#detail-payload pre").textContent()) ?? "").replace(/\n…$/, "");
    expect(preview.length).toBeLessThan(2_100);
    expect(preview.split("\n").length).toBeLessThanOrEqual(30);
    expect(await page.locator("#detail-payload .json-note").textContent()).toContain(`of ${lines.toLocaleString("en-US")}`);

    await page.evaluate(() => {
      const w = window as unknown as { longestTask: number };
      w.longestTask = 0;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) w.longestTask = Math.max(w.longestTask, entry.duration);
      }).observe({ type: "longtask" });
    });
    await page.locator("#detail-payload").getByRole("button", { name: /^Show all/ }).click();
    const all = page.locator("#detail-payload .json.whole");
    await all.waitFor();
    const shown = (await all.textContent()) ?? "";
    expect(shown.length).toBe(indented.length);
    expect(shown.startsWith(preview)).toBe(true);
    expect(JSON.parse(shown)).toEqual(payload);
    expect(await isFocused(all)).toBe(true);
    await all.evaluate((el) => (el.scrollTop = el.scrollHeight));
    await expect.poll(() => all.locator(".chunk").last().textContent()).toMatch(/\]\n}$/);
    // The page kept answering: no task anywhere near a frozen second.
    await page.waitForTimeout(300);
    const longest = await page.evaluate(() => (window as unknown as { longestTask: number }).longestTask);
    console.log(`[dashboard] ${(bytes / 1e6).toFixed(2)} MB payload shown whole; longest main-thread task ${longest.toFixed(0)} ms`);
    expect(longest).toBeLessThan(700);
    // The rest of the page stays live underneath.
    expect(await page.locator("#connection").getAttribute("data-state")).toBe("live");
    expectOnlyOwnOrigin(dashboard, url);
  });
});

describe("legibility", () => {
  it("lists every worker in flight with a few jobs each, how many more, and a button for the rest; one In flight count explains claimed and running", async () => {
    const prefix = randomKey("dash-workers") + "/";
    const WORKERS = 7;
    const EACH = 7;
    await client.enqueueMany(Array.from({ length: WORKERS * EACH }, (_, i) => ({ probeKey: `${prefix}${String(i).padStart(3, "0")}` })));
    const workers = Array.from({ length: WORKERS }, (_, w) => `${prefix.slice(0, -1)}-w${w}`);
    for (const workerId of workers) {
      const won = await client.claimNext({ workerId, leaseSeconds: 120, limit: EACH, probeKeyPrefix: prefix });
      expect(won).toHaveLength(EACH);
    }
    const dashboard = await open();
    const { page } = dashboard;
    await filterByPrefix(page, prefix, WORKERS * EACH);
    await expect.poll(() => page.locator("#in-flight tr.group").count(), { timeout: 5_000 }).toBe(WORKERS);
    expect((await page.locator("#in-flight tr.group").allTextContents()).sort()).toEqual(workers.map((w) => `${w} · ${EACH} jobs`).sort());
    expect(await page.locator("#in-flight tr[data-job-id]").count()).toBe(WORKERS * 5);
    expect(await page.locator("#in-flight tr.more .more-text").allTextContents()).toEqual(Array(WORKERS).fill("+ 2 more jobs held by this worker "));
    expect(await page.locator("#in-flight-note").textContent()).toBe(`${WORKERS} workers · ${WORKERS * EACH} jobs`);

    const first = page.locator("#in-flight tr.more").first().getByRole("button");
    expect(await first.getAttribute("aria-expanded")).toBe("false");
    await first.click();
    await expect.poll(() => page.locator("#in-flight tr[data-job-id]").count()).toBe(WORKERS * 5 + 2);
    expect(await first.textContent()).toBe("Show fewer");
    expect(await first.getAttribute("aria-expanded")).toBe("true");

    // Claimed and running are one "In flight" number; the hint splits it.
    expect(await readCount(page, "in-flight")).toBe(WORKERS * EACH);
    expect(await page.locator('[data-stat="in-flight"] .count-hint').textContent()).toBe(`0 running (renewed) · ${WORKERS * EACH} claimed (not yet renewed)`);
    expect(await page.locator("#in-flight .card-help, section[aria-labelledby=in-flight-title] .card-help").textContent()).toContain("claimed: a worker won the job");
    expectOnlyOwnOrigin(dashboard, url);
  });

  it("shows the headline rate as the mean of the bars it marks, done and failed alike", async () => {
    const prefix = randomKey("dash-rate") + "/";
    const worker = randomKey("rate-worker");
    await client.enqueueMany(Array.from({ length: 30 }, (_, i) => ({ probeKey: `${prefix}${i}` })));
    const dashboard = await open();
    const { page } = dashboard;
    await filterByPrefix(page, prefix, 30);
    const held = await client.claimNext({ workerId: worker, leaseSeconds: 60, limit: 30, probeKeyPrefix: prefix });
    await client.complete(worker, held.map((h, i) => ({ jobId: h.job.id, leaseToken: h.leaseToken, status: i < 24 ? "done" : "failed", error: i < 24 ? undefined : "no" })));
    // Once the bucket holding them is complete (at most 5 s), the headline counts it: a rate above 0 (not the
    // "" a filter change leaves until the chart's own answer, nor 0.0/s).
    await expect.poll(() => page.locator("#chart-rate").textContent(), { timeout: 12_000 }).toMatch(/^(?!0\.0\/s$)\d+\.\d\/s$/);
    const chart = await page.locator("#chart-svg").evaluate((svg) => {
      const rateLine = svg.querySelector("line.rate-line")!;
      const [x1, x2] = [Number(rateLine.getAttribute("x1")), Number(rateLine.getAttribute("x2"))];
      const top = Number((svg as SVGSVGElement).dataset["top"]);
      const bars = Array.from(svg.querySelectorAll("rect")).map((r) => ({
        x: Number(r.getAttribute("x")), height: Number(r.getAttribute("height")), filling: r.classList.contains("filling"),
      }));
      const marked = bars.filter((b) => b.x >= x1 && b.x < x2);
      return { x1, x2, top, marked, rate: Number((svg as SVGSVGElement).dataset["rate"]), slots: svg.querySelectorAll("rect").length };
    });
    // 60 buckets over a 600-wide chart: 10 units a slot; 6 marked buckets make the last 30 s.
    const slotWidth = 10;
    const markedSlots = Math.round((chart.x2 - chart.x1) / slotWidth);
    expect(markedSlots).toBe(6);
    expect(chart.marked.some((b) => b.filling)).toBe(false);
    const mean = chart.marked.reduce((sum, b) => sum + (b.height / 120) * chart.top, 0) / markedSlots;
    expect(Math.abs(mean - chart.rate)).toBeLessThan(0.01);
    // 30 completions (done and failed) inside 30 s: 1.0/s.
    expect(chart.rate).toBeCloseTo(1, 5);
    expect(await page.locator("#chart-rate").textContent()).toBe("1.0/s");
    expect(await page.locator("#chart-rate-note").textContent()).toBe("done + failed, mean of the last 30 s (the marked bars)");
    expectOnlyOwnOrigin(dashboard, url);
  });

  it("wraps long keys between their parts at phone width, in dark mode, detail included", async () => {
    const prefix = randomKey("dash-wrap") + "/";
    const key = `${prefix}tenant-eu-west-1/crawler/https-www-example-com/section/articles/very-long-article-name-2024`;
    const { id } = await client.enqueue(key);
    expect(await client.claim(id, randomKey("wrap-worker-on-a-rather-long-hostname.internal"), 120)).toMatchObject({ claimed: true });
    const dashboard = await open({ viewport: { width: 390, height: 844 }, colorScheme: "dark" });
    const { page } = dashboard;
    await filterByPrefix(page, prefix, 1);
    const keyEl = jobRow(page, "in-flight", id).locator(".probe-key");
    await keyEl.waitFor();
    /** The character before each line break of an element's text. */
    const breaksOf = (locator: Locator) => locator.evaluate((el) => {
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      const chars: { ch: string; top: number }[] = [];
      for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
        for (let i = 0; i < node.textContent!.length; i++) {
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          chars.push({ ch: node.textContent![i]!, top: range.getBoundingClientRect().top });
        }
      }
      return chars.flatMap((c, i) => (i > 0 && c.top > chars[i - 1]!.top + 2 ? [chars[i - 1]!.ch] : []));
    });
    const breaks = await breaksOf(keyEl);
    expect(breaks.length, "the key is longer than the phone is wide: it wraps").toBeGreaterThan(0);
    for (const ch of breaks) expect(ch).toMatch(/[/:._\-@=&?#]/);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);

    await jobRow(page, "in-flight", id).locator("button[data-detail]").click();
    await detail(page).waitFor({ state: "visible" });
    await expect.poll(() => page.locator("#detail-title").textContent()).toBe(key);
    const titleBreaks = await breaksOf(page.locator("#detail-title"));
    expect(titleBreaks.length).toBeGreaterThan(0);
    for (const ch of titleBreaks) expect(ch).toMatch(/[/:._\-@=&?#]/);
    // The detail fills the phone's screen and nothing in it is wider.
    const box = await detail(page).evaluate((el) => ({ width: el.getBoundingClientRect().width, scroll: el.scrollWidth, client: el.clientWidth }));
    expect(box.width).toBeLessThanOrEqual(390);
    expect(box.scroll).toBeLessThanOrEqual(box.client);
    const look = await detail(page).evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(look.match(/\d+/g)!.slice(0, 3).map(Number).reduce((a, b) => a + b, 0) / 3).toBeLessThan(60);
    if (SCREENSHOTS !== "") {
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, "detail-phone-dark.png") });
    }
    await page.keyboard.press("Escape");
    await detail(page).waitFor({ state: "hidden" });
    expectOnlyOwnOrigin(dashboard, url);
  });

  it("never lets two cards overlap, nor a card's content spill out of it, from 320 to 1440 pixels wide", async () => {
    const prefix = randomKey("dash-cards") + "/";
    const [job] = await client.enqueueMany([{ probeKey: `${prefix}a-key-with-a-long-segment-${"x".repeat(40)}` }]);
    expect(await client.claim(job!.id, `${prefix}w`, 120)).toMatchObject({ claimed: true });
    const dashboard = await open();
    const { page } = dashboard;
    await filterByPrefix(page, prefix, 1);
    await jobRow(page, "in-flight", job!.id).waitFor();
    const problems: string[] = [];
    for (let width = 320; width <= 1440; width += 40) {
      await page.setViewportSize({ width, height: 900 });
      problems.push(...(await page.evaluate((w) => {
        // The widest numbers a big fleet shows.
        for (const value of Array.from(document.querySelectorAll(".count-value"))) value.textContent = "12,345,678";
        const found: string[] = [];
        const boxes = Array.from(document.querySelectorAll<HTMLElement>(".card, .count")).filter((el) => el.offsetParent !== null);
        const rects = boxes.map((b) => b.getBoundingClientRect());
        const name = (el: HTMLElement) => el.dataset["stat"] ?? el.getAttribute("aria-labelledby") ?? el.id;
        boxes.forEach((a, i) => boxes.forEach((b, j) => {
          const [ra, rb] = [rects[i]!, rects[j]!];
          if (j > i && ra.left < rb.right - 0.5 && rb.left < ra.right - 0.5 && ra.top < rb.bottom - 0.5 && rb.top < ra.bottom - 0.5) found.push(`${w}px: ${name(a)} overlaps ${name(b)}`);
        }));
        boxes.forEach((box, i) => {
          for (const child of Array.from(box.querySelectorAll<HTMLElement>("*"))) {
            const r = child.getBoundingClientRect();
            // Tables scroll inside their own box (with a shadow at the edge that has more).
            if (r.width > 0 && !child.closest(".table-wrap") && r.right > rects[i]!.right + 0.5) found.push(`${w}px: ${child.className || child.tagName} spills out of ${name(box)}`);
          }
        });
        if (document.documentElement.scrollWidth > window.innerWidth) found.push(`${w}px: the page scrolls sideways`);
        return found;
      }, width)));
    }
    expect(problems).toEqual([]);
    // At phone width the rows are stacked: nothing of a list is scrolled out of sight sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    for (const table of ["in-flight", "expired", "failed"]) {
      expect(await page.locator(`#${table}`).evaluate((el) => el.parentElement!.scrollWidth <= el.parentElement!.clientWidth + 1), table).toBe(true);
    }
    expectOnlyOwnOrigin(dashboard, url);
  });
});

if (SCREENSHOTS !== "") {
  describe("screenshots", () => {
    it("saves the detail at desktop width in light mode", async () => {
      const prefix = randomKey("dash-shot") + "/";
      const worker = "worker-1.fleet.internal";
      await client.enqueueMany([{ probeKey: `${prefix}crawl/https-www-example-com/articles/2024/very-long-article-name`, payload: { url: "https://www.example.com/articles/2024/very-long-article-name", depth: 2, items: Array.from({ length: 200 }, (_, i) => ({ i, tag: `t-${i}` })) } }]);
      const [held] = await client.claimNext({ workerId: worker, leaseSeconds: 60, limit: 1, probeKeyPrefix: prefix });
      await client.heartbeat(worker, [{ jobId: held!.job.id, leaseToken: held!.leaseToken, progress: { pages: 14, of: 40 } }], { leaseSeconds: 60 });
      const dashboard = await open();
      const { page } = dashboard;
      await filterByPrefix(page, prefix, 1);
      await jobRow(page, "in-flight", held!.job.id).locator("button[data-detail]").click();
      await expect.poll(() => historySources(page)).toEqual(["heartbeat", "claim-next"]);
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, "detail-desktop-light.png") });
    });
  });
}
