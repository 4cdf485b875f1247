/**
 * What the page asks the server, as pure builders: the record-API filters of
 * its bounded lists, the fleet endpoints' query strings, and which parts of
 * the page a realtime event makes stale. No DOM, no SDK: unit-tested.
 */
import { parseWorkerQueues, WORKER_FIELDS, WORKERS_COLLECTION } from "../lib/identity.js";
import { JOB_EVENTS_COLLECTION, JOB_EVENTS_KEEP_MS } from "../lib/job-events.js";
import { COMPLETED_STATUSES, HELD_STATUSES, inStatusClass, JOBS_COLLECTION, type JobRecordFields } from "../lib/job-schema.js";
import { formatPbDate, parsePbDate } from "../lib/lease.js";
import { prefixUpperBound } from "../lib/prefix.js";
import { statusRecordFilter } from "../lib/record-filters.js";

export { JOBS_COLLECTION };
/** One record per batch of the batch endpoints, listing each job as written (src/lib/bulk.ts). */
export { JOB_EVENTS_COLLECTION };

/** Columns of a probe_jobs record (src/lib/job-schema.ts): the compiler rejects a name that is not one. */
type RecordColumns = readonly (keyof JobRecordFields)[];

/** The columns the lists show (never `payload` or `result`, which may hold a megabyte each). */
const LIST_COLUMNS = [
  "id", "probe_key", "status", "claimed_by", "lease_expires_at", "claimed_at", "attempts", "max_attempts",
  "last_error", "dead_lettered_at", "finished_at", "reclaim_count",
] as const satisfies RecordColumns;
export const LIST_FIELDS = LIST_COLUMNS.join(",");
/**
 * A realtime event says which job changed and how (the numbers are re-read
 * from the server); the holder, lease and version let an open job detail
 * show the change as it happens.
 */
export const EVENT_FIELDS = "id,probe_key,status,claimed_by,lease_expires_at,version";
/** A probe_job_events record as the page reads it (the batch's own id and time, for the job history). */
export const JOB_EVENT_FIELDS = "id,source,created,changes";

/**
 * Bounded pages: the page never loads more rows than these, whatever the
 * table holds. In flight reads every held job up to PocketBase 0.22's largest
 * page (500), so every worker is listed; what a fleet holds is bounded by its
 * concurrency, not by the table. The page then shows a few jobs per worker.
 */
export const IN_FLIGHT_LIMIT = 500;
export const JOBS_SHOWN_PER_WORKER = 5;
export const EXPIRED_LIMIT = 50;
export const FAILED_LIMIT = 50;

/** The in-flight list's columns: no error text (a held job's is its previous attempt's). */
const IN_FLIGHT_COLUMNS = [
  "id", "probe_key", "status", "claimed_by", "lease_expires_at", "attempts", "max_attempts",
] as const satisfies readonly (typeof LIST_COLUMNS)[number][];
export const IN_FLIGHT_FIELDS = IN_FLIGHT_COLUMNS.join(",");

type InFlightColumn = (typeof IN_FLIGHT_COLUMNS)[number];
/** A probe_jobs row as the lists read it (LIST_FIELDS); the in-flight list's leaves out the columns IN_FLIGHT_FIELDS does not read. */
export type JobRow =
  & Pick<JobRecordFields, InFlightColumn>
  & Partial<Pick<JobRecordFields, Exclude<(typeof LIST_COLUMNS)[number], InFlightColumn>>>;

/**
 * A job's own record as the detail reads it: every field but `lease_token`
 * (the holder's secret) and, on refreshes, `payload` (written once, at
 * enqueue, and up to a megabyte).
 */
const DETAIL_COLUMNS = [
  "id", "probe_key", "status", "claimed_by", "lease_expires_at", "claimed_at", "finished_at", "requeued_at", "version",
  "reclaim_count", "consecutive_orphan_count", "priority", "run_at", "attempts", "max_attempts", "last_error",
  "dead_lettered_at", "unique_key", "progress", "result", "created", "updated",
] as const satisfies RecordColumns;
export const DETAIL_FIELDS = DETAIL_COLUMNS.join(",");
export const DETAIL_FIELDS_WITH_PAYLOAD = `${DETAIL_FIELDS},payload`;

