/**
 * POST /api/fleet/heartbeat and /complete as set-based SQL (issue 21): every
 * item of a batch is judged, and every change written, by two statements,
 * whatever the batch's size, in place of reading the rows into JavaScript and
 * writing patches back (pg-boss keeps its statements in plans.ts the same way).
 * JavaScript touches only the items and the answer. The rules are those of
 * transitions.ts (decideRenew, decideRelease), item for item: those functions
 * stay as the model that test/integration/batch-plans-agree-with-model.test.ts
 * checks these statements against on real PocketBase, for both hooks lines.
 *
 * Each batch is first one UPDATE ... FROM the judged items, answering each
 * written item's answer from its row as written (RETURNING); only when some
 * items were not written (refusals, rare on the hot path) a judging query
 * answers those, over the same rules. Both run in the caller's transaction on
 * PocketBase's single writer, and no round names a job twice, so an item the
 * UPDATE left alone is judged on the row the UPDATE judged it on. An item
 * naming a job an earlier item of the batch named is judged in a later round,
 * after the earlier one's write, as the model judges it.
 */
import type { JobBatch, JobRow } from "./job-row.js";
import { parkFor, rateLimitedUntilMs } from "./flow.js";
import { timedOutErrorSql } from "./flow-limits.js";
import { clampLeaseSeconds, formatPbDate, formatPbDateSql, LEASE_AS_JUDGED_SQL, LIVE_LEASE_SQL, pbDateMsSql } from "./lease.js";
import type { WhereClause } from "./queries.js";
import { hasAttemptsLeftSql, MAX_ATTEMPTS_ERROR, retryBackoffSql, TIMEOUT_BACKOFF_DRAW } from "./queue.js";
import type { CompleteResult, HeartbeatResult, JobView } from "./types.js";
import type { ReleaseRequestFields, RenewRequestFields } from "./validate.js";
import { COMPLETED_STATUSES, HELD_STATUSES, statusInSql, statusListSql } from "./job-schema.js";

/**
 * A retry's jitter as sent to SQLite: a whole number of 1/JITTER_STEPS, so
 * both sides compute the backoff from the same exact double.
 */
export const JITTER_STEPS = 1_048_576;

/** The model's jitter (ReleaseOutcome.jitter) for a step drawn by completeByPlan. */
export function jitterOfStep(step: number): number {
  return step / JITTER_STEPS;
}

/** What one judging query answers: the items' answers, in their order, as one JSON text. */
export const JUDGED_SHAPE = { answers: "" };

/** What the write answers per written row (RETURNING, in no order): its id, the item's answer, the scope a park names. */
export const WRITTEN_SHAPE = { id: "", answer: "", queue: "", group_key: "" };

/** A held status, as isHeldStatus says. */
const HELD = statusListSql(HELD_STATUSES);

/**
 * The row's columns each rule reads, as the model reads a JobRow: text never
 * NULL, numbers 0 when NULL, the lease as judged (LEASE_AS_JUDGED_SQL), with
 * whether it is live (LIVE_LEASE_SQL) and the attempt's deadline (deadlineMs).
 */
export const ROW_COLUMNS = [
  "r.id AS r_id",
  ...["status", "claimed_by", "lease_token", "probe_key", "queue", "group_key", "start_by", "claimed_at"]
    .map((c) => `COALESCE(r.${c}, '') AS r_${c}`),
  ...["version", "reclaim_count", "consecutive_orphan_count", "attempts", "max_attempts", "timeout_seconds"]
    .map((c) => `COALESCE(r.${c}, 0) AS r_${c}`),
  LEASE_AS_JUDGED_SQL.replace(/lease_expires_at/g, "r.lease_expires_at").replace(/ AS r\.lease_expires_at$/, " AS r_lease_text"),
  `${LIVE_LEASE_SQL.replace(/lease_expires_at/g, "r.lease_expires_at")} AS r_live`,
  `(CASE WHEN COALESCE(r.timeout_seconds, 0) > 0 THEN ${pbDateMsSql("COALESCE(r.claimed_at, '')")} + r.timeout_seconds * 1000 END) ` +
    "AS r_deadline_ms",
];

