/**
 * The queue's and the operator's calls: enqueue (POST /api/fleet/enqueue, or
 * the record API for bare probe keys), cancel, retry, flow control and stats;
 * and whether the server has the queue's enqueue, found out by its first 404.
 * FleetClient documents each call.
 */
import { MAX_ENQUEUE_JOBS } from "../../lib/queue.js";
import type { CancelResponse, EnqueueItem, EnqueueRequest, EnqueuedJob, FleetStats, FlowResponse, FlowStateResponse, JobIdRequest, RetryResponse } from "../../lib/types.js";
import { FleetHttpError, isMissingEndpoint } from "../errors.js";
import { toFlowQuery, toFlowRequest, type FlowFilter, type SetFlowRequest } from "../flow-options.js";
import { hasQueueOptions, needsQueueServer, REQUEST_OPTION_NAMES, toEnqueueItem, type EnqueueJob } from "../queue-options.js";
import { parseCancel, parseEnqueued, parseFlowState, parseRetry, parseSetFlow, parseStats } from "./answers.js";
import type { JobRecords } from "./records.js";
import { retryOnce, type AuthorizedCalls } from "./transport.js";
import type { EnqueueCallOptions, EnqueueManyOptions, JobRecord, RequestOptions } from "./types.js";

export class QueueCalls {
  readonly #calls: AuthorizedCalls;
  /** Where bare probe keys are created. */
  readonly #records: JobRecords;
  /** A worker identity may not use the record API. */
  readonly #isWorker: boolean;
  /** undefined until the first queue-form enqueue tells whether the server has /api/fleet/enqueue. */
  #hasEnqueue: boolean | undefined;

  constructor(calls: AuthorizedCalls, records: JobRecords, isWorker: boolean) {
    this.#calls = calls;
    this.#records = records;
    this.#isWorker = isWorker;
  }

  get hasEnqueue(): boolean | undefined {
    return this.#hasEnqueue;
  }

  async enqueue(probeKey: string, options?: EnqueueCallOptions): Promise<JobRecord | EnqueuedJob> {
    if (!hasQueueOptions(options)) {
      this.#refuseRecordApiEnqueue("enqueue", "enqueue(probeKey, { queue: \"default\" })");
      return this.#records.create(probeKey, options);
    }
    const item = toEnqueueItem("enqueue", { ...options, probeKey }, REQUEST_OPTION_NAMES);
    const [job] = await this.#enqueueItems("enqueue", [item], options ?? {});
    return job as EnqueuedJob;
  }

  async enqueueMany(list: readonly (string | EnqueueJob)[], opts: EnqueueManyOptions): Promise<JobRecord[] | EnqueuedJob[]> {
    if (!Array.isArray(list)) throw new TypeError("enqueueMany: give an array of probe keys, or of { probeKey, ...options }");
    if (list.every((entry) => typeof entry === "string")) {
      this.#refuseRecordApiEnqueue("enqueueMany", "enqueueMany(keys.map((probeKey) => ({ probeKey })))");
      return this.#records.createMany(list as readonly string[], opts);
    }
    const items = list.map((job, i) => toEnqueueItem(`enqueueMany: jobs[${i}]`, job));
    return this.#enqueueItems("enqueueMany", items, opts);
  }

  /** Checked items through POST /api/fleet/enqueue, MAX_ENQUEUE_JOBS a request; the record API for bare keys on a server without it. */
  async #enqueueItems(op: string, items: readonly EnqueueItem[], opts: EnqueueManyOptions): Promise<EnqueuedJob[]> {
    const needServer = items.filter(needsQueueServer);
    // Known to have no such endpoint, and nothing here needs it. (Anything that
    // does asks again: the server may have been upgraded since.)
    if (this.#hasEnqueue === false && needServer.length === 0) return this.#createBare(items, opts);
    const jobs: EnqueuedJob[] = [];
    for (let start = 0; start < items.length; start += MAX_ENQUEUE_JOBS) {
      const chunk = items.slice(start, start + MAX_ENQUEUE_JOBS);
      let body: unknown;
      try {
        body = await this.#calls.post(op, "/api/fleet/enqueue", { jobs: chunk } satisfies EnqueueRequest, opts);
      } catch (err) {
        // Only an answer before the server ever took an enqueue is a probe; a
        // 404 can only come from the first chunk (a server that answers one
        // chunk has the endpoint).
        if (this.#hasEnqueue === true || start > 0 || !isMissingEndpoint(err)) throw err;
        this.#hasEnqueue = false;
        if (needServer.length === 0) return this.#createBare(items, opts);
        const used = [...new Set(needServer.flatMap((item) => Object.keys(item).filter((k) => k !== "probeKey")))];
        const httpError = err as FleetHttpError;
        throw new FleetHttpError(op, 404,
          `this server has no POST /api/fleet/enqueue (a pb-fleet without the queue), which ${used.map((k) => `\`${k}\``).join(", ")} ` +
          "need; nothing was enqueued (a bare probe key, without options, can still be enqueued)", httpError.body, { cause: err });
      }
      this.#hasEnqueue = true;
      jobs.push(...parseEnqueued(op, body, chunk.length));
    }
    return jobs;
  }

  /**
   * The bare forms create rows through the record API, which is an admin's
   * only: a worker identity would get a 403 that says nothing of enqueue.
   */
  #refuseRecordApiEnqueue(op: string, instead: string): void {
    if (!this.#isWorker) return;
    throw new TypeError(`${op}: a worker identity cannot create rows through the record API (admins only); ` +
      `enqueue through POST /api/fleet/enqueue with the job form instead, e.g. ${instead}`);
  }

  /** Bare probe keys through the record API (a server without the queue), answered as the queue's enqueue answers. */
  async #createBare(items: readonly EnqueueItem[], opts: EnqueueManyOptions): Promise<EnqueuedJob[]> {
    const rows = await this.#records.createMany(items.map((item) => item.probeKey), opts);
    return rows.map((row, i) => ({ id: row.id, probeKey: (items[i] as EnqueueItem).probeKey, created: true }));
  }

  async cancel(jobId: string, req?: RequestOptions): Promise<CancelResponse> {
    return parseCancel(await this.#calls.post("cancel", "/api/fleet/cancel", { jobId } satisfies JobIdRequest, req));
  }

  async retry(jobId: string, req?: RequestOptions): Promise<RetryResponse> {
    return parseRetry(await this.#calls.post("retry", "/api/fleet/retry", { jobId } satisfies JobIdRequest, req));
  }

  async setFlow(request: SetFlowRequest, req?: RequestOptions): Promise<FlowResponse["flow"]> {
    const body = toFlowRequest("setFlow", request);
    return parseSetFlow(await retryOnce(() => this.#calls.post("setFlow", "/api/fleet/flow", { ...body }, req)), body);
  }

  async getFlow(filter?: FlowFilter, req?: RequestOptions): Promise<FlowStateResponse> {
    const query = toFlowQuery("getFlow", filter);
    return parseFlowState(await retryOnce(() => this.#calls.call("getFlow", {
      method: "GET", path: "/api/fleet/flow", ...(Object.keys(query).length > 0 ? { query } : {}),
    }, req)));
  }

  async stats(opts: { probeKeyPrefix?: string }, req?: RequestOptions): Promise<FleetStats> {
    const query = opts.probeKeyPrefix ? { probeKeyPrefix: opts.probeKeyPrefix } : undefined;
    return parseStats(await this.#calls.call("stats", { method: "GET", path: "/api/fleet/stats", ...(query ? { query } : {}) }, req));
  }
}
