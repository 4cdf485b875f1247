/** GET /api/fleet/completions[?windowSeconds=300][&bucketSeconds=5][&probeKeyPrefix=...] */
import { json, queryOne, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import {
  buildCompletions, completionsQuery, completionsWindow, COMPLETIONS_ROW_SHAPE, COMPLETIONS_UNAVAILABLE, countedCompletionsQuery,
  parseCompletionsParams,
} from "../lib/completions.js";
import { prefixError } from "../lib/validate.js";

export function handleCompletions(req: FleetRequest): Reply {
  const params = parseCompletionsParams(req.query("windowSeconds"), req.query("bucketSeconds"));
  if (!params.ok) return json(400, { error: params.error });
  const prefix = req.query("probeKeyPrefix");
  const badPrefix = prefixError(prefix);
  if (badPrefix !== null) return json(400, { error: badPrefix });
  const now = Date.now();
  const window = completionsWindow(now, params.windowSeconds, params.bucketSeconds);
  // Counted (job-counts.ts) unless a prefix narrows it or the counting triggers are missing.
  let row = prefix === "" ? queryOne(countedCompletionsQuery(window), COMPLETIONS_ROW_SHAPE) : null;
  if (row === null || row.counts_ready !== 1) row = queryOne(completionsQuery(window, prefix), COMPLETIONS_ROW_SHAPE);
  if (row === null) return json(503, { error: COMPLETIONS_UNAVAILABLE }); // the cause is in the log
  // The answer's `now` is when it was made (after the read), for the page's estimate of this server's clock.
  return json(200, buildCompletions(row, window, Date.now()));
}
