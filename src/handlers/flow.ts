/**
 * POST /api/fleet/flow { queue | group, paused?, concurrency?, rateLimit?, parkSeconds?, parkUntil? }
 * GET /api/fleet/flow[?queue=...][&group=...]
 * A scope's settings, and every scope's figures (FLOW.md "Endpoints").
 */
import { json, updateJobs, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import {
  FLOW_ROW_SHAPE, flowRowsQuery, flowState, readFlowFilter, reExpireClaimsStatement, scopeName, settingsOf, upsertFlowStatement,
  validateFlowRequest,
} from "../lib/flow.js";
import { TRANSACTION_FAILED } from "../lib/queue.js";
import type { FlowResponse, FlowStateResponse } from "../lib/types.js";

export function handleSetFlow(req: FleetRequest): Reply {
  const now = Date.now();
  const valid = validateFlowRequest(req.body(), now);
  if (!valid.ok) return json(400, { error: valid.error });
  const { scope, columns } = valid.value;
  const stored = updateJobs((batch, nowMs) => {
    batch.execute(upsertFlowStatement(scope, columns, nowMs));
    if (columns.rate_period !== undefined && columns.rate_period > 0) batch.execute(reExpireClaimsStatement(scope, columns.rate_period));
    return settingsOf(batch.queryOne(flowRowsQuery([scope]), FLOW_ROW_SHAPE), nowMs);
  });
  if (stored === null) return json(503, { error: TRANSACTION_FAILED });
  const answer: FlowResponse = { flow: Object.assign(scopeName(scope), stored) };
  return json(200, answer);
}

export function handleGetFlow(req: FleetRequest): Reply {
  const filter = readFlowFilter(req.query("queue"), req.query("group"));
  if (typeof filter === "string") return json(400, { error: filter });
  const state = updateJobs((batch, nowMs) => flowState(batch, filter, nowMs));
  if (state === null) return json(503, { error: TRANSACTION_FAILED });
  const answer: FlowStateResponse = state;
  return json(200, answer);
}
