import { describe, expect, it } from "vitest";
import {
  MAX_CLAIM_NEXT_LIMIT,
  readPrefix,
  validateClaimNextRequest,
  validateClaimRequest,
  validateReleaseRequest,
  validateRenewRequest,
  validateSweepRequest,
} from "../../src/lib/validate";

// The reference hooks' 400 messages, word for word.
const REQUIRED = "jobId and workerId are required";
const WORKER_TYPE = "workerId must be a string";
const JOB_TYPE = "jobId must be a string";
const STATUS_REQUIRED = "status is required (done|failed|pending)";
const STATUS_INVALID = "status must be done|failed|pending";
const TOKEN_INVALID = "leaseToken must be a non-empty string when given";
const PREFIX_INVALID = "probeKeyPrefix must be a string";
const LIMIT_INVALID = "limit must be an integer from 1 to 100";

/** Id checks shared by claim, renew and release, in the reference's order. */
const ID_CASES: [string, unknown, string][] = [
  ["no body", undefined, REQUIRED],
  ["a null body", null, REQUIRED],
  ["a string body", "jobId=j", REQUIRED],
  ["an array body", ["j", "w"], REQUIRED],
  ["an empty object", {}, REQUIRED],
  ["jobId missing", { workerId: "w" }, REQUIRED],
  ["workerId missing", { jobId: "j" }, REQUIRED],
  ["jobId empty", { jobId: "", workerId: "w" }, REQUIRED],
  ["workerId empty", { jobId: "j", workerId: "" }, REQUIRED],
  ["jobId 0", { jobId: 0, workerId: "w" }, REQUIRED],
  ["workerId false", { jobId: "j", workerId: false }, REQUIRED],
  ["workerId null", { jobId: "j", workerId: null }, REQUIRED],
  // Presence is checked before types: a falsy id wins over a wrongly typed one.
  ["jobId empty and workerId a number", { jobId: "", workerId: 7 }, REQUIRED],
  // workerId's type is checked before jobId's.
  ["both numbers", { jobId: 5, workerId: 7 }, WORKER_TYPE],
  ["workerId an object", { jobId: "j", workerId: { id: "w" } }, WORKER_TYPE],
  ["workerId true", { jobId: "j", workerId: true }, WORKER_TYPE],
  ["jobId a number", { jobId: 5, workerId: "w" }, JOB_TYPE],
  ["jobId an array", { jobId: ["j"], workerId: "w" }, JOB_TYPE],
];

describe("validateClaimRequest", () => {
  it.each(ID_CASES)("%s -> %j", (_name, body, error) => {
    expect(validateClaimRequest(body)).toEqual({ ok: false, error });
  });

  it("passes leaseSeconds through raw (clampLeaseSeconds decides) and ignores leaseToken", () => {
    expect(validateClaimRequest({ jobId: "j", workerId: "w", leaseSeconds: "soon", leaseToken: 5 })).toEqual({
      ok: true,
      value: { jobId: "j", workerId: "w", leaseSeconds: "soon" },
    });
    expect(validateClaimRequest({ jobId: "j", workerId: "w" })).toEqual({
      ok: true,
      value: { jobId: "j", workerId: "w", leaseSeconds: undefined },
    });
  });
});

describe("validateRenewRequest", () => {
  it.each(ID_CASES)("%s -> %j", (_name, body, error) => {
    expect(validateRenewRequest(body)).toEqual({ ok: false, error });
  });

  it("checks the ids before the token", () => {
    expect(validateRenewRequest({ jobId: 5, workerId: "w", leaseToken: "" })).toEqual({ ok: false, error: JOB_TYPE });
  });

  it.each<[string, unknown]>([
    ["empty", ""],
    ["a number", 5],
    ["null", null],
    ["false", false],
    ["an object", { token: "t" }],
  ])("refuses a leaseToken that is %s", (_name, leaseToken) => {
    expect(validateRenewRequest({ jobId: "j", workerId: "w", leaseToken })).toEqual({ ok: false, error: TOKEN_INVALID });
  });

  it("accepts no token (unfenced, like the reference's clients) and a real one", () => {
    expect(validateRenewRequest({ jobId: "j", workerId: "w", leaseSeconds: 60 })).toEqual({
      ok: true,
      value: { jobId: "j", workerId: "w", leaseSeconds: 60, leaseToken: undefined },
    });
    expect(validateRenewRequest({ jobId: "j", workerId: "w", leaseToken: "tok" })).toEqual({
      ok: true,
      value: { jobId: "j", workerId: "w", leaseSeconds: undefined, leaseToken: "tok" },
    });
  });
});

