/**
 * Client-side checks of flow control's endpoint (docs/flow-control.md "Endpoints"): what
 * POST /api/fleet/flow takes (a TypeError naming the field before any request,
 * with the server's own bounds from src/lib/flow-limits.ts), GET's filter,
 * and the shapes both answer.
 */
import {
  GROUP_NAME_RULE, MAX_FLOW_CONCURRENCY, MAX_PARK_SECONDS, MAX_RATE_LIMIT, MAX_RATE_PERIOD_SECONDS, isGroupName,
} from "../lib/flow-limits.js";
import { isQueueName } from "../lib/queue-names.js";
import type { FlowRequest, FlowResponse, FlowScopeState, FlowSettings, FlowStateResponse } from "../lib/types.js";
import { isObject } from "./json-object.js";
import { QUEUE_NAME_RULE, describe, isIntegerIn, isZonedDateTime } from "./queue-options.js";

/** setFlow's argument: FlowRequest, with `parkUntil` also as a Date. */
export type SetFlowRequest = Omit<FlowRequest, "parkUntil"> & { parkUntil?: Date | string | null };

/** getFlow's filter: each given name narrows its list (and empties the other, see FleetClient.getFlow). */
export interface FlowFilter {
  queue?: string;
  group?: string;
}

/** The settings a flow request may change (besides naming its scope). */
const FLOW_SETTING_NAMES = {
  paused: true, concurrency: true, rateLimit: true, parkSeconds: true, parkUntil: true,
} as const satisfies Record<Exclude<keyof FlowRequest, "queue" | "group">, true>;
const RATE_LIMIT_KEYS = ["limit", "periodSeconds"] as const;

/**
 * The wire body of setFlow, checked as the server checks it: exactly one of
 * `queue`/`group`, at least one setting, each in its bounds (null clears it).
 * Settings left undefined are left out (the server keeps them); a Date
 * `parkUntil` becomes ISO text. Whether `parkUntil` is after now and within
 * 7 days is the server's to judge, on its own clock.
 */
export function toFlowRequest(where: string, request: unknown): FlowRequest {
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    throw new TypeError(`${where}: give { queue | group, paused?, concurrency?, rateLimit?, parkSeconds?, parkUntil? } (got ${describe(request)})`);
  }
  const fields = request as Record<string, unknown>;
  const bad = (name: string, expected: string): TypeError =>
    new TypeError(`${where}: \`${name}\` must be ${expected} (got ${describe(fields[name])})`);
  for (const key of Object.keys(fields)) {
    if (key !== "queue" && key !== "group" && !Object.hasOwn(FLOW_SETTING_NAMES, key)) {
      throw new TypeError(`${where}: unknown field \`${key}\` (known: queue, group, ${Object.keys(FLOW_SETTING_NAMES).join(", ")})`);
    }
  }
  const body: FlowRequest = scopeOf(where, fields);
  const { paused, concurrency, rateLimit, parkSeconds, parkUntil } = fields;
  if (Object.keys(FLOW_SETTING_NAMES).every((name) => fields[name] === undefined)) {
    throw new TypeError(`${where}: give at least one setting (${Object.keys(FLOW_SETTING_NAMES).join(", ")}); null clears one`);
  }
  if (paused !== undefined) {
    if (paused !== null && typeof paused !== "boolean") throw bad("paused", "a boolean, or null (not paused)");
    body.paused = paused;
  }
  if (concurrency !== undefined) {
    if (concurrency !== null && !isIntegerIn(concurrency, 1, MAX_FLOW_CONCURRENCY)) {
      throw bad("concurrency", `an integer from 1 to ${MAX_FLOW_CONCURRENCY}, or null to clear it`);
    }
    body.concurrency = concurrency;
  }
  if (rateLimit !== undefined) {
    const expected = `{ limit: an integer from 1 to ${MAX_RATE_LIMIT}, periodSeconds: an integer from 1 to ${MAX_RATE_PERIOD_SECONDS} }, ` +
      "or null to clear it";
    if (rateLimit === null) {
      body.rateLimit = null;
    } else {
      if (typeof rateLimit !== "object" || Array.isArray(rateLimit)) throw bad("rateLimit", expected);
      const limits = rateLimit as Record<string, unknown>;
      if (Object.keys(limits).some((k) => !(RATE_LIMIT_KEYS as readonly string[]).includes(k)) ||
          !isIntegerIn(limits["limit"], 1, MAX_RATE_LIMIT) || !isIntegerIn(limits["periodSeconds"], 1, MAX_RATE_PERIOD_SECONDS)) {
        throw new TypeError(`${where}: \`rateLimit\` must be ${expected} (got ${JSON.stringify(rateLimit)})`);
      }
      // Replaced whole on the server: both fields, and nothing else.
      body.rateLimit = { limit: limits["limit"], periodSeconds: limits["periodSeconds"] };
    }
  }
  if (parkSeconds !== undefined && parkUntil !== undefined) {
    throw new TypeError(`${where}: give \`parkSeconds\` or \`parkUntil\`, not both`);
  }
  if (parkSeconds !== undefined) {
    if (typeof parkSeconds !== "number" || !Number.isFinite(parkSeconds) || parkSeconds < 0 || parkSeconds > MAX_PARK_SECONDS) {
      throw bad("parkSeconds", `a number of seconds from 0 (clears the park) to ${MAX_PARK_SECONDS}`);
    }
    body.parkSeconds = parkSeconds;
  }
  if (parkUntil !== undefined) {
    if (parkUntil === null || isZonedDateTime(parkUntil)) {
      body.parkUntil = parkUntil;
    } else if (parkUntil instanceof Date && !Number.isNaN(parkUntil.getTime())) {
      body.parkUntil = parkUntil.toISOString();
    } else {
      throw bad("parkUntil", "a Date, ISO-8601 text with a zone (e.g. 2030-01-01T12:00:00Z), or null to clear the park");
    }
  }
  return body;
}

