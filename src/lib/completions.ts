/**
 * GET /api/fleet/completions: how many jobs finished `done` and `failed` in
 * each time bucket of the last minutes, for the dashboard's chart when it
 * opens mid-run (realtime events only tell what happens after it opened).
 * Pure: the window arithmetic, the SQL (one row, like statsQuery) and the
 * answer's shape.
 */
import { formatPbDate } from "./lease.js";
import { withPrefix } from "./prefix.js";
import { JOB_COMPLETIONS_TABLE, JOB_COUNTS_READY_SQL } from "./job-counts.js";
import { FINISHED_SQL, type WhereClause } from "./queries.js";
import { COMPLETED_STATUSES, statusInSql } from "./job-schema.js";

export const DEFAULT_WINDOW_SECONDS = 300;
export const DEFAULT_BUCKET_SECONDS = 5;
export const MAX_WINDOW_SECONDS = 3600;
export const MAX_BUCKET_SECONDS = 600;
/** Bounds the answer (and the chart) whatever the two numbers are. */
export const MAX_BUCKETS = 720;

/** The buckets of one answer: `count` buckets of `bucketSeconds`, the last one holding `nowMs`. */
export interface CompletionsWindow {
  bucketSeconds: number;
  count: number;
  /** Start of the first bucket, epoch ms on a whole multiple of the bucket, so buckets line up across calls. */
  fromMs: number;
  /** End of the last bucket (in the future while it fills). */
  toMs: number;
}

export interface CompletionsBucket {
  /** Epoch ms of the bucket's start. */
  start: number;
  done: number;
  failed: number;
}

export interface CompletionsResponse {
  /** The server's clock as it answered, after the read (epoch ms): the page's lease countdowns use it to correct for skew. */
  now: number;
  bucketSeconds: number;
  from: number;
  to: number;
  /** Every bucket of the window in time order, empty ones included; the last is the one still filling. */
  buckets: CompletionsBucket[];
}

export type CompletionsParams =
  | { ok: true; windowSeconds: number; bucketSeconds: number }
  | { ok: false; error: string };

/** The query string's `windowSeconds` and `bucketSeconds` ("" = default): whole numbers within bounds. */
export function parseCompletionsParams(rawWindow: string, rawBucket: string): CompletionsParams {
  const windowSeconds = readWhole(rawWindow, DEFAULT_WINDOW_SECONDS);
  const bucketSeconds = readWhole(rawBucket, DEFAULT_BUCKET_SECONDS);
  if (windowSeconds === null || windowSeconds < 1 || windowSeconds > MAX_WINDOW_SECONDS) {
    return { ok: false, error: `windowSeconds must be a whole number from 1 to ${MAX_WINDOW_SECONDS}` };
  }
  if (bucketSeconds === null || bucketSeconds < 1 || bucketSeconds > MAX_BUCKET_SECONDS) {
    return { ok: false, error: `bucketSeconds must be a whole number from 1 to ${MAX_BUCKET_SECONDS}` };
  }
  if (Math.ceil(windowSeconds / bucketSeconds) > MAX_BUCKETS) {
    return { ok: false, error: `windowSeconds / bucketSeconds must be at most ${MAX_BUCKETS} buckets` };
  }
  return { ok: true, windowSeconds, bucketSeconds };
}

function readWhole(raw: string, fallback: number): number | null {
  if (raw === "") return fallback;
  if (!/^\d{1,7}$/.test(raw)) return null;
  return Number(raw);
}

/** The buckets covering the last `windowSeconds` up to `nowMs` (rounded up to whole buckets). */
export function completionsWindow(nowMs: number, windowSeconds: number, bucketSeconds: number): CompletionsWindow {
  const bucketMs = bucketSeconds * 1000;
  const count = Math.ceil(windowSeconds / bucketSeconds);
  const current = Math.floor(nowMs / bucketMs);
  const fromMs = (current - count + 1) * bucketMs;
  return { bucketSeconds, count, fromMs, toMs: fromMs + count * bucketMs };
}

