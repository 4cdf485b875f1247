/**
 * POST and GET /api/fleet/flow (docs/flow-control.md "Endpoints"): a scope's
 * settings validated and written, and every scope's figures read. The rules
 * the settings drive (the gate, the counts, the parks) are in flow.ts.
 */
import { GROUP_NAME_RULE, isGroupName, MAX_FLOW_CONCURRENCY, MAX_PARK_SECONDS, MAX_RATE_LIMIT, MAX_RATE_PERIOD_SECONDS } from "./flow-limits.js";
import {
  COUNT_SHAPE, dueCountQuery, FLOW_COLUMNS, FLOW_ROW_SHAPE, flowRowsQuery, heldCountQuery, reExpireClaimsStatement, settingsOf, upsertFlowStatement,
  NAME_SHAPE, nextQueueQuery, windowCountQuery, type FlowRow, type Scope, type ScopeKind,
} from "./flow.js";
import type { JobBatch } from "./job-row.js";
import { LIVE_STATUSES, statusInSql } from "./job-schema.js";
import { formatPbDate } from "./lease.js";
import type { WhereClause } from "./queries.js";
import { DEFAULT_QUEUE, isQueueName, storedQueueName } from "./queue-names.js";
import type { FlowRateLimit, FlowScopeName, FlowScopeState, FlowSettings } from "./types.js";
import { fail, isIntegerIn, parseZonedInstant, QUEUE_NAME_RULE, type Validated } from "./validate.js";

/** Every scope with settings, in name order (GET /api/fleet/flow), at most `limit`. */
export function flowListQuery(scope: ScopeKind | null, name: string | null, limit: number): WhereClause {
  const params: WhereClause["params"] = { limit };
  const terms: string[] = [];
  if (scope !== null) {
    params["scope"] = scope;
    terms.push("scope = {:scope}");
  }
  if (name !== null) {
    params["name"] = name;
    terms.push("name = {:name}");
  }
  const where = terms.length === 0 ? "" : ` WHERE ${terms.join(" AND ")}`;
  return { sql: `SELECT ${FLOW_COLUMNS} FROM probe_flow${where} ORDER BY scope, name LIMIT {:limit}`, params };
}

/** POST /api/fleet/flow's transaction: the change written, and the scope's settings as stored after it. */
export function writeFlow(batch: JobBatch, change: FlowChange, nowMs: number): FlowSettings {
  batch.execute(upsertFlowStatement(change.scope, flowColumnsAt(change, nowMs), nowMs));
  const period = change.columns.rate_period;
  if (period !== undefined && period > 0) batch.execute(reExpireClaimsStatement(change.scope, period));
  return settingsOf(batch.queryOne(flowRowsQuery([change.scope]), FLOW_ROW_SHAPE), nowMs);
}

/** POST /api/fleet/flow as validated: the scope, and the columns to write. */
export interface FlowChange {
  scope: Scope;
  columns: Partial<Omit<FlowRow, "scope" | "name">>;
  /**
   * parkSeconds > 0, in ms: the park is dated from the write's own instant,
   * not the request's arrival, so a park of N seconds holds for N seconds
   * after it is in force however long the call waited for the writer.
   */
  parkForMs?: number;
}

/** The columns a change writes at nowMs (the write transaction's instant). */
export function flowColumnsAt(change: FlowChange, nowMs: number): FlowChange["columns"] {
  if (change.parkForMs === undefined) return change.columns;
  return { ...change.columns, parked_until: formatPbDate(nowMs + change.parkForMs) };
}

type Body = Record<string, unknown>;

const FLOW_SETTINGS = ["paused", "concurrency", "rateLimit", "parkSeconds", "parkUntil"] as const;