/** The judged items: the request's (`{:items}`, a JSON array), each beside its row as the rules read it, and its kind. */
function judgedItems(itemFields: readonly string[], kind: string): string {
  const fields = itemFields.map((f) => `json_extract(q.value, '$.${f}') AS i_${f}`).join(", ");
  return `WITH i AS (SELECT q.key AS k, ${fields} FROM json_each({:items}) AS q), ` +
    `d AS (SELECT i.*, ${ROW_COLUMNS.join(", ")} FROM i LEFT JOIN probe_jobs AS r ON r.id = i.i_id), ` +
    `v AS MATERIALIZED (SELECT d.*, (${kind}) AS kind FROM d)`;
}

/** The caller holds the row's claim: its worker id, and its fencing token when it sent one. */
const STALE_TOKEN = "(i_tok IS NOT NULL AND i_tok != r_lease_token)";
export const PAST_DEADLINE = "COALESCE({:nowMs} >= r_deadline_ms, 0)";
export const ATTEMPTS_LEFT = hasAttemptsLeftSql("r_attempts", "r_max_attempts");

/** An item as the statements read it (`{:items}`): its job's id, and the fields of Plan.items. */
export interface PlanItem {
  id: string;
  [field: string]: unknown;
}

/** A column's new value for some kinds of decision (in order); the rest keep theirs. */
export type ColumnRule = readonly (readonly [kinds: readonly string[], value: string])[];

export function newValue(rule: ColumnRule, current: string): string {
  const cases = rule.map(([kinds, value]) => `WHEN kind IN (${kinds.map((k) => `'${k}'`).join(", ")}) THEN ${value}`);
  return `(CASE ${cases.join(" ")} ELSE ${current} END)`;
}

/** A decision's statements: the judging query and the write, from one set of rules. */
interface Plan {
  items: readonly string[];
  kind: string;
  /** Kinds that write the row. */
  writes: readonly string[];
  columns: { [column: string]: ColumnRule };
  /** The answer of one item, from v's columns and `view` (the job as written). */
  answer: (view: string) => string;
  /** The answer of a written item, from the row as written (`id`) and `view`: what `answer` says of it. */
  writtenAnswer: (view: string) => string;
}

const VIEW_COLUMNS = ["status", "claimed_by", "lease_expires_at", "version"] as const;

function rowValue(column: string): string {
  return column === "lease_expires_at" ? "r_lease_text" : `r_${column}`;
}

/** The job as written, as jobView shows it: id, probe_key, status, claimed_by, lease_expires_at, version. */
function viewOf(plan: Plan): string {
  const members = VIEW_COLUMNS.map((c) => {
    const rule = plan.columns[c];
    return `'${c}', ${rule === undefined ? rowValue(c) : newValue(rule, rowValue(c))}`;
  });
  return `json_object('id', r_id, 'probe_key', r_probe_key, ${members.join(", ")})`;
}

/** The job as written (jobView), from the written row's own columns (RETURNING): as viewOf shows it, the same text. */
export const WRITTEN_VIEW = "json_object('id', id, 'probe_key', COALESCE(probe_key, ''), 'status', COALESCE(status, ''), " +
  `'claimed_by', COALESCE(claimed_by, ''), 'lease_expires_at', ${LEASE_AS_JUDGED_SQL.replace(/ AS lease_expires_at$/, "")}, ` +
  "'version', COALESCE(version, 0))";

function judgeQuery(plan: Plan): string {
  const answer = plan.answer(viewOf(plan));
  return `${judgedItems(plan.items, plan.kind)} SELECT COALESCE(json_group_array(json(${answer}) ORDER BY k), '[]') AS answers FROM v`;
}

function writeStatement(plan: Plan): string {
  const sets = Object.keys(plan.columns).map((c) => `${c} = ${newValue(plan.columns[c] as ColumnRule, `probe_jobs.${c}`)}`);
  sets.push("updated = {:now}");
  return `${judgedItems(plan.items, plan.kind)} UPDATE probe_jobs SET ${sets.join(", ")} FROM v ` +
    `WHERE probe_jobs.id = v.r_id AND v.kind IN (${quoted(plan.writes)}) ` +
    `RETURNING id, ${plan.writtenAnswer(WRITTEN_VIEW)} AS answer, COALESCE(queue, '') AS queue, COALESCE(group_key, '') AS group_key`;
}

export const quoted = (kinds: readonly string[]) => kinds.map((k) => `'${k}'`).join(", ");

// ---- heartbeat: decideRenew --------------------------------------------------------------

