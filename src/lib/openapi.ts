/**
 * The OpenAPI 3.1 document of every /api/fleet/* route (issue 23): served by
 * GET /api/fleet/openapi.json and written to openapi.json at the repo root by
 * the build. Pure. What can be derived is: the paths, methods and who may call
 * come from the route table (src/handlers/routes.ts, passed in), the statuses,
 * release targets and refusal reasons from ./types.ts, the limits from
 * ./queue.ts, ./flow-limits.ts, ./validate.ts and the others. A route of the
 * table with no OPERATIONS entry here throws, so a new route cannot ship
 * undocumented; an entry no route uses is never emitted.
 */
import type { RouteEntry } from "../handlers/routes.js";
import { DEFAULT_BUCKET_SECONDS, DEFAULT_WINDOW_SECONDS, MAX_BUCKET_SECONDS, MAX_WINDOW_SECONDS } from "./completions.js";
import { MAX_FLOW_CONCURRENCY, MAX_PARK_SECONDS, MAX_START_WITHIN_SECONDS, MAX_TIMEOUT_SECONDS } from "./flow-limits.js";
import type { RouteAccess } from "./identity.js";
import {
  DEFAULT_MAX_ATTEMPTS, MAX_BATCH_ITEMS, MAX_DELAY_SECONDS, MAX_ENQUEUE_JOBS, MAX_MAX_ATTEMPTS,
  MAX_PAYLOAD_BYTES, MAX_PRIORITY, MAX_PROBE_KEY_BYTES, MAX_PROGRESS_BYTES, MAX_REQUEST_BODY_BYTES,
  MAX_UNIQUE_KEY_BYTES, MIN_PRIORITY
} from "./queue.js";
import { MAX_CLAIM_QUEUES } from "./queue-names.js";
import {
  CLAIM_REFUSALS, JOB_STATUSES, RELEASE_REFUSALS, RENEW_REFUSALS, RETRY_REFUSALS, SWEEP_OUTCOMES, type EnqueueItem,
} from "./types.js";
import { MAX_CLAIM_NEXT_LIMIT } from "./validate.js";
import {
  type Json, ref, text, bytes, int, count, nullable, anyJson, arrayOf, answer, request, oneOf, reasons,
  queueName, groupName, leaseSeconds, workerId, jobId, leaseToken, releaseFields, type Members, FLOW_SETTINGS,
  SCHEMAS,
} from "./openapi-schemas.js";

export type { Json } from "./openapi-schemas.js";
export const OPENAPI_PATH = "/api/fleet/openapi.json";
/** The document's info.version: the package's (a unit test compares it with package.json). */
export const API_VERSION = "0.1.0";

// ---- operations ------------------------------------------------------------------------------

interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  /** The JSON body's schema (POST). */
  body?: Json;
  /** Query-string parameters (GET). */
  query?: Json[];
  /** The 200 answer's schema. */
  ok: Json;
  /** Answers 400 `{ error }` on bad input. */
  validates: boolean;
  /** Answers 503 `{ error }` when its transaction or read failed. */
  unavailable?: Json;
  /** More 200 content types than JSON. */
  okText?: Json;
}

const queryParam = (name: string, schema: Json, description: string): Json => ({ name, in: "query", required: false, schema, description });
const prefixParam = queryParam("probeKeyPrefix", text(), `Only jobs whose probe_key starts with this text (at most ${MAX_PROBE_KEY_BYTES} UTF-8 bytes).`);
const probeKeyPrefix = bytes("Only jobs whose probe_key starts with this text", MAX_PROBE_KEY_BYTES);
const ERROR_503 = ref("Error");

