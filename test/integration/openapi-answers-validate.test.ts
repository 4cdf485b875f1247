// The OpenAPI document (src/lib/openapi.ts) against a real PocketBase: real
// answers of every route (successes, refusals with each reason we can cause,
// 400s, 401, 403, 413) fit the document's schema for their route and status,
// and GET /api/fleet/openapi.json answers the document itself.
import { describe, expect, it } from "vitest";
import { ROUTES } from "../../src/handlers/routes";
import { openApiDocument, OPENAPI_PATH } from "../../src/lib/openapi";
import { MAX_REQUEST_BODY_BYTES } from "../../src/lib/queue";
import { answerSchemas } from "../support/openapi-answers";
import { claimNext, enqueueOk, get, patchJob, pastDate, post, randomKey, type ApiResponse, type RequestOptions } from "./support/fleet-api";
import { createWorkerIdentity } from "./support/worker-identities";

const document = openApiDocument(ROUTES) as Parameters<typeof answerSchemas>[0];
const schemas = answerSchemas(document);
/** "METHOD path status" of every answer checked, for the coverage check at the end. */
const checked = new Set<string>();

/** The answer fits the document's schema for its route and status (the path without its query string). */
function expectFits(method: "GET" | "POST", path: string, res: ApiResponse, contentType = "application/json"): void {
  const route = path.split("?")[0]!;
  const validate = schemas.validator(method, route, res.status, contentType);
  const ok = validate(res.body);
  expect(ok, `${method} ${path} ${res.status} ${JSON.stringify(res.body).slice(0, 500)}: ${schemas.errorsText(validate)}`).toBe(true);
  checked.add(`${method} ${route} ${res.status}`);
}

