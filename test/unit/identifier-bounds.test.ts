// Every identifier text the endpoints accept has a bound (src/lib/queue.ts);
// one byte over it is a 400 naming the field, checked after the reference's
// own checks (so its messages come first) and before anything is written.
import { describe, expect, it } from "vitest";
import {
  MAX_JOB_ID_BYTES, MAX_LEASE_TOKEN_BYTES, MAX_PROBE_KEY_BYTES, MAX_UNIQUE_KEY_BYTES, MAX_WORKER_ID_BYTES,
} from "../../src/lib/queue";
import {
  prefixError, tooLongError, validateClaimNextRequest, validateClaimRequest, validateCompleteRequest, validateEnqueueRequest,
  validateHeartbeatRequest, validateJobIdRequest, validateReleaseRequest, validateRenewRequest, validateSweepRequest,
} from "../../src/lib/validate";

const NOW = Date.UTC(2026, 11, 1);
/** A text of exactly `bytes` UTF-8 bytes, with multi-byte characters (é is 2 bytes) so bytes, not characters, are counted. */
const text = (bytes: number) => "é".repeat(Math.floor(bytes / 2)) + "x".repeat(bytes % 2);

const errorOf = (v: { ok: boolean; error?: string }) => (v.ok ? null : v.error);

describe("identifier bounds", () => {
  it.each<[string, number, (value: string) => { ok: boolean; error?: string }]>([
    ["workerId", MAX_WORKER_ID_BYTES, (w) => validateClaimRequest({ jobId: "j", workerId: w })],
    ["workerId", MAX_WORKER_ID_BYTES, (w) => validateRenewRequest({ jobId: "j", workerId: w })],
    ["workerId", MAX_WORKER_ID_BYTES, (w) => validateReleaseRequest({ jobId: "j", workerId: w, status: "done" })],
    ["workerId", MAX_WORKER_ID_BYTES, (w) => validateClaimNextRequest({ workerId: w })],
    ["workerId", MAX_WORKER_ID_BYTES, (w) => validateHeartbeatRequest({ workerId: w, leases: [{ jobId: "j" }] })],
    ["workerId", MAX_WORKER_ID_BYTES, (w) => validateCompleteRequest({ workerId: w, releases: [{ jobId: "j", status: "done" }] })],
    ["jobId", MAX_JOB_ID_BYTES, (j) => validateClaimRequest({ jobId: j, workerId: "w" })],
    ["jobId", MAX_JOB_ID_BYTES, (j) => validateJobIdRequest({ jobId: j })],
    ["leaseToken", MAX_LEASE_TOKEN_BYTES, (t) => validateRenewRequest({ jobId: "j", workerId: "w", leaseToken: t })],
    ["leaseToken", MAX_LEASE_TOKEN_BYTES, (t) => validateReleaseRequest({ jobId: "j", workerId: "w", status: "done", leaseToken: t })],
    ["probeKeyPrefix", MAX_PROBE_KEY_BYTES, (p) => validateClaimNextRequest({ workerId: "w", probeKeyPrefix: p })],
    ["probeKeyPrefix", MAX_PROBE_KEY_BYTES, (p) => validateSweepRequest({ probeKeyPrefix: p })],
    ["probeKey", MAX_PROBE_KEY_BYTES, (k) => validateEnqueueRequest({ jobs: [{ probeKey: k }] }, NOW)],
    ["uniqueKey", MAX_UNIQUE_KEY_BYTES, (u) => validateEnqueueRequest({ jobs: [{ probeKey: "k", uniqueKey: u }] }, NOW)],
  ])("%s: %d bytes pass, one more is a 400 naming it", (name, max, validate) => {
    expect(errorOf(validate(text(max)))).toBeNull();
    const error = errorOf(validate(text(max + 1)));
    expect(error).toContain(`${name} must be at most ${max} bytes`);
  });

  it("names the enqueue item", () => {
    const jobs = [{ probeKey: "ok" }, { probeKey: text(MAX_PROBE_KEY_BYTES + 1) }];
    expect(errorOf(validateEnqueueRequest({ jobs }, NOW))).toBe(`jobs[1]: probeKey must be at most ${MAX_PROBE_KEY_BYTES} bytes (UTF-8)`);
  });

  it("keeps the reference's messages first: a non-string id is still its 400, whatever its size", () => {
    expect(errorOf(validateClaimRequest({ jobId: 7, workerId: text(10_000) }))).toBe("jobId must be a string");
    expect(errorOf(validateClaimRequest({ workerId: text(10_000) }))).toBe("jobId and workerId are required");
  });

  it("a 1 MB workerId is refused without being copied anywhere (the claim-next that took 13 s and 1 GB)", () => {
    const huge = "w".repeat(1_048_576);
    expect(errorOf(validateClaimNextRequest({ workerId: huge, limit: 100 }))).toBe(`workerId must be at most ${MAX_WORKER_ID_BYTES} bytes (UTF-8)`);
  });

  it("the query-string prefix of stats and completions has the same bound", () => {
    expect(prefixError(text(MAX_PROBE_KEY_BYTES))).toBeNull();
    expect(prefixError(text(MAX_PROBE_KEY_BYTES + 1))).toContain("probeKeyPrefix");
    expect(tooLongError("x", "", 0)).toBeNull();
  });
});
