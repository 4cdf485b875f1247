/**
 * The OpenAPI document's building blocks (./openapi.ts): JSON Schema helpers
 * and the components' schemas (the wire types of ./types.ts, each checked
 * member for member by Members<T>), with the limits they state imported
 * from their homes. Pure.
 */
import { MAX_FLOW_CONCURRENCY, MAX_GROUP_KEY_CHARS, MAX_RATE_LIMIT, MAX_RATE_LIMITED_FOR_SECONDS, MAX_RATE_PERIOD_SECONDS } from "./flow-limits.js";
import { DEFAULT_LEASE_SECONDS, MAX_LEASE_SECONDS, MIN_LEASE_SECONDS } from "./lease.js";
import { MAX_ERROR_BYTES, MAX_JOB_ID_BYTES, MAX_LEASE_TOKEN_BYTES, MAX_RESULT_BYTES, MAX_WORKER_ID_BYTES } from "./queue.js";
import { DEFAULT_QUEUE, QUEUE_NAME_PATTERN } from "./queue-names.js";
import { JOB_STATUSES, RELEASE_TARGETS, type JobView, type QueueJobView } from "./types.js";

/** A JSON Schema (2020-12, OpenAPI 3.1's dialect) or any other part of the document. */
export type Json = { [key: string]: unknown };

// ---- schema helpers ----------------------------------------------------------------------

export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
export const text = (description?: string): Json => (description === undefined ? { type: "string" } : { type: "string", description });
export const bytes = (what: string, max: number): Json => text(`${what}: at most ${max} UTF-8 bytes (a 400 beyond).`);
export const int = (minimum?: number, maximum?: number, description?: string): Json => {
  const s: Json = { type: "integer" };
  if (minimum !== undefined) s["minimum"] = minimum;
  if (maximum !== undefined) s["maximum"] = maximum;
  if (description !== undefined) s["description"] = description;
  return s;
};
export const count: Json = { type: "integer", minimum: 0 };
export const nullable = (schema: Json): Json => ({ oneOf: [schema, { type: "null" }] });
export const anyJson = (description: string): Json => ({ description });
export const arrayOf = (items: Json, minItems?: number, maxItems?: number): Json => {
  const s: Json = { type: "array", items };
  if (minItems !== undefined) s["minItems"] = minItems;
  if (maxItems !== undefined) s["maxItems"] = maxItems;
  return s;
};
/** An answer object: exactly these members (the integration test holds real answers to it). */
export const answer = (properties: Json, required: string[] = Object.keys(properties)): Json =>
  ({ type: "object", properties, required, additionalProperties: false });
/** A request body: these members (others are ignored by the server). */
export const request = (properties: Json, required: string[]): Json => ({ type: "object", properties, required });
export const oneOf = (...schemas: Json[]): Json => ({ oneOf: schemas });
export const reasons = (list: readonly string[], description: string): Json => ({ type: "string", enum: [...list], description });

export const queueName: Json = {
  type: "string",
  pattern: QUEUE_NAME_PATTERN.source,
  description: "A queue name: 1 to 64 letters, digits and _ . : -, starting with a letter or digit.",
};
export const groupName: Json = {
  type: "string", minLength: 1, maxLength: MAX_GROUP_KEY_CHARS,
  description: `A group: 1 to ${MAX_GROUP_KEY_CHARS} characters, no control characters.`,
};
export const pbDate = (description: string): Json => text(`${description} PocketBase's text form, \`2006-01-02 15:04:05.000Z\`.`);
export const leaseSeconds: Json = {
  type: "number",
  description: `A number > 0, clamped to [${MIN_LEASE_SECONDS}, ${MAX_LEASE_SECONDS}]; anything else means ${DEFAULT_LEASE_SECONDS}.`,
};
export const workerId = bytes("The holder's id (a worker identity: its record id, or the id and `/` and anything)", MAX_WORKER_ID_BYTES);
export const jobId = bytes("The job's record id", MAX_JOB_ID_BYTES);
export const leaseToken = bytes("Fencing: when sent, the call is refused unless it is the current claim's token", MAX_LEASE_TOKEN_BYTES);
export const rateLimitedFor = int(1, MAX_RATE_LIMITED_FOR_SECONDS,
  "Only with status retry: the job is due again this many seconds from now, the attempt is given back, and its group (its queue when none) is parked as long.");