async function call(method: "GET" | "POST", path: string, body?: unknown, opts?: RequestOptions, status?: number): Promise<ApiResponse> {
  const res = method === "GET" ? await get(path, opts) : await post(path, body, opts);
  if (status !== undefined) expect(res.status, `${method} ${path}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(status);
  expectFits(method, path, res);
  return res;
}

/** A fresh job of its own prefix, enqueued (in `queue` when given). */
async function newJob(queue?: string) {
  const prefix = randomKey("openapi") + "/";
  const [job] = await enqueueOk([{ probeKey: `${prefix}a`, ...(queue === undefined ? {} : { queue }) }]);
  return { id: job!.id, prefix };
}

describe("answers fit the OpenAPI document", () => {
  it("GET /api/fleet/openapi.json answers the module's document, to an admin and to a worker identity", async () => {
    const res = await call("GET", OPENAPI_PATH, undefined, undefined, 200);
    expect(res.body).toEqual(openApiDocument(ROUTES));
    const worker = await createWorkerIdentity();
    expect((await call("GET", OPENAPI_PATH, undefined, { token: worker.token }, 200)).body).toEqual(res.body);
    await call("GET", OPENAPI_PATH, undefined, { token: null }, 401);
  });

  it("claim, renew, release: wins, alreadyHeld, refusals with their reasons, 400s", async () => {
    const { id } = await newJob();
    const won = await call("POST", "/api/fleet/claim", { jobId: id, workerId: "w1", leaseSeconds: 60 }, undefined, 200);
    expect(won.body).toMatchObject({ claimed: true });
    expect((await call("POST", "/api/fleet/claim", { jobId: id, workerId: "w1" }, undefined, 200)).body).toMatchObject({ alreadyHeld: true });
    expect((await call("POST", "/api/fleet/claim", { jobId: id, workerId: "w2" }, undefined, 200)).body).toEqual({ claimed: false });
    await call("POST", "/api/fleet/claim", { jobId: id }, undefined, 400);

    const leaseToken = won.body.leaseToken as string;
    expect((await call("POST", "/api/fleet/renew", { jobId: id, workerId: "w1", leaseToken, progress: { step: 1 } }, undefined, 200)).body)
      .toMatchObject({ renewed: true });
    expect((await call("POST", "/api/fleet/renew", { jobId: id, workerId: "w2" }, undefined, 200)).body).toEqual({ renewed: false });
    await call("POST", "/api/fleet/renew", { workerId: "w1" }, undefined, 400);

    const releaseAs = (workerId: string, extra: object) => call("POST", "/api/fleet/release", { jobId: id, workerId, status: "done", ...extra }, undefined, 200);
    expect((await releaseAs("w2", {})).body).toEqual({ released: false, reason: "refused_not_holder" });
    expect((await releaseAs("w1", { leaseToken: "stale" })).body).toEqual({ released: false, reason: "refused_stale_token" });
    expect((await call("POST", "/api/fleet/release", { jobId: id, workerId: "w1", status: "pending" }, undefined, 200)).body)
      .toEqual({ released: false, reason: "refused_lease_live" });
    expect((await releaseAs("w1", { leaseToken, result: { ok: true } })).body).toMatchObject({ released: true });
    expect((await releaseAs("w1", {})).body).toEqual({ released: false, reason: "refused_terminal_same_holder" });
    await call("POST", "/api/fleet/release", { jobId: id, workerId: "w1", status: "nope" }, undefined, 400);
  });

  it("a worker identity: a claim's queue_not_allowed, its 403s, and the 401 without a token", async () => {
    const queue = randomKey("q").slice(0, 40);
    const worker = await createWorkerIdentity({ queues: [queue] });
    const { id } = await newJob(); // the default queue, which the identity does not take
    const token = { token: worker.token };
    expect((await call("POST", "/api/fleet/claim", { jobId: id, workerId: worker.id }, token, 200)).body)
      .toEqual({ claimed: false, reason: "queue_not_allowed" });
    await call("POST", "/api/fleet/claim", { jobId: id, workerId: "someone-else" }, token, 403);
    await call("POST", "/api/fleet/claim-next", { workerId: worker.id, queue: "other" }, token, 403);
    await call("POST", "/api/fleet/enqueue", { jobs: [{ probeKey: randomKey(), queue }] }, token, 403);
    await call("POST", "/api/fleet/sweep", {}, token, 403);
    await call("GET", "/api/fleet/stats", undefined, token, 403);
    await call("POST", "/api/fleet/claim", { jobId: id, workerId: "w" }, { token: null }, 401);
    await call("GET", "/api/fleet/flow", undefined, { token: null }, 401);
  });

  it("flow control's claim refusal (paused) and POST/GET /api/fleet/flow", async () => {
    const queue = randomKey("fq").slice(0, 40);
    const { id } = await newJob(queue);
    expect((await call("POST", "/api/fleet/flow", { queue, paused: true, rateLimit: { limit: 5, periodSeconds: 60 } }, undefined, 200)).body)
      .toMatchObject({ flow: { queue, paused: true } });
    expect((await call("POST", "/api/fleet/claim", { jobId: id, workerId: "w1" }, undefined, 200)).body).toEqual({ claimed: false, reason: "paused" });
    const state = await call("GET", `/api/fleet/flow?queue=${encodeURIComponent(queue)}`, undefined, undefined, 200);
    expect(state.body.queues).toHaveLength(1);
    await call("GET", "/api/fleet/flow?queue=no%20spaces", undefined, undefined, 400);
    await call("POST", "/api/fleet/flow", { queue, group: "g" }, undefined, 400);
    await call("POST", "/api/fleet/flow", { queue, paused: null, rateLimit: null, parkSeconds: 60 }, undefined, 200);
    await call("POST", "/api/fleet/flow", { group: randomKey("g"), concurrency: 2 }, undefined, 200);
  });

  it("enqueue, claim-next, heartbeat and complete (items renewed and released, and refused)", async () => {
    const prefix = randomKey("openapi-batch") + "/";
    const enqueued = await call("POST", "/api/fleet/enqueue", {
      jobs: [{ probeKey: `${prefix}a`, payload: { n: 1 }, priority: 5, uniqueKey: `${prefix}u`, timeoutSeconds: 60 }, { probeKey: `${prefix}b`, group: "g1" }],
    }, undefined, 200);
    expect(enqueued.body.jobs).toHaveLength(2);
    await call("POST", "/api/fleet/enqueue", { jobs: [] }, undefined, 400);

    const claimed = await call("POST", "/api/fleet/claim-next", { workerId: "bw", probeKeyPrefix: prefix, limit: 2, leaseSeconds: 60 }, undefined, 200);
    expect(claimed.body.jobs).toHaveLength(2);
    expect((await call("POST", "/api/fleet/claim-next", { workerId: "bw", probeKeyPrefix: prefix }, undefined, 200)).body).toEqual({ jobs: [] });
    await call("POST", "/api/fleet/claim-next", { workerId: "bw", limit: 0 }, undefined, 400);

    const [a, b] = claimed.body.jobs as { job: { id: string }; leaseToken: string }[];
    const beat = await call("POST", "/api/fleet/heartbeat", {
      workerId: "bw", leases: [{ jobId: a!.job.id, leaseToken: a!.leaseToken, progress: [1] }, { jobId: b!.job.id, leaseToken: "stale" }],
    }, undefined, 200);
    expect(beat.body.results.map((r: { renewed: boolean }) => r.renewed)).toEqual([true, false]);
    await call("POST", "/api/fleet/heartbeat", { workerId: "bw", leases: [] }, undefined, 400);

    const done = await call("POST", "/api/fleet/complete", {
      workerId: "bw",
      releases: [
        { jobId: a!.job.id, leaseToken: a!.leaseToken, status: "done", result: { ok: 1 } },
        { jobId: b!.job.id, leaseToken: "stale", status: "failed", error: "boom" },
        { jobId: b!.job.id, leaseToken: b!.leaseToken, status: "retry", rateLimitedFor: 5 },
      ],
    }, undefined, 200);
    expect(done.body.results.map((r: { released: boolean }) => r.released)).toEqual([true, false, true]);
    await call("POST", "/api/fleet/complete", { workerId: "bw", releases: [{ jobId: a!.job.id }] }, undefined, 400);

    // complete with claimNext: the results and the jobs claimed after them.
    await call("POST", "/api/fleet/enqueue", { jobs: [{ probeKey: `${prefix}c`, priority: 9 }, { probeKey: `${prefix}d`, priority: 8 }] }, undefined, 200);
    const [c] = (await call("POST", "/api/fleet/claim-next", { workerId: "bw", probeKeyPrefix: prefix }, undefined, 200)).body.jobs;
    const rode = await call("POST", "/api/fleet/complete", {
      workerId: "bw", releases: [{ jobId: c.job.id, leaseToken: c.leaseToken, status: "done" }],
      claimNext: { probeKeyPrefix: prefix, limit: 2, leaseSeconds: 60 },
    }, undefined, 200);
    expect(rode.body.jobs.map((j: { job: { probe_key: string } }) => j.job.probe_key)).toEqual([`${prefix}d`]);
    await call("POST", "/api/fleet/complete", {
      workerId: "bw", releases: [{ jobId: c.job.id, status: "done" }], claimNext: { limit: 0 },
    }, undefined, 400);
  });

  it("cancel, retry (retried, refused with and without a reason)", async () => {
    const { id, prefix } = await newJob();
    expect((await call("POST", "/api/fleet/retry", { jobId: id }, undefined, 200)).body).toEqual({ retried: false });
    expect((await call("POST", "/api/fleet/cancel", { jobId: id }, undefined, 200)).body).toMatchObject({ cancelled: true });
    expect((await call("POST", "/api/fleet/cancel", { jobId: id }, undefined, 200)).body).toEqual({ cancelled: false });
    expect((await call("POST", "/api/fleet/retry", { jobId: id }, undefined, 200)).body).toMatchObject({ retried: true });
    await call("POST", "/api/fleet/cancel", {}, undefined, 400);
    await call("POST", "/api/fleet/retry", { jobId: 5 }, undefined, 400);

    // unique_key_taken: a cancelled job whose key a newer live job holds.
    const key = `${prefix}unique`;
    const [first] = await enqueueOk([{ probeKey: `${prefix}u1`, uniqueKey: key }]);
    await call("POST", "/api/fleet/cancel", { jobId: first!.id }, undefined, 200);
    await enqueueOk([{ probeKey: `${prefix}u2`, uniqueKey: key }]);
    expect((await call("POST", "/api/fleet/retry", { jobId: first!.id }, undefined, 200)).body).toEqual({ retried: false, reason: "unique_key_taken" });
  });

  it("sweep (a job it requeues), maintenance, stats (JSON and Prometheus), completions", async () => {
    const { id, prefix } = await newJob();
    expect((await claimNext({ workerId: "dead", probeKeyPrefix: prefix })).status).toBe(200);
    await patchJob(id, { lease_expires_at: pastDate() });
    const swept = await call("POST", "/api/fleet/sweep", { probeKeyPrefix: prefix }, undefined, 200);
    expect(swept.body.jobs).toHaveLength(1);
    await call("POST", "/api/fleet/sweep", { probeKeyPrefix: 1 }, undefined, 400);

    const tick = await call("POST", "/api/fleet/maintenance", {});
    expect([200, 503]).toContain(tick.status);

    await call("GET", `/api/fleet/stats?probeKeyPrefix=${encodeURIComponent(prefix)}`, undefined, undefined, 200);
    await call("GET", "/api/fleet/stats", undefined, undefined, 200);
    await call("GET", "/api/fleet/stats?format=xml", undefined, undefined, 400);
    const text = await get("/api/fleet/stats?format=prometheus");
    expect(text.status).toBe(200);
    expect(typeof text.body).toBe("string");
    expectFits("GET", "/api/fleet/stats", text, "text/plain");

    await call("GET", "/api/fleet/completions?windowSeconds=60&bucketSeconds=10", undefined, undefined, 200);
    await call("GET", "/api/fleet/completions?windowSeconds=0", undefined, undefined, 400);
  });

  it("a body over PocketBase's limit: the 413", async () => {
    const res = await post("/api/fleet/claim-next", undefined, { rawBody: JSON.stringify({ workerId: "w", pad: "x".repeat(MAX_REQUEST_BODY_BYTES) }) });
    expect(res.status).toBe(413);
    expectFits("POST", "/api/fleet/claim-next", res);
  });

  it("checked every route's 200 against its schema (the tests above run in order, in one worker)", () => {
    const missing = ROUTES.filter((r) => !checked.has(`${r.method} ${r.path} 200`)).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
  });
});
