/**
 * Flow control's rules (docs/flow-control.md): a scope (a queue, or a group) may be
 * paused or parked, may hold at most `concurrency` jobs under live leases,
 * and may win at most `limit` claims in any window of `periodSeconds`. Every
 * check runs inside the claim's transaction on PocketBase's single writer,
 * and the counts are read there and kept up to date as the call claims: so
 * the limits are exact, never one claim over, however many callers race.
 *
 * The settings live in the collection probe_flow (one row per scope). The
 * rate window is the plain table probe_flow_claims: one row per winning
 * claim of a rate-limited scope, at its claimed_at (epoch ms), kept until
 * the window has passed it; the maintenance tick deletes the rest.
 */
import type { JobBatch, JobRow } from "./job-row.js";
import { HELD_STATUSES, statusInSql } from "./job-schema.js";
import { formatPbDate, LIVE_LEASE_SQL, parsePbDate } from "./lease.js";
import type { WhereClause } from "./queries.js";
import { DEFAULT_QUEUE, storedQueueName } from "./queue-names.js";
import type { ClaimRefusal, FlowSettings } from "./types.js";

export const FLOW_COLLECTION = "probe_flow";
export const FLOW_CLAIMS_TABLE = "probe_flow_claims";

export type ScopeKind = "queue" | "group";
export interface Scope {
  scope: ScopeKind;
  name: string;
}

/** A probe_flow row as read (0 and "" for unset). */
export interface FlowRow {
  scope: string;
  name: string;
  paused: number;
  concurrency: number;
  rate_limit: number;
  rate_period: number;
  parked_until: string;
}
export const FLOW_ROW_SHAPE: FlowRow = { scope: "", name: "", paused: 0, concurrency: 0, rate_limit: 0, rate_period: 0, parked_until: "" };
export const FLOW_COLUMNS = "scope, name, COALESCE(paused, 0) AS paused, COALESCE(concurrency, 0) AS concurrency, " +
  "COALESCE(rate_limit, 0) AS rate_limit, COALESCE(rate_period, 0) AS rate_period, COALESCE(parked_until, '') AS parked_until";

/** The settings of some scopes, one query through the (scope, name) unique index. */
export function flowRowsQuery(scopes: readonly Scope[]): WhereClause {
  const params: WhereClause["params"] = {};
  const terms = scopes.map((s, i) => {
    params[`s${i}`] = s.scope;
    params[`n${i}`] = s.name;
    return `(scope = {:s${i}} AND name = {:n${i}})`;
  });
  return { sql: `SELECT ${FLOW_COLUMNS} FROM probe_flow WHERE ${terms.join(" OR ")}`, params };
}

/**
 * The scopes that allow no claim as a claim-next call starts: paused,
 * parked until after now, at their concurrency, or at their rate limit.
 * Left out of the call's queries from the start, so however many there are,
 * none costs a query pass (the gate still judges every claim exactly: this
 * only proposes). Paused and parked through two partial indexes of
 * probe_flow (their WHERE repeated word for word); the limits by counting,
 * per scope with a limit, its held rows (the group index, or the queue's
 * claim index) and its claims in the window. At most `limit` of each kind.
 */
export function heldBackScopesQuery(nowMs: number, limit: number): WhereClause {
  const held = (match: string) =>
    `(SELECT COUNT(*) FROM probe_jobs j WHERE ${match} AND ${statusInSql(HELD_STATUSES, "j.status")} AND ${LIVE_LEASE_SQL.replace(/lease_expires_at/g, "j.lease_expires_at")})`;
  const groupHeld = held("j.group_key != '' AND j.group_key = f.name");
  const queueHeld = held("j.queue IN (f.name, CASE WHEN f.name = {:defaultQueue} THEN '' ELSE f.name END)");
  const inWindow = `(SELECT COUNT(*) FROM ${FLOW_CLAIMS_TABLE} c WHERE c.scope = f.scope AND c.name = f.name AND c.at > {:nowMs} - f.rate_period * 1000)`;
  const part = (where: string) => `SELECT scope, name FROM (SELECT f.scope, f.name FROM probe_flow f WHERE ${where} LIMIT {:limit})`;
  return {
    sql: [
      part("f.paused = 1"),
      part("f.parked_until != '' AND f.parked_until > {:now}"),
      part(`f.scope = 'group' AND f.concurrency > 0 AND ${groupHeld} >= f.concurrency`),
      part(`f.scope = 'queue' AND f.concurrency > 0 AND ${queueHeld} >= f.concurrency`),
      part(`f.rate_limit > 0 AND ${inWindow} >= f.rate_limit`),
    ].join(" UNION "),
    params: { now: formatPbDate(nowMs), nowMs, limit, defaultQueue: DEFAULT_QUEUE },
  };
}
export const SCOPE_SHAPE = { scope: "", name: "" };
/** Held-back scopes one claim-next call leaves out from its start, of each kind; more are found pass by pass. */
export const HELD_BACK_SCOPES_LIMIT = 5000;

