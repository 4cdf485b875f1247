// Only admins may call the fleet endpoints: no token, a bad token and a user
// (auth collection record) token get 401 and the row stays as it was.
import { beforeAll, describe, expect, inject, it } from "vitest";
import { createJob, futureDate, get, getJob, post, randomKey, type JobRecord } from "./support/fleet-api";
import { ENDPOINTS, heldJob, type Endpoint } from "./support/protocol";

const USER_PASSWORD = "user-password-123";
let userToken = "";

/** A record token of the default `users` auth collection (created as an auth collection when absent). */
async function userRecordToken(): Promise<string> {
  let collection = "users";
  const existing = await get(`/api/collections/${collection}`);
  if (existing.status === 404) {
    collection = "fleet_test_users";
    const created = await post("/api/collections", { name: collection, type: "auth" });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
  } else {
    expect(existing.body.type).toBe("auth");
  }
  const email = `${randomKey("user")}@example.com`;
  const user = await post(`/api/collections/${collection}/records`, {
    email, password: USER_PASSWORD, passwordConfirm: USER_PASSWORD, verified: true,
  });
  expect(user.status, JSON.stringify(user.body)).toBe(200);
  const auth = await post(`/api/collections/${collection}/auth-with-password`, { identity: email, password: USER_PASSWORD }, { token: null });
  expect(auth.status, JSON.stringify(auth.body)).toBe(200);
  expect(typeof auth.body.token).toBe("string");
  return auth.body.token as string;
}

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
