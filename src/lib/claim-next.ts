/**
 * POST /api/fleet/claim-next: the first `limit` claimable jobs in claim order
 * (QUEUE.md: priority, due time, age, order within an enqueue call), claimed in one
 * transaction. Jobs not yet due are never candidates. Being pb-fleet's own endpoint, it counts a steal of an expired
 * lease as an orphaning and gives up a job at the orphan cap instead of
 * handing it out (StealRule "count_orphans").
 */
import type { JobBatch, JobPatch, JobRow } from "./job-row.js";
import {
  CLAIM_ORDER, expiredLeaseWhere, FAMILY_PROBE_LIMIT, FAMILY_PROBE_SHAPE, familyProbeQuery, firstInClaimOrder, LEVEL_ORDER,
  pendingDueWhere, PRIORITY_LEVEL_SHAPE, storedQueueValues, topPriorityQuery,
} from "./queries.js";
import type { PrefixUse } from "./prefix.js";
import { decideClaim } from "./transitions.js";
import type { ClaimNextRequestFields } from "./validate.js";

/**
 * Rounds of candidate queries one call makes at most. A round ends short of
 * `limit` only when candidates ran out or some were given up; each give-up
 * fails a poison job for good, so more rounds are rare and bounded.
 */
export const CLAIM_NEXT_ROUNDS = 4;

export interface ClaimedRow {
  row: JobRow;
  patch: JobPatch;
}

export function claimNext(
  batch: JobBatch,
  req: ClaimNextRequestFields,
  nowMs: number,
  orphanCap: number,
  newLeaseToken: () => string,
): ClaimedRow[] {
  const claimed: ClaimedRow[] = [];
  const stealRule = { kind: "count_orphans", cap: orphanCap } as const;
  for (let round = 0; round < CLAIM_NEXT_ROUNDS && claimed.length < req.limit; round++) {
    const want = req.limit - claimed.length;
    // Held rows whose lease passed are few (about the jobs in flight). One
    // query with OR would sort every claimable row on each call.
    const candidates = firstInClaimOrder(
      duePendingOf(batch, nowMs, req.probeKeyPrefix, want, req.queues)
        .concat(batch.find(expiredLeaseWhere(nowMs, req.probeKeyPrefix, req.queues), CLAIM_ORDER, want)),
      want,
    );
    let gaveUp = 0;
    for (const row of candidates) {
      // The decision re-checks the row: the query proposes, the compare-and-set decides.
      const decision = decideClaim(row, req.workerId, req.leaseSeconds, nowMs, newLeaseToken, stealRule);
      if (decision.kind === "win") {
        batch.write(row, decision.patch);
        claimed.push({ row, patch: decision.patch });
      } else if (decision.kind === "give_up") {
        batch.write(row, decision.patch);
        gaveUp++;
      }
    }
    if (gaveUp === 0) break;
  }
  return claimed;
}

/**
 * The first `want` due pending rows of some queues (null: any) in claim
 * order: each queue's own through its index, merged by the caller. So a
 * queue's claim never walks other queues' rows, whatever they hold.
 */
function duePendingOf(batch: JobBatch, nowMs: number, probeKeyPrefix: string, want: number, queues: readonly string[] | null): JobRow[] {
  if (queues === null) return duePending(batch, nowMs, probeKeyPrefix, want);
  const rows: JobRow[] = [];
  for (const queue of storedQueueValues(queues)) {
    for (const row of duePending(batch, nowMs, probeKeyPrefix, want, queue)) rows.push(row);
  }
  return rows;
}

/**
 * The first `want` due pending rows in claim order: level by level from the
 * highest priority, each level's due rows a range of the claim-order index
 * (see pendingDueWhere). A level holding only future rows costs two index
 * seeks; there are at most MAX_PRIORITY - MIN_PRIORITY + 1 levels.
 */
export function duePending(batch: JobBatch, nowMs: number, probeKeyPrefix: string, want: number, queue?: string): JobRow[] {
  const use = prefixUse(batch, probeKeyPrefix);
  const rows: JobRow[] = [];
  let level = batch.queryOne(topPriorityQuery(probeKeyPrefix, undefined, use, queue), PRIORITY_LEVEL_SHAPE);
  while (level !== null && level.found === 1 && rows.length < want) {
    const found = batch.find(pendingDueWhere(level.priority, nowMs, probeKeyPrefix, use, queue), LEVEL_ORDER, want - rows.length);
    for (const row of found) rows.push(row);
    if (rows.length >= want) break;
    level = batch.queryOne(topPriorityQuery(probeKeyPrefix, level.priority, use, queue), PRIORITY_LEVEL_SHAPE);
  }
  return rows;
}

/** A small family is walked whole through the probe_key index; a large one filtered out of the claim order (familyProbeQuery). */
function prefixUse(batch: JobBatch, probeKeyPrefix: string): PrefixUse {
  if (probeKeyPrefix === "") return "filter"; // no prefix: nothing to filter
  const family = batch.queryOne(familyProbeQuery(probeKeyPrefix), FAMILY_PROBE_SHAPE);
  return family !== null && family.n < FAMILY_PROBE_LIMIT ? "range" : "filter";
}
