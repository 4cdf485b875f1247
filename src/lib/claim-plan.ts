/**
 * POST /api/fleet/claim-next as set-based SQL (issue 21), when flow control
 * holds back no more than some queues (paused or parked): one round of the
 * claim is one statement, an UPDATE ... FROM the judged candidates ...
 * RETURNING each row as written,
 * whatever the limit, in place of reading the candidates into JavaScript and
 * writing a patch per row (and of a judging query before the write: the
 * candidates are read once). The rules are decideClaim's (transitions.ts)
 * with the orphan-counting steal rule,
 * row for row, and the rounds are claimNext's (claim-next.ts): those stay as
 * the model that test/integration/claim-plan-agrees-with-model.test.ts checks
 * these statements against on real PocketBase, for both hooks lines, and as
 * the path that runs while a group is held back or a concurrency or rate
 * limit is set (those are counted per candidate, in claim order:
 * docs/flow-control.md).
 *
 * A round's candidates are the first `want` rows in claim order (docs/queue.md)
 * of the due pending rows that may start and the held rows whose lease has
 * passed, as claimNext reads them: pending rows level by level from the
 * highest priority (a recursive CTE over the priority levels, each level's
 * due rows a range of the claim-order index, per queue when the caller names
 * queues), expired rows through their own query. Each is judged: claimed,
 * stolen, timed out (its attempt's deadline passed), given up at the attempts
 * cap or at the orphan cap. A round that gave up on any ends short of `want`,
 * so the next reads the rows behind, up to CLAIM_NEXT_ROUNDS, as claimNext does.
 */
import {
  ATTEMPTS_LEFT, newValue, PAST_DEADLINE, quoted, ROW_COLUMNS, WRITTEN_VIEW, type ColumnRule,
} from "./batch-plans.js";
import { COUNT_SHAPE, FLOW_COLLECTION, STARTABLE_SQL } from "./flow.js";
import { timedOutErrorSql } from "./flow-limits.js";
import { SWEEPER_HOLDER } from "./config.js";
import type { JobBatch, JobRow } from "./job-row.js";
import { queueJobView } from "./job-row.js";
import { clampLeaseSeconds, formatPbDate, formatPbDateSql } from "./lease.js";
import { CLAIM_NEXT_ROUNDS, claimNext, claimQueuesBesides, heldBackQueues } from "./claim-next.js";
import { ROW_AS_JSON } from "./bulk.js";
import { CLAIM_ORDER, compareClaimOrder, expiredLeaseWhere, LEVEL_ORDER, storedQueueValues, type WhereClause } from "./queries.js";
import { MAX_ATTEMPTS_ERROR, retryBackoffSql, TIMEOUT_BACKOFF_DRAW } from "./queue.js";
import { giveUpErrorSql, isHeldStatus, ORPHAN_CAP_REASON } from "./transitions.js";
import type { ClaimedJob, JobView } from "./types.js";
import type { ClaimNextRequestFields } from "./validate.js";

/** What flow control asks of a claim-next call (flowDemandQuery). */
export const FLOW_DEMAND = {
  /** No setting in effect. */
  none: 0,
  /** Only queues paused or parked: the plan claims from the other queues, as claimNext would. */
  heldQueues: 1,
  /** A group paused or parked, a concurrency or a rate limit: claimNext counts them per candidate. */
  counted: 2,
} as const;

/**
 * Which FLOW_DEMAND a claim-next call meets, read as COUNT_SHAPE ({ n }). A
 * held-back queue's rows are left out whole, which the plan does by claiming
 * from the others; a held-back group is walked around group by group, and a
 * limit is counted candidate by candidate, which only claimNext does.
 */
export function flowDemandQuery(nowMs: number): WhereClause {
  const held = "(paused = 1 OR (parked_until != '' AND parked_until > {:now}))";
  return {
    sql: `SELECT CASE WHEN EXISTS (SELECT 1 FROM ${FLOW_COLLECTION} WHERE concurrency > 0 OR rate_limit > 0 OR (scope = 'group' AND ${held})) ` +
      `THEN ${FLOW_DEMAND.counted} WHEN EXISTS (SELECT 1 FROM ${FLOW_COLLECTION} WHERE ${held}) THEN ${FLOW_DEMAND.heldQueues} ` +
      `ELSE ${FLOW_DEMAND.none} END AS n`,
    params: { now: formatPbDate(nowMs) },
  };
}

