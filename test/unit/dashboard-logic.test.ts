// The dashboard's pure parts (src/dashboard, no DOM): the record-API filters of
// its bounded lists, which events make which part stale, the refresh throttle,
// the chart's numbers and the formatting. The page itself is tested in a real
// browser by test/integration/dashboard-*.test.ts.
import { describe, expect, it } from "vitest";
import type { CompletionsResponse } from "../../src/lib/completions";
import { formatPbDate } from "../../src/lib/lease";
import { bucketRates, niceCeiling, summarize } from "../../src/dashboard/chart";
import { breakSegments, formatBytes, formatCount, formatDuration, formatRate, ServerClock, truncate } from "../../src/dashboard/format";
import {
  enqueueCurl, expiredFilter, failedFilter, groupByWorker, historyOfJob, historySince, inFlightFilter, jobHistoryFilter, leaseSecondsLeft,
  identityOf, listFilterPrefix, matchesPrefix, prefixFilter, prefixQuery, queuesText, staleTopics, workerGroupsShown, WORKERS_COLLECTION, WORKERS_FIELDS,
  WORKERS_SORT, type JobRow, type ShownJobs,
} from "../../src/dashboard/queries";
import { ThrottledRefresh, type Timers } from "../../src/dashboard/throttle";
import { countLines, describeEntry, jsonText, PREVIEW_CHARS, PREVIEW_LINES, previewOf } from "../../src/dashboard/detail";
import { NOW } from "./support/rows";

const NOW_TEXT = formatPbDate(NOW);

