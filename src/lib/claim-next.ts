/**
 * POST /api/fleet/claim-next: the `limit` oldest claimable jobs, claimed in one
 * transaction. Being pb-fleet's own endpoint, it counts a steal of an expired
 * lease as an orphaning and gives up a job at the orphan cap instead of
 * handing it out (StealRule "count_orphans").
 */
import type { JobBatch, JobPatch, JobRow } from "./job-row.js";
import { CLAIM_ORDER, expiredLeaseWhere, oldestFirst, pendingWhere } from "./queries.js";
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
    // Pending rows come in order from the (status, created) index; held rows
    // whose lease passed are few (about the jobs in flight). One query with OR
    // would sort every claimable row on each call.
    const candidates = oldestFirst(
      batch.find(pendingWhere(req.probeKeyPrefix), CLAIM_ORDER, want)
        .concat(batch.find(expiredLeaseWhere(nowMs, req.probeKeyPrefix), CLAIM_ORDER, want)),
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
