// What the dashboard's browser tests share: a real Chromium (Debian's, driven
// by playwright-core), the page opened and signed in, its numbers read from the
// DOM, and a PocketBase of a test file's own that serves the page and can be
// stopped and started again on the same port and data (own-server.ts cannot
// set --publicDir or restart).
import { existsSync, mkdirSync, mkdtempSync, copyFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { expect, inject } from "vitest";
import { ensurePocketBase } from "../../../scripts/pocketbase/binary.mjs";
import { startPocketBase } from "../../../scripts/pocketbase/server.mjs";
import { layout } from "./pocketbase-line";

/** Debian's chromium (`apt-get install -y chromium`; .ci/run installs it). Playwright's own browser download cannot work here. */
export const CHROMIUM = process.env.PB_FLEET_CHROMIUM ?? "/usr/bin/chromium";
const PUBLIC_DIR = resolve(import.meta.dirname, "../../../pb_public");

/** A missing browser fails the test (never a skip): the page is only tested in a real one. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (.ci/run does), or set PB_FLEET_CHROMIUM to its path.`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}

export interface Dashboard {
  context: BrowserContext;
  page: Page;
  /** Every URL the page asked for (it must never leave the PocketBase it came from). */
  requests: string[];
  /** Uncaught errors of the page's scripts. */
  errors: string[];
}

/** A fresh browser context (its own storage) on `${url}/fleet/`, signed in unless `signIn` is false. */
export async function openDashboard(
  browser: Browser,
  url: string,
  opts: { signIn?: boolean; email?: string; password?: string; viewport?: { width: number; height: number }; colorScheme?: "light" | "dark" } = {},
): Promise<Dashboard> {
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 800 }, colorScheme: opts.colorScheme ?? "light" });
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`${url}/fleet/`);
  if (opts.signIn !== false) await signIn(page, opts.email ?? inject("adminEmail"), opts.password ?? inject("adminPassword"));
  return { context, page, requests, errors };
}

export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.locator("#signin-email").fill(email);
  await page.locator("#signin-password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expectLive(page);
}

/** The board is shown and its realtime stream is connected. */
export async function expectLive(page: Page, timeout = 15_000): Promise<void> {
  await page.locator("#board").waitFor({ state: "visible", timeout });
  await page.locator('#connection[data-state="live"]').waitFor({ timeout });
}

/** A count card's number ("1,234" -> 1234); NaN while it shows "–". */
export async function readCount(page: Page, stat: string): Promise<number> {
  const text = await page.locator(`[data-stat="${stat}"] .count-value`).textContent();
  return Number((text ?? "").replace(/,/g, ""));
}

/** Types a probe_key prefix into the filter and waits until the page shows that filter's total. */
export async function filterByPrefix(page: Page, prefix: string, expectedTotal: number): Promise<void> {
  await page.locator("#filter-prefix").fill(prefix);
  await page.waitForURL((u) => u.searchParams.get("prefix") === prefix, { timeout: 5_000 });
  // Written only with the stats of the filter (a read for the previous filter is dropped).
  await expect.poll(() => page.locator("#filter-note").textContent(), { timeout: 10_000 }).toBe(`${expectedTotal} job${expectedTotal === 1 ? "" : "s"} match`);
  expect(await readCount(page, "total")).toBe(expectedTotal);
}

/** Every request went to the page's own PocketBase. */
export function expectOnlyOwnOrigin(dashboard: Dashboard, url: string): void {
  const origin = new URL(url).origin;
  const elsewhere = dashboard.requests.filter((r) => !r.startsWith("data:") && new URL(r).origin !== origin);
  expect(elsewhere, "the page asked another origin").toEqual([]);
  expect(dashboard.errors, "uncaught errors in the page").toEqual([]);
}

/** Clicks the button, answers the confirmation dialog with `answer`, and waits for it to close. */
export async function confirmDialog(page: Page, answer: "ok" | "cancel"): Promise<void> {
  const dialog = page.locator("dialog#confirm");
  await dialog.waitFor({ state: "visible" });
  await page.locator(answer === "ok" ? "#confirm-ok" : "#confirm-cancel").click();
  await dialog.waitFor({ state: "hidden" });
}

// ---- a PocketBase of the test file's own -----------------------------------------------------

export interface DashboardServer {
  url: string;
  token: string;
  email: string;
  password: string;
  /** Stops PocketBase (SIGTERM), keeping its data and port for start(). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and removes its folders. */
  remove(): Promise<void>;
}

const ADMIN = { adminEmail: "dashboard@pb-fleet.test", adminPassword: "dashboard-password" };

/**
 * PocketBase of the suite's version serving the line's bundle, the page
 * (--publicDir pb_public) and any test-only hooks (support/hooks*), with no
 * cron sweeps (a test decides when leases are swept).
 */
export async function startDashboardServer(opts: { testHooks?: string[]; env?: Record<string, string> } = {}): Promise<DashboardServer> {
  const binary = await ensurePocketBase({ version: inject("pbVersion") });
  const files = layout(binary.line);
  const root = mkdtempSync(join(tmpdir(), "pb-fleet-dashboard-"));
  const hooksDir = join(root, "pb_hooks");
  mkdirSync(hooksDir);
  copyFileSync(files.bundle, join(hooksDir, "fleet.pb.js"));
  for (const name of opts.testHooks ?? []) copyFileSync(join(files.testHooksDir, name), join(hooksDir, name));
  let port = 0;
  let running: Awaited<ReturnType<typeof startPocketBase>> | null = null;
  const server: DashboardServer = {
    url: "",
    token: "",
    email: ADMIN.adminEmail,
    password: ADMIN.adminPassword,
    async start() {
      running = await startPocketBase({
        binary: binary.path,
        line: binary.line,
        dataDir: join(root, "pb_data"),
        hooksDir,
        migrationsDir: files.migrationsDir,
        publicDir: PUBLIC_DIR,
        port,
        ...ADMIN,
        env: { PB_FLEET_SWEEP_CRON: "off", ...opts.env },
      });
      port = running.port;
      server.url = running.url;
      server.token = running.token;
    },
    async stop() {
      await running?.stop();
      running = null;
    },
    async remove() {
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await server.start();
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  return server;
}
