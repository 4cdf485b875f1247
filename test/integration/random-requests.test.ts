// Property: whatever body a caller sends (random JSON values and shapes, wrong
// types, raw text that may not be JSON), the endpoints answer 200 or 400, never
// a 5xx, and a 400 leaves the row it may name exactly as it was.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { futureDate, getJob, post, type ApiResponse, type JobRecord } from "./support/fleet-api";
import { ENDPOINTS, heldJob, type Endpoint } from "./support/protocol";

const RUNS = 100;
const HOLDER = "w1";

/** Answer shapes of a 200, per endpoint. */
const OK_KEY: Record<Endpoint, string> = {
  "/api/fleet/claim": "claimed",
  "/api/fleet/renew": "renewed",
  "/api/fleet/release": "released",
};

/** A field value: mostly plausible, often the wrong type, sometimes anything JSON. */
function fieldOf(plausible: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 3, arbitrary: plausible },
    { weight: 1, arbitrary: fc.constantFrom("", null, 0, -1, true, false, [], {}) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  );
}

/** Bodies that name the test's row (or not), with any mix of right and wrong fields. */
function bodies(jobId: string): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(
    {
      jobId: fieldOf(fc.constantFrom(jobId, jobId.toUpperCase(), " " + jobId)),
      workerId: fieldOf(fc.constantFrom(HOLDER, "w2", "")),
      status: fieldOf(fc.constantFrom("done", "failed", "pending", "DONE", "claimed")),
      leaseSeconds: fieldOf(fc.oneof(fc.double({ noNaN: true }), fc.integer(), fc.string())),
      extra: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  );
}

/** Raw payloads: random text, broken JSON, JSON of any type, each with some content type. */
function rawPayloads(jobId: string): fc.Arbitrary<{ raw: string; contentType: string }> {
  const text = fc.oneof(
    fc.string(),
    fc.string({ unit: "binary" }),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.jsonValue().map((v) => JSON.stringify(v).slice(0, -1)), // truncated: invalid JSON (or a prefix)
    fc.constant(JSON.stringify({ jobId, workerId: HOLDER, status: "done" })).map((s) => s + ","),
  );
  const contentType = fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "application/octet-stream");
  return fc.record({ raw: text, contentType });
}

let rows: Record<Endpoint, JobRecord>;

beforeAll(async () => {
  // A live lease held by HOLDER: valid requests would claim(alreadyHeld)/renew/release it.
  const entries = await Promise.all(ENDPOINTS.map(async (e) => [e, await heldJob(HOLDER, { lease_expires_at: futureDate(3_600_000) })] as const));
  rows = Object.fromEntries(entries) as Record<Endpoint, JobRecord>;
});

async function checkAnswer(endpoint: Endpoint, send: () => Promise<ApiResponse>): Promise<void> {
  const jobId = rows[endpoint].id;
  const before = await getJob(jobId);
  const res = await send();
  expect([200, 400], `HTTP ${res.status}: ${JSON.stringify(res.body)}`).toContain(res.status);
  if (res.status === 400) {
    expect(typeof res.body?.error).toBe("string");
    expect(res.body.error).not.toBe("");
    expect(await getJob(jobId)).toEqual(before);
  } else {
    expect(typeof res.body?.[OK_KEY[endpoint]]).toBe("boolean");
  }
}

describe.each(ENDPOINTS)("%s with random input", (endpoint) => {
  it(`answers 200 or 400 to random JSON bodies, and a 400 changes nothing (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(bodies(rows[endpoint].id), async (body) => {
        await checkAnswer(endpoint, () => post(endpoint, body));
      }),
      { numRuns: RUNS },
    );
  });

  it(`answers 200 or 400 to random raw bodies (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(rawPayloads(rows[endpoint].id), async ({ raw, contentType }) => {
        await checkAnswer(endpoint, () => post(endpoint, undefined, { rawBody: raw, contentType }));
      }),
      { numRuns: RUNS },
    );
  });

  it(`answers 200 or 400 to random JSON values of any type (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        await checkAnswer(endpoint, () => post(endpoint, value));
      }),
      { numRuns: RUNS },
    );
  });
});