/** The jobs column a scope narrows on, and its stored values ("" is also the default queue). */
function scopeTerm(s: Scope, params: WhereClause["params"]): string {
  params["scopeName"] = s.name;
  if (s.scope === "group") return "group_key != '' AND group_key = {:scopeName}";
  // The default queue is also a row's "" (docs/flow-control.md).
  return s.name === DEFAULT_QUEUE ? "queue IN ({:scopeName}, '')" : "queue = {:scopeName}";
}

/**
 * Jobs of a scope held under a live lease (docs/protocol.md's lease rule, in SQL):
 * a range of the group index, or of the queue's claim index (held rows are
 * about the jobs in flight).
 */
export function heldCountQuery(s: Scope, nowMs: number): WhereClause {
  const params: WhereClause["params"] = { now: formatPbDate(nowMs) };
  return {
    sql: `SELECT COUNT(*) AS n FROM probe_jobs WHERE ${scopeTerm(s, params)} AND ${statusInSql(HELD_STATUSES)} AND ${LIVE_LEASE_SQL}`,
    params,
  };
}

/** Pending jobs of a scope that are due and not past their start_by (GET /api/fleet/flow's `due`). */
export function dueCountQuery(s: Scope, nowMs: number): WhereClause {
  const params: WhereClause["params"] = { now: formatPbDate(nowMs) };
  return {
    sql: `SELECT COUNT(*) AS n FROM probe_jobs WHERE ${scopeTerm(s, params)} AND status = 'pending' AND run_at <= {:now} AND ${STARTABLE_SQL}`,
    params,
  };
}
export const COUNT_SHAPE = { n: 0 };

/**
 * A pending row may still be started: it has no start_by, or started
 * before, or its start_by has not passed (docs/flow-control.md: start_by guards the first
 * start only). Needs {:now}.
 */
export const STARTABLE_SQL = "(COALESCE(start_by, '') = '' OR attempts > 0 OR start_by > {:now})";

/**
 * Counted claims of a scope in the window (now - period, now]. No upper
 * bound: a claim stamped after `now` (a server clock stepped back) still
 * counts, or a step back would let up to twice the limit into one window.
 */
export function windowCountQuery(s: Scope, nowMs: number, periodSeconds: number): WhereClause {
  return {
    sql: `SELECT COUNT(*) AS n FROM ${FLOW_CLAIMS_TABLE} WHERE scope = {:scope} AND name = {:name} AND at > {:since}`,
    params: { scope: s.scope, name: s.name, since: nowMs - periodSeconds * 1000 },
  };
}

/**
 * Winning claims counted in their scopes' rate windows at one instant, each
 * kept until its window has passed it (`periodSeconds`, its scope's): one
 * statement for a transaction's claims (flowGate's flush).
 */
export function recordWindowClaimsStatement(claims: readonly { scope: Scope; periodSeconds: number }[], nowMs: number): WhereClause {
  return {
    sql: `INSERT INTO ${FLOW_CLAIMS_TABLE} (scope, name, at, expires) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ` +
      "{:at}, {:at} + json_extract(value, '$[2]') * 1000 FROM json_each({:claims})",
    params: { at: nowMs, claims: JSON.stringify(claims.map((c) => [c.scope.scope, c.scope.name, c.periodSeconds])) },
  };
}

/**
 * A scope's rate period changed: its logged claims are kept until the new
 * window has passed them, so a longer period still counts every claim in
 * it (exact from the first window on). Bounded by the scope's own rows.
 */
