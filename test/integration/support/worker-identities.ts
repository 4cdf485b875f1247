// Worker identities (src/lib/identity.ts) for the integration tests: records
// of fleet_workers created through the record API as the suite's admin, each
// signed in with PocketBase's own auth-with-password, and a token of another
// auth collection to compare with.
import { expect } from "vitest";
import { WORKER_FIELDS, WORKERS_COLLECTION } from "../../../src/lib/identity";
import { get, post, randomKey, send, type ApiResponse, type RequestOptions } from "./fleet-api";

const WORKERS = `/api/collections/${WORKERS_COLLECTION}`;

export interface WorkerIdentity {
  id: string;
  name: string;
  password: string;
  /** Raw, as PocketBase takes it in Authorization. */
  token: string;
}

export interface WorkerIdentityFields {
  queues?: string[];
  canEnqueue?: boolean;
  disabled?: boolean;
}

/**
 * A new identity, signed in (before it is disabled, when `disabled` asks for
 * that: a token that verifies); on the shared server unless `opts` names another.
 */
export async function createWorkerIdentity(fields: WorkerIdentityFields = {}, opts?: RequestOptions): Promise<WorkerIdentity> {
  const name = randomKey("worker").replace(/[^\w.-]/g, "-");
  const password = `pw-${randomKey("secret")}`;
  const created = await post(`${WORKERS}/records`, {
    [WORKER_FIELDS.name]: name, password, passwordConfirm: password,
    [WORKER_FIELDS.queues]: fields.queues ?? [], [WORKER_FIELDS.canEnqueue]: fields.canEnqueue ?? false,
  }, opts);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const auth = await signInWorker(name, password, opts?.baseUrl);
  expect(auth.status, JSON.stringify(auth.body)).toBe(200);
  const identity = { id: created.body.id as string, name, password, token: auth.body.token as string };
  if (fields.disabled) await updateWorkerIdentity(identity.id, { [WORKER_FIELDS.disabled]: true }, opts);
  return identity;
}

export function signInWorker(name: string, password: string, baseUrl?: string): Promise<ApiResponse> {
  return post(`${WORKERS}/auth-with-password`, { identity: name, password }, { token: null, ...(baseUrl === undefined ? {} : { baseUrl }) });
}

/** Admin PATCH of an identity's fields (disable, queues, a new password). */
export async function updateWorkerIdentity(id: string, fields: Record<string, unknown>, opts?: RequestOptions): Promise<ApiResponse> {
  const res = await send("PATCH", `${WORKERS}/records/${id}`, fields, opts);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res;
}

export async function deleteWorkerIdentity(id: string): Promise<void> {
  const res = await send("DELETE", `${WORKERS}/records/${id}`, undefined);
  expect(res.status, JSON.stringify(res.body)).toBe(204);
}

export async function getWorkerRecord(id: string, opts?: RequestOptions): Promise<ApiResponse> {
  return get(`${WORKERS}/records/${id}`, opts);
}

const USER_PASSWORD = "user-password-123";

/** A record token of the default `users` auth collection (created as an auth collection when absent). */
export async function userRecordToken(): Promise<string> {
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
