/**
 * POST /api/fleet/flow { queue | group, paused?, concurrency?, rateLimit?, parkSeconds?, parkUntil? }
 * GET /api/fleet/flow[?queue=...][&group=...]
 * A scope's settings, and every scope's figures (docs/flow-control.md "Endpoints").
 */
import { json, queryAll, updateJobs, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { FLOW_UNAVAILABLE, flowState, readFlowFilter, scopeName, validateFlowRequest, writeFlow, type FlowReader } from "../lib/flow-endpoint.js";
import { TRANSACTION_FAILED } from "../lib/queue.js";
import type { FlowResponse, FlowStateResponse } from "../lib/types.js";

export function handleSetFlow(req: FleetRequest): Reply {
  const now = Date.now();
  const valid = validateFlowRequest(req.body(), now);
  if (!valid.ok) return json(400, { error: valid.error });
  const stored = updateJobs((batch, nowMs) => writeFlow(batch, valid.value, nowMs));
  if (stored === null) return json(503, { error: TRANSACTION_FAILED });
  const answer: FlowResponse = { flow: Object.assign(scopeName(valid.value.scope), stored) };
  return json(200, answer);
}

/** A failed read (logged by the adapter) ends GET /api/fleet/flow with a 503. */
class ReadFailed extends Error {}

/** Plain reads, off the single writer (a poll must not hold up claims); a failure throws ReadFailed. */
const READER: FlowReader = {
  queryAll(query, shape) {
    const rows = queryAll(query, shape);
    if (rows === null) throw new ReadFailed();
    return rows;
  },
  queryOne(query, shape) {
    return READER.queryAll(query, shape)[0] ?? null;
  },
};

export function handleGetFlow(req: FleetRequest): Reply {
  const filter = readFlowFilter(req.query("queue"), req.query("group"));
  if (typeof filter === "string") return json(400, { error: filter });
  try {
    const answer: FlowStateResponse = flowState(READER, filter, Date.now());
    return json(200, answer);
  } catch (err) {
    if (err instanceof ReadFailed) return json(503, { error: FLOW_UNAVAILABLE });
    throw err;
  }
}