export function reExpireClaimsStatement(s: Scope, periodSeconds: number): WhereClause {
  return {
    sql: `UPDATE ${FLOW_CLAIMS_TABLE} SET expires = at + {:periodMs} WHERE scope = {:scope} AND name = {:name}`,
    params: { scope: s.scope, name: s.name, periodMs: periodSeconds * 1000 },
  };
}

/**
 * The maintenance tick's drain of the rate window's log: claims whose
 * window has passed. Bounded per statement; the tick repeats it.
 */
export function deleteExpiredClaimsStatement(nowMs: number, limit: number): WhereClause {
  return {
    sql: `DELETE FROM ${FLOW_CLAIMS_TABLE} WHERE rowid IN (SELECT rowid FROM ${FLOW_CLAIMS_TABLE} WHERE expires <= {:now} LIMIT {:limit})`,
    params: { now: nowMs, limit },
  };
}
export const CLAIMS_RETENTION_BATCH = 20_000;

/**
 * Group rows with no setting in force: a park that has passed (a
 * rate-limited host's 429), or every setting cleared. Deleted by the tick,
 * so parking many hosts does not grow the collection (a group without a row
 * behaves the same). Queue rows stay: GET /api/fleet/flow lists queues.
 */
export function deletePassedParksStatement(nowMs: number, limit: number): WhereClause {
  return {
    sql: "DELETE FROM probe_flow WHERE id IN (SELECT id FROM probe_flow WHERE scope = 'group' AND COALESCE(parked_until, '') <= {:now} " +
      "AND COALESCE(paused, 0) = 0 AND COALESCE(concurrency, 0) = 0 AND COALESCE(rate_limit, 0) = 0 LIMIT {:limit})",
    params: { now: formatPbDate(nowMs), limit },
  };
}
export const PARKS_RETENTION_BATCH = 5_000;

/** A row's settings as docs/flow-control.md answers them; a park that has passed reads null. */
export function settingsOf(row: FlowRow | null, nowMs: number): FlowSettings {
  if (row === null) return { paused: false, concurrency: null, rateLimit: null, parkedUntil: null };
  return {
    paused: row.paused === 1,
    concurrency: row.concurrency > 0 ? row.concurrency : null,
    rateLimit: row.rate_limit > 0 ? { limit: row.rate_limit, periodSeconds: row.rate_period } : null,
    parkedUntil: isParked(row, nowMs) ? row.parked_until : null,
  };
}

function isParked(row: FlowRow, nowMs: number): boolean {
  return row.parked_until !== "" && row.parked_until > formatPbDate(nowMs);
}

/** What the gate knows of one scope inside a transaction. */
interface ScopeState {
  row: FlowRow | null;
  /** Held under a live lease (only read when the scope has a concurrency). */
  held: number;
  /** Claims in the rate window (only read when the scope has a rate limit). */
  claims: number;
}

/**
 * The flow checks of one transaction: the scopes' settings and counts read
 * once, then kept as the transaction claims. Jobs of scopes without settings
 * cost one query per call (flowRowsQuery), and nothing per job.
 */
export interface FlowGate {
  /** Reads the scopes of these rows not yet read (one query for settings, one per limited scope for its count). */
  load(rows: readonly JobRow[]): void;
  /**
   * Why flow control holds this claimable row back (docs/flow-control.md's order: paused,
   * then the concurrency, then the rate limit; its queue before its group),
   * and the scope that does; null: both allow one more claim.
   */
  refusal(row: JobRow): { reason: ClaimRefusal; scope: Scope } | null;
  /** A winning claim of this row: counted in its scopes (a rate-limited one's log gets the claim's instant at flush). */
  claimed(row: JobRow): void;
  /** Writes the rate windows' log of the claims counted so far, in one statement: call before the transaction ends. */
  flush(): void;
}