/** POST /api/fleet/flow's body (docs/flow-control.md "Endpoints"); every rule and its 400 message. */
export function validateFlowRequest(data: unknown, nowMs: number): Validated<FlowChange> {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return fail("the body must be a JSON object");
  const body = data as Body;
  const hasQueue = body["queue"] !== undefined;
  const hasGroup = body["group"] !== undefined;
  if (hasQueue === hasGroup) return fail("give exactly one of queue and group");
  let scope: Scope;
  if (hasQueue) {
    if (!isQueueName(body["queue"])) return fail(`queue must be a queue name (${QUEUE_NAME_RULE})`);
    scope = { scope: "queue", name: body["queue"] };
  } else {
    if (!isGroupName(body["group"])) return fail(`group must be a group name (${GROUP_NAME_RULE})`);
    scope = { scope: "group", name: body["group"] };
  }
  if (!FLOW_SETTINGS.some((k) => body[k] !== undefined)) {
    return fail("give at least one setting: paused, concurrency, rateLimit, parkSeconds or parkUntil");
  }
  const columns: FlowChange["columns"] = {};
  let parkForMs: number | undefined;
  const paused = body["paused"];
  if (paused !== undefined) {
    if (paused !== null && typeof paused !== "boolean") return fail("paused must be true, false or null");
    columns.paused = paused === true ? 1 : 0;
  }
  const concurrency = body["concurrency"];
  if (concurrency !== undefined) {
    if (concurrency !== null && !isIntegerIn(concurrency, 1, MAX_FLOW_CONCURRENCY)) {
      return fail(`concurrency must be an integer from 1 to ${MAX_FLOW_CONCURRENCY}, or null`);
    }
    columns.concurrency = concurrency === null ? 0 : (concurrency as number);
  }
  const rateLimit = body["rateLimit"];
  if (rateLimit !== undefined) {
    const rate = readRateLimit(rateLimit);
    if (typeof rate === "string") return fail(rate);
    columns.rate_limit = rate === null ? 0 : rate.limit;
    columns.rate_period = rate === null ? 0 : rate.periodSeconds;
  }
  const parkSeconds = body["parkSeconds"];
  const parkUntil = body["parkUntil"];
  if (parkSeconds !== undefined && parkUntil !== undefined) return fail("give parkSeconds or parkUntil, not both");
  if (parkSeconds !== undefined) {
    if (typeof parkSeconds !== "number" || !(parkSeconds >= 0) || parkSeconds > MAX_PARK_SECONDS) {
      return fail(`parkSeconds must be a number from 0 to ${MAX_PARK_SECONDS} (0 clears the park)`);
    }
    if (parkSeconds === 0) columns.parked_until = "";
    else parkForMs = Math.round(parkSeconds * 1000);
  }
  if (parkUntil !== undefined) {
    if (parkUntil === null) {
      columns.parked_until = "";
    } else {
      const ms = typeof parkUntil === "string" ? parseZonedInstant(parkUntil) : null;
      if (ms === null || ms <= nowMs || ms > nowMs + MAX_PARK_SECONDS * 1000) {
        return fail(`parkUntil must be a date with a zone, after now and at most ${MAX_PARK_SECONDS / 86_400} days ahead, or null`);
      }
      columns.parked_until = formatPbDate(ms);
    }
  }
  return { ok: true, value: parkForMs === undefined ? { scope, columns } : { scope, columns, parkForMs } };
}

function readRateLimit(value: unknown): FlowRateLimit | null | string {
  const rule = `rateLimit must be { limit: an integer from 1 to ${MAX_RATE_LIMIT}, periodSeconds: an integer from 1 to ${MAX_RATE_PERIOD_SECONDS} }, or null`;
  if (value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) return rule;
  const { limit, periodSeconds } = value as Body;
  if (!isIntegerIn(limit, 1, MAX_RATE_LIMIT) || !isIntegerIn(periodSeconds, 1, MAX_RATE_PERIOD_SECONDS)) return rule;
  for (const key of Object.keys(value)) if (key !== "limit" && key !== "periodSeconds") return rule;
  return { limit: limit as number, periodSeconds: periodSeconds as number };
}


/** The scope's name as an answer names it. */
export function scopeName(s: Scope): FlowScopeName {
  return s.scope === "queue" ? { queue: s.name } : { group: s.name };
}

/** GET /api/fleet/flow's query string: `queue` and `group`, each optional; else the 400's message. */
export function readFlowFilter(queue: string, group: string): { queue: string | null; group: string | null } | string {
  if (queue !== "" && !isQueueName(queue)) return `queue must be a queue name (${QUEUE_NAME_RULE})`;
  if (group !== "" && !isGroupName(group)) return `group must be a group name (${GROUP_NAME_RULE})`;
  return { queue: queue === "" ? null : queue, group: group === "" ? null : group };
}

