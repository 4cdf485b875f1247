/**
 * POST /api/fleet/enqueue: validated items written in one transaction, all or
 * nothing, with unique keys deduplicated against live jobs and against earlier
 * items of the same call.
 */
import type { JobBatch } from "./job-row.js";
import { ID_SHAPE, liveUniqueKeyQuery } from "./queries.js";
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
      const known = idByUniqueKey[key] ?? batch.queryOne(liveUniqueKeyQuery(key), ID_SHAPE)?.id;
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
    });
    if (key !== "") idByUniqueKey[key] = id;
    answer.push({ id, probeKey: item.probeKey, created: true });
  }
  return answer;
}
