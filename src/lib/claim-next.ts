/**
 * POST /api/fleet/claim-next: the first `limit` claimable jobs in claim order
 * (docs/queue.md: priority, due time, age, order within an enqueue call), claimed
 * in one transaction. Jobs not yet due, and jobs flow control holds back
 * (docs/flow-control.md), are never handed out. Being pb-fleet's own
 * endpoint, it counts a steal of an expired lease as an orphaning and gives
 * up a job at the orphan cap instead of handing it out (StealRule
 * "count_orphans").
 */
import type { JobBatch, JobPatch, JobRow } from "./job-row.js";
import {
  COUNT_SHAPE, flowGate, HELD_BACK_SCOPES_LIMIT, heldBackScopesQuery, NAME_SHAPE, nextQueueQuery, SCOPE_SHAPE, type Scope,
} from "./flow.js";
import { MAX_CLAIM_QUEUES, storedQueueName } from "./queue-names.js";
import {
  CLAIM_ORDER, expiredLeaseWhere, FAMILY_PROBE_LIMIT, FAMILY_PROBE_SHAPE, familyProbeQuery, firstInClaimOrder, LEVEL_ORDER,
  MAX_GROUP_WALK, NONE_HELD, pendingDueByGroupWhere, pendingDueWhere, pendingGroupCountQuery, PRIORITY_LEVEL_SHAPE, storedQueueValues,
  topPriorityQuery, type HeldBack, type WhereClause,
} from "./queries.js";
import type { PrefixUse } from "./prefix.js";
import { decideClaim } from "./transitions.js";
import type { ClaimNextRequestFields } from "./validate.js";

/**
 * Rounds of candidate queries one call makes at most, besides those that
 * only found scopes to hold back. A round ends short of `limit` only when
 * candidates ran out, some were given up or timed out (each fails an
 * attempt for good), or flow control held some back; a round of the last
 * kind leaves those scopes out of the next, so it is bounded by the scopes
 * there are, and MAX_PASSES bounds the passes outright.
 */
export const CLAIM_NEXT_ROUNDS = 4;
export const MAX_PASSES = 64;
/** Candidates one pass reads at most. */
const MAX_CANDIDATES = 500;
/**
 * Held-back groups one call leaves out at most (their names are bound
 * parameters, and SQLite takes at most 32,766): past it, the call answers
 * what it claimed so far.
 */
const MAX_HELD_GROUPS = 12_000;

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
  const gate = flowGate(batch, nowMs);
  // Scopes held back for the rest of the call (those allowing nothing as it starts, from the start); a held-back queue
  // of the caller's list is dropped from it.
  const held = { queues: [] as string[], groups: [] as string[] };
  const isHeld: { [scopeAndName: string]: true } = {};
  const holdBack = (s: { scope: string; name: string }): void => {
    const key = `${s.scope}\u0000${s.name}`;
    if (isHeld[key]) return;
    isHeld[key] = true;
    (s.scope === "queue" ? held.queues : held.groups).push(s.name);
  };
  for (const s of batch.queryAll(heldBackScopesQuery(nowMs, HELD_BACK_SCOPES_LIMIT), SCOPE_SHAPE)) holdBack(s);
  const heldFromStart = held.queues.length + held.groups.length;
  let queues = req.queues === null && heldFromStart > 0 ? otherQueues(batch, held.queues) : req.queues;
  if (queues !== null) queues = queues.filter((q) => held.queues.indexOf(q) === -1);
  let rounds = 0;
  for (let pass = 0; rounds < CLAIM_NEXT_ROUNDS && pass < MAX_PASSES && claimed.length < req.limit; pass++) {
    if (queues !== null && queues.length === 0) break;
    // Past the first pass, as many more candidates as scopes were held back during the call: rows of held-back
    // scopes tend to come in runs, and each pass should get past them (at most MAX_CANDIDATES). Those held
    // back from the start are left out by the queries already (so, with no others, a pass reads what
    // claimNextByPlan's round reads).
    const heldDuringCall = held.queues.length + held.groups.length - heldFromStart;
    const want = pass === 0 ? req.limit : Math.min(MAX_CANDIDATES, req.limit - claimed.length + heldDuringCall);
    const except: HeldBack = queues === null ? held : { queues: [], groups: held.groups };
    // Held rows whose lease passed are few (about the jobs in flight). One
    // query with OR would sort every claimable row on each call.
    const candidates = firstInClaimOrder(
      duePendingOf(batch, nowMs, req.probeKeyPrefix, want, queues, except)
        .concat(batch.find(expiredLeaseWhere(nowMs, req.probeKeyPrefix, queues, except), CLAIM_ORDER, want)),
      want,
    );
    gate.load(candidates);
    let gaveUp = false;
    let heldBack = false;
    for (const row of candidates) {
      if (claimed.length >= req.limit) break;
      // The decision re-checks the row: the query proposes, the compare-and-set decides.
      const heldBy: { scope: Scope | null } = { scope: null };
      const decision = decideClaim(row, req.workerId, req.leaseSeconds, nowMs, newLeaseToken, stealRule, (r) => {
        const refusal = gate.refusal(r);
        heldBy.scope = refusal === null ? null : refusal.scope;
        return refusal === null ? null : refusal.reason;
      });
      if (decision.kind === "win") {
        batch.write(row, decision.patch);
        gate.claimed(row);
        claimed.push({ row, patch: decision.patch });
      } else if (decision.kind === "give_up" || decision.kind === "timed_out") {
        batch.write(row, decision.patch);
        gaveUp = true;
      } else if (heldBy.scope !== null) {
        const scope = heldBy.scope;
        holdBack(scope);
        if (held.groups.length > MAX_HELD_GROUPS) break;
        // A call for any queue turns into one per queue: each queue's index, and a held-back group walked around.
        if (scope.scope === "queue") queues = queues === null ? otherQueues(batch, held.queues) : queues.filter((q) => q !== scope.name);
        else if (queues === null) queues = otherQueues(batch, held.queues);
        heldBack = true;
      }
    }
    if (held.groups.length > MAX_HELD_GROUPS) break;
    if (gaveUp) rounds++;
    else if (!heldBack) break;
  }
  gate.flush();
  return claimed;
}