const RENEW: Plan = {
  // id, worker, token (absent: none sent), progress as JSON text (absent: none), the lease's end (text, and ms).
  items: ["id", "w", "tok", "p", "e", "em"],
  kind: `CASE WHEN r_id IS NULL OR r_status NOT IN ${HELD} THEN 'refused' ` +
    `WHEN r_claimed_by != i_w OR ${STALE_TOKEN} THEN 'refused' ` +
    `WHEN ${PAST_DEADLINE} THEN 'timed_out' WHEN NOT r_live THEN 'refused' ELSE 'renew' END`,
  writes: ["renew"],
  columns: {
    status: [[["renew"], "'running'"]],
    // Never past the attempt's deadline (leaseEnd).
    lease_expires_at: [[["renew"], `(CASE WHEN r_deadline_ms IS NOT NULL AND r_deadline_ms < i_em THEN ${formatPbDateSql("r_deadline_ms")} ELSE i_e END)`]],
    version: [[["renew"], "r_version + 1"]],
    progress: [[["renew"], "COALESCE(i_p, probe_jobs.progress)"]],
  },
  answer: (view) => `CASE kind WHEN 'renew' THEN json_object('jobId', i_id, 'renewed', json('true'), 'job', ${view}) ` +
    `WHEN 'timed_out' THEN json_object('jobId', i_id, 'renewed', json('false'), 'reason', 'timed_out') ` +
    "ELSE json_object('jobId', i_id, 'renewed', json('false')) END",
  writtenAnswer: (view) => `json_object('jobId', id, 'renewed', json('true'), 'job', ${view})`,
};

/** The heartbeat's judging query over `items` (JSON text of heartbeatItems). */
export function heartbeatJudgeQuery(items: string, nowMs: number): WhereClause {
  return { sql: judgeQuery(RENEW), params: planParams(items, nowMs) };
}

export function heartbeatWriteStatement(items: string, nowMs: number): WhereClause {
  return { sql: writeStatement(RENEW), params: planParams(items, nowMs) };
}

function planParams(items: string, nowMs: number): Record<string, string | number> {
  return { items, now: formatPbDate(nowMs), nowMs };
}

/** The heartbeat's items as its statements read them. */
export function heartbeatItems(renewals: readonly RenewRequestFields[], nowMs: number): PlanItem[] {
  return renewals.map((r) => {
    // leaseEnd's end; truncated, as formatPbDate would truncate it, so the comparison with the deadline says the same.
    const endMs = Math.trunc(nowMs + clampLeaseSeconds(r.leaseSeconds) * 1000);
    const item: PlanItem = { id: r.jobId, w: r.workerId, e: formatPbDate(endMs), em: endMs };
    if (r.leaseToken !== undefined) item["tok"] = r.leaseToken;
    if (r.progress !== undefined) item["p"] = JSON.stringify(r.progress);
    return item;
  });
}

export function heartbeatByPlan(batch: JobBatch, renewals: readonly RenewRequestFields[], nowMs: number): HeartbeatResult[] {
  return inRounds(renewals, (round) => {
    return runPlan<HeartbeatResult>(batch, heartbeatItems(round, nowMs),
      (items) => heartbeatWriteStatement(items, nowMs), (items) => heartbeatJudgeQuery(items, nowMs)).answers;
  });
}

// ---- complete: decideRelease --------------------------------------------------------------

/** Kinds of a release that writes, by what it becomes. */
const BACK_TO_PENDING = ["timeout_retry", "retry", "rate_limited"] as const;
const DEAD_LETTER = ["timeout_dead", "dead"] as const;
const RELEASES = ["finish", "requeue", ...BACK_TO_PENDING, ...DEAD_LETTER] as const;
const NOT_FINISH = ["requeue", ...BACK_TO_PENDING, ...DEAD_LETTER] as const;

