import { describe, expect, it } from "vitest";
import {
  buildCompletions, completionsQuery, completionsWindow, COMPLETIONS_ROW_SHAPE, countedCompletionsQuery, MAX_BUCKETS,
  MAX_WINDOW_SECONDS, parseCompletionsParams,
} from "../../src/lib/completions";
import { JOB_COMPLETIONS_KEEP_SECONDS, pruneCompletionsStatement } from "../../src/lib/job-counts";
import { formatPbDate } from "../../src/lib/lease";
import type { WhereClause } from "../../src/lib/queries";
import { NOW } from "./support/rows";

function expectPlaceholdersBound({ sql, params }: WhereClause) {
  const used = [...sql.matchAll(/\{:(\w+)\}/g)].map((m) => m[1]).sort();
  expect([...new Set(used)]).toEqual(Object.keys(params).sort());
}

describe("parseCompletionsParams", () => {
  it("defaults to five minutes in five-second buckets", () => {
    expect(parseCompletionsParams("", "")).toEqual({ ok: true, windowSeconds: 300, bucketSeconds: 5 });
  });

  it("takes whole numbers within bounds", () => {
    expect(parseCompletionsParams("600", "10")).toEqual({ ok: true, windowSeconds: 600, bucketSeconds: 10 });
    expect(parseCompletionsParams("3600", "600")).toEqual({ ok: true, windowSeconds: 3600, bucketSeconds: 600 });
  });

  it.each([
    ["0", "5"], ["3601", "5"], ["1.5", "5"], ["-10", "5"], ["abc", "5"], ["1e3", "5"], ["300", "0"], ["300", "601"], ["300", " 5"],
  ])("refuses windowSeconds=%j bucketSeconds=%j with a sentence", (window, bucket) => {
    const parsed = parseCompletionsParams(window, bucket);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(/must be/);
  });

  it(`refuses more than ${MAX_BUCKETS} buckets`, () => {
    expect(parseCompletionsParams("3600", "1").ok).toBe(false);
    expect(parseCompletionsParams("720", "1").ok).toBe(true);
  });
});

describe("completionsWindow", () => {
  it("ends with the bucket holding now and starts on a multiple of the bucket", () => {
    const now = Date.UTC(2025, 0, 15, 12, 0, 7, 250);
    const window = completionsWindow(now, 60, 5);
    expect(window.count).toBe(12);
    expect(window.fromMs % 5000).toBe(0);
    expect(window.toMs).toBe(Date.UTC(2025, 0, 15, 12, 0, 10));
    expect(window.fromMs).toBe(window.toMs - 60_000);
    expect(now >= window.toMs - 5000 && now < window.toMs).toBe(true);
  });

  it("rounds a window that is not a whole number of buckets up", () => {
    expect(completionsWindow(NOW, 61, 5).count).toBe(13);
  });

  it("gives the same buckets to calls inside one bucket", () => {
    expect(completionsWindow(NOW + 100, 300, 5)).toEqual(completionsWindow(NOW + 4900, 300, 5));
  });
});

describe("completionsQuery", () => {
  const window = completionsWindow(NOW, 300, 5);

  it("reads done and failed rows finished inside the window, as bound text in PocketBase's layout", () => {
    const query = completionsQuery(window, "");
    expectPlaceholdersBound(query);
    expect(query.params).toMatchObject({ from: formatPbDate(window.fromMs), to: formatPbDate(window.toMs), bucketSeconds: 5, fromSeconds: window.fromMs / 1000 });
    expect(query.sql).toContain("status IN ('done', 'failed') AND finished_at != '' AND finished_at >= {:from} AND finished_at < {:to}");
    expect(query.sql).not.toContain("probe_key");
  });

  it("narrows to a prefix with a range, never LIKE, and binds hostile text", () => {
    for (const prefix of ["probe/", "x' OR 1=1 --", "a%b_c\\d"]) {
      const query = completionsQuery(window, prefix);
      expectPlaceholdersBound(query);
      expect(query.sql).toContain("probe_key >= {:prefix} AND probe_key < {:prefixEnd}");
      expect(query.sql).not.toContain(prefix);
      expect(query.sql).not.toMatch(/LIKE/i);
      expect(query.params["prefix"]).toBe(prefix);
    }
    expect(completionsQuery(window, "probe/").params["prefixEnd"]).toBe("probe0");
  });

  it("divides whole seconds (numbers may be bound as floats)", () => {
    expect(completionsQuery(window, "").sql).toContain("CAST({:bucketSeconds} AS INTEGER)");
  });
});

describe("buildCompletions", () => {
  const window = completionsWindow(NOW, 30, 5);

  it("answers every bucket in time order, zeros where nothing finished", () => {
    const answer = buildCompletions({ buckets: "0:2:1,5:7:0", counts_ready: 1 }, window, NOW);
    expect(answer).toMatchObject({ now: NOW, bucketSeconds: 5, from: window.fromMs, to: window.toMs });
    expect(answer.buckets).toHaveLength(6);
    expect(answer.buckets.map((b) => [b.done, b.failed])).toEqual([[2, 1], [0, 0], [0, 0], [0, 0], [0, 0], [7, 0]]);
    expect(answer.buckets.map((b) => b.start)).toEqual([0, 1, 2, 3, 4, 5].map((i) => window.fromMs + i * 5000));
  });

  it("answers an empty window for an empty row, and ignores entries outside it or unreadable", () => {
    expect(buildCompletions(COMPLETIONS_ROW_SHAPE, window, NOW).buckets.every((b) => b.done === 0 && b.failed === 0)).toBe(true);
    const answer = buildCompletions({ buckets: "-1:5:5,6:5:5,x:1:1,2:3:y", counts_ready: 1 }, window, NOW);
    expect(answer.buckets.map((b) => [b.done, b.failed])).toEqual([[0, 0], [0, 0], [3, 0], [0, 0], [0, 0], [0, 0]]);
  });
});

describe("countedCompletionsQuery", () => {
  const window = completionsWindow(NOW, 300, 5);
  it("reads the window's seconds from probe_job_completions, whole seconds bound, and says whether the triggers are there", () => {
    const query = countedCompletionsQuery(window);
    expectPlaceholdersBound(query);
    expect(query.params).toEqual({ fromSeconds: window.fromMs / 1000, toSeconds: window.toMs / 1000, bucketSeconds: 5 });
    expect(Number.isInteger(query.params["fromSeconds"])).toBe(true);
    expect(query.sql).toContain("FROM probe_job_completions");
    expect(query.sql).not.toContain("FROM probe_jobs");
    expect(query.sql).toContain(" AS counts_ready");
  });
  it("keeps as many seconds as the widest window asks for, and a minute more", () => {
    expect(JOB_COMPLETIONS_KEEP_SECONDS).toBe(MAX_WINDOW_SECONDS + 60);
    expect(pruneCompletionsStatement(NOW).params).toEqual({ before: Math.floor(NOW / 1000) - JOB_COMPLETIONS_KEEP_SECONDS });
  });
});