// A plain closure, not a class: goja runs es2017, where private fields become WeakMaps.
export function flowGate(batch: JobBatch, nowMs: number): FlowGate {
  const states: { [key: string]: ScopeState } = {};
  // The common path: rows whose scopes were all read and found without settings are let through with
  // no work per row (measured: the per-row scope keys were most of claim-next's added CPU).
  const loadedIds: { [id: string]: true } = {};
  let withSettings = 0;
  const logged: { scope: Scope; periodSeconds: number }[] = [];
  const count = (query: WhereClause): number => batch.queryOne(query, COUNT_SHAPE)?.n ?? 0;
  const stateOf = (s: Scope): ScopeState => {
    const st = states[keyOf(s)];
    if (st === undefined) throw new Error(`pb-fleet: flow scope ${s.scope} ${s.name} was not loaded`);
    return st;
  };
  const load = (rows: readonly JobRow[]): void => {
    const missing: Scope[] = [];
    const seen: { [key: string]: true } = {};
    for (const row of rows) {
      if (loadedIds[row.id]) continue;
      loadedIds[row.id] = true;
      for (const s of scopesOf(row)) {
        const key = keyOf(s);
        if (states[key] !== undefined || seen[key]) continue;
        seen[key] = true;
        missing.push(s);
      }
    }
    if (missing.length === 0) return;
    const found: { [key: string]: FlowRow } = {};
    for (const row of batch.queryAll(flowRowsQuery(missing), FLOW_ROW_SHAPE)) found[keyOf({ scope: row.scope as ScopeKind, name: row.name })] = row;
    for (const s of missing) {
      const row = found[keyOf(s)] ?? null;
      const state: ScopeState = { row, held: 0, claims: 0 };
      if (row !== null) withSettings++;
      if (row !== null && row.concurrency > 0) state.held = count(heldCountQuery(s, nowMs));
      if (row !== null && row.rate_limit > 0) state.claims = count(windowCountQuery(s, nowMs, row.rate_period));
      states[keyOf(s)] = state;
    }
  };
  return {
    load,
    refusal(row) {
      load([row]);
      if (withSettings === 0) return null;
      const scopes = scopesOf(row);
      for (const s of scopes) {
        const st = stateOf(s);
        if (st.row !== null && (st.row.paused === 1 || isParked(st.row, nowMs))) return { reason: "paused", scope: s };
      }
      for (const s of scopes) {
        const st = stateOf(s);
        if (st.row !== null && st.row.concurrency > 0 && st.held >= st.row.concurrency) return { reason: "concurrency_limit", scope: s };
      }
      for (const s of scopes) {
        const st = stateOf(s);
        if (st.row !== null && st.row.rate_limit > 0 && st.claims >= st.row.rate_limit) return { reason: "rate_limit", scope: s };
      }
      return null;
    },
    claimed(row) {
      if (withSettings === 0) return;
      for (const s of scopesOf(row)) {
        const st = stateOf(s);
        if (st.row === null) continue;
        if (st.row.concurrency > 0) st.held++;
        if (st.row.rate_limit > 0) {
          st.claims++;
          logged.push({ scope: s, periodSeconds: st.row.rate_period });
        }
      }
    },
    flush() {
      // One statement per call, not per claim: compiling an INSERT per claim was most of a rate-limited claim-next's cost.
      if (logged.length === 0) return;
      batch.execute(recordWindowClaimsStatement(logged, nowMs));
      logged.length = 0;
    },
  };
}

/** A job's scopes: its queue, and its group when it has one. */
export function scopesOf(row: JobRow): Scope[] {
  const queue: Scope = { scope: "queue", name: storedQueueName(row.queue) };
  const group = row.group_key ?? "";
  return group === "" ? [queue] : [queue, { scope: "group", name: group }];
}

function keyOf(s: Scope): string {
  return `${s.scope}\u0000${s.name}`;
}

/**
 * The scope a rate-limited release parks (docs/flow-control.md "Release targets"): the
 * job's group, or its queue when it has none.
 */
export function parkScopeOf(row: JobRow): Scope {
  const group = row.group_key ?? "";
  return group === "" ? { scope: "queue", name: storedQueueName(row.queue) } : { scope: "group", name: group };
}

/** The id PocketBase would give a record: 15 of [a-z0-9]. */
const NEW_ID_SQL = "substr(lower(hex(randomblob(8))), 1, 15)";

/**
 * A scope's row created with the given columns, or those columns changed on
 * the existing one (the (scope, name) unique index decides which). `updated`
 * is stamped as a record save would.
 */