const heartbeatResult = oneOf(
  answer({ jobId: text(), renewed: { const: true }, job: ref("JobView") }),
  answer({ jobId: text(), renewed: { const: false }, reason: reasons(RENEW_REFUSALS, "Its attempt passed its deadline.") }, ["jobId", "renewed"]),
);
const completeResult = oneOf(
  answer({ jobId: text(), released: { const: true }, job: ref("JobView") }),
  answer({ jobId: text(), released: { const: false }, reason: reasons(RELEASE_REFUSALS, "Why the release was refused.") }),
);

/** claim-next's fields but the holder: its own body, and complete's `claimNext`. */
const claimNextFields = {
  leaseSeconds,
  limit: int(1, MAX_CLAIM_NEXT_LIMIT, "How many jobs to claim at most; default 1."),
  probeKeyPrefix,
  queue: oneOf(queueName, arrayOf(queueName, 1, MAX_CLAIM_QUEUES)),
};
const claimedJobs = arrayOf(answer({ job: ref("QueueJobView"), leaseToken: text() }));

const OPERATIONS: { [route: string]: Operation } = {
  "POST /api/fleet/claim": {
    operationId: "claim",
    summary: "Claim a job by id",
    description: "Wins a pending job, or steals a held one whose lease expired. The holder claiming again on a live lease gets alreadyHeld and its token. A reason only when a worker identity's queues or flow control hold back a job the claim would otherwise win.",
    body: request({ jobId, workerId, leaseSeconds }, ["jobId", "workerId"]),
    ok: oneOf(
      answer({ claimed: { const: true }, job: ref("JobView"), alreadyHeld: { const: true }, leaseToken: text() }, ["claimed", "job", "leaseToken"]),
      answer({ claimed: { const: false }, reason: reasons(CLAIM_REFUSALS, "Why a job the claim would win was held back.") }, ["claimed"]),
    ),
    validates: true,
  },
  "POST /api/fleet/renew": {
    operationId: "renew",
    summary: "Renew the holder's lease",
    body: request({
      jobId, workerId, leaseSeconds, leaseToken,
      progress: anyJson(`Any JSON, at most ${MAX_PROGRESS_BYTES} bytes serialized, stored when the renew succeeds; null: absent.`),
    }, ["jobId", "workerId"]),
    ok: oneOf(
      answer({ renewed: { const: true }, job: ref("JobView") }),
      answer({ renewed: { const: false }, reason: reasons(RENEW_REFUSALS, "The holder, past its job's deadline.") }, ["renewed"]),
    ),
    validates: true,
  },
  "POST /api/fleet/release": {
    operationId: "release",
    summary: "Release a job: done, failed, pending (the sweeper's hand-back) or retry",
    body: request({ jobId, workerId, ...releaseFields }, ["jobId", "workerId", "status"]),
    ok: oneOf(
      answer({ released: { const: true }, job: ref("JobView") }),
      answer({ released: { const: false }, reason: reasons(RELEASE_REFUSALS, "Why the release was refused.") }),
    ),
    validates: true,
  },
  "POST /api/fleet/claim-next": {
    operationId: "claimNext",
    summary: "Claim the next due jobs, in claim order",
    body: request({ workerId, ...claimNextFields }, ["workerId"]),
    ok: answer({ jobs: claimedJobs }),
    validates: true,
  },
  "POST /api/fleet/sweep": {
    operationId: "sweep",
    summary: "Re-queue (or give up) jobs whose lease expired, one batch",
    body: request({ probeKeyPrefix }, []),
    ok: answer({
      requeued: count, gaveUp: count, timedOut: count,
      jobs: arrayOf(answer({ id: text(), outcome: { type: "string", enum: [...SWEEP_OUTCOMES] }, claimedBy: text(), consecutiveOrphanCount: count })),
    }),
    validates: true,
  },
  "GET /api/fleet/stats": {
    operationId: "stats",
    summary: "Counts by status, and the sweeper's state",
    query: [
      queryParam("format", { type: "string", enum: ["json", "prometheus"] }, "prometheus: the same figures in Prometheus text."),
      prefixParam,
      queryParam("queue", queueName, "Only jobs of this queue."),
    ],
    ok: answer({
      counts: answer(JOB_STATUSES.reduce<Json>((props, status) => ({ ...props, [status]: count }), {})),
      total: count, scheduled: count, retrying: count, deadLettered: count,
      oldestPendingAgeSeconds: { type: ["number", "null"] },
      expiredLeases: count, pastOrphanCap: count, orphanCap: count,
      sweeper: answer({ scheduled: { type: "boolean" }, schedule: text(), error: text() }, ["scheduled", "schedule"]),
    }),
    okText: { type: "string", description: "Prometheus exposition text (format=prometheus)." },
    validates: true,
    unavailable: ERROR_503,
  },
  "GET /api/fleet/completions": {
    operationId: "completions",
    summary: "Jobs finished per time bucket (the dashboard's chart)",
    query: [
      queryParam("windowSeconds", int(1, MAX_WINDOW_SECONDS), `Default ${DEFAULT_WINDOW_SECONDS}.`),
      queryParam("bucketSeconds", int(1, MAX_BUCKET_SECONDS), `Default ${DEFAULT_BUCKET_SECONDS}.`),
      prefixParam,
    ],
    ok: answer({
      now: { type: "integer", description: "The server's clock, epoch ms." },
      bucketSeconds: int(1, MAX_BUCKET_SECONDS), from: { type: "integer" }, to: { type: "integer" },
      buckets: arrayOf(answer({ start: { type: "integer" }, done: count, failed: count })),
    }),
    validates: true,
    unavailable: ERROR_503,
  },
  "POST /api/fleet/enqueue": {
    operationId: "enqueue",
    summary: "Enqueue jobs, all or nothing",
    description: "A worker identity may call it when its can_enqueue is on (a 403 otherwise, and for a job of a queue it may not take).",
    body: request({
      jobs: arrayOf(request({
        probeKey: bytes("The job's probe_key", MAX_PROBE_KEY_BYTES),
        payload: anyJson(`Any JSON, at most ${MAX_PAYLOAD_BYTES} bytes serialized; null when absent.`),
        runAt: text("ISO-8601 with a zone, or PocketBase's text form. Not with delaySeconds."),
        delaySeconds: { type: "number", minimum: 0, maximum: MAX_DELAY_SECONDS, description: "Due this many seconds from now. Not with runAt." },
        priority: int(MIN_PRIORITY, MAX_PRIORITY, "Higher runs first; default 0."),
        maxAttempts: int(0, MAX_MAX_ATTEMPTS, `0: no cap; default ${DEFAULT_MAX_ATTEMPTS}.`),
        uniqueKey: bytes("At most one non-terminal job per non-empty key", MAX_UNIQUE_KEY_BYTES),
        queue: queueName,
        group: nullable(groupName),
        timeoutSeconds: int(1, MAX_TIMEOUT_SECONDS, "The longest one attempt may be held."),
        startWithinSeconds: int(1, MAX_START_WITHIN_SECONDS, "Never first started later than run_at + this."),
      } satisfies Members<EnqueueItem>, ["probeKey"]), 1, MAX_ENQUEUE_JOBS),
    }, ["jobs"]),
    ok: answer({
      jobs: arrayOf(answer({
        id: text(), probeKey: text(),
        created: { type: "boolean", description: "false: uniqueKey matched a live job (or an earlier item), whose id this is." },
      })),
    }),
    validates: true,
    unavailable: ERROR_503,
  },
  "POST /api/fleet/cancel": {
    operationId: "cancel",
    summary: "Cancel a job that is not finished",
    body: request({ jobId }, ["jobId"]),
    ok: oneOf(answer({ cancelled: { const: true }, job: ref("QueueJobView") }), answer({ cancelled: { const: false } })),
    validates: true,
    unavailable: ERROR_503,
  },
  "POST /api/fleet/retry": {
    operationId: "retry",
    summary: "Put a failed or cancelled job back to pending",
    body: request({ jobId }, ["jobId"]),
    ok: oneOf(
      answer({ retried: { const: true }, job: ref("QueueJobView") }),
      answer({ retried: { const: false }, reason: reasons(RETRY_REFUSALS, "Another live job holds its unique_key.") }, ["retried"]),
    ),
    validates: true,
    unavailable: ERROR_503,
  },
  "POST /api/fleet/maintenance": {
    operationId: "maintenance",
    summary: "Run the minute's maintenance tick now (schedules, counts, retention, flow upkeep)",
    body: request({}, []),
    ok: ref("MaintenanceTick"),
    validates: false,
    // A part that rolled back: what the other parts did, and the error.
    unavailable: {
      type: "object",
      properties: { error: text(), ...((SCHEMAS["MaintenanceTick"] as Json)["properties"] as Json) },
      required: ["error", ...((SCHEMAS["MaintenanceTick"] as Json)["required"] as string[])],
      additionalProperties: false,
    },
  },
  "POST /api/fleet/heartbeat": {
    operationId: "heartbeat",
    summary: "Renew many leases of one holder in one transaction",
    body: request({
      workerId, leaseSeconds,
      leases: arrayOf(request({
        jobId, leaseToken, progress: anyJson(`Any JSON, at most ${MAX_PROGRESS_BYTES} bytes serialized.`),
      }, ["jobId"]), 1, MAX_BATCH_ITEMS),
    }, ["workerId", "leases"]),
    ok: answer({ results: arrayOf(heartbeatResult) }),
    validates: true,
    unavailable: ERROR_503,
  },
  "POST /api/fleet/complete": {
    operationId: "complete",
    summary: "Release many jobs of one holder in one transaction",
    description: "With claimNext (claim-next's fields without workerId), the same transaction then claims as claim-next would for workerId, answered as jobs: " +
      "a worker whose slots the releases free asks for their next jobs in the same request.",
    body: request({
      workerId,
      releases: arrayOf(request({ jobId, ...releaseFields }, ["jobId", "status"]), 1, MAX_BATCH_ITEMS),
      claimNext: request(claimNextFields, []),
    }, ["workerId", "releases"]),
    ok: answer({ results: arrayOf(completeResult), jobs: claimedJobs }, ["results"]),
    validates: true,
    unavailable: ERROR_503,
  },
  "POST /api/fleet/flow": {
    operationId: "setFlow",
    summary: "Set a queue's or a group's flow control (pause, concurrency, rate limit, park)",
    body: {
      type: "object",
      properties: {
        queue: queueName, group: groupName,
        paused: { type: ["boolean", "null"] },
        concurrency: nullable(int(1, MAX_FLOW_CONCURRENCY)),
        rateLimit: nullable(ref("FlowRateLimit")),
        parkSeconds: { type: "number", minimum: 0, maximum: MAX_PARK_SECONDS, description: "0 clears the park. Not with parkUntil." },
        parkUntil: nullable(text(`A date with a zone, after now, at most ${MAX_PARK_SECONDS / 86_400} days ahead; null clears the park.`)),
      },
      oneOf: [{ required: ["queue"] }, { required: ["group"] }],
    },
    ok: answer({
      flow: {
        type: "object",
        properties: { queue: queueName, group: groupName, ...FLOW_SETTINGS },
        required: Object.keys(FLOW_SETTINGS),
        oneOf: [{ required: ["queue"] }, { required: ["group"] }],
        additionalProperties: false,
      },
    }),
    validates: true,
    unavailable: ERROR_503,
  },
  "GET /api/fleet/flow": {
    operationId: "getFlow",
    summary: "Flow control's settings and figures per queue and group",
    query: [queryParam("queue", queueName, "Only this queue."), queryParam("group", groupName, "Only this group.")],
    ok: answer({ queues: arrayOf(ref("FlowScopeState")), groups: arrayOf(ref("FlowScopeState")) }),
    validates: true,
    unavailable: ERROR_503,
  },
  [`GET ${OPENAPI_PATH}`]: {
    operationId: "openApiDocument",
    summary: "This document",
    ok: { type: "object", required: ["openapi", "info", "paths"], description: "An OpenAPI 3.1 document." },
    validates: false,
  },
};

