/**
 * pb-fleet-enqueue.js, the module an app's own hooks `require` to enqueue jobs
 * inside the app's transaction: the jobs exist if and only if the app's write
 * commits. The items, validation, defaults, dedupe and answer are those of POST
 * /api/fleet/enqueue (the same validateEnqueueRequest and enqueueJobs); the
 * writes go through the app's transaction handle, never through `$app`.
 *
 *   const fleet = require(`${__hooks}/pb-fleet-enqueue.js`);
 *   fleet.enqueue(txApp, [{ probeKey: "emails/welcome", payload: { userId } }]);
 *
 * Built by esbuild.config.mjs (scripts/build/enqueue-module.mjs) as a CommonJS
 * module next to each line's bundle. See docs/enqueue-in-transaction.md.
 */
import { updateJobsInAppTransaction, type AppTransaction } from "@pb-fleet/adapter";
import { enqueueJobs } from "../lib/enqueue.js";
import type { EnqueuedJob } from "../lib/types.js";
import { validateEnqueueRequest } from "../lib/validate.js";

/**
 * Enqueues `items` (the `jobs` array of POST /api/fleet/enqueue) through `tx`
 * and answers `{ id, probeKey, created }` per item, in order. Bad input throws
 * an Error whose message is the endpoint's 400 `error`, before anything is
 * written; a failed write throws PocketBase's error. Either way the app's
 * transaction rolls back unless the app catches the error.
 */
export function enqueue(tx: AppTransaction, items: unknown): EnqueuedJob[] {
  const valid = validateEnqueueRequest({ jobs: items }, Date.now());
  if (!valid.ok) throw new Error(valid.error);
  return updateJobsInAppTransaction(tx, (batch) => enqueueJobs(batch, valid.value));
}