/** How many scopes of each kind GET /api/fleet/flow lists at most: the answer stays bounded. */
export const MAX_FLOW_LIST = 500;

/** Whether a queue (as stored) has an unfinished job: one seek of its index. */
export function unfinishedInQueueQuery(stored: string): WhereClause {
  return {
    sql: `SELECT COUNT(*) AS n FROM (SELECT 1 FROM probe_jobs WHERE queue = {:queue} AND ${statusInSql(LIVE_STATUSES)} LIMIT 1)`,
    params: { queue: stored },
  };
}

/**
 * GET /api/fleet/flow's figures of one scope, read inside one transaction.
 * The counts are each one index range (see heldCountQuery, dueCountQuery).
 */
export function scopeState(batch: FlowReader, s: Scope, row: FlowRow | null, nowMs: number): FlowScopeState {
  const settings = settingsOf(row, nowMs);
  const count = (q: WhereClause): number => batch.queryOne(q, COUNT_SHAPE)?.n ?? 0;
  return {
    name: s.name,
    ...settings,
    held: count(heldCountQuery(s, nowMs)),
    due: count(dueCountQuery(s, nowMs)),
    claimsInWindow: settings.rateLimit === null ? 0 : count(windowCountQuery(s, nowMs, settings.rateLimit.periodSeconds)),
  };
}

/** GET /api/fleet/flow's 503 when a read fails; the database's own text goes to the log, not to callers. */
export const FLOW_UNAVAILABLE = "flow figures are unavailable right now: the database read failed (details are in PocketBase's log)";

/** What GET /api/fleet/flow reads through: read-only queries (outside any transaction, off the single writer). */
export type FlowReader = Pick<JobBatch, "queryOne" | "queryAll">;

/** GET /api/fleet/flow: the queues (with settings or unfinished jobs) and the groups with settings, narrowed by the filter. */
export function flowState(
  batch: FlowReader, filter: { queue: string | null; group: string | null }, nowMs: number,
): { queues: FlowScopeState[]; groups: FlowScopeState[] } {
  const wantQueues = filter.group === null || filter.queue !== null;
  const wantGroups = filter.queue === null || filter.group !== null;
  const queues: FlowScopeState[] = [];
  const groups: FlowScopeState[] = [];
  if (wantQueues) {
    const rows: { [name: string]: FlowRow } = {};
    for (const row of batch.queryAll(flowListQuery("queue", filter.queue, MAX_FLOW_LIST), FLOW_ROW_SHAPE)) rows[row.name] = row;
    const names = Object.keys(rows);
    for (const name of queuesWithUnfinishedJobs(batch, filter.queue)) if (names.indexOf(name) === -1) names.push(name);
    for (const name of names.sort().slice(0, MAX_FLOW_LIST)) {
      queues.push(scopeState(batch, { scope: "queue", name }, rows[name] ?? null, nowMs));
    }
  }
  if (wantGroups) {
    for (const row of batch.queryAll(flowListQuery("group", filter.group, MAX_FLOW_LIST), FLOW_ROW_SHAPE)) {
      groups.push(scopeState(batch, { scope: "group", name: row.name }, row, nowMs));
    }
  }
  return { queues, groups };
}

/** The queues (by name) that hold an unfinished job: one seek per queue name. */
function queuesWithUnfinishedJobs(batch: FlowReader, only: string | null): string[] {
  const names: string[] = [];
  const stored = only === null ? null : only === DEFAULT_QUEUE ? [only, ""] : [only];
  if (stored !== null) {
    for (const value of stored) {
      if ((batch.queryOne(unfinishedInQueueQuery(value), COUNT_SHAPE)?.n ?? 0) > 0) return [only as string];
    }
    return names;
  }
  let after: string | null = null;
  for (let i = 0; i < MAX_FLOW_LIST; i++) {
    const next: { name: string } | null = batch.queryOne(nextQueueQuery(after), NAME_SHAPE);
    if (next === null) break;
    after = next.name;
    if ((batch.queryOne(unfinishedInQueueQuery(next.name), COUNT_SHAPE)?.n ?? 0) > 0) {
      const name = storedQueueName(next.name);
      if (names.indexOf(name) === -1) names.push(name);
    }
  }
  return names;
}