export function upsertFlowStatement(s: Scope, columns: Partial<Omit<FlowRow, "scope" | "name">>, nowMs: number): WhereClause {
  const names = Object.keys(columns) as (keyof typeof columns)[];
  const params: WhereClause["params"] = { scope: s.scope, name: s.name, stamp: formatPbDate(nowMs) };
  for (const c of names) params[c] = columns[c] as string | number;
  const insertColumns = names.map((c) => `, ${c}`).join("");
  const insertValues = names.map((c) => `, {:${c}}`).join("");
  const updates = names.map((c) => `${c} = excluded.${c}, `).join("");
  return {
    sql: `INSERT INTO probe_flow (id, scope, name${insertColumns}, created, updated) ` +
      `VALUES (${NEW_ID_SQL}, {:scope}, {:name}${insertValues}, {:stamp}, {:stamp}) ` +
      `ON CONFLICT (scope, name) DO UPDATE SET ${updates}updated = excluded.updated`,
    params,
  };
}

/**
 * A rate-limited release's park: parked_until = max(its parked_until, until),
 * creating the scope's row when it has none.
 */
export function parkStatement(s: Scope, untilMs: number, nowMs: number): WhereClause {
  const until = formatPbDate(untilMs);
  return {
    sql: `INSERT INTO probe_flow (id, scope, name, parked_until, created, updated) ` +
      `VALUES (${NEW_ID_SQL}, {:scope}, {:name}, {:until}, {:stamp}, {:stamp}) ` +
      "ON CONFLICT (scope, name) DO UPDATE SET parked_until = MAX(COALESCE(parked_until, ''), excluded.parked_until), updated = excluded.updated",
    params: { scope: s.scope, name: s.name, until, stamp: formatPbDate(nowMs) },
  };
}

/** A rate-limited release's park of the job's group (or queue), in the release's transaction. */
export function parkFor(batch: JobBatch, row: JobRow, seconds: number, nowMs: number): void {
  batch.execute(parkStatement(parkScopeOf(row), rateLimitedUntilMs(nowMs, seconds), nowMs));
}

/** When a rate-limited release's wait ends: the job's due time and its scope's park alike. */
export function rateLimitedUntilMs(nowMs: number, seconds: number): number {
  return nowMs + Math.round(seconds * 1000);
}

/**
 * The next queue name after `after` that has a row at all: a seek of the
 * queue's index per queue (a skip-scan), so listing the queues costs their
 * number, not the rows.
 */
export function nextQueueQuery(after: string | null): WhereClause {
  return after === null
    ? { sql: "SELECT queue AS name FROM probe_jobs ORDER BY queue LIMIT 1", params: {} }
    : { sql: "SELECT queue AS name FROM probe_jobs WHERE queue > {:after} ORDER BY queue LIMIT 1", params: { after } };
}
export const NAME_SHAPE = { name: "" };

/** A job's deadline (its current attempt's claim + timeout_seconds), epoch ms; null: none. */
export function deadlineMs(row: { timeout_seconds?: number; claimed_at?: string }): number | null {
  const timeout = row.timeout_seconds ?? 0;
  if (!(timeout > 0)) return null;
  const claimed = parsePbDate(row.claimed_at ?? "");
  return claimed === null ? null : claimed + timeout * 1000;
}

/** A pending row past its start_by that has never started (docs/flow-control.md: never handed out; the tick fails it). */
export function startByPassed(row: { status: string; attempts: number; start_by?: string }, nowMs: number): boolean {
  const startBy = row.start_by ?? "";
  return row.status === "pending" && row.attempts === 0 && startBy !== "" && startBy <= formatPbDate(nowMs);
}

/**
 * The tick's start_by failures: never-started pending rows past their
 * start_by, through the partial (status, start_by) index (its WHERE repeated
 * word for word so SQLite uses it), the earliest first.
 */
export function startByPassedWhere(nowMs: number): WhereClause {
  return { sql: "status = 'pending' AND start_by != '' AND start_by <= {:now} AND attempts = 0", params: { now: formatPbDate(nowMs) } };
}
export const START_BY_ORDER = ["start_by ASC"] as const;
export const START_BY_BATCH = 500;
