/**
 * What the page asks the server, as pure builders: the record-API filters of
 * its bounded lists, the fleet endpoints' query strings, and which parts of
 * the page a realtime event makes stale. No DOM, no SDK: unit-tested.
 */
import { JOB_EVENTS_COLLECTION } from "../lib/bulk.js";
import { formatPbDate, parsePbDate } from "../lib/lease.js";
import { prefixUpperBound } from "../lib/queries.js";
import type { JobStatus } from "../lib/types.js";

export const JOBS_COLLECTION = "probe_jobs";
/** One record per batch of the batch endpoints, listing each job as written (src/lib/bulk.ts). */
export { JOB_EVENTS_COLLECTION };

/** The columns the lists show (never `payload` or `result`, which may hold a megabyte each). */
export const LIST_FIELDS = [
  "id", "probe_key", "status", "claimed_by", "lease_expires_at", "claimed_at", "attempts", "max_attempts",
  "last_error", "dead_lettered_at", "finished_at", "reclaim_count",
].join(",");
/** A realtime event only has to say which job changed and how; the numbers are re-read from the server. */
export const EVENT_FIELDS = "id,probe_key,status";

/** Bounded pages: the page never loads more rows than these, whatever the table holds. */
export const IN_FLIGHT_LIMIT = 100;
export const EXPIRED_LIMIT = 50;
export const FAILED_LIMIT = 50;

/** A probe_jobs row as the lists read it (LIST_FIELDS). */
export interface JobRow {
  id: string;
  probe_key: string;
  status: JobStatus;
  claimed_by: string;
  lease_expires_at: string;
  claimed_at: string;
  attempts: number;
  max_attempts: number;
  last_error: string;
  dead_lettered_at: string;
  finished_at: string;
  reclaim_count: number;
}

/**
 * A filter string literal. Only text without quotes or backslashes is
 * written: PocketBase 0.22's filter parser and 0.23+'s unescape backslashes
 * differently (and 0.22 cannot end a literal with one), so a prefix holding
 * them is narrowed up to its first such character (listFilterPrefix) and the
 * rows are checked with matchesPrefix on the page.
 */
function literal(text: string): string {
  if (/['"\\]/.test(text)) throw new Error(`not a safe filter literal: ${text}`);
  return `'${text}'`;
}

/** The part of a prefix the lists' filters can carry (see literal). */
export function listFilterPrefix(prefix: string): string {
  const unsafe = prefix.search(/['"\\]/);
  return unsafe === -1 ? prefix : prefix.slice(0, unsafe);
}

/** The probe_key range of a prefix, as stats and claim-next read it (not LIKE: no case folding, no wildcards). */
export function prefixFilter(prefix: string): string {
  const safe = listFilterPrefix(prefix);
  if (safe === "") return "";
  const end = prefixUpperBound(safe);
  const upper = end === null || /['"\\]/.test(end) ? "" : ` && probe_key < ${literal(end)}`;
  return `probe_key >= ${literal(safe)}${upper}`;
}

export function matchesPrefix(probeKey: string, prefix: string): boolean {
  return probeKey.startsWith(prefix);
}

function and(...terms: string[]): string {
  return terms.filter((t) => t !== "").map((t) => `(${t})`).join(" && ");
}

const HELD = "status = 'claimed' || status = 'running'";

/** Held jobs whose lease is live at `serverNowMs` (the lease rule: stored text compared as text). */
export function inFlightFilter(prefix: string, serverNowMs: number): string {
  return and(HELD, `lease_expires_at > ${literal(formatPbDate(serverNowMs))}`, prefixFilter(prefix));
}

/** Held jobs whose lease has passed (or is empty): the sweeper's work, re-queueable from the page. */
export function expiredFilter(prefix: string, serverNowMs: number): string {
  return and(HELD, `lease_expires_at <= ${literal(formatPbDate(serverNowMs))}`, prefixFilter(prefix));
}

export function failedFilter(prefix: string): string {
  return and("status = 'failed'", prefixFilter(prefix));
}

/** Grouped by holder, each holder's jobs by the lease that ends first. */
export const IN_FLIGHT_SORT = "claimed_by,lease_expires_at,id";
export const EXPIRED_SORT = "lease_expires_at,id";
export const FAILED_SORT = "-finished_at,id";

/** The fleet endpoints' `probeKeyPrefix` (exact: the server builds the range itself). */
export function prefixQuery(prefix: string): { [name: string]: string } {
  return prefix === "" ? {} : { probeKeyPrefix: prefix };
}

/** The chart's window: the last five minutes in five-second buckets. */
export const CHART_WINDOW_SECONDS = 300;
export const CHART_BUCKET_SECONDS = 5;

/** The parts of the page that are re-read from the server. */
export type Topic = "stats" | "completions" | "inFlight" | "expired" | "failed";
export const TOPICS: readonly Topic[] = ["stats", "completions", "inFlight", "expired", "failed"];

/** The job ids each list shows now: an event about one of them makes that list stale whatever its new status. */
export interface ShownJobs {
  inFlight: ReadonlySet<string>;
  expired: ReadonlySet<string>;
  failed: ReadonlySet<string>;
}

/**
 * Which parts of the page an event about a job makes stale. Events only
 * trigger (throttled) re-reads: under a few hundred changes a second the page
 * does a bounded amount of work per refresh, not per event.
 */
export function staleTopics(event: { action: string; record: { [field: string]: unknown } }, prefix: string, shown: ShownJobs): Set<Topic> {
  const topics = new Set<Topic>();
  const id = String(event.record["id"] ?? "");
  const status = String(event.record["status"] ?? "");
  const key = String(event.record["probe_key"] ?? "");
  if (!matchesPrefix(key, prefix)) return topics;
  topics.add("stats");
  if (status === "done" || status === "failed" || event.action === "delete") topics.add("completions");
  const held = status === "claimed" || status === "running";
  // A claim or renew can move a job between in flight and expired (a renew revives a lapsed lease).
  if (held || shown.inFlight.has(id)) topics.add("inFlight");
  if (held || shown.expired.has(id)) topics.add("expired");
  if (status === "failed" || shown.failed.has(id)) topics.add("failed");
  return topics;
}

/** Seconds until a lease ends at the server's `serverNowMs` (negative: passed); null for an unreadable lease. */
export function leaseSecondsLeft(leaseExpiresAt: string, serverNowMs: number): number | null {
  const end = parsePbDate(leaseExpiresAt);
  return end === null ? null : (end - serverNowMs) / 1000;
}

export interface WorkerGroup {
  workerId: string;
  jobs: JobRow[];
}

/** Consecutive rows of one holder (the list is sorted by holder) as one group each, in list order. */
export function groupByWorker(rows: readonly JobRow[]): WorkerGroup[] {
  const groups: WorkerGroup[] = [];
  for (const row of rows) {
    const last = groups[groups.length - 1];
    if (last !== undefined && last.workerId === row.claimed_by) last.jobs.push(row);
    else groups.push({ workerId: row.claimed_by, jobs: [row] });
  }
  return groups;
}