// ---- the document ----------------------------------------------------------------------------

const WHO: { [access in RouteAccess]: string } = {
  admin: "An admin (superuser on 0.23+) only.",
  worker: "An admin, or a worker identity.",
  enqueue: "An admin, or a worker identity whose can_enqueue is on.",
};

function errorResponse(description: string, schema: Json = ref("Error")): Json {
  return { description, content: { "application/json": { schema } } };
}

function operationOf(route: RouteEntry): Json {
  const key = `${route.method} ${route.path}`;
  const op = OPERATIONS[key];
  if (op === undefined) throw new Error(`src/lib/openapi.ts has no operation for the route ${key}: describe it in OPERATIONS`);
  const okContent: Json = { "application/json": { schema: op.ok } };
  if (op.okText !== undefined) okContent["text/plain"] = { schema: op.okText };
  const responses: Json = { "200": { description: "The answer.", content: okContent } };
  if (op.validates) responses["400"] = errorResponse("Bad input: nothing was written.");
  responses["401"] = errorResponse("No token, a token that did not verify, a token of another auth collection, or a disabled worker identity.", ref("PocketBaseError"));
  responses["403"] = errorResponse(route.access === "admin"
    ? "A worker identity's token: this route is for admins."
    : "A worker identity may not make this call (its queues, its workerId, its can_enqueue, or an unreadable queues field); nothing was written.");
  if (route.method === "POST") responses["413"] = errorResponse(`The body is larger than ${MAX_REQUEST_BODY_BYTES} bytes; nothing was written.`);
  if (op.unavailable !== undefined) responses["503"] = errorResponse("The transaction rolled back or the read failed (details are in PocketBase's log).", op.unavailable);
  const operation: Json = {
    operationId: op.operationId,
    summary: op.summary,
    description: [op.description, `Who may call: ${WHO[route.access]}`].filter((s) => s !== undefined).join("\n\n"),
    security: route.access === "admin" ? [{ adminToken: [] }] : [{ adminToken: [] }, { workerToken: [] }],
    "x-pb-fleet-access": route.access,
  };
  if (op.query !== undefined) operation["parameters"] = op.query;
  if (op.body !== undefined) operation["requestBody"] = { required: true, content: { "application/json": { schema: op.body } } };
  operation["responses"] = responses;
  return operation;
}

/** The document for a route table (src/handlers/routes.ts's ROUTES), in its order. */
export function openApiDocument(routes: readonly RouteEntry[]): Json {
  const paths: { [path: string]: Json } = {};
  for (const route of routes) {
    const item = paths[route.path] ?? (paths[route.path] = {});
    item[route.method.toLowerCase()] = operationOf(route);
  }
  const token = (who: string): Json => ({
    type: "apiKey", in: "header", name: "Authorization",
    description: `${who} PocketBase's auth token as the Authorization header, as is (or after \`Bearer \`).`,
  });
  return {
    openapi: "3.1.0",
    info: {
      title: "pb-fleet",
      version: API_VERSION,
      description: "The /api/fleet/* routes of pb-fleet's PocketBase hooks (README, \"The API\"). Generated from src/lib/openapi.ts: do not edit openapi.json by hand.",
      license: { name: "MIT", identifier: "MIT" },
    },
    paths,
    components: {
      schemas: SCHEMAS,
      securitySchemes: {
        adminToken: token("An admin's token (a superuser's on PocketBase 0.23+)."),
        workerToken: token("A worker identity's token (a fleet_workers record signed in with auth-with-password)."),
      },
    },
  };
}