const RELEASE: Plan = {
  // id, worker, target, token, result as JSON text, error, the jitter step, rateLimitedFor's due time (absent: none).
  items: ["id", "w", "t", "tok", "res", "err", "j", "ra"],
  kind: "CASE WHEN r_id IS NULL THEN 'refused_not_holder' " +
    `WHEN r_status NOT IN ${HELD} THEN (CASE WHEN ${statusInSql(COMPLETED_STATUSES, "r_status")} AND r_claimed_by = i_w ` +
    `THEN (CASE WHEN ${STALE_TOKEN} THEN 'refused_stale_token' ELSE 'refused_terminal_same_holder' END) ELSE 'refused_not_holder' END) ` +
    "WHEN r_claimed_by != i_w THEN 'refused_not_holder' " +
    `WHEN ${STALE_TOKEN} THEN 'refused_stale_token' ` +
    "WHEN i_t = 'pending' THEN (CASE WHEN r_live THEN 'refused_lease_live' " +
    `WHEN ${PAST_DEADLINE} THEN (CASE WHEN ${ATTEMPTS_LEFT} THEN 'timeout_retry' ELSE 'timeout_dead' END) ELSE 'requeue' END) ` +
    "WHEN NOT r_live THEN 'refused_not_holder' " +
    "WHEN i_t = 'retry' AND i_ra IS NOT NULL THEN 'rate_limited' " +
    `WHEN i_t = 'retry' THEN (CASE WHEN ${ATTEMPTS_LEFT} THEN 'retry' ELSE 'dead' END) ` +
    "ELSE 'finish' END",
  writes: RELEASES,
  columns: {
    status: [[["finish"], "i_t"], [BACK_TO_PENDING, "'pending'"], [["requeue"], "'pending'"], [DEAD_LETTER, "'failed'"]],
    claimed_by: [[NOT_FINISH, "''"]],
    lease_token: [[NOT_FINISH, "''"]],
    lease_expires_at: [[BACK_TO_PENDING, "''"]],
    progress: [[BACK_TO_PENDING, "'null'"]],
    run_at: [
      [["timeout_retry"], formatPbDateSql(`{:nowMs} + ${retryBackoffSql("r_attempts", String(TIMEOUT_BACKOFF_DRAW))}`)],
      [["retry"], formatPbDateSql(`{:nowMs} + ${retryBackoffSql("r_attempts", `i_j / ${JITTER_STEPS}.0`)}`)],
      [["rate_limited"], "i_ra"],
    ],
    version: [[RELEASES, "r_version + 1"]],
    finished_at: [[["finish", ...DEAD_LETTER], "{:now}"]],
    consecutive_orphan_count: [[["finish", "retry", "rate_limited"], "0"], [["requeue"], "r_consecutive_orphan_count + 1"]],
    reclaim_count: [[["requeue"], "r_reclaim_count + 1"]],
    requeued_at: [[["requeue"], "{:now}"]],
    dead_lettered_at: [[DEAD_LETTER, "{:now}"]],
    // A release's own error wins (withOutcome), then the rule's.
    last_error: [
      [RELEASES, `(CASE WHEN i_err IS NOT NULL THEN i_err WHEN kind IN ('timeout_retry', 'timeout_dead') ` +
        `THEN ${timedOutErrorSql("r_timeout_seconds")} WHEN kind = 'dead' THEN '${MAX_ATTEMPTS_ERROR}' ELSE probe_jobs.last_error END)`],
    ],
    result: [[RELEASES, "COALESCE(i_res, probe_jobs.result)"]],
    attempts: [[["rate_limited"], "MAX(0, r_attempts - 1)"]],
    // Only where one is set (rateLimitedPatch): a NULL stays NULL.
    start_by: [[["rate_limited"], "(CASE WHEN r_start_by != '' THEN '' ELSE probe_jobs.start_by END)"]],
  },
  answer: (view) => `CASE WHEN kind IN (${quoted(RELEASES)}) THEN json_object('jobId', i_id, 'released', json('true'), 'job', ${view}) ` +
    "ELSE json_object('jobId', i_id, 'released', json('false'), 'reason', kind) END",
  writtenAnswer: (view) => `json_object('jobId', id, 'released', json('true'), 'job', ${view})`,
};

/** The complete's judging query over `items` (JSON text of completeItems). */
export function completeJudgeQuery(items: string, nowMs: number): WhereClause {
  return { sql: judgeQuery(RELEASE), params: planParams(items, nowMs) };
}

export function completeWriteStatement(items: string, nowMs: number): WhereClause {
  return { sql: writeStatement(RELEASE), params: planParams(items, nowMs) };
}