/** The job's record as the detail reads it (DETAIL_FIELDS); `payload` read when the detail opens, kept across refreshes. */
export type JobRecord = Pick<JobRecordFields, (typeof DETAIL_COLUMNS)[number]> & { payload?: unknown };

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

const HELD = statusRecordFilter(HELD_STATUSES);

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

/** How long the server keeps probe_job_events records (src/lib/job-events.ts JOB_EVENTS_KEEP_MS, unless PB_FLEET_KEEP_EVENTS says otherwise): the detail's history reaches this far back. */
export { JOB_EVENTS_KEEP_MS };
/** The most batch events one job's history reads (a job renewed every 10 s for 15 minutes has about 90). */
export const JOB_HISTORY_LIMIT = 200;
/** Newest first: the index on `created` serves both the window and the order. */
export const JOB_HISTORY_SORT = "-created";

/** Record ids are PocketBase's 15 characters [a-z0-9], or an id given at create: letters, digits, `_` and `-`. */
export function isSafeJobId(id: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(id);
}

/**
 * The probe_job_events records that may mention a job: those created since
 * `since` (the retained window, or the job's creation when later: the index
 * on `created` bounds the scan) whose changes contain its id. `~` is LIKE,
 * where `_` matches any character: historyOfJob keeps only exact ids.
 */
export function jobHistoryFilter(jobId: string, since: string): string {
  if (!isSafeJobId(jobId)) throw new Error(`not a job id: ${jobId}`);
  return `created >= ${literal(since)} && changes ~ ${literal(jobId)}`;
}

/** The later of the retained window's start and the job's creation (both PocketBase date text), with a second of slack for clocks. */
export function historySince(serverNowMs: number, jobCreated: string): string {
  const windowStart = serverNowMs - JOB_EVENTS_KEEP_MS;
  const created = parsePbDate(jobCreated);
  return formatPbDate(created === null ? windowStart : Math.max(windowStart, created - 1000));
}

/** One transition of a job, as a batch endpoint wrote it (or as a record save was seen live). */
export interface HistoryEntry {
  /** The probe_job_events record's id, or "live:<n>" for a record save seen by this page. */
  eventId: string;
  /** PocketBase date text. */
  at: string;
  source: string;
  status: string;
  claimed_by: string;
  lease_expires_at: string;
  version: number;
}

/** The entries of `jobId` in batch event records, newest first (by time, then version). */
export function historyOfJob(events: readonly { id: string; source?: unknown; created?: unknown; changes?: unknown }[], jobId: string): HistoryEntry[] {
  const entries: HistoryEntry[] = [];
  for (const event of events) {
    if (!Array.isArray(event.changes)) continue;
    for (const change of event.changes as { [field: string]: unknown }[]) {
      if (change?.["id"] !== jobId) continue;
      entries.push({
        eventId: event.id,
        at: String(event.created ?? ""),
        source: String(event.source ?? ""),
        status: String(change["status"] ?? ""),
        claimed_by: String(change["claimed_by"] ?? ""),
        lease_expires_at: String(change["lease_expires_at"] ?? ""),
        version: Number(change["version"] ?? 0),
      });
    }
  }
  return sortHistory(entries);
}

