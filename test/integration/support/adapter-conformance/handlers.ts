/**
 * Test-only routes (never installed; test/integration/adapter-conformance.test.ts):
 * each exercises one operation of the adapter contract (src/adapter/contract.ts)
 * directly, so the same assertions run against the adapter of each hooks line.
 * Built per line like the real bundle (scripts/build/build.mjs buildRoutes):
 * `@pb-fleet/adapter` is the line's adapter, each route a self-contained closure.
 */
import {
  COLLECTION_CACHE_MS, getenv, json, JOBS_COLLECTION, newLeaseToken, queryAll, queryOne, storeGet, storeSet,
  updateJob, updateJobs, updateJobsBulk, updateJobsInAppTransaction, type FleetRequest, type Reply,
} from "@pb-fleet/adapter";
import type { JobBatch, JobInsert, JobPatch, JobRow } from "../../../../src/lib/job-row.js";
import { jobsByIdsWhere, type WhereClause } from "../../../../src/lib/queries.js";
import { CONFORMANCE_THROW, type BatchStep } from "./steps.js";

function bodyOf<T>(req: FleetRequest): T {
  return req.body() as T;
}

/** updateJob on one row: `patch` (or none) written from the decision; `throwInDecide` makes decide throw. */
export function handleUpdateJob(req: FleetRequest): Reply {
  const { jobId, patch, throwInDecide } = bodyOf<{ jobId: string; patch: JobPatch | null; throwInDecide?: boolean }>(req);
  const update = updateJob(jobId, (row, nowMs) => {
    if (throwInDecide) throw new Error(CONFORMANCE_THROW);
    return { nowMs, leaseAsRead: row.lease_expires_at };
  }, () => patch);
  return json(200, { update });
}

/**
 * A JobBatch's operations in the order the steps name them; every step's
 * result, in order. A "throw" step throws there, so the transaction rolls back.
 */
function runSteps(batch: JobBatch, steps: readonly BatchStep[]): unknown[] {
  const found: { [id: string]: JobRow } = {};
  return steps.map((step) => {
    switch (step.op) {
      case "find": {
        const rows = batch.find(jobsByIdsWhere(step.ids), ["id ASC"], step.ids.length);
        for (const row of rows) found[row.id] = row;
        return rows;
      }
      case "write": {
        const row = found[step.id];
        if (row === undefined) throw new Error(`conformance: ${step.id} was not found by an earlier step`);
        batch.write(row, step.patch);
        return null;
      }
      case "insert":
        return batch.insert(step.fields);
      case "queryOne":
        return batch.queryOne(step.query, step.shape);
      case "queryAll":
        return batch.queryAll(step.query, step.shape);
      case "execute":
        return batch.execute(step.statement);
      case "noteWritten":
        batch.noteWritten(step.changes);
        return null;
      case "throw":
        throw new Error(CONFORMANCE_THROW);
    }
  });
}

/** updateJobs running the body's steps: `{ result: { nowMs, results } }`, or `{ result: null }` when it rolled back. */
export function handleUpdateJobs(req: FleetRequest): Reply {
  const { steps } = bodyOf<{ steps: BatchStep[] }>(req);
  return json(200, { result: updateJobs((batch, nowMs) => ({ nowMs, results: runSteps(batch, steps) })) });
}

/** updateJobsBulk running the body's steps, its probe_job_events record named `source`. */
export function handleUpdateJobsBulk(req: FleetRequest): Reply {
  const { source, steps } = bodyOf<{ source: string; steps: BatchStep[] }>(req);
  return json(200, { result: updateJobsBulk(source, (batch, nowMs) => ({ nowMs, results: runSteps(batch, steps) })) });
}

/** queryOne, or with `all` queryAll, outside any transaction. */
export function handleQuery(req: FleetRequest): Reply {
  const { query, shape, all } = bodyOf<{ query: WhereClause; shape: object; all?: boolean }>(req);
  return json(200, all ? { rows: queryAll(query, shape) } : { row: queryOne(query, shape) });
}

/** updateJobsInAppTransaction with a handle that is no transaction: its refusal, and whether the work ran. */
export function handleAppTransactionRefusal(req: FleetRequest): Reply {
  const { fields } = bodyOf<{ fields: JobInsert }>(req);
  let ran = false;
  try {
    updateJobsInAppTransaction(null as unknown as Parameters<typeof updateJobsInAppTransaction>[0], (batch) => {
      ran = true;
      return batch.insert(fields);
    });
    return json(200, { refused: null, ran });
  } catch (err) {
    return json(200, { refused: String(err), ran });
  }
}

/** The runtime's small services: lease tokens, the environment, the app store, the adapter's constants. */
export function handleRuntime(req: FleetRequest): Reply {
  const { envName, storeKey, storeValue } = bodyOf<{ envName: string; storeKey: string; storeValue?: string }>(req);
  if (storeValue !== undefined) storeSet(storeKey, storeValue);
  return json(200, {
    tokens: [newLeaseToken(), newLeaseToken()],
    env: getenv(envName),
    stored: storeGet(storeKey) ?? null,
    jobsCollection: JOBS_COLLECTION,
    collectionCacheMs: COLLECTION_CACHE_MS,
  });
}

/**
 * What a handler sees of a request, answered as JSON (`?reply=text`: as plain
 * text) with the status `?status=`; `?bodyBytes=1` answers the body's JSON
 * length instead of the body (a big one need not travel back).
 */
export function handleEcho(req: FleetRequest): Reply {
  const status = Number(req.query("status")) || 200;
  const body = req.query("bodyBytes") === "" ? req.body() : JSON.stringify(req.body()).length;
  const seen = { body, q: req.query("q"), missing: req.query("missing"), caller: req.caller };
  if (req.query("reply") === "text") return { status, text: JSON.stringify(seen) };
  return json(status, seen);
}
