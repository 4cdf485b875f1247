/**
 * GET /api/fleet/openapi.json: the OpenAPI 3.1 document of every route
 * (src/lib/openapi.ts, from the route table), the same as openapi.json at the
 * repo root. Its access is "worker" (routes.ts): the access model has no
 * anonymous level, and adding one would widen identity.ts's authorize, which
 * every route goes through, for a document that is not secret anyway (the npm
 * package ships it as openapi.json). So any caller that may use some route
 * (an admin or a worker identity) may read how to call it; anyone else gets
 * the same 401 as on every other route.
 */
import { json, type FleetRequest, type Reply } from "@pb-fleet/adapter";
import { openApiDocument } from "../lib/openapi.js";
import { ROUTES } from "./routes.js";

/** Built once per pooled runtime (the bundle's closure keeps it), not per request. */
let built: unknown = null;

export function handleOpenApi(_req: FleetRequest): Reply {
  if (built === null) built = openApiDocument(ROUTES);
  return json(200, built);
}