/** Kinds of decision, by what they write. */
const WINS = ["claim", "steal"] as const;
const TIMED_OUT = ["timeout_retry", "timeout_dead"] as const;
const DEAD_LETTER = ["timeout_dead", "dead", "orphan_cap"] as const;
const GIVE_UPS = ["timeout_retry", ...DEAD_LETTER] as const;
const WRITES = [...WINS, ...GIVE_UPS] as const;

/** The columns a candidate is read with: those the rules and the claim order read (batch-plans' ROW_COLUMNS, and the order's). */
const READ = [
  "id", "status", "claimed_by", "lease_token", "probe_key", "queue", "group_key", "start_by", "claimed_at", "version", "reclaim_count",
  "consecutive_orphan_count", "attempts", "max_attempts", "timeout_seconds", "lease_expires_at", "priority", "run_at", "created", "enqueue_index",
] as const;
const CANDIDATE_COLUMNS = [
  ...ROW_COLUMNS,
  "COALESCE(r.priority, 0) AS r_priority", "COALESCE(r.run_at, '') AS r_run_at", "COALESCE(r.created, '') AS r_created",
  "COALESCE(r.enqueue_index, 0) AS r_enqueue_index",
];

/** decideClaim, in claim order: a timeout first, then the attempts cap, then the orphan cap (steals only). */
const KIND = "CASE WHEN r_status = 'pending' THEN (CASE WHEN " + ATTEMPTS_LEFT + " THEN 'claim' ELSE 'dead' END) " +
  `WHEN ${PAST_DEADLINE} THEN (CASE WHEN ${ATTEMPTS_LEFT} THEN 'timeout_retry' ELSE 'timeout_dead' END) ` +
  `WHEN NOT ${ATTEMPTS_LEFT} THEN 'dead' WHEN r_consecutive_orphan_count >= {:orphanCap} THEN 'orphan_cap' ELSE 'steal' END`;

const GIVE_UP_ERROR = giveUpErrorSql("r_consecutive_orphan_count");

/** Each written column's value by kind (decideClaim's win patch, timeoutPatch, deadLetterPatch, giveUpPatch); the rest keep theirs. */
const COLUMNS: { [column: string]: ColumnRule } = {
  status: [[WINS, "'claimed'"], [["timeout_retry"], "'pending'"], [DEAD_LETTER, "'failed'"]],
  claimed_by: [[WINS, "{:workerId}"], [["orphan_cap"], "{:sweeper}"], [["timeout_retry", "timeout_dead", "dead"], "''"]],
  // leaseEnd: never past the attempt's deadline, which a claim dates from now.
  lease_expires_at: [
    [WINS, formatPbDateSql("(CASE WHEN r_timeout_seconds > 0 THEN MIN({:leaseEndMs}, {:nowMs} + r_timeout_seconds * 1000) ELSE {:leaseEndMs} END)")],
    [["timeout_retry"], "''"],
  ],
  lease_token: [[WINS, "tok"], [GIVE_UPS, "''"]],
  version: [[WRITES, "r_version + 1"]],
  claimed_at: [[WINS, "{:now}"]],
  attempts: [[WINS, "r_attempts + 1"]],
  reclaim_count: [[["steal"], "r_reclaim_count + 1"]],
  consecutive_orphan_count: [[["steal"], "r_consecutive_orphan_count + 1"]],
  run_at: [[["timeout_retry"], formatPbDateSql(`{:nowMs} + ${retryBackoffSql("r_attempts", String(TIMEOUT_BACKOFF_DRAW))}`)]],
  progress: [[["timeout_retry"], "'null'"]],
  last_error: [
    [TIMED_OUT, timedOutErrorSql("r_timeout_seconds")], [["dead"], "{:maxAttemptsError}"], [["orphan_cap"], GIVE_UP_ERROR],
  ],
  dead_lettered_at: [[DEAD_LETTER, "{:now}"]],
  finished_at: [[DEAD_LETTER, "{:now}"]],
  result: [[["orphan_cap"], `json_object('error', ${GIVE_UP_ERROR}, 'reason', {:orphanReason}, 'lastHolder', r_claimed_by)`]],
};

const ORDER = CLAIM_ORDER.join(", ");
const JUDGED_ORDER = CLAIM_ORDER.map((term) => `r_${term}`).join(", ");