/** The complete's items as its statements read them; `jitterSteps[n]`: item n's jitter step (0 to JITTER_STEPS - 1). */
export function completeItems(releases: readonly ReleaseRequestFields[], nowMs: number, jitterSteps: readonly number[]): PlanItem[] {
  return releases.map((r, n) => {
    const item: PlanItem = { id: r.jobId, w: r.workerId, t: r.target, j: jitterSteps[n] ?? 0 };
    if (r.leaseToken !== undefined) item["tok"] = r.leaseToken;
    if (r.result !== undefined) item["res"] = JSON.stringify(r.result);
    if (r.error !== undefined) item["err"] = r.error;
    if (r.target === "retry" && r.rateLimitedFor !== undefined) item["ra"] = formatPbDate(rateLimitedUntilMs(nowMs, r.rateLimitedFor));
    return item;
  });
}

/** `random`: Math.random() in the server, one draw per item (the retry backoff's jitter). */
export function completeByPlan(
  batch: JobBatch, releases: readonly ReleaseRequestFields[], nowMs: number, random: () => number,
): CompleteResult[] {
  return inRounds(releases, (round) => {
    const steps = round.map(() => Math.min(JITTER_STEPS - 1, Math.floor(random() * JITTER_STEPS)));
    const { answers, written } = runPlan<CompleteResult>(batch, completeItems(round, nowMs, steps),
      (items) => completeWriteStatement(items, nowMs), (items) => completeJudgeQuery(items, nowMs));
    // A written retry with rateLimitedFor is rate-limited (RELEASE's kind): it parks its scope too.
    round.forEach((release, n) => {
      const row = written[n];
      if (row !== undefined && release.target === "retry" && release.rateLimitedFor !== undefined) {
        parkFor(batch, { queue: row.queue, group_key: row.group_key } as JobRow, release.rateLimitedFor, nowMs);
      }
    });
    return answers;
  });
}

// ---- both --------------------------------------------------------------------------------

type Written = typeof WRITTEN_SHAPE;

/**
 * Runs one round of items (no job twice): the write, answering each written
 * item; then, only if some were not written, the judging query over those;
 * records the written jobs for realtime. Answers the round's answers and
 * written rows, both in its order (`written[n]` undefined: item n wrote nothing).
 */
function runPlan<A>(
  batch: JobBatch, items: readonly PlanItem[], write: (items: string) => WhereClause, judge: (items: string) => WhereClause,
): { answers: A[]; written: (Written | undefined)[] } {
  // A Map: a job id may be any text, "__proto__" and "constructor" too.
  const byId = new Map<string, Written>();
  for (const row of batch.queryAll(write(JSON.stringify(items)), WRITTEN_SHAPE)) byId.set(row.id, row);
  const written = items.map((item) => byId.get(item.id));
  // Each written answer carries its job as written (writtenAnswer).
  const writtenAnswers = JSON.parse(`[${written.filter((row) => row !== undefined).map((row) => row.answer).join(",")}]`) as
    (A & { job: JobView })[];
  const rest = items.filter((_, n) => written[n] === undefined);
  let judged: A[] = [];
  if (rest.length > 0) {
    const found = batch.queryOne(judge(JSON.stringify(rest)), JUDGED_SHAPE);
    if (found === null) throw new Error("pb-fleet: the judging query answered nothing");
    judged = JSON.parse(found.answers) as A[];
  }
  let w = 0;
  let r = 0;
  const answers = written.map((row) => (row !== undefined ? writtenAnswers[w++] : judged[r++]) as A);
  if (writtenAnswers.length > 0) batch.noteWritten(writtenAnswers.map((answer) => answer.job));
  return { answers, written };
}

/**
 * The items in rounds: round n holds each job's n-th item, so no job is
 * judged twice by one statement, and a later item sees the earlier one's write.
 * Answers in request order.
 */
function inRounds<I extends { jobId: string }, A>(items: readonly I[], run: (round: I[]) => A[]): A[] {
  // A Map: a job id may be any text, "__proto__" and "constructor" too.
  const seen = new Map<string, number>();
  const rounds: { items: I[]; at: number[] }[] = [];
  items.forEach((item, n) => {
    const r = seen.get(item.jobId) ?? 0;
    seen.set(item.jobId, r + 1);
    const round = rounds[r] ?? (rounds[r] = { items: [], at: [] });
    round.items.push(item);
    round.at.push(n);
  });
  const answers: A[] = new Array(items.length);
  for (const round of rounds) {
    const got = run(round.items);
    round.at.forEach((n, k) => {
      answers[n] = got[k] as A;
    });
  }
  return answers;
}
