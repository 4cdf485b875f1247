// HTTP helpers of the integration tests: the fleet endpoints and PocketBase's
// record API for probe_jobs, over plain fetch (Node's fetch keeps connections
// alive in undici's pool, which the concurrency tests rely on).
import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import type { JobRecord as ClientJobRecord } from "../../../src/client/fleet-client";
import { formatPbDate } from "../../../src/lib/lease";
import type { EnqueuedJob, EnqueueItem, EnqueueResponse, FleetStats } from "../../../src/lib/types";

export interface RequestOptions {
  /** Defaults to the injected admin token; null sends no Authorization header. */
  token?: string | null;
  /** Defaults to the injected pbUrl. */
  baseUrl?: string;
  /** Sent as the body instead of JSON.stringify(body) (invalid JSON, odd shapes). */
  rawBody?: string;
  /** Defaults to application/json. */
  contentType?: string;
  /** How long to wait for the answer, ms (default REQUEST_TIMEOUT_MS). */
  timeoutMs?: number;
}

export interface ApiResponse {
  status: number;
  // Whatever the server answered: parsed JSON, or the text when it is not JSON.
  body: any;
}

/**
 * A probe_jobs row as PocketBase's record API returns it: the client's type, plus
 * the API's collection fields, with any status text (tests store odd ones on purpose).
 */
export interface JobRecord extends Omit<ClientJobRecord, "status"> {
  collectionId: string;
  collectionName: string;
  status: string;
}

export type JobFields = Partial<Omit<JobRecord, "id" | "collectionId" | "collectionName" | "created" | "updated">>;

const REQUEST_TIMEOUT_MS = 30_000;
const JOBS = "/api/collections/probe_jobs/records";