describe("list filters", () => {
  it("in flight: held with a live lease; expired: held with a passed (or empty) lease", () => {
    expect(inFlightFilter("", NOW)).toBe(`(status = 'claimed' || status = 'running') && (lease_expires_at > '${NOW_TEXT}')`);
    expect(expiredFilter("", NOW)).toBe(`(status = 'claimed' || status = 'running') && (lease_expires_at <= '${NOW_TEXT}')`);
    expect(failedFilter("")).toBe("(status = 'failed')");
  });

  it("narrows to a prefix with the same range as stats (not the ~ operator: no case folding, no wildcards)", () => {
    expect(prefixFilter("probe/")).toBe("probe_key >= 'probe/' && probe_key < 'probe0'");
    expect(failedFilter("a%_")).toBe("(status = 'failed') && (probe_key >= 'a%_' && probe_key < 'a%`')");
    expect(prefixFilter("")).toBe("");
  });

  it("never writes a quote or backslash into a filter: such a prefix is cut before it and rows are checked on the page", () => {
    for (const prefix of ["x' || 1=1 || '", 'say "hi"', "a\\", "a\\'b", "'"]) {
      const filter = failedFilter(prefix);
      const literals = [...filter.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
      for (const text of literals) expect(text).not.toMatch(/["\\]/);
      expect(filter.split("'").length % 2).toBe(1); // balanced quotes
    }
    expect(listFilterPrefix("ab'cd")).toBe("ab");
    expect(prefixFilter("ab'cd")).toBe("probe_key >= 'ab' && probe_key < 'ac'");
    expect(prefixFilter("'x")).toBe("");
    expect(matchesPrefix("ab'cd-1", "ab'cd")).toBe(true);
    expect(matchesPrefix("abz", "ab'cd")).toBe(false);
  });

  it("sends the exact prefix to the fleet endpoints (the server builds its own range)", () => {
    expect(prefixQuery("")).toEqual({});
    expect(prefixQuery("a'b")).toEqual({ probeKeyPrefix: "a'b" });
  });
});

describe("staleTopics", () => {
  const none: ShownJobs = { inFlight: new Set(), expired: new Set(), failed: new Set() };
  const topics = (status: string, shown = none, key = "p/1", action = "update") =>
    [...staleTopics({ action, record: { id: "j1", probe_key: key, status } }, "p/", shown)].sort();

  it("re-reads the counts on every change of the filter's jobs, and nothing for other jobs", () => {
    expect(topics("pending")).toEqual(["stats"]);
    expect(topics("pending", none, "other/1")).toEqual([]);
    expect(topics("done", none, "other/1")).toEqual([]);
  });

  it("re-reads the chart when a job finishes, and the lists a job enters or leaves", () => {
    expect(topics("done")).toEqual(["completions", "stats"]);
    expect(topics("claimed")).toEqual(["expired", "inFlight", "stats"]);
    expect(topics("running")).toEqual(["expired", "inFlight", "stats"]);
    expect(topics("failed")).toEqual(["completions", "failed", "stats"]);
    expect(topics("pending", { ...none, failed: new Set(["j1"]) })).toEqual(["failed", "stats"]);
    expect(topics("cancelled", { ...none, inFlight: new Set(["j1"]) })).toEqual(["inFlight", "stats"]);
    expect(topics("pending", { ...none, expired: new Set(["j1"]) })).toEqual(["expired", "stats"]);
    expect(topics("done", none, "p/1", "delete")).toEqual(["completions", "stats"]);
  });
});

describe("groupByWorker and leases", () => {
  const job = (id: string, worker: string): JobRow => ({
    id, probe_key: `p/${id}`, status: "running", claimed_by: worker, lease_expires_at: formatPbDate(NOW + 5000), claimed_at: "",
    attempts: 1, max_attempts: 25, last_error: "", dead_lettered_at: "", finished_at: "", reclaim_count: 0,
  });

  it("groups consecutive rows of one holder, in list order", () => {
    const groups = groupByWorker([job("1", "w-a"), job("2", "w-a"), job("3", "w-b")]);
    expect(groups.map((g) => [g.workerId, g.jobs.map((j) => j.id)])).toEqual([["w-a", ["1", "2"]], ["w-b", ["3"]]]);
    expect(groupByWorker([])).toEqual([]);
  });

  it("counts a lease down against the server's time; an unreadable lease has no time left", () => {
    expect(leaseSecondsLeft(formatPbDate(NOW + 12_500), NOW)).toBe(12.5);
    expect(leaseSecondsLeft(formatPbDate(NOW - 1000), NOW)).toBe(-1);
    expect(leaseSecondsLeft("", NOW)).toBeNull();
    expect(leaseSecondsLeft(new Date(NOW).toISOString(), NOW)).toBeNull();
  });
});

/** Timers driven by the test: advance(ms) runs what falls due. */
function fakeTimers(): Timers & { advance(ms: number): Promise<void> } {
  let now = 0;
  let queue: { at: number; fn: () => void; id: number }[] = [];
  let next = 1;
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = next++;
      queue.push({ at: now + ms, fn, id });
      return id;
    },
    clearTimeout(handle) {
      queue = queue.filter((t) => t.id !== handle);
    },
    async advance(ms) {
      const end = now + ms;
      for (;;) {
        await new Promise((r) => setImmediate(r));
        const due = queue.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
        if (due === undefined) break;
        queue = queue.filter((t) => t !== due);
        now = due.at;
        due.fn();
      }
      now = end;
      await new Promise((r) => setImmediate(r));
    },
  };
}

describe("ThrottledRefresh", () => {
  it("runs a lone request at once, and folds a burst into one run per gap", async () => {
    const timers = fakeTimers();
    const starts: number[] = [];
    const refresh = new ThrottledRefresh(async () => void starts.push(timers.now()), 500, timers);
    refresh.request();
    await timers.advance(0);
    expect(starts).toEqual([0]);
    // 200 requests a second for two seconds.
    for (let t = 0; t < 2000; t += 5) {
      refresh.request();
      await timers.advance(5);
    }
    await timers.advance(1000);
    expect(starts.length).toBeGreaterThanOrEqual(4);
    expect(starts.length).toBeLessThanOrEqual(6);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(500);
    // The last request was served: a run started after it.
    expect(starts[starts.length - 1]!).toBeGreaterThanOrEqual(1995);
  });

  it("never runs twice at once: a request during a slow run makes one more run after it", async () => {
    const timers = fakeTimers();
    let running = 0;
    let most = 0;
    let runs = 0;
    const refresh = new ThrottledRefresh(async () => {
      runs++;
      most = Math.max(most, ++running);
      await new Promise<void>((resolve) => timers.setTimeout(resolve, 2000));
      running--;
    }, 100, timers);
    refresh.request();
    await timers.advance(10);
    for (let i = 0; i < 50; i++) refresh.request();
    await timers.advance(5000);
    expect(most).toBe(1);
    expect(runs).toBe(2);
  });

  it("pauses after a slow run as long as it took: a loaded server spends at most half its time on it", async () => {
    const timers = fakeTimers();
    const starts: number[] = [];
    const refresh = new ThrottledRefresh(async () => {
      starts.push(timers.now());
      await new Promise<void>((resolve) => timers.setTimeout(resolve, 800));
    }, 500, timers);
    for (let t = 0; t < 5000; t += 10) {
      refresh.request();
      await timers.advance(10);
    }
    expect(starts.slice(0, 4)).toEqual([0, 1600, 3200, 4800]);
  });

  it("keeps running after a run fails, and stops for good when stopped", async () => {
    const timers = fakeTimers();
    let runs = 0;
    const refresh = new ThrottledRefresh(async () => {
      runs++;
      throw new Error("server gone");
    }, 100, timers);
    refresh.request();
    await timers.advance(200);
    refresh.request();
    await timers.advance(0);
    expect(runs).toBe(2);
    // Inside the gap: this one waits for a timer, which stop() clears.
    await timers.advance(10);
    refresh.request();
    refresh.stop();
    refresh.request();
    await timers.advance(1000);
    expect(runs).toBe(2);
  });
});

describe("the job detail's reads", () => {
  it("finds a job's batch events by id within the retained window, never before the job existed", () => {
    const created = formatPbDate(NOW - 60_000);
    expect(historySince(NOW, created)).toBe(formatPbDate(NOW - 61_000));
    expect(historySince(NOW, formatPbDate(NOW - 3_600_000))).toBe(formatPbDate(NOW - 15 * 60_000));
    expect(historySince(NOW, "")).toBe(formatPbDate(NOW - 15 * 60_000));
    expect(jobHistoryFilter("abc123def456ghi", created)).toBe(`created >= '${created}' && changes ~ 'abc123def456ghi'`);
    for (const id of ["a'b", 'x"', "a\\b", "a%b", ""]) expect(() => jobHistoryFilter(id, created)).toThrow();
  });

  it("keeps only the job's own entries (the LIKE of ~ lets `_` match anything), newest first", () => {
    const events = [
      { id: "e1", source: "claim-next", created: "2026-01-01 10:00:00.000Z", changes: [{ id: "job_1", status: "claimed", claimed_by: "w", lease_expires_at: "L1", version: 1 }] },
      { id: "e2", source: "heartbeat", created: "2026-01-01 10:00:10.000Z", changes: [{ id: "jobx1", status: "running" }, { id: "job_1", status: "running", claimed_by: "w", lease_expires_at: "L2", version: 2 }] },
      { id: "e3", source: "sweep", created: "2026-01-01 10:00:20.000Z", changes: "not a list" },
    ];
    const history = historyOfJob(events, "job_1");
    expect(history.map((h) => [h.eventId, h.source, h.status, h.version])).toEqual([["e2", "heartbeat", "running", 2], ["e1", "claim-next", "claimed", 1]]);
    expect(describeEntry(history[0]!)).toBe("renewed by w");
    expect(describeEntry(history[1]!)).toBe("claimed by w");
    // The same event read again (a live event, then the read) is kept once.
    expect(historyOfJob([...events, events[1]!], "job_1")).toHaveLength(2);
  });

  it("cuts long JSON to a preview of its first lines, and leaves short JSON whole", () => {
    expect(jsonText(null)).toBe("");
    expect(jsonText({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(previewOf(jsonText({ a: 1 }))).toBeNull();
    const long = jsonText({ items: Array.from({ length: 5000 }, (_, i) => ({ i })) });
    const preview = previewOf(long)!;
    expect(countLines(preview)).toBeLessThanOrEqual(PREVIEW_LINES);
    expect(preview.length).toBeLessThanOrEqual(PREVIEW_CHARS);
    expect(long.startsWith(preview)).toBe(true);
    // One line of 10,000 characters: cut by length.
    expect(previewOf(JSON.stringify("x".repeat(10_000)))!.length).toBe(PREVIEW_CHARS);
    expect(countLines("a\nb\nc")).toBe(3);
    expect(countLines("a\nb\nc\nd", 2)).toBe(2);
  });
});

describe("the in-flight list", () => {
  const row = (id: string, worker: string): JobRow =>
    ({ id, probe_key: `p/${id}`, status: "claimed", claimed_by: worker, lease_expires_at: "", attempts: 1, max_attempts: 3 });

  it("shows every worker, each with its first jobs and how many more, all of an expanded one", () => {
    const rows = [...["a1", "a2", "a3", "a4"].map((id) => row(id, "wa")), row("b1", "wb"), ...["c1", "c2", "c3"].map((id) => row(id, "wc"))];
    const shown = workerGroupsShown(rows, new Set(["wc"]), 2);
    expect(shown.map((g) => [g.workerId, g.shown.map((r) => r.id), g.hidden])).toEqual([
      ["wa", ["a1", "a2"], 2],
      ["wb", ["b1"], 0],
      ["wc", ["c1", "c2", "c3"], 0],
    ]);
  });
});

describe("worker identities", () => {
  it("reads fleet_workers by name, only the fields the list shows (never the auth fields)", () => {
    expect(WORKERS_COLLECTION).toBe("fleet_workers");
    expect(WORKERS_SORT).toBe("username,id");
    expect(WORKERS_FIELDS.split(",").sort()).toEqual(["can_enqueue", "disabled", "id", "last_seen_at", "queues", "username"]);
  });

  it("writes the queues as the hooks read them: none listed is every queue, an unreadable value refuses its calls", () => {
    expect(queuesText(["emails", "reports"])).toBe("emails, reports");
    expect(queuesText(["default"])).toBe("default");
    for (const every of [[], null, undefined]) expect(queuesText(every)).toBe("every queue");
    for (const unreadable of ["emails", { queue: "emails" }, ["ok", 3], ["bad name"], ""]) {
      expect(queuesText(unreadable), JSON.stringify(unreadable)).toBe("unreadable: its calls are refused");
    }
  });

  it("reads a record as the row shows it, with safe defaults for missing fields", () => {
    expect(identityOf({ id: "w1", username: "crawler-1", queues: ["a"], can_enqueue: true, disabled: false, last_seen_at: "2026-12-02 00:30:32.057Z" }))
      .toEqual({ id: "w1", name: "crawler-1", queues: "a", canEnqueue: true, disabled: false, lastSeenAt: "2026-12-02 00:30:32.057Z" });
    expect(identityOf({ id: "w2", username: "x", queues: null, can_enqueue: false, disabled: true, last_seen_at: "" }))
      .toEqual({ id: "w2", name: "x", queues: "every queue", canEnqueue: false, disabled: true, lastSeenAt: "" });
    expect(identityOf({ id: "w3" })).toEqual({ id: "w3", name: "", queues: "every queue", canEnqueue: false, disabled: false, lastSeenAt: "" });
  });
});

describe("the empty state's shell lines", () => {
  it("sign in on the line's auth path and send JSON with its content type", () => {
    const modern = enqueueCurl("http://127.0.0.1:8090", "0.23", "ops@example.com");
    expect(modern).toContain("http://127.0.0.1:8090/api/collections/_superusers/auth-with-password");
    expect(modern).toContain('"identity":"ops@example.com"');
    expect(modern.match(/-H 'Content-Type: application\/json'/g)).toHaveLength(2);
    expect(modern).toContain(`-H "Authorization: $PB_TOKEN"`);
    expect(enqueueCurl("http://h", "0.22", "a@b.c")).toContain("http://h/api/admins/auth-with-password");
    // An email that would break the shell quoting is left for the reader to fill in.
    expect(enqueueCurl("http://h", "0.22", "o'neil@b.c")).toContain('"identity":"YOUR_EMAIL"');
  });
});

describe("the chart's numbers", () => {
  const data = (done: number[], now: number, failed: number[] = []): CompletionsResponse => ({
    now,
    bucketSeconds: 5,
    from: 0,
    to: done.length * 5000,
    buckets: done.map((d, i) => ({ start: i * 5000, done: d, failed: failed[i] ?? 0 })),
  });

  it("reports the rate of the last complete 30 s, not the bucket still filling", () => {
    const summary = summarize(data([0, 0, 10, 10, 10, 10, 10, 10, 1], 41_000), 41_000);
    expect(summary.currentRate).toBe(2);
    expect(summary.headlineBuckets).toBe(6);
    expect(summary.fillingIndex).toBe(8);
    expect(summary.totalDone).toBe(61);
    // The filling bucket counts per second it has had: 1 in 1 s.
    expect(summary.peakRate).toBe(2);
  });

  it("makes the headline the mean height of the bars it covers, failed included (the bars stack both)", () => {
    const done = [50, 0, 5, 10, 0, 20, 5, 3, 7];
    const failed = [0, 0, 5, 0, 0, 10, 0, 2, 0];
    const now = 8 * 5000 + 2500;
    const summary = summarize(data(done, now, failed), now);
    const rates = bucketRates(data(done, now, failed), now);
    const covered = rates.slice(8 - summary.headlineBuckets, 8);
    expect(covered).toHaveLength(6);
    expect(summary.currentRate).toBeCloseTo(covered.reduce((sum, r) => sum + r.done + r.failed, 0) / 6, 10);
    // Buckets 2 to 7: 10 + 10 + 0 + 30 + 5 + 5 completions in 30 s.
    expect(summary.currentRate).toBeCloseTo(60 / 30, 10);
    // The 50 of bucket 0 is older than 30 s: out of the headline, still in the peak.
    expect(summary.peakRate).toBe(10);
  });

  it("averages what there is early in a window, and says when nothing is complete yet", () => {
    expect(summarize(data([0, 10, 5], 10_000), 10_000)).toMatchObject({ currentRate: 1, headlineBuckets: 2, fillingIndex: 2 });
    expect(summarize(data([4], 2_000), 2_000)).toMatchObject({ currentRate: 0, headlineBuckets: 0, fillingIndex: 0 });
  });

  it("rounds the scale up to 1, 2 or 5 times a power of ten", () => {
    expect([0.3, 1, 1.1, 3, 7, 12, 99, 101].map(niceCeiling)).toEqual([1, 1, 2, 5, 10, 20, 100, 200]);
  });
});

describe("formatting", () => {
  it("writes durations with two units at most", () => {
    expect([0, 9.9, 59, 60, 65, 3599, 3600, 86_399, 90_000].map(formatDuration)).toEqual([
      "0 s", "9 s", "59 s", "1 min 00 s", "1 min 05 s", "59 min 59 s", "1 h 00 min", "23 h 59 min", "1 d 1 h",
    ]);
    expect(formatDuration(-5)).toBe("0 s");
  });

  it("cuts keys after their separators, so that they wrap between parts", () => {
    expect(breakSegments("crawl/host-11.example.org/page/11")).toEqual(["crawl/", "host-", "11.", "example.", "org/", "page/", "11"]);
    expect(breakSegments("a//b")).toEqual(["a//", "b"]);
    expect(breakSegments("plain")).toEqual(["plain"]);
    expect(breakSegments("")).toEqual([]);
    for (const key of ["tenant-eu-west-1/x", "a:b@c=d&e?f#g_h i", "-/-"]) expect(breakSegments(key).join("")).toBe(key);
  });

  it("writes sizes in B, kB and MB", () => {
    expect([812, 4200, 1_383_799].map(formatBytes)).toEqual(["812 B", "4.2 kB", "1.4 MB"]);
  });

  it("writes counts, rates and cut text", () => {
    expect(formatCount(100_000)).toBe("100,000");
    expect([0.04, 12.34, 250.4].map(formatRate)).toEqual(["0.0/s", "12.3/s", "250/s"]);
    expect(truncate("abcdef", 4)).toBe("abc…");
    expect(truncate("abc", 4)).toBe("abc");
  });

  it("estimates the server's clock from answers, smoothing small changes and taking big jumps at once", () => {
    let local = 1_000_000;
    const clock = new ServerClock(() => local);
    expect(clock.now()).toBe(local);
    // The answer took a quarter of its 100 ms round trip to arrive.
    clock.observe(local + 60_000 - 25, local - 100, local);
    expect(clock.now()).toBe(local + 60_000);
    // A slow answer (the server worked 2 s) says nothing about the way back beyond 50 ms.
    clock.observe(local + 60_000 + 1000 - 50, local - 2000, local);
    expect(clock.now()).toBeCloseTo(local + 60_000 + 0.2 * 1000, 5);
    clock.observe(local - 3_600_000, local, local);
    expect(clock.now()).toBe(local - 3_600_000);
    local += 500;
    expect(clock.now()).toBe(local - 3_600_000);
  });
});
