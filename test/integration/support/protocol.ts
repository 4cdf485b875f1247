// Calls and assertions shared by the protocol tests: the three endpoints with
// their bodies, rows set up in a given state, and checks on what was stored.
import { expect } from "vitest";
import { parsePbDate } from "../../../src/lib/lease";
import {
  createJob,
  futureDate,
  post,
  type ApiResponse,
  type JobFields,
  type JobRecord,
  type RequestOptions,
} from "./fleet-api";

export const ENDPOINTS = ["/api/fleet/claim", "/api/fleet/renew", "/api/fleet/release"] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

export function claim(jobId: string, workerId: string, extra: object = {}, opts?: RequestOptions): Promise<ApiResponse> {
  return post("/api/fleet/claim", { jobId, workerId, ...extra }, opts);
}

export function renew(jobId: string, workerId: string, extra: object = {}, opts?: RequestOptions): Promise<ApiResponse> {
  return post("/api/fleet/renew", { jobId, workerId, ...extra }, opts);
}

export function release(jobId: string, workerId: string, status: string, opts?: RequestOptions): Promise<ApiResponse> {
  return post("/api/fleet/release", { jobId, workerId, status }, opts);
}

/**
 * pb-fleet adds a fencing `leaseToken` to winning claims; the reference has none.
 * Protocol assertions compare the rest.
 */
export function withoutLeaseToken(body: unknown): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return body;
  const { leaseToken: _token, ...rest } = body as Record<string, unknown>;
  return rest;
}

/** A row held by `workerId` with a live lease (60 s unless fields say otherwise). */
export function heldJob(workerId: string, fields: JobFields = {}, opts?: RequestOptions): Promise<JobRecord> {
  return createJob(
    { status: "claimed", claimed_by: workerId, lease_expires_at: futureDate(), version: 1, ...fields },
    opts,
  );
}

/** The `job` view of a stored row, as every successful answer carries it. */
export function viewOf(row: JobRecord) {
  return {
    id: row.id,
    probe_key: row.probe_key,
    status: row.status,
    claimed_by: row.claimed_by,
    lease_expires_at: row.lease_expires_at,
    version: row.version,
  };
}

/**
 * The row after a successful write is the row before plus `changes`, and
 * nothing else moved. `updated` always moves; `lease_token` is fencing's
 * (fencing.test.ts checks it).
 */
export function expectRowChanged(after: JobRecord, before: JobRecord, changes: Partial<Record<keyof JobRecord, unknown>>): void {
  const strip = (row: JobRecord) => {
    const { updated: _updated, lease_token: _token, ...rest } = row;
    return rest;
  };
  expect(strip(after)).toEqual({ ...strip(before), ...changes });
}

/** Slack for the request's transit and ms rounding; server and tests share this host's clock. */
export const CLOCK_SLACK_MS = 500;

/** A stored date that the server stamped while the request [t0, t1] was in flight, plus offsetMs. */
export function expectStampedDuring(pbDate: string, t0: number, t1: number, offsetMs = 0): void {
  const t = parsePbDate(pbDate);
  expect(t, `"${pbDate}" is not a PocketBase date`).not.toBeNull();
  expect(t!).toBeGreaterThanOrEqual(t0 + offsetMs - CLOCK_SLACK_MS);
  expect(t!).toBeLessThanOrEqual(t1 + offsetMs + CLOCK_SLACK_MS);
}

/** Runs fn, returning its result and the wall-clock window it ran in. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ result: T; t0: number; t1: number }> {
  const t0 = Date.now();
  const result = await fn();
  return { result, t0, t1: Date.now() };
}
