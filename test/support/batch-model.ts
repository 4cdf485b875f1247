// The model of heartbeat and complete that src/lib/batch-plans.ts's SQL must
// agree with: transitions.ts's decideRenew and decideRelease, item by item in
// request order, each item seeing the earlier ones' writes; and of claim-next
// that src/lib/claim-plan.ts's SQL must agree with: claimNext's candidates and
// rounds, decideClaim row by row. Used by the differential tests on real
// PocketBase (batch-plans-agree-with-model, claim-plan-agrees-with-model).
import { parkScopeOf, rateLimitedUntilMs, type Scope } from "../../src/lib/flow";
import { formatPbDate } from "../../src/lib/lease";
import { jitterOfStep } from "../../src/lib/batch-plans";
import { CLAIM_NEXT_ROUNDS } from "../../src/lib/claim-next";
import { jobView, queueJobView, type JobPatch, type JobRow } from "../../src/lib/job-row";
import { compareClaimOrder, storedQueueValues } from "../../src/lib/queries";
import { storedQueueName } from "../../src/lib/queue-names";
import {
  JOB_PATCH_JSON_FIELDS, JOB_ROW_FLOW_NUMBER_FIELDS, JOB_ROW_FLOW_TEXT_FIELDS, JOB_ROW_NUMBER_FIELDS, JOB_ROW_TEXT_FIELDS,
} from "../../src/lib/job-schema";
import { decideClaim, decideRelease, decideRenew, isClaimable } from "../../src/lib/transitions";
import { startByPassed } from "../../src/lib/flow";
import type { ClaimedJob, CompleteResult, HeartbeatResult } from "../../src/lib/types";
import type { ReleaseRequestFields, RenewRequestFields } from "../../src/lib/validate";

/** A stored row: every column as SQLite holds it (text, number or null). */
export type StoredRow = { id: string } & Record<string, string | number | null>;

/** The JobRow columns (src/lib/job-schema.ts), flow control's always (a stored row has them). */
const TEXT = [...JOB_ROW_TEXT_FIELDS, ...JOB_ROW_FLOW_TEXT_FIELDS];
const NUMBER = [...JOB_ROW_NUMBER_FIELDS, ...JOB_ROW_FLOW_NUMBER_FIELDS];
/** The columns a JobPatch writes whose values are JSON (stored as their JSON text). */
const JSON_COLUMNS: readonly string[] = JOB_PATCH_JSON_FIELDS;

/** The row as the rules read it (bulk.ts's read): text never null, numbers 0 for null, the lease as judged. */
export function judgedRow(stored: StoredRow): JobRow {
  const row: Record<string, unknown> = { id: stored.id };
  for (const c of TEXT) row[c] = stored[c] ?? "";
  for (const c of NUMBER) row[c] = stored[c] ?? 0;
  const lease = String(stored["lease_expires_at"] ?? "");
  // LEASE_AS_JUDGED_SQL: the layout's GLOB only (a calendar-invalid text in the layout is kept, and judged expired).
  row["lease_expires_at"] = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(lease) ? lease : "";
  return row as unknown as JobRow;
}

