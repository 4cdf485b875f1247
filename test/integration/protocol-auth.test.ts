// Only admins may call the fleet endpoints: no token, a bad token and a user
// (auth collection record) token get 401 and the row stays as it was.
import { beforeAll, describe, expect, inject, it } from "vitest";
import { createJob, futureDate, getJob, post, type JobRecord } from "./support/fleet-api";
import { ENDPOINTS, heldJob, type Endpoint } from "./support/protocol";
import { userRecordToken } from "./support/worker-identities";

let userToken = "";

beforeAll(async () => {
  userToken = await userRecordToken();
});

/** A valid admin request for each endpoint, on a row it would change. */
async function validRequest(endpoint: Endpoint): Promise<{ row: JobRecord; body: object }> {
  if (endpoint === "/api/fleet/claim") {
    const row = await createJob();
    return { row, body: { jobId: row.id, workerId: "w1" } };
  }
  const row = await heldJob("w1", { lease_expires_at: futureDate() });
  return { row, body: { jobId: row.id, workerId: "w1", status: "done" } };
}

function tamperedAdminToken(): string {
  // Same header and claims, broken signature: a token PocketBase must not trust.
  // (The signature's first character: the last one may only carry padding bits.)
  const [header, claims, signature = ""] = inject("adminToken").split(".");
  const first = signature.startsWith("A") ? "B" : "A";
  return `${header}.${claims}.${first}${signature.slice(1)}`;
}

const TOKENS: [string, () => string | null][] = [
  ["no token", () => null],
  ["a garbage token", () => "not-a-token"],
  ["an admin token with a broken signature", tamperedAdminToken],
  ["a user record token", () => userToken],
];

describe.each(ENDPOINTS)("%s authorization", (endpoint) => {
  it.each(TOKENS)("answers 401 to %s and changes nothing", async (_what, token) => {
    const { row, body } = await validRequest(endpoint);
    const res = await post(endpoint, body, { token: token() });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 401 });
    expect(await getJob(row.id)).toEqual(row);
  });

  it("accepts the admin token (the same request goes through)", async () => {
    const { row, body } = await validRequest(endpoint);
    const res = await post(endpoint, body);
    expect(res.status).toBe(200);
    expect(await getJob(row.id)).not.toEqual(row);
  });
});
