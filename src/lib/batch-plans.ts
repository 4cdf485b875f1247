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
 * Each batch is one judging query (the answers, in request order, as one JSON
 * text) and one UPDATE ... FROM the same judged items. Both run in the
 * caller's transaction on PocketBase's single writer, one after the other, so
 * the UPDATE judges exactly what the query answered. An item naming a job an
 * earlier item of the batch named is judged in a later round, after the
 * earlier one's write, as the model judges it.
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

/** What one judging query answers. */
export const JUDGED_SHAPE = { answers: "", parks: "", written: 0 };

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

/** A column's new value for some kinds of decision (in order); the rest keep theirs. */
export type ColumnRule = readonly (readonly [kinds: readonly string[], value: string])[];

export function newValue(column: string, rule: ColumnRule, current: string): string {
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
  /** The kinds whose items park a scope (rateLimitedFor), if any. */
  parks?: string;
}

const VIEW_COLUMNS = ["status", "claimed_by", "lease_expires_at", "version"] as const;

function rowValue(column: string): string {
  return column === "lease_expires_at" ? "r_lease_text" : `r_${column}`;
}

/** The job as written, as jobView shows it: id, probe_key, status, claimed_by, lease_expires_at, version. */
function viewOf(plan: Plan): string {
  const members = VIEW_COLUMNS.map((c) => {
    const rule = plan.columns[c];
    return `'${c}', ${rule === undefined ? rowValue(c) : newValue(c, rule, rowValue(c))}`;
  });
  return `json_object('id', r_id, 'probe_key', r_probe_key, ${members.join(", ")})`;
}

function judgeQuery(plan: Plan): string {
  const answer = plan.answer(viewOf(plan));
  const parks = plan.parks === undefined ? "'[]'" :
    `COALESCE(json_group_array(json_object('k', k, 'queue', r_queue, 'group_key', r_group_key)) FILTER (WHERE kind = '${plan.parks}'), '[]')`;
  return `${judgedItems(plan.items, plan.kind)} SELECT COALESCE(json_group_array(json(${answer}) ORDER BY k), '[]') AS answers, ` +
    `${parks} AS parks, COUNT(*) FILTER (WHERE kind IN (${quoted(plan.writes)})) AS written FROM v`;
}

function writeStatement(plan: Plan): string {
  const sets = Object.keys(plan.columns).map((c) => `${c} = ${newValue(c, plan.columns[c] as ColumnRule, `probe_jobs.${c}`)}`);
  sets.push("updated = {:now}");
  return `${judgedItems(plan.items, plan.kind)} UPDATE probe_jobs SET ${sets.join(", ")} FROM v ` +
    `WHERE probe_jobs.id = v.r_id AND v.kind IN (${quoted(plan.writes)})`;
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
export function heartbeatItems(renewals: readonly RenewRequestFields[], nowMs: number): object[] {
  return renewals.map((r) => {
    // leaseEnd's end; truncated, as formatPbDate would truncate it, so the comparison with the deadline says the same.
    const endMs = Math.trunc(nowMs + clampLeaseSeconds(r.leaseSeconds) * 1000);
    const item: { [field: string]: unknown } = { id: r.jobId, w: r.workerId, e: formatPbDate(endMs), em: endMs };
    if (r.leaseToken !== undefined) item["tok"] = r.leaseToken;
    if (r.progress !== undefined) item["p"] = JSON.stringify(r.progress);
    return item;
  });
}

export function heartbeatByPlan(batch: JobBatch, renewals: readonly RenewRequestFields[], nowMs: number): HeartbeatResult[] {
  return inRounds(renewals, (round) => {
    const items = JSON.stringify(heartbeatItems(round, nowMs));
    return runPlan(batch, heartbeatJudgeQuery(items, nowMs), heartbeatWriteStatement(items, nowMs), (a: HeartbeatResult) =>
      a.renewed ? a.job : null);
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
  parks: "rate_limited",
};

/** The complete's judging query over `items` (JSON text of completeItems). */
export function completeJudgeQuery(items: string, nowMs: number): WhereClause {
  return { sql: judgeQuery(RELEASE), params: planParams(items, nowMs) };
}

export function completeWriteStatement(items: string, nowMs: number): WhereClause {
  return { sql: writeStatement(RELEASE), params: planParams(items, nowMs) };
}

/** The complete's items as its statements read them; `jitterSteps[n]`: item n's jitter step (0 to JITTER_STEPS - 1). */
export function completeItems(releases: readonly ReleaseRequestFields[], nowMs: number, jitterSteps: readonly number[]): object[] {
  return releases.map((r, n) => {
    const item: { [field: string]: unknown } = { id: r.jobId, w: r.workerId, t: r.target, j: jitterSteps[n] ?? 0 };
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
    const items = JSON.stringify(completeItems(round, nowMs, steps));
    return runPlan(batch, completeJudgeQuery(items, nowMs), completeWriteStatement(items, nowMs), (a: CompleteResult) =>
      a.released ? a.job : null, (park) => {
      const release = round[park.k] as ReleaseRequestFields;
      parkFor(batch, { queue: park.queue, group_key: park.group_key } as JobRow, release.rateLimitedFor ?? 0, nowMs);
    });
  });
}

// ---- both --------------------------------------------------------------------------------

interface Park {
  k: number;
  queue: string;
  group_key: string;
}

/**
 * Runs one round: the judging query, then (when anything is written) the
 * write, then the parks; records the written jobs for realtime. Answers the
 * round's answers, in its order.
 */
function runPlan<A>(
  batch: JobBatch, judge: WhereClause, write: WhereClause, writtenJob: (answer: A) => JobView | null, park?: (p: Park) => void,
): A[] {
  const judged = batch.queryOne(judge, JUDGED_SHAPE);
  if (judged === null) throw new Error("pb-fleet: the judging query answered nothing");
  if (judged.written > 0) batch.execute(write);
  const answers = JSON.parse(judged.answers) as A[];
  const changes: JobView[] = [];
  for (const answer of answers) {
    const job = writtenJob(answer);
    if (job !== null) changes.push(job);
  }
  if (changes.length > 0) batch.noteWritten(changes);
  if (park !== undefined && judged.written > 0) for (const p of JSON.parse(judged.parks) as Park[]) park(p);
  return answers;
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
