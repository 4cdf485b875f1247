// Oversized input changes nothing: an identifier over its bound (src/lib/queue.ts)
// is a 400 naming it, and a body over PocketBase's limit is a 413 with a
// sentence (not 0.22's misreading of the cut body as an empty one, "workerId
// is required"), on both hooks lines. The job a refused call names is left
// exactly as it was.
import { describe, expect, it } from "vitest";
import {
  MAX_JOB_ID_BYTES, MAX_LEASE_TOKEN_BYTES, MAX_PROBE_KEY_BYTES, MAX_REQUEST_BODY_BYTES, MAX_RESULT_BYTES, MAX_UNIQUE_KEY_BYTES,
  MAX_ERROR_BYTES, MAX_WORKER_ID_BYTES,
  REQUEST_TOO_LARGE,
} from "../../src/lib/queue";
import { ADMIN_ONLY, ENQUEUE_NOT_ALLOWED } from "../../src/lib/identity";
import { claimNext, enqueueOk, get, getQueueJob, post, randomKey } from "./support/fleet-api";
import { createWorkerIdentity } from "./support/worker-identities";

const over = (bytes: number) => "w".repeat(bytes + 1);

async function heldJob() {
  const prefix = randomKey("oversized") + "/";
  const [job] = await enqueueOk([{ probeKey: `${prefix}a` }]);
  const claimed = await claimNext({ workerId: "holder", probeKeyPrefix: prefix, leaseSeconds: 60 });
  expect(claimed.status).toBe(200);
  const leaseToken = claimed.body.jobs[0].leaseToken as string;
  return { id: job!.id, prefix, leaseToken, before: await getQueueJob(job!.id) };
}