/**
 * The queues paused or parked now (flow control's queue scopes held back
 * from the start of a call), when only such settings are in effect
 * (claim-plan.ts's FLOW_DEMAND.heldQueues); null when there are more than
 * one read takes (HELD_BACK_SCOPES_LIMIT).
 */
export function heldBackQueues(batch: JobBatch, nowMs: number): string[] | null {
  const scopes = batch.queryAll(heldBackScopesQuery(nowMs, HELD_BACK_SCOPES_LIMIT), SCOPE_SHAPE);
  if (scopes.length >= HELD_BACK_SCOPES_LIMIT) return null;
  return scopes.filter((s) => s.scope === "queue").map((s) => s.name);
}

/**
 * The queues a call claims from when `heldQueues` are held back from its
 * start, as claimNext picks them: the caller's list without them, or, for
 * any queue, every other queue (otherQueues). null: the plan cannot say
 * (too many queues, or too many held back): let claimNext decide.
 */
export function claimQueuesBesides(batch: JobBatch, queues: readonly string[] | null, heldQueues: readonly string[] | null): string[] | null {
  if (heldQueues === null) return null;
  if (queues !== null) return queues.filter((q) => heldQueues.indexOf(q) === -1);
  return heldQueues.length === 0 ? null : otherQueues(batch, heldQueues);
}

/**
 * Every queue but the held-back ones, once a call for any queue finds one
 * held back: then each queue is walked through its own index, and a paused
 * queue's rows in front cost nothing (docs/flow-control.md: no head-of-line blocking).
 * null (stay with any queue, filtered) when there are more queues than a
 * claim takes (MAX_CLAIM_QUEUES).
 */
function otherQueues(batch: JobBatch, heldQueues: readonly string[]): string[] | null {
  const names: string[] = [];
  let after: string | null = null;
  for (let i = 0; i <= MAX_CLAIM_QUEUES + heldQueues.length + 1; i++) {
    const next: { name: string } | null = batch.queryOne(nextQueueQuery(after), NAME_SHAPE);
    if (next === null) return names;
    after = next.name;
    const name = storedQueueName(next.name);
    if (heldQueues.indexOf(name) === -1 && names.indexOf(name) === -1) names.push(name);
    if (names.length > MAX_CLAIM_QUEUES) return null;
  }
  return null;
}

/**
 * The first `want` due pending rows of some queues (null: any) in claim
 * order: each queue's own through its index, merged by the caller. So a
 * queue's claim never walks other queues' rows, whatever they hold.
 */
function duePendingOf(
  batch: JobBatch, nowMs: number, probeKeyPrefix: string, want: number, queues: readonly string[] | null, except: HeldBack,
): JobRow[] {
  if (queues === null) return duePending(batch, nowMs, probeKeyPrefix, want, undefined, except);
  const rows: JobRow[] = [];
  for (const queue of storedQueueValues(queues)) {
    const byGroup = except.groups.length > 0 &&
      (batch.queryOne(pendingGroupCountQuery(queue, MAX_GROUP_WALK), COUNT_SHAPE)?.n ?? MAX_GROUP_WALK + 1) <= MAX_GROUP_WALK;
    const found = byGroup
      ? duePending(batch, nowMs, probeKeyPrefix, want, queue, except, (priority) =>
        pendingDueByGroupWhere(priority, nowMs, probeKeyPrefix, queue, except.groups, want))
      : duePending(batch, nowMs, probeKeyPrefix, want, queue, except);
    for (const row of found) rows.push(row);
  }
  return rows;
}

/**
 * The first `want` due pending rows in claim order: level by level from the
 * highest priority, each level's due rows a range of the claim-order index
 * (see pendingDueWhere). A level holding only future rows costs two index
 * seeks; there are at most MAX_PRIORITY - MIN_PRIORITY + 1 levels.
 */
export function duePending(
  batch: JobBatch, nowMs: number, probeKeyPrefix: string, want: number, queue?: string, except: HeldBack = NONE_HELD,
  levelWhere?: (priority: number) => WhereClause,
): JobRow[] {
  const use = prefixUse(batch, probeKeyPrefix);
  const rows: JobRow[] = [];
  let level = batch.queryOne(topPriorityQuery(probeKeyPrefix, undefined, use, queue), PRIORITY_LEVEL_SHAPE);
  while (level !== null && level.found === 1 && rows.length < want) {
    const where = levelWhere !== undefined ? levelWhere(level.priority) : pendingDueWhere(level.priority, nowMs, probeKeyPrefix, use, queue, except);
    const found = batch.find(where, LEVEL_ORDER, want - rows.length);
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
