// Issue 18: every PocketBase pb-fleet starts runs without dev mode. PocketBase
// 0.36+ turns dev mode on by itself for a binary under the Go cache directory
// (GOCACHE, else ~/.cache: it takes those for `go run`), and pb-fleet keeps its
// binaries in ~/.cache/pb-fleet; in dev mode PocketBase prints every SQL
// statement it runs ("[0.52ms] SELECT ...") and every log line to its output,
// and (0.23+) serves the admin UI's files without their production
// Cache-Control. Both are checked on the suite's own server, on a server of
// scripts/pocketbase/server.mjs (what npm start, the test servers and the bench
// use), and, as the control that the checks can see dev mode at all, on a
// server started with dev mode on.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { containerOutputAt } from "./support/container";
import { startOwnServer } from "./support/own-server";

const repoRoot = resolve(import.meta.dirname, "../..");

/** A statement as dev mode prints it: `[<ms>ms] <SQL>` (both hooks lines). */
const SQL_LINE = /^\[\d+\.\d+ms\] +(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|WITH)\b/i;
const sqlLines = (output: string) => output.split("\n").filter((l) => SQL_LINE.test(l));

/** Cache-Control that PocketBase 0.23+ puts on the admin UI's files outside dev mode. */
const UI_CACHE_CONTROL = "max-age=1209600, stale-while-revalidate=86400";
/** A file of the admin UI every binary embeds. */
const UI_FILE = "/_/images/logo.svg";

/** Requests that make PocketBase run SQL: an authenticated stats read and a record list. */
async function runSomeQueries(url: string, token: string): Promise<void> {
  for (const path of ["/api/fleet/stats", "/api/collections/probe_jobs/records?perPage=1"]) {
    const res = await fetch(new URL(path, url), { headers: { Authorization: token } });
    expect(res.status, `GET ${path}`).toBe(200);
    await res.arrayBuffer();
  }
}

async function uiCacheControl(url: string): Promise<string | null> {
  const res = await fetch(new URL(UI_FILE, url));
  expect(res.status, `GET ${UI_FILE}`).toBe(200);
  await res.arrayBuffer();
  return res.headers.get("cache-control");
}

/** argv of the local process serving 127.0.0.1:<port>, with its pid; null when none does. */
function localServerProcess(url: string): { pid: number; argv: string[] } | null {
  const address = `127.0.0.1:${new URL(url).port}`;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean);
    } catch {
      continue; // gone, or not ours to read
    }
    if (argv.includes("serve") && argv.some((a) => a === address || a === `--http=${address}`)) return { pid: Number(entry), argv };
  }
  return null;
}

/** What a local process has written to its stdout (a file, as server.mjs starts PocketBase). */
function stdoutOf(pid: number): string {
  return readFileSync(readlinkSync(`/proc/${pid}/fd/1`), "utf8");
}

describe("PocketBase runs without dev mode (issue 18)", () => {
  const line = inject("pbLine");
  const modern = line === "0.23";
  // Dev mode leaves the admin UI's Cache-Control out on 0.40 (apis/serve.go checks IsDev); 0.23.12 and 0.36.8 send
  // it either way, so there only the printed SQL tells dev mode.
  const [minor] = inject("pbVersion").split(".").slice(1).map(Number) as [number];
  const devDropsUiCache = modern && minor >= 40;

  it("the suite's own server prints no SQL statement (and on 0.23+ serves the admin UI with its production Cache-Control)", async () => {
    const url = inject("pbUrl");
    const mode = inject("pbMode");
    await runSomeQueries(url, inject("adminToken"));
    let output: string | null = null;
    if (mode === "spawn") {
      const proc = localServerProcess(url);
      expect(proc, `a local process serving ${url}`).not.toBeNull();
      output = stdoutOf(proc!.pid);
      expect(sqlLines(output).slice(0, 5)).toEqual([]);
      expect(proc!.argv).toContain("--dev=false");
    } else if (mode === "container") {
      output = await containerOutputAt(url);
      expect(output, `the output of the container publishing ${url}`).not.toBeNull();
    }
    if (output !== null) {
      expect(output).toMatch(/Server started at/);
      expect(sqlLines(output).slice(0, 5)).toEqual([]);
    }
    if (modern) expect(await uiCacheControl(url)).toBe(UI_CACHE_CONTROL);
    else expect((await fetch(new URL("/api/health", url))).status).toBe(200);
  });

  it("a server started by scripts/pocketbase/server.mjs (npm start, test servers, the bench) passes --dev=false and prints no SQL statement", async () => {
    const server = await startOwnServer();
    try {
      await runSomeQueries(server.url, server.token);
      const output = readFileSync(server.logFile, "utf8");
      expect(output).toMatch(/Server started at/);
      expect(sqlLines(output).slice(0, 5)).toEqual([]);
      expect(readFileSync(`/proc/${server.pid}/cmdline`, "utf8").split("\0")).toContain("--dev=false");
      if (modern) expect(await uiCacheControl(server.url)).toBe(UI_CACHE_CONTROL);
    } finally {
      await server.stop();
    }
  });

  it("the same checks see dev mode when it is on (the control)", async () => {
    const server = await startOwnServer({ dev: true });
    try {
      await runSomeQueries(server.url, server.token);
      const output = readFileSync(server.logFile, "utf8");
      expect(sqlLines(output).length).toBeGreaterThan(0);
      expect(sqlLines(output).some((l) => /probe_jobs/.test(l))).toBe(true);
      if (devDropsUiCache) expect(await uiCacheControl(server.url)).toBeNull();
    } finally {
      await server.stop();
    }
  });

  it("the Docker image's CMD and docker-compose.yml's command pass --dev=false", () => {
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(repoRoot, "Dockerfile"), "utf8"));
    expect(cmd, "the Dockerfile's CMD line").not.toBeNull();
    const args = JSON.parse(cmd![1]!) as string[];
    expect(args[0]).toBe("serve");
    expect(args).toContain("--dev=false");
    const compose = readFileSync(join(repoRoot, "docker-compose.yml"), "utf8");
    const command = /^ {4}command:\n((?: {6}(?:- .*|#.*)\n)+)/m.exec(compose);
    expect(command, "docker-compose.yml's command list").not.toBeNull();
    const items = command![1]!.split("\n").map((l) => l.trim()).filter((l) => l.startsWith("- ")).map((l) => l.slice(2));
    expect(items[0]).toBe("serve");
    expect(items).toContain("--dev=false");
  });
});