describe("oversized identifiers and bodies", () => {
  it("every endpoint answers an identifier over its bound with a 400 naming it, and the job is unchanged", async () => {
    const { id, prefix, leaseToken, before } = await heldJob();
    const cases: [string, unknown, string][] = [
      ["/api/fleet/claim", { jobId: id, workerId: over(MAX_WORKER_ID_BYTES) }, "workerId"],
      ["/api/fleet/renew", { jobId: id, workerId: "holder", leaseToken: over(MAX_LEASE_TOKEN_BYTES) }, "leaseToken"],
      ["/api/fleet/release", { jobId: over(MAX_JOB_ID_BYTES), workerId: "holder", status: "done" }, "jobId"],
      ["/api/fleet/claim-next", { workerId: over(MAX_WORKER_ID_BYTES), limit: 100 }, "workerId"],
      ["/api/fleet/claim-next", { workerId: "x", probeKeyPrefix: over(MAX_PROBE_KEY_BYTES) }, "probeKeyPrefix"],
      ["/api/fleet/heartbeat", { workerId: over(MAX_WORKER_ID_BYTES), leases: [{ jobId: id, leaseToken }] }, "workerId"],
      ["/api/fleet/complete", { workerId: over(MAX_WORKER_ID_BYTES), releases: [{ jobId: id, leaseToken, status: "done" }] }, "workerId"],
      ["/api/fleet/enqueue", { jobs: [{ probeKey: over(MAX_PROBE_KEY_BYTES) }] }, "jobs[0]: probeKey"],
      ["/api/fleet/enqueue", { jobs: [{ probeKey: `${prefix}b`, uniqueKey: over(MAX_UNIQUE_KEY_BYTES) }] }, "jobs[0]: uniqueKey"],
      ["/api/fleet/cancel", { jobId: over(MAX_JOB_ID_BYTES) }, "jobId"],
      ["/api/fleet/sweep", { probeKeyPrefix: over(MAX_PROBE_KEY_BYTES) }, "probeKeyPrefix"],
    ];
    for (const [path, body, name] of cases) {
      const res = await post(path, body);
      expect(res.status, `${path} ${name}`).toBe(400);
      expect(res.body.error, path).toMatch(new RegExp(`^${name.replace(/[[\]]/g, "\\$&")} must be at most \\d+ bytes`));
    }
    for (const path of ["/api/fleet/stats", "/api/fleet/completions"]) {
      const res = await get(`${path}?probeKeyPrefix=${over(MAX_PROBE_KEY_BYTES)}`);
      expect(res.status, path).toBe(400);
      expect(res.body.error).toMatch(/^probeKeyPrefix must be at most/);
    }
    expect(await getQueueJob(id)).toEqual(before);
    expect((await get(`/api/collections/probe_jobs/records?filter=${encodeURIComponent(`probe_key="${prefix}b"`)}`)).body.totalItems).toBe(0);
  });

  it("sizes are counted in UTF-8 bytes by the server (goja) exactly as the client counts them", async () => {
    // é is 2 bytes, 日 3, 😀 4 (a surrogate pair): at the bound passes, one byte over is refused.
    for (const unit of ["é", "日", "😀"]) {
      const { id, leaseToken } = await heldJob();
      const bytes = Buffer.byteLength(unit);
      const fitting = unit.repeat(Math.floor(MAX_ERROR_BYTES / bytes)) + "x".repeat(MAX_ERROR_BYTES % bytes);
      expect(Buffer.byteLength(fitting)).toBe(MAX_ERROR_BYTES);
      const tooLong = await post("/api/fleet/release", { jobId: id, workerId: "holder", leaseToken, status: "failed", error: fitting + "x" });
      expect(tooLong.status, unit).toBe(400);
      expect(tooLong.body.error).toBe(`error must be at most ${MAX_ERROR_BYTES} bytes`);
      const ok = await post("/api/fleet/release", { jobId: id, workerId: "holder", leaseToken, status: "failed", error: fitting });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect((await getQueueJob(id)).last_error).toBe(fitting);
    }
  });

  it("a 1 MB workerId on claim-next with limit 100 is refused at once (it once took 13 s and 900 MB)", async () => {
    const started = Date.now();
    const res = await claimNext({ workerId: "w".repeat(1_048_576), limit: 100 });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(`workerId must be at most ${MAX_WORKER_ID_BYTES} bytes (UTF-8)`);
    console.log(`[oversized-input] 1 MB workerId refused in ${Date.now() - started} ms`);
  });

  it("a body over PocketBase's limit is a 413 with a sentence on every POST route, and writes nothing", async () => {
    const { id, leaseToken, before } = await heldJob();
    const big = "x".repeat(MAX_REQUEST_BODY_BYTES + 16);
    const body = JSON.stringify({ workerId: "holder", jobId: id, status: "done", releases: [{ jobId: id, leaseToken, status: "done", result: big }] });
    for (const path of ["/api/fleet/complete", "/api/fleet/claim-next", "/api/fleet/release", "/api/fleet/enqueue"]) {
      const started = Date.now();
      const res = await post(path, undefined, { rawBody: body });
      console.log(`[oversized-input] ${path}: ${res.status} in ${Date.now() - started} ms`);
      expect(res.status, path).toBe(413);
      expect(res.body, path).toEqual({ error: REQUEST_TOO_LARGE });
    }
    expect(await getQueueJob(id)).toEqual(before);
    // A body under the limit is read and judged as usual (a 400 for the oversized result, not a 413).
    const under = JSON.stringify({ workerId: "holder", releases: [{ jobId: id, leaseToken, status: "done", result: "x".repeat(2 * MAX_RESULT_BYTES) }] });
    const res = await post("/api/fleet/complete", undefined, { rawBody: under });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^releases\[0\]: result must be at most/);
    expect(await getQueueJob(id)).toEqual(before);
  });

  it("an anonymous oversized body is still a 401", async () => {
    const res = await post("/api/fleet/complete", undefined, { rawBody: "x".repeat(MAX_REQUEST_BODY_BYTES + 16), token: null });
    expect(res.status).toBe(401);
  });

  it("a worker identity's oversized body is the 413 on its routes and its 403 on the routes it may not call (both lines alike)", async () => {
    const worker = await createWorkerIdentity();
    const big = "x".repeat(MAX_REQUEST_BODY_BYTES + 16);
    const complete = await post("/api/fleet/complete", undefined, { rawBody: big, token: worker.token });
    expect(complete).toEqual({ status: 413, body: { error: REQUEST_TOO_LARGE } });
    for (const [path, error] of [["/api/fleet/sweep", ADMIN_ONLY], ["/api/fleet/enqueue", ENQUEUE_NOT_ALLOWED]] as const) {
      expect(await post(path, undefined, { rawBody: big, token: worker.token }), path).toEqual({ status: 403, body: { error } });
    }
  });
});