export const releaseFields: Json = {
  status: { type: "string", enum: [...RELEASE_TARGETS] },
  leaseToken,
  result: anyJson(`Any JSON, at most ${MAX_RESULT_BYTES} bytes serialized, stored in \`result\`; null: absent.`),
  error: nullable(bytes("Stored in `last_error`", MAX_ERROR_BYTES)),
  rateLimitedFor,
};

// ---- components ----------------------------------------------------------------------------

/** A schema per member of a wire type: the compiler rejects a member the type has not, or one left out. */
export type Members<T> = { [K in keyof T]-?: Json };

export const JOB_VIEW_MEMBERS = {
  id: text(),
  probe_key: text(),
  status: { type: "string", enum: [...JOB_STATUSES] },
  claimed_by: text(),
  lease_expires_at: pbDate("The lease's end, or \"\" when the row has no lease."),
  version: { type: "integer" },
} satisfies Members<JobView>;
export const JOB_VIEW: Json = answer(JOB_VIEW_MEMBERS);

export const QUEUE_JOB_VIEW: Json = answer({
  ...JOB_VIEW_MEMBERS,
  queue: text(`The job's queue; "${DEFAULT_QUEUE}" for a job enqueued without one.`),
  payload: anyJson("Any JSON; null when none."),
  priority: { type: "integer" },
  run_at: pbDate("When the job becomes (or became) claimable."),
  attempts: count,
  max_attempts: int(0, undefined, "0: no cap."),
  last_error: text(),
  dead_lettered_at: text(),
  unique_key: text(),
  progress: anyJson("The last renew's progress (any JSON); null when none."),
  group_key: text("The job's group; \"\" when none."),
  timeout_seconds: int(0, undefined, "0: no timeout."),
  deadline: nullable(pbDate("The current attempt's deadline; null when none.")),
} satisfies Members<QueueJobView>);

export const FLOW_SETTINGS: Json = {
  paused: { type: "boolean" },
  concurrency: nullable(int(1, MAX_FLOW_CONCURRENCY)),
  rateLimit: nullable(ref("FlowRateLimit")),
  parkedUntil: nullable(pbDate("Until when the scope is parked; null when unset or already past.")),
};

export const SCHEMAS: Json = {
  Error: answer({ error: text("What was wrong; nothing was written.") }),
  PocketBaseError: {
    type: "object",
    description: "PocketBase's error shape (the 401 of PocketBase 0.22's requireAdminAuth, on every line).",
    properties: { code: { type: "integer" }, message: text(), data: { type: "object" } },
    required: ["code", "message", "data"],
  },
  JobView: JOB_VIEW,
  QueueJobView: QUEUE_JOB_VIEW,
  FlowRateLimit: answer({ limit: int(1, MAX_RATE_LIMIT), periodSeconds: int(1, MAX_RATE_PERIOD_SECONDS) }),
  FlowSettings: answer(FLOW_SETTINGS),
  FlowScopeState: answer({ name: text(), ...FLOW_SETTINGS, held: count, due: count, claimsInWindow: count }),
  MaintenanceTick: answer({
    countsRepaired: { type: ["boolean", "null"], description: "true: the counting triggers were rebuilt; null: that transaction rolled back." },
    leaseIndexRepaired: {
      type: ["boolean", "null"], description: "true: the expired-lease index was missing and was made again; null: that transaction rolled back.",
    },
    schedules: nullable(answer({
      enqueued: arrayOf(answer({ schedule: text(), jobId: text(), created: { type: "boolean" } })),
      errors: arrayOf(text()),
    })),
    retention: answer({
      deleted: answer({ done: count, failed: count }),
      events: count,
      errors: arrayOf(text()),
      batches: count,
      drained: { type: "boolean" },
      rolledBack: { type: "boolean" },
    }),
    flow: nullable(answer({ notStarted: count, claims: count, parks: count })),
  }),
};