describe("validateReleaseRequest", () => {
  it.each(ID_CASES.map(([name, body, error]): [string, unknown, string] => [
    name,
    typeof body === "object" && body !== null && !Array.isArray(body) ? { ...body, status: "done" } : body,
    error,
  ]))("%s -> %j", (_name, body, error) => {
    expect(validateReleaseRequest(body)).toEqual({ ok: false, error });
  });

  it("checks the ids before the status", () => {
    expect(validateReleaseRequest({ jobId: 5, workerId: "w" })).toEqual({ ok: false, error: JOB_TYPE });
    expect(validateReleaseRequest({ workerId: "w", status: "bogus" })).toEqual({ ok: false, error: REQUIRED });
  });

  it.each<[string, unknown, string]>([
    ["missing", undefined, STATUS_REQUIRED],
    ["empty", "", STATUS_REQUIRED],
    ["null", null, STATUS_REQUIRED],
    ["0", 0, STATUS_REQUIRED],
    ["a held status", "claimed", STATUS_INVALID],
    ["running", "running", STATUS_INVALID],
    ["upper case", "DONE", STATUS_INVALID],
    ["padded", " done", STATUS_INVALID],
    ["a number", 1, STATUS_INVALID],
    ["true", true, STATUS_INVALID],
    ["an array holding a valid one", ["done"], STATUS_INVALID],
  ])("status %s -> %j", (_name, status, error) => {
    expect(validateReleaseRequest({ jobId: "j", workerId: "w", status })).toEqual({ ok: false, error });
  });

  it("checks the status before the token", () => {
    expect(validateReleaseRequest({ jobId: "j", workerId: "w", status: "x", leaseToken: "" })).toEqual({
      ok: false,
      error: STATUS_INVALID,
    });
  });

  it.each<[string, unknown]>([
    ["empty", ""],
    ["a number", 5],
    ["null", null],
  ])("refuses a leaseToken that is %s", (_name, leaseToken) => {
    expect(validateReleaseRequest({ jobId: "j", workerId: "w", status: "done", leaseToken })).toEqual({
      ok: false,
      error: TOKEN_INVALID,
    });
  });

  it.each(["done", "failed", "pending"] as const)("accepts status %s, with and without a token", (target) => {
    expect(validateReleaseRequest({ jobId: "j", workerId: "w", status: target })).toEqual({
      ok: true,
      value: { jobId: "j", workerId: "w", target, leaseToken: undefined },
    });
    expect(validateReleaseRequest({ jobId: "j", workerId: "w", status: target, leaseToken: "tok" })).toEqual({
      ok: true,
      value: { jobId: "j", workerId: "w", target, leaseToken: "tok" },
    });
  });
});

describe("validateClaimNextRequest", () => {
  it("caps limit at 100", () => {
    expect(MAX_CLAIM_NEXT_LIMIT).toBe(100);
  });

  it.each<[string, unknown, string]>([
    ["no body", undefined, "workerId is required"],
    ["workerId missing", { limit: 2 }, "workerId is required"],
    ["workerId empty", { workerId: "" }, "workerId is required"],
    ["workerId 0", { workerId: 0 }, "workerId is required"],
    ["workerId a number", { workerId: 7 }, WORKER_TYPE],
    ["workerId an array", { workerId: ["w"] }, WORKER_TYPE],
    // workerId before limit before prefix
    ["workerId a number and a bad limit", { workerId: 7, limit: 0 }, WORKER_TYPE],
    ["a bad limit and a bad prefix", { workerId: "w", limit: 0, probeKeyPrefix: 5 }, LIMIT_INVALID],
    ["limit 0", { workerId: "w", limit: 0 }, LIMIT_INVALID],
    ["limit -1", { workerId: "w", limit: -1 }, LIMIT_INVALID],
    ["limit 101", { workerId: "w", limit: 101 }, LIMIT_INVALID],
    ["limit 1.5", { workerId: "w", limit: 1.5 }, LIMIT_INVALID],
    ["limit NaN", { workerId: "w", limit: Number.NaN }, LIMIT_INVALID],
    ["limit Infinity", { workerId: "w", limit: Number.POSITIVE_INFINITY }, LIMIT_INVALID],
    ["limit a numeric string", { workerId: "w", limit: "5" }, LIMIT_INVALID],
    ["limit null", { workerId: "w", limit: null }, LIMIT_INVALID],
    ["probeKeyPrefix a number", { workerId: "w", probeKeyPrefix: 5 }, PREFIX_INVALID],
    ["probeKeyPrefix null", { workerId: "w", probeKeyPrefix: null }, PREFIX_INVALID],
  ])("%s -> %j", (_name, body, error) => {
    expect(validateClaimNextRequest(body)).toEqual({ ok: false, error });
  });

  it.each<[string, Record<string, unknown>, { limit: number; probeKeyPrefix: string }]>([
    ["defaults", {}, { limit: 1, probeKeyPrefix: "" }],
    ["limit 1", { limit: 1 }, { limit: 1, probeKeyPrefix: "" }],
    ["limit 100", { limit: 100 }, { limit: 100, probeKeyPrefix: "" }],
    ["limit 2.0 (an integer as JSON sends it)", { limit: 2.0 }, { limit: 2, probeKeyPrefix: "" }],
    ["an empty prefix", { probeKeyPrefix: "" }, { limit: 1, probeKeyPrefix: "" }],
    ["a prefix", { probeKeyPrefix: "probe-a/" }, { limit: 1, probeKeyPrefix: "probe-a/" }],
  ])("accepts %s", (_name, extra, expected) => {
    expect(validateClaimNextRequest({ workerId: "w", leaseSeconds: 45, ...extra })).toEqual({
      ok: true,
      value: { workerId: "w", leaseSeconds: 45, ...expected },
    });
  });
});

describe("validateSweepRequest and readPrefix", () => {
  it.each<[string, unknown, string | null]>([
    ["no body", undefined, ""],
    ["an empty object", {}, ""],
    ["a prefix", { probeKeyPrefix: "a_" }, "a_"],
    ["a number", { probeKeyPrefix: 1 }, null],
    ["null", { probeKeyPrefix: null }, null],
  ])("%s -> %j", (_name, body, prefix) => {
    expect(readPrefix(body)).toBe(prefix);
    expect(validateSweepRequest(body)).toEqual(
      prefix === null ? { ok: false, error: PREFIX_INVALID } : { ok: true, value: { probeKeyPrefix: prefix } },
    );
  });
});