/**
 * One row: `buckets` is "index:done:failed" per non-empty bucket, comma
 * separated (queryOne reads one row, and a window has up to MAX_BUCKETS).
 * The window is a range of bound text in PocketBase's layout, which orders
 * like time; strftime reads the whole seconds of a row in it. Bound numbers
 * may arrive as floats, hence the CASTs around the division.
 */
export function completionsQuery(window: CompletionsWindow, probeKeyPrefix: string): WhereClause {
  const params: WhereClause["params"] = {
    from: formatPbDate(window.fromMs),
    to: formatPbDate(window.toMs),
    fromSeconds: window.fromMs / 1000,
    bucketSeconds: window.bucketSeconds,
  };
  const where = withPrefix(`${statusInSql(COMPLETED_STATUSES)} AND ${FINISHED_SQL} AND finished_at >= {:from} AND finished_at < {:to}`,
    params, probeKeyPrefix).sql;
  return {
    sql: `SELECT COALESCE(group_concat(bucket || ':' || done || ':' || failed, ','), '') AS buckets, 1 AS counts_ready FROM (
  SELECT CAST((CAST(strftime('%s', substr(finished_at, 1, 19)) AS INTEGER) - CAST({:fromSeconds} AS INTEGER))
      / CAST({:bucketSeconds} AS INTEGER) AS INTEGER) AS bucket,
    SUM(status = 'done') AS done,
    SUM(status = 'failed') AS failed
  FROM probe_jobs
  WHERE ${where}
  GROUP BY bucket
)`,
    params,
  };
}

export interface CompletionsRow {
  buckets: string;
  /** 1 when the answer is to be trusted; 0: countedCompletionsQuery found the counting triggers missing. */
  counts_ready: number;
}
export const COMPLETIONS_ROW_SHAPE: CompletionsRow = { buckets: "", counts_ready: 0 };

/**
 * The same buckets from probe_job_completions (job-counts.ts), without a
 * prefix: one row per second of the window at most (3,600), whatever the
 * rate. `counts_ready` is 0 when its triggers are missing: the caller then
 * answers from completionsQuery.
 */
export function countedCompletionsQuery(window: CompletionsWindow): WhereClause {
  return {
    sql: `SELECT COALESCE((SELECT group_concat(bucket || ':' || done || ':' || failed, ',') FROM (
  SELECT (second - CAST({:fromSeconds} AS INTEGER)) / CAST({:bucketSeconds} AS INTEGER) AS bucket,
    SUM(done) AS done, SUM(failed) AS failed
  FROM ${JOB_COMPLETIONS_TABLE}
  WHERE second >= CAST({:fromSeconds} AS INTEGER) AND second < CAST({:toSeconds} AS INTEGER)
  GROUP BY bucket)), '') AS buckets,
  ${JOB_COUNTS_READY_SQL} AS counts_ready`,
    params: { fromSeconds: window.fromMs / 1000, toSeconds: window.toMs / 1000, bucketSeconds: window.bucketSeconds },
  };
}

/** The answer: every bucket of the window, filled from the row (entries outside the window are ignored). */
export function buildCompletions(row: CompletionsRow, window: CompletionsWindow, nowMs: number): CompletionsResponse {
  const bucketMs = window.bucketSeconds * 1000;
  const buckets: CompletionsBucket[] = [];
  for (let i = 0; i < window.count; i++) buckets.push({ start: window.fromMs + i * bucketMs, done: 0, failed: 0 });
  for (const entry of row.buckets === "" ? [] : row.buckets.split(",")) {
    const [index, done, failed] = entry.split(":").map(Number) as [number, number, number];
    const bucket = buckets[index];
    if (!Number.isInteger(index) || bucket === undefined) continue;
    bucket.done += done || 0;
    bucket.failed += failed || 0;
  }
  return { now: nowMs, bucketSeconds: window.bucketSeconds, from: window.fromMs, to: window.toMs, buckets };
}

/** The 503 answer when the read fails; the database's own text goes to PocketBase's log. */
export const COMPLETIONS_UNAVAILABLE = "completions are unavailable right now: the database read failed (details are in PocketBase's log)";