/** A flow request's scope: exactly one of `queue` (a queue name) and `group` (a group name). */
function scopeOf(where: string, fields: Record<string, unknown>): FlowRequest {
  const { queue, group } = fields;
  if ((queue === undefined) === (group === undefined)) {
    throw new TypeError(`${where}: give exactly one of \`queue\` and \`group\` (the scope whose settings change)`);
  }
  if (queue !== undefined) {
    if (!isQueueName(queue)) throw new TypeError(`${where}: \`queue\` must be ${QUEUE_NAME_RULE} (got ${describe(queue)})`);
    return { queue };
  }
  if (!isGroupName(group)) throw new TypeError(`${where}: \`group\` must be a group name: ${GROUP_NAME_RULE} (got ${describe(group)})`);
  return { group };
}

/** getFlow's query, checked (TypeError naming the field): only the names given. */
export function toFlowQuery(where: string, filter: unknown): Record<string, string> {
  if (filter === undefined) return {};
  if (typeof filter !== "object" || filter === null || Array.isArray(filter)) {
    throw new TypeError(`${where}: the filter must be { queue?, group? } (got ${describe(filter)})`);
  }
  const fields = filter as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (key !== "queue" && key !== "group") throw new TypeError(`${where}: unknown filter \`${key}\` (known: queue, group)`);
  }
  const query: Record<string, string> = {};
  const { queue, group } = fields;
  if (queue !== undefined) {
    if (!isQueueName(queue)) throw new TypeError(`${where}: \`queue\` must be ${QUEUE_NAME_RULE} (got ${describe(queue)})`);
    query["queue"] = queue;
  }
  if (group !== undefined) {
    if (!isGroupName(group)) throw new TypeError(`${where}: \`group\` must be a group name: ${GROUP_NAME_RULE} (got ${describe(group)})`);
    query["group"] = group;
  }
  return query;
}

/** POST /api/fleet/flow's answer: `{ flow }` with the settings as stored, of the scope the request named. */
export function isFlowAnswer(body: unknown, request: FlowRequest): body is FlowResponse {
  if (!isObject(body) || !isObject(body["flow"]) || !isFlowSettings(body["flow"])) return false;
  const flow = body["flow"];
  return request.queue !== undefined ? flow["queue"] === request.queue : flow["group"] === request.group;
}

/** GET /api/fleet/flow's answer: `{ queues, groups }`, each an array of scope states. */
export function isFlowStateAnswer(body: unknown): body is FlowStateResponse {
  return isObject(body) && Array.isArray(body["queues"]) && Array.isArray(body["groups"]) &&
    body["queues"].every(isFlowScopeState) && body["groups"].every(isFlowScopeState);
}

function isFlowScopeState(value: unknown): value is FlowScopeState {
  return isObject(value) && isFlowSettings(value) && typeof value["name"] === "string" &&
    isCount(value["held"]) && isCount(value["due"]) && isCount(value["claimsInWindow"]);
}

/** A scope's settings as the server answers them: null for each one unset (paused: false). */
function isFlowSettings(value: Record<string, unknown>): value is Record<string, unknown> & FlowSettings {
  const { paused, concurrency, rateLimit, parkedUntil } = value;
  return typeof paused === "boolean" &&
    (concurrency === null || typeof concurrency === "number") &&
    (rateLimit === null || (isObject(rateLimit) && typeof rateLimit["limit"] === "number" && typeof rateLimit["periodSeconds"] === "number")) &&
    (parkedUntil === null || typeof parkedUntil === "string");
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0;
}