/**
 * The round's judged candidates, as the CTE `v`: `byQueue`: only the queues
 * of `{:queues}` (their stored values, a JSON array), each through its own
 * index; otherwise any queue. `expired`: the held rows whose lease passed
 * (expiredLeaseWhere's condition).
 */
function judgedCandidates(byQueue: boolean, expired: string): string {
  const inQueue = (alias: string) => (byQueue ? `queue = ${alias}.q AND ` : "");
  const maxBelow = (alias: string, below: string) =>
    `(SELECT MAX(priority) FROM probe_jobs WHERE ${inQueue(alias)}status = 'pending'${below})`;
  const first = byQueue
    ? `SELECT qs.q, ${maxBelow("qs", "")} FROM (SELECT value AS q FROM json_each({:queues})) AS qs`
    : `SELECT NULL, ${maxBelow("lv", "")}`;
  const levels = `lv(q, p) AS (${first} UNION ALL SELECT lv.q, ${maxBelow("lv", " AND priority < lv.p")} FROM lv WHERE lv.p IS NOT NULL)`;
  const levelRows = `SELECT id FROM probe_jobs WHERE ${inQueue("lv")}status = 'pending' AND priority = lv.p AND run_at <= {:now} ` +
    `AND ${STARTABLE_SQL} ORDER BY ${LEVEL_ORDER.join(", ")} LIMIT {:want}`;
  const due = `SELECT j.rowid AS rid, ${READ.map((c) => `j.${c}`).join(", ")} FROM lv, probe_jobs AS j WHERE lv.p IS NOT NULL AND j.id IN (${levelRows})`;
  const stale = `SELECT rowid AS rid, ${READ.join(", ")} FROM probe_jobs WHERE ${expired} ORDER BY ${ORDER} LIMIT {:want}`;
  return `WITH RECURSIVE ${levels}, ` +
    `c AS (SELECT * FROM (${due} UNION ALL SELECT * FROM (${stale})) ORDER BY ${ORDER} LIMIT {:want}), ` +
    `d AS (SELECT r.rid AS r_rowid, ${CANDIDATE_COLUMNS.join(", ")} FROM c AS r), ` +
    `k AS (SELECT d.*, (${KIND}) AS kind FROM d), ` +
    // The n-th win in claim order takes the n-th fresh token.
    `v AS MATERIALIZED (SELECT k.*, (CASE WHEN kind IN (${quoted(WINS)}) THEN json_extract({:tokens}, '$[' || ` +
    `(SUM(kind IN (${quoted(WINS)})) OVER (ORDER BY ${JUDGED_ORDER} ROWS UNBOUNDED PRECEDING) - 1) || ']') END) AS tok FROM k)`;
}

/**
 * One round: the judged candidates' writes, and each written row as
 * written, in no order (RETURNING's): `row`, a JobRow as JSON text (bulk.ts's
 * ROW_AS_JSON); its `status`; `view`, its JobView as JSON text.
 */
function roundStatement(byQueue: boolean, expired: string): string {
  const sets = Object.keys(COLUMNS).map((c) => `${c} = ${newValue(COLUMNS[c] as ColumnRule, `probe_jobs.${c}`)}`);
  sets.push("updated = {:now}");
  // Driven by the candidates' rowids: joined on its own, SQLite would scan probe_jobs for them.
  return `${judgedCandidates(byQueue, expired)} UPDATE probe_jobs SET ${sets.join(", ")} FROM v ` +
    `WHERE probe_jobs.rowid IN (SELECT r_rowid FROM v WHERE kind IN (${quoted(WRITES)})) AND probe_jobs.rowid = v.r_rowid ` +
    `RETURNING ${ROW_AS_JSON} AS row, status, ${WRITTEN_VIEW} AS view`;
}
export const CLAIM_ROUND_SHAPE = { row: "", status: "", view: "" };

export type ClaimPlanRequest = Pick<ClaimNextRequestFields, "workerId" | "leaseSeconds" | "limit" | "queues">;

/**
 * The jobs a claim took, as its transaction leaves them: answered already
 * (claimNext's path), or the plan's rows as JSON text, which answerClaims
 * parses and orders after the commit, outside PocketBase's single writer.
 */
export type ClaimsTaken = { jobs: ClaimedJob[] } | { rowTexts: string[] };