/** Any method on any path (the record API's PATCH and DELETE too), with the admin token unless opts say otherwise. */
export async function send(method: string, path: string, body: unknown, opts: RequestOptions = {}): Promise<ApiResponse> {
  const baseUrl = opts.baseUrl ?? inject("pbUrl");
  const token = opts.token === undefined ? inject("adminToken") : opts.token;
  const headers: Record<string, string> = {};
  if (token !== null) headers["Authorization"] = token;
  let payload: string | undefined;
  if (opts.rawBody !== undefined) payload = opts.rawBody;
  else if (method !== "GET") payload = JSON.stringify(body);
  if (payload !== undefined) headers["Content-Type"] = opts.contentType ?? "application/json";
  const res = await fetch(baseUrl + path, {
    method,
    headers,
    body: payload,
    signal: AbortSignal.timeout(opts.timeoutMs ?? REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed };
}

export function post(path: string, body: unknown, opts?: RequestOptions): Promise<ApiResponse> {
  return send("POST", path, body, opts);
}

export function get(path: string, opts?: RequestOptions): Promise<ApiResponse> {
  return send("GET", path, undefined, opts);
}

function expectOk(what: string, res: ApiResponse): void {
  if (res.status < 200 || res.status > 299) {
    throw new Error(`${what} answered HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  }
}

/** A new probe_jobs row (admin create): pending with a fresh probe_key unless fields say otherwise. */
export async function createJob(fields: JobFields = {}, opts?: RequestOptions): Promise<JobRecord> {
  const res = await post(JOBS, { probe_key: randomKey(), status: "pending", ...fields }, opts);
  expectOk("creating a probe_jobs row", res);
  return res.body as JobRecord;
}

export async function getJob(id: string, opts?: RequestOptions): Promise<JobRecord> {
  const res = await get(`${JOBS}/${encodeURIComponent(id)}`, opts);
  expectOk(`reading probe_jobs/${id}`, res);
  return res.body as JobRecord;
}

/** Admin PATCH through the record API, for set-up only (an expired lease, a terminal row). */
export async function patchJob(id: string, fields: JobFields, opts?: RequestOptions): Promise<JobRecord> {
  const res = await send("PATCH", `${JOBS}/${encodeURIComponent(id)}`, fields, opts);
  expectOk(`patching probe_jobs/${id}`, res);
  return res.body as JobRecord;
}

/** Unique per call, so every test works on its own rows and probe_key prefixes. */
export function randomKey(prefix = "t"): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(5).toString("hex")}`;
}

export function pastDate(msAgo = 60_000): string {
  return formatPbDate(Date.now() - msAgo);
}

export function futureDate(msAhead = 60_000): string {
  return formatPbDate(Date.now() + msAhead);
}

// ---- the queue (docs/queue.md) ----------------------------------------------------------------

/** A probe_jobs row with the queue's fields (the queue migrations are applied on the server under test). */
export interface QueueJobRecord extends JobRecord {
  payload: unknown;
  run_at: string;
  priority: number;
  attempts: number;
  max_attempts: number;
  last_error: string;
  dead_lettered_at: string;
  unique_key: string;
  progress: unknown;
  enqueue_index: number;
  // Flow control's fields (docs/flow-control.md).
  queue: string;
  group_key: string;
  timeout_seconds: number;
  start_by: string;
}

/** POST /api/fleet/enqueue with these items, as sent (odd shapes included). */
export function enqueue(jobs: unknown, opts?: RequestOptions): Promise<ApiResponse> {
  return post("/api/fleet/enqueue", { jobs }, opts);
}

/** enqueue that must succeed: its `jobs` answer ({ id, probeKey, created } in request order). */
export async function enqueueOk(jobs: readonly EnqueueItem[], opts?: RequestOptions): Promise<EnqueuedJob[]> {
  const res = await enqueue(jobs, opts);
  expectOk("enqueue", res);
  return (res.body as EnqueueResponse).jobs;
}

/** POST /api/fleet/claim-next with this body, as sent. */
export function claimNext(body: unknown, opts?: RequestOptions): Promise<ApiResponse> {
  return post("/api/fleet/claim-next", body, opts);
}

export async function getQueueJob(id: string, opts?: RequestOptions): Promise<QueueJobRecord> {
  return (await getJob(id, opts)) as QueueJobRecord;
}

/** A record API filter selecting probe_key LIKE 'prefix%'; only for the plain prefixes randomKey makes. */
function prefixFilter(prefix: string): string {
  if (!/^[A-Za-z0-9/.-]+$/.test(prefix)) throw new Error(`prefixFilter: use a plain prefix (letters, digits, - / .), got ${JSON.stringify(prefix)}`);
  return encodeURIComponent(`probe_key ~ '${prefix}%'`);
}

/** Every probe_jobs row whose probe_key starts with prefix (record API, 500 a page, by id). */
export async function listJobsByPrefix(prefix: string, opts?: RequestOptions): Promise<QueueJobRecord[]> {
  const rows: QueueJobRecord[] = [];
  for (let page = 1; ; page++) {
    const res = await get(`${JOBS}?filter=${prefixFilter(prefix)}&sort=id&perPage=500&page=${page}&skipTotal=1`, opts);
    expectOk(`listing probe_jobs under ${prefix}`, res);
    const items = (res.body as { items: QueueJobRecord[] }).items;
    // LIKE ignores ASCII case: keep the prefix exact.
    for (const row of items) if (row.probe_key.startsWith(prefix)) rows.push(row);
    if (items.length < 500) return rows;
  }
}

/** How many probe_jobs rows have a probe_key starting with prefix. */
export async function countJobsByPrefix(prefix: string, opts?: RequestOptions): Promise<number> {
  const res = await get(`${JOBS}?filter=${prefixFilter(prefix)}&perPage=1`, opts);
  expectOk(`counting probe_jobs under ${prefix}`, res);
  return (res.body as { totalItems: number }).totalItems;
}

/** GET /api/fleet/stats for one probe_key prefix. */
export async function queueStats(prefix: string, opts?: RequestOptions): Promise<FleetStats> {
  const res = await get(`/api/fleet/stats?probeKeyPrefix=${encodeURIComponent(prefix)}`, opts);
  expectOk("stats", res);
  return res.body as FleetStats;
}