/** A patch written to a stored row as the bulk write stores it; `updated` as the statement stamps it. */
export function applyPatch(stored: StoredRow, patch: JobPatch, updated: string): void {
  for (const [column, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    stored[column] = JSON_COLUMNS.includes(column) ? JSON.stringify(value) : (value as string | number);
  }
  if ("updated" in stored) stored["updated"] = updated;
}

export interface ModelOutcome<A> {
  answers: A[];
  /** Scopes parked by rate-limited releases, with until when, in item order. */
  parks: { scope: Scope; untilMs: number }[];
  /** Ids of the rows written, in order of writing. */
  written: string[];
}

export function modelHeartbeat(rows: Map<string, StoredRow>, renewals: readonly RenewRequestFields[], nowMs: number): ModelOutcome<HeartbeatResult> {
  const now = formatPbDate(nowMs);
  const written: string[] = [];
  const answers = renewals.map((renewal): HeartbeatResult => {
    const stored = rows.get(renewal.jobId);
    if (stored === undefined) return { jobId: renewal.jobId, renewed: false };
    const row = judgedRow(stored);
    const decision = decideRenew(row, renewal, nowMs);
    if (decision.kind === "refused") {
      return decision.reason === undefined ? { jobId: renewal.jobId, renewed: false } : { jobId: renewal.jobId, renewed: false, reason: decision.reason };
    }
    applyPatch(stored, decision.patch, now);
    written.push(row.id);
    return { jobId: renewal.jobId, renewed: true, job: jobView(row, decision.patch) };
  });
  return { answers, parks: [], written };
}

/** `jitterSteps[n]`: item n's jitter step, as completeByPlan drew it. */
export function modelComplete(
  rows: Map<string, StoredRow>, releases: readonly ReleaseRequestFields[], nowMs: number, jitterSteps: readonly number[],
): ModelOutcome<CompleteResult> {
  const now = formatPbDate(nowMs);
  const written: string[] = [];
  const parks: ModelOutcome<CompleteResult>["parks"] = [];
  const answers = releases.map((release, n): CompleteResult => {
    const stored = rows.get(release.jobId);
    if (stored === undefined) return { jobId: release.jobId, released: false, reason: "refused_not_holder" };
    const row = judgedRow(stored);
    const { workerId, target, leaseToken, result, error, rateLimitedFor } = release;
    const decision = decideRelease(row, { workerId, target, leaseToken, result, error, jitter: jitterOfStep(jitterSteps[n] ?? 0), rateLimitedFor }, nowMs);
    if (decision.kind === "refused") return { jobId: release.jobId, released: false, reason: decision.reason };
    applyPatch(stored, decision.patch, now);
    written.push(row.id);
    if (decision.park !== undefined) parks.push({ scope: parkScopeOf(row), untilMs: rateLimitedUntilMs(nowMs, decision.park) });
    return { jobId: release.jobId, released: true, job: jobView(row, decision.patch) };
  });
  return { answers, parks, written };
}

/**
 * The order completeByPlan draws its jitter in (round by round: each job's
 * first item, then its second...): draw k belongs to item roundOrder[k].
 */
export function roundOrder(items: readonly { jobId: string }[]): number[] {
  const seen = new Map<string, number>();
  const rounds: number[][] = [];
  items.forEach((item, n) => {
    const r = seen.get(item.jobId) ?? 0;
    seen.set(item.jobId, r + 1);
    (rounds[r] ??= []).push(n);
  });
  return rounds.flat();
}

/**
 * claim-next with no prefix, and no flow setting in effect but `heldQueues`
 * paused or parked: claimNext's rounds over every stored row (the candidates:
 * due pending rows that may start, held rows whose lease passed, of the queues
 * asked for but the held ones; the first `want` in claim order), decideClaim
 * with the orphan-counting steal rule on each. The tokens: `want` drawn at
 * each round's start, the n-th win of the round taking the n-th (as
 * claimNextByPlan draws them).
 */
export function modelClaimNext(
  rows: Map<string, StoredRow>,
  req: { workerId: string; leaseSeconds: unknown; limit: number; queues: readonly string[] | null },
  nowMs: number, orphanCap: number, newLeaseToken: () => string, heldQueues: readonly string[] = [],
): ModelOutcome<ClaimedJob> {
  const now = formatPbDate(nowMs);
  const written: string[] = [];
  const answers: ClaimedJob[] = [];
  const queues = req.queues === null ? null : storedQueueValues(req.queues);
  if (queues !== null && queues.length === 0) return { answers, parks: [], written };
  for (let round = 0; round < CLAIM_NEXT_ROUNDS && answers.length < req.limit; round++) {
    const want = req.limit - answers.length;
    const tokens = Array.from({ length: want }, newLeaseToken);
    let won = 0;
    const candidates = [...rows.values()].map((stored) => ({ stored, row: judgedRow(stored) }))
      .filter(({ row }) => (queues === null || queues.includes(row.queue)) && !heldQueues.includes(storedQueueName(row.queue)) &&
        isClaimable(row, nowMs) && !startByPassed(row, nowMs))
      .sort((a, b) => compareClaimOrder(a.row, b.row)).slice(0, want);
    let gaveUp = false;
    for (const { stored, row } of candidates) {
      const decision = decideClaim(row, req.workerId, req.leaseSeconds, nowMs, () => tokens[won] as string, { kind: "count_orphans", cap: orphanCap });
      if (decision.kind === "win") {
        won++;
        applyPatch(stored, decision.patch, now);
        written.push(row.id);
        answers.push({ job: queueJobView(row, decision.patch), leaseToken: decision.patch.lease_token ?? "" });
      } else if (decision.kind === "give_up" || decision.kind === "timed_out") {
        applyPatch(stored, decision.patch, now);
        written.push(row.id);
        gaveUp = true;
      }
    }
    if (!gaveUp) break;
  }
  return { answers, parks: [], written };
}
