// src/lib/openapi.ts: a valid OpenAPI 3.1 document of exactly the route
// table's routes, whose reasons, statuses and limits are the shared constants'.
import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { ROUTES, type RouteEntry } from "../../src/handlers/routes";
import { API_VERSION, openApiDocument, OPENAPI_PATH } from "../../src/lib/openapi";
import { MAX_BATCH_ITEMS, MAX_ENQUEUE_JOBS, MAX_REQUEST_BODY_BYTES } from "../../src/lib/queue";
import { MAX_CLAIM_QUEUES } from "../../src/lib/queue-names";
import {
  CLAIM_REFUSALS, JOB_STATUSES, RELEASE_REFUSALS, RELEASE_TARGETS, RENEW_REFUSALS, RETRY_REFUSALS, SWEEP_OUTCOMES,
} from "../../src/lib/types";
import { MAX_CLAIM_NEXT_LIMIT } from "../../src/lib/validate";
import { answerSchemas } from "../support/openapi-answers";

const REPO = new URL("../..", import.meta.url).pathname;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const doc = openApiDocument(ROUTES) as any;
const op = (method: string, path: string) => doc.paths[path][method.toLowerCase()];
const okSchema = (method: string, path: string) => op(method, path).responses["200"].content["application/json"].schema;
const body = (method: string, path: string) => op(method, path).requestBody.content["application/json"].schema;
/** Every `reason` enum of an answer schema's branches. */
const reasonsOf = (schema: { oneOf: { properties: { reason?: { enum: string[] } } }[] }) =>
  schema.oneOf.map((branch) => branch.properties.reason?.enum).filter((e) => e !== undefined);

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator)", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("has every route of the route table with its method, and nothing else", () => {
    const documented = Object.entries(doc.paths as Record<string, object>)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(documented.sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    expect(ROUTES.some((r) => r.method === "GET" && r.path === OPENAPI_PATH)).toBe(true);
  });

  it("says who may call each route as the route table does", () => {
    for (const route of ROUTES) {
      const o = op(route.method, route.path);
      expect(o["x-pb-fleet-access"], route.path).toBe(route.access);
      expect(o.security, route.path).toEqual(route.access === "admin" ? [{ adminToken: [] }] : [{ adminToken: [] }, { workerToken: [] }]);
      expect(Object.keys(o.responses), route.path).toEqual(expect.arrayContaining(["200", "401", "403"]));
      if (route.method === "POST") expect(o.responses["413"].description).toContain(String(MAX_REQUEST_BODY_BYTES));
    }
    for (const scheme of Object.values(doc.components.securitySchemes)) {
      expect(scheme).toMatchObject({ type: "apiKey", in: "header", name: "Authorization" });
    }
  });

  it("gives every refusal reason of src/lib/types.ts, and nothing else", () => {
    expect(reasonsOf(okSchema("POST", "/api/fleet/claim"))).toEqual([[...CLAIM_REFUSALS]]);
    expect(reasonsOf(okSchema("POST", "/api/fleet/renew"))).toEqual([[...RENEW_REFUSALS]]);
    expect(reasonsOf(okSchema("POST", "/api/fleet/release"))).toEqual([[...RELEASE_REFUSALS]]);
    expect(reasonsOf(okSchema("POST", "/api/fleet/retry"))).toEqual([[...RETRY_REFUSALS]]);
    expect(reasonsOf(okSchema("POST", "/api/fleet/heartbeat").properties.results.items)).toEqual([[...RENEW_REFUSALS]]);
    expect(reasonsOf(okSchema("POST", "/api/fleet/complete").properties.results.items)).toEqual([[...RELEASE_REFUSALS]]);
    expect(okSchema("POST", "/api/fleet/sweep").properties.jobs.items.properties.outcome.enum).toEqual([...SWEEP_OUTCOMES]);
  });

  it("takes its statuses, targets and limits from the shared constants", () => {
    expect(doc.components.schemas.JobView.properties.status.enum).toEqual([...JOB_STATUSES]);
    expect(Object.keys(okSchema("GET", "/api/fleet/stats").properties.counts.properties)).toEqual([...JOB_STATUSES]);
    expect(body("POST", "/api/fleet/release").properties.status.enum).toEqual([...RELEASE_TARGETS]);
    expect(body("POST", "/api/fleet/heartbeat").properties.leases.maxItems).toBe(MAX_BATCH_ITEMS);
    expect(body("POST", "/api/fleet/complete").properties.releases.maxItems).toBe(MAX_BATCH_ITEMS);
    expect(body("POST", "/api/fleet/enqueue").properties.jobs.maxItems).toBe(MAX_ENQUEUE_JOBS);
    expect(body("POST", "/api/fleet/claim-next").properties.limit.maximum).toBe(MAX_CLAIM_NEXT_LIMIT);
    expect(body("POST", "/api/fleet/claim-next").properties.queue.oneOf[1].maxItems).toBe(MAX_CLAIM_QUEUES);
  });

  it("compiles every answer schema with ajv (2020-12): every $ref resolves", () => {
    const schemas = answerSchemas(doc);
    const answers = schemas.answers();
    expect(answers.length).toBeGreaterThan(ROUTES.length * 3);
    for (const a of answers) expect(() => schemas.validator(a.method, a.path, a.status, a.contentType), `${a.method} ${a.path} ${a.status}`).not.toThrow();
    const error = schemas.validator("POST", "/api/fleet/claim", 400);
    expect(error({ error: "workerId is required" })).toBe(true);
    expect(error({ error: 1 })).toBe(false);
    expect(error({ error: "x", more: 1 })).toBe(false);
    const release = schemas.validator("POST", "/api/fleet/release", 200);
    expect(release({ released: false, reason: RELEASE_REFUSALS[0] })).toBe(true);
    expect(release({ released: false, reason: "refused_for_fun" })).toBe(false);
    expect(release({ released: true })).toBe(false);
    const claim = schemas.validator("POST", "/api/fleet/claim", 200);
    expect(claim({ claimed: false, reason: CLAIM_REFUSALS[0] })).toBe(true);
    expect(claim({ claimed: true, job: { id: "x" }, leaseToken: "t" })).toBe(false);
  });

  it("refuses to build for a route it does not describe", () => {
    const unknown: RouteEntry = { method: "POST", path: "/api/fleet/nothing", module: "x", handler: "y", access: "admin" };
    expect(() => openApiDocument([...ROUTES, unknown])).toThrow(/no operation for the route POST \/api\/fleet\/nothing/);
  });

  it("carries the package's version, and openapi.json is this document", () => {
    expect(API_VERSION).toBe(JSON.parse(readFileSync(`${REPO}/package.json`, "utf8")).version);
    expect(JSON.parse(readFileSync(`${REPO}/openapi.json`, "utf8"))).toEqual(doc);
  });

  it("is shipped by the package", () => {
    expect(JSON.parse(readFileSync(`${REPO}/package.json`, "utf8")).files).toContain("openapi.json");
  });
});