/** The claimed jobs as written, in claim order: claim-next's answer. */
export function answerClaims(taken: ClaimsTaken): ClaimedJob[] {
  if ("jobs" in taken) return taken.jobs;
  const rows = JSON.parse(`[${taken.rowTexts.join(",")}]`) as JobRow[];
  return rows.sort(compareClaimOrder).map((row) => ({ job: queueJobView(row), leaseToken: row.lease_token }));
}

/**
 * claim-next inside its transaction: by the plan when no probe_key prefix
 * narrows it (claimNext picks, per call, how to walk a family) and flow
 * control holds back at most some queues (paused or parked: the plan claims
 * from the others, as claimNext does: claimQueuesBesides); otherwise
 * claimNext, which counts flow control's limits per candidate. answerClaims
 * makes the answer.
 */
export function claimNextJobs(
  batch: JobBatch, req: ClaimNextRequestFields, nowMs: number, orphanCap: number, newLeaseToken: () => string,
): ClaimsTaken {
  const demand = req.probeKeyPrefix === "" ? batch.queryOne(flowDemandQuery(nowMs), COUNT_SHAPE)?.n : FLOW_DEMAND.counted;
  if (demand === FLOW_DEMAND.none) return claimNextByPlan(batch, req, nowMs, orphanCap, newLeaseToken);
  if (demand === FLOW_DEMAND.heldQueues) {
    const queues = claimQueuesBesides(batch, req.queues, heldBackQueues(batch, nowMs));
    if (queues !== null) return claimNextByPlan(batch, { ...req, queues }, nowMs, orphanCap, newLeaseToken);
  }
  return {
    jobs: claimNext(batch, req, nowMs, orphanCap, newLeaseToken)
      .map(({ row, patch }) => ({ job: queueJobView(row, patch), leaseToken: patch.lease_token ?? "" })),
  };
}

/** One round's statement (read as CLAIM_ROUND_SHAPE), for `want` candidates, the n-th win taking `tokens[n]`. */
export function claimRoundStatement(
  req: ClaimPlanRequest, want: number, tokens: readonly string[], nowMs: number, orphanCap: number,
): WhereClause {
  const expired = expiredLeaseWhere(nowMs, "", req.queues);
  const params: WhereClause["params"] = Object.assign({}, expired.params, {
    now: formatPbDate(nowMs), nowMs, want, tokens: JSON.stringify(tokens), workerId: req.workerId,
    leaseEndMs: nowMs + clampLeaseSeconds(req.leaseSeconds) * 1000, orphanCap, sweeper: SWEEPER_HOLDER,
    maxAttemptsError: MAX_ATTEMPTS_ERROR, orphanReason: ORPHAN_CAP_REASON,
  });
  const byQueue = req.queues !== null;
  // Each stored value once: a queue named twice would make its rows candidates twice.
  if (byQueue) params["queues"] = JSON.stringify(storedQueueValues(req.queues as string[]).filter((q, i, all) => all.indexOf(q) === i));
  return { sql: roundStatement(byQueue, expired.sql), params };
}

/**
 * claim-next by the plan: round by round, each one statement in the
 * caller's transaction (read through queryAll: it answers rows); the written
 * jobs recorded for realtime. Only the small views are parsed here: the
 * claimed rows stay text for answerClaims.
 */
export function claimNextByPlan(
  batch: JobBatch, req: ClaimPlanRequest, nowMs: number, orphanCap: number, newLeaseToken: () => string,
): ClaimsTaken {
  const claimed: string[] = [];
  if (req.queues !== null && req.queues.length === 0) return { rowTexts: claimed };
  for (let round = 0; round < CLAIM_NEXT_ROUNDS && claimed.length < req.limit; round++) {
    const want = req.limit - claimed.length;
    const tokens: string[] = [];
    for (let n = 0; n < want; n++) tokens.push(newLeaseToken());
    const written = batch.queryAll(claimRoundStatement(req, want, tokens, nowMs, orphanCap), CLAIM_ROUND_SHAPE);
    if (written.length === 0) break;
    batch.noteWritten(JSON.parse(`[${written.map((r) => r.view).join(",")}]`) as JobView[]);
    let won = 0;
    for (const r of written) {
      if (!isHeldStatus(r.status)) continue; // given up or timed out
      claimed.push(r.row);
      won++;
    }
    if (won === written.length) break;
  }
  return { rowTexts: claimed };
}