/** Newest first; entries of one event id are kept once. */
export function sortHistory(entries: readonly HistoryEntry[]): HistoryEntry[] {
  const seen = new Set<string>();
  const unique = entries.filter((e) => {
    const key = `${e.eventId}/${e.version}/${e.status}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return unique.sort((a, b) => (a.at === b.at ? b.version - a.version : a.at < b.at ? 1 : -1));
}

/** The fleet endpoints' `probeKeyPrefix` (exact: the server builds the range itself). */
export function prefixQuery(prefix: string): { [name: string]: string } {
  return prefix === "" ? {} : { probeKeyPrefix: prefix };
}

/** The chart's window: the last five minutes in five-second buckets. */
export const CHART_WINDOW_SECONDS = 300;
export const CHART_BUCKET_SECONDS = 5;

/** The parts of the page that are re-read from the server. */
export type Topic = "stats" | "completions" | "inFlight" | "expired" | "failed" | "workers" | "flow";
export const TOPICS: readonly Topic[] = ["stats", "completions", "inFlight", "expired", "failed", "workers", "flow"];

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
  if (inStatusClass(COMPLETED_STATUSES, status) || event.action === "delete") topics.add("completions");
  const held = inStatusClass(HELD_STATUSES, status);
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

/** A worker's group as the list shows it: its first jobs (by lease end), and how many more it holds. */
export interface ShownWorkerGroup extends WorkerGroup {
  shown: JobRow[];
  hidden: number;
}

/** Every worker of the rows, each with at most `perWorker` jobs shown unless it is in `expanded`. */
export function workerGroupsShown(rows: readonly JobRow[], expanded: ReadonlySet<string>, perWorker: number): ShownWorkerGroup[] {
  return groupByWorker(rows).map((group) => {
    const shown = expanded.has(group.workerId) ? group.jobs : group.jobs.slice(0, perWorker);
    return { ...group, shown, hidden: group.jobs.length - shown.length };
  });
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

/**
 * The empty state's shell lines, as they work when pasted: a token from the
 * line's auth endpoint, then an enqueue with its JSON content type (without
 * it PocketBase does not read the body). The signed-in email is filled in
 * when it can go between single quotes as it is.
 */
export function enqueueCurl(origin: string, line: "0.22" | "0.23", email: string): string {
  const authPath = line === "0.22" ? "/api/admins/auth-with-password" : "/api/collections/_superusers/auth-with-password";
  const identity = /^[^'"\\\s]+$/.test(email) ? email : "YOUR_EMAIL";
  return (
    `PB_TOKEN=$(curl -s -X POST ${origin}${authPath} -H 'Content-Type: application/json' \\\n` +
    `  -d '{"identity":"${identity}","password":"YOUR_PASSWORD"}' | sed -E 's/.*"token":"([^"]+)".*/\\1/')\n` +
    `curl -X POST ${origin}/api/fleet/enqueue -H "Authorization: $PB_TOKEN" -H 'Content-Type: application/json' \\\n` +
    `  -d '{"jobs":[{"probeKey":"probe/a"}]}'`
  );
}

// ---- worker identities ------------------------------------------------------------------

/** Worker identities (src/lib/identity.ts): an auth collection only admins may read or change. */
export { WORKERS_COLLECTION };
/**
 * The identities listed at most, first by name. One per machine or service,
 * so the table is small: this read asks for the total (a COUNT) to say how
 * many are not listed.
 */
export const WORKERS_LIMIT = 200;
export const WORKERS_SORT = `${WORKER_FIELDS.name},id`;
/** Never the auth fields (tokenKey, passwordHash, email). */
export const WORKERS_FIELDS = ["id", ...Object.values(WORKER_FIELDS)].join(",");

/** A fleet_workers record as the list shows it. */
export interface Identity {
  id: string;
  name: string;
  /** What its queues field lets it take, in words (queuesText). */
  queues: string;
  canEnqueue: boolean;
  disabled: boolean;
  /** PocketBase date text, "" when it never called. */
  lastSeenAt: string;
}

export function identityOf(record: { [field: string]: unknown }): Identity {
  return {
    id: String(record["id"]),
    name: String(record[WORKER_FIELDS.name] ?? ""),
    queues: queuesText(record[WORKER_FIELDS.queues]),
    canEnqueue: record[WORKER_FIELDS.canEnqueue] === true,
    disabled: record[WORKER_FIELDS.disabled] === true,
    lastSeenAt: String(record[WORKER_FIELDS.lastSeenAt] ?? ""),
  };
}

/**
 * An identity's queues as the hooks read them (parseWorkerQueues, on the
 * field's JSON): none listed is every queue, and a value they cannot read
 * refuses its calls (fail closed), which the operator should see.
 */
export function queuesText(value: unknown): string {
  const queues = parseWorkerQueues(value === undefined ? "" : JSON.stringify(value));
  return queues === null ? "unreadable: its calls are refused" : queues.length === 0 ? "every queue" : queues.join(", ");
}
