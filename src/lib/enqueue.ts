/**
 * POST /api/fleet/enqueue: validated items written in one transaction, all or
 * nothing, with unique keys deduplicated against live jobs and against earlier
 * items of the same call.
 */
import type { JobBatch } from "./job-row.js";
import { LIVE_KEY_SHAPE, liveUniqueKeyQuery } from "./queries.js";
import { storedQueueName } from "./queue-names.js";
import type { EnqueuedJob } from "./types.js";
import type { EnqueueItemFields } from "./validate.js";

export function enqueueJobs(batch: JobBatch, items: readonly EnqueueItemFields[]): EnqueuedJob[] {
  const idByUniqueKey: { [key: string]: string } = {};
  const answer: EnqueuedJob[] = [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index] as EnqueueItemFields;
    const key = item.uniqueKey;
    if (key !== "") {
      // Inside the transaction on PocketBase's single writer, so concurrent
      // enqueues of one key see each other; the partial unique index is the backstop.
      const known = idByUniqueKey[key] ?? batch.queryOne(liveUniqueKeyQuery(key), LIVE_KEY_SHAPE)?.id;
      if (known !== undefined) {
        idByUniqueKey[key] = known;
        answer.push({ id: known, probeKey: item.probeKey, created: false });
        continue;
      }
    }
    const id = batch.insert({
      probe_key: item.probeKey,
      queue: item.queue,
      status: "pending",
      payload: item.payload,
      run_at: item.runAt,
      priority: item.priority,
      max_attempts: item.maxAttempts,
      unique_key: key,
      enqueue_index: index,
      group_key: item.groupKey,
      timeout_seconds: item.timeoutSeconds,
      start_by: item.startBy,
    });
    if (key !== "") idByUniqueKey[key] = id;
    answer.push({ id, probeKey: item.probeKey, created: true });
  }
  return answer;
}

/**
 * For an identity restricted to some queues: the first item whose uniqueKey a
 * live job of another queue holds, as a 403's message; else null. Checked
 * before anything is written in the same transaction: the answer would
 * otherwise hand that job's id across the identity's boundary.
 */
export function uniqueKeyAcrossQueues(
  batch: JobBatch, items: readonly EnqueueItemFields[], mayTake: (queue: string) => boolean,
): string | null {
  for (let index = 0; index < items.length; index++) {
    const key = (items[index] as EnqueueItemFields).uniqueKey;
    if (key === "") continue;
    const holder = batch.queryOne(liveUniqueKeyQuery(key), LIVE_KEY_SHAPE);
    if (holder !== null && !mayTake(storedQueueName(holder.queue))) {
      return `jobs[${index}]: its uniqueKey is held by a live job of a queue this worker identity does not take (nothing was written)`;
    }
  }
  return null;
}
