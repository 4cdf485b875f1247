/**
 * The client's use of PocketBase's record API on `probe_jobs` (admins and
 * superusers only): listing and filtering rows, reading one, creating bare
 * jobs and writing a result. The filters are the protocol's own
 * (src/lib/record-filters.ts), so a list shows what a claim would take.
 */
import { DEFAULT_MAX_ATTEMPTS } from "../../lib/queue.js";
import { FleetAuthError, FleetHttpError } from "../errors.js";
import { claimableRecordFilter, expiredLeaseRecordFilter, JOBS_COLLECTION, pbFilter } from "../../lib/record-filters.js";
import type { JobStatus } from "../../lib/types.js";
import { parseRecord, parseRecordPage } from "./answers.js";
import type { AuthorizedCalls } from "./transport.js";
import { MAX_LIST_LIMIT, type EnqueueManyOptions, type JobQuery, type JobRecord, type ListOptions, type RequestOptions } from "./types.js";

export class JobRecords {
  readonly #calls: AuthorizedCalls;
  /** Whether probe_jobs has run_at (a server from before the queue has not); undefined until a list tells. */
  #hasRunAt: boolean | undefined;

  constructor(calls: AuthorizedCalls) {
    this.#calls = calls;
  }

  /**
   * Creates a pending job (version 0, counters 0). Not retried on a timeout:
   * that could create it twice. It asks for the queue's attempt cap,
   * DEFAULT_MAX_ATTEMPTS, as the queue's enqueue gives a job without one: the
   * field's own default, 0, is "no cap", which a Worker treats as "never
   * retry" (retrying without a cap could run forever). A server without the
   * queue has no such field and ignores it.
   */
  async create(probeKey: string, req?: RequestOptions): Promise<JobRecord> {
    const body = await this.#calls.call("enqueue", {
      method: "POST",
      path: recordsPath(),
      body: {
        probe_key: probeKey, status: "pending", claimed_by: "", version: 0, reclaim_count: 0, consecutive_orphan_count: 0,
        max_attempts: DEFAULT_MAX_ATTEMPTS,
      },
    }, req);
    return parseRecord("enqueue", body);
  }

  /**
   * Creates many pending jobs, `concurrency` requests at a time (one request a
   * job: PocketBase 0.22 has no batch API, and 0.23+ ships its own turned
   * off). Rejects with the first error once the requests in flight have
   * settled; jobs created before it stay.
   */
  async createMany(probeKeys: readonly string[], opts: EnqueueManyOptions): Promise<JobRecord[]> {
    const concurrency = Math.max(1, opts.concurrency ?? 8);
    const rows: JobRecord[] = new Array(probeKeys.length);
    let next = 0;
    let failure: unknown = null;
    const lane = async (): Promise<void> => {
      while (failure === null && next < probeKeys.length) {
        const i = next++;
        try {
          rows[i] = await this.create(probeKeys[i] as string, opts);
        } catch (err) {
          failure ??= err;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, probeKeys.length) }, lane));
    if (failure !== null) throw failure;
    return rows;
  }

  async writeResult(jobId: string, result: unknown, req?: RequestOptions): Promise<void> {
    await this.#calls.call("writeResult", {
      method: "PATCH", path: recordsPath(jobId), body: { result: result === undefined ? null : result },
    }, req);
  }

  async get(jobId: string, req?: RequestOptions): Promise<JobRecord> {
    return parseRecord("getJob", await this.#calls.call("getJob", { method: "GET", path: recordsPath(jobId) }, req));
  }

  /**
   * `hasRunAt: false`: the server is known to be from before the queue (no
   * run_at column; claimableRecordFilter). Otherwise the due-time term is
   * sent until the server refuses it: a 400 to the first such list (the
   * record API's answer to a filter naming a field the collection lacks,
   * e.g. a server with claim-next but from before the queue) is asked again
   * without it, and the answer is remembered.
   */
  async listClaimable(opts: ListOptions, req?: RequestOptions, hasRunAt = true): Promise<JobRecord[]> {
    if (!hasRunAt) this.#hasRunAt = false;
    const list = (withRunAt: boolean) => this.#list("listClaimable", claimableRecordFilter(Date.now(), { hasRunAt: withRunAt }), "created", opts, req);
    if (this.#hasRunAt === false) return list(false);
    try {
      const rows = await list(true);
      this.#hasRunAt = true;
      return rows;
    } catch (err) {
      if (this.#hasRunAt !== undefined || !(err instanceof FleetHttpError) || err instanceof FleetAuthError || err.status !== 400) throw err;
      const rows = await list(false);
      this.#hasRunAt = false;
      return rows;
    }
  }

  async listExpiredLeases(opts: ListOptions, req?: RequestOptions): Promise<JobRecord[]> {
    return this.#list("listExpiredLeases", expiredLeaseRecordFilter(Date.now()), "lease_expires_at", opts, req);
  }

  /** Every row the query selects, oldest first, MAX_LIST_LIMIT a request. */
  async listJobs(query: JobQuery, req?: RequestOptions): Promise<JobRecord[]> {
    const prefix = query.probeKeyPrefix ?? "";
    const statuses: readonly JobStatus[] = query.status === undefined ? [] : typeof query.status === "string" ? [query.status] : query.status;
    if (query.status !== undefined && statuses.length === 0) return [];
    const wanted = query.limit === undefined ? Infinity : Math.max(1, Math.floor(query.limit));
    const terms: string[] = [];
    const params: Record<string, string> = {};
    if (statuses.length > 0) {
      terms.push(`(${statuses.map((status, i) => {
        params[`status${i}`] = status;
        return `status = {:status${i}}`;
      }).join(" || ")})`);
    }
    if (prefix) {
      terms.push("probe_key ~ {:prefix}");
      params["prefix"] = likePrefix(prefix);
    }
    const filter = pbFilter(terms.join(" && "), params);
    const rows: JobRecord[] = [];
    for (let page = 1; rows.length < wanted; page++) {
      const items = await this.#page("listJobs", filter, "created,id", page, MAX_LIST_LIMIT, req);
      for (const row of items) {
        // SQLite's LIKE ignores ASCII case; the prefix is meant exactly.
        if (rows.length < wanted && (!prefix || row.probe_key.startsWith(prefix))) rows.push(row);
      }
      if (items.length < MAX_LIST_LIMIT) break;
    }
    return rows;
  }

  async #list(op: string, filter: string, sort: string, opts: ListOptions, req?: RequestOptions): Promise<JobRecord[]> {
    const limit = Math.max(1, Math.min(opts.limit ?? 50, MAX_LIST_LIMIT));
    const prefix = opts.probeKeyPrefix ?? "";
    const expr = prefix ? pbFilter(`(${filter}) && probe_key ~ {:prefix}`, { prefix: likePrefix(prefix) }) : filter;
    const items = await this.#page(op, expr, sort, 1, limit, req);
    // SQLite's LIKE ignores ASCII case; the prefix is meant exactly.
    return prefix ? items.filter((r) => r.probe_key.startsWith(prefix)) : items;
  }

  /** One page of the record API's list (no total count: PocketBase skips that query). */
  async #page(op: string, filter: string, sort: string, page: number, perPage: number, req?: RequestOptions): Promise<JobRecord[]> {
    const query: Record<string, string> = { page: String(page), perPage: String(perPage), skipTotal: "true", sort };
    if (filter !== "") query["filter"] = filter;
    return parseRecordPage(op, await this.#calls.call(op, { method: "GET", path: recordsPath(), query }, req));
  }
}

function recordsPath(id?: string): string {
  const base = `/api/collections/${encodeURIComponent(JOBS_COLLECTION)}/records`;
  return id === undefined ? base : `${base}/${encodeURIComponent(id)}`;
}

/** A LIKE pattern matching values that start with `prefix` (PocketBase escapes with `\`). */
function likePrefix(prefix: string): string {
  return prefix.replace(/[\\%_]/g, (c) => "\\" + c) + "%";
}
