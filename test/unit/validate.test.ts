import { describe, expect, it } from "vitest";
import { formatPbDate } from "../../src/lib/lease";
import {
  DEFAULT_MAX_ATTEMPTS, MAX_DELAY_SECONDS, MAX_ENQUEUE_JOBS, MAX_ERROR_BYTES, MAX_PAYLOAD_BYTES,
  MAX_PROGRESS_BYTES, MAX_RESULT_BYTES,
} from "../../src/lib/queue";
import { DEFAULT_QUEUE, MAX_CLAIM_QUEUES } from "../../src/lib/queue-names";
import {
  MAX_CLAIM_NEXT_LIMIT,
  parseZonedInstant,
  readPrefix,
  validateClaimNextRequest,
  validateClaimRequest,
  validateCompleteClaimNext,
  validateEnqueueRequest,
  validateJobIdRequest,
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

  it.each(["done", "failed", "pending", "retry"] as const)("accepts status %s, with and without a token", (target) => {
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
    // Without `queue`: any queue (queues null).
    expect(validateClaimNextRequest({ workerId: "w", leaseSeconds: 45, ...extra })).toEqual({
      ok: true,
      value: { workerId: "w", leaseSeconds: 45, ...expected, queues: null },
    });
  });

  describe("queue (docs/flow-control.md: a name or an array of 1 to 16 names)", () => {
    const NAME_ERROR = /^queue must be a queue name or an array of them \(a queue name is 1 to 64 letters/;
    const COUNT_ERROR = `queue must be a queue name or an array of 1 to ${MAX_CLAIM_QUEUES} names`;
    const queues = (queue: unknown) => validateClaimNextRequest({ workerId: "w", queue });
    const names = (n: number) => Array.from({ length: n }, (_, i) => `q${i}`);

    it.each<[string, unknown, readonly string[] | null]>([
      ["null (any queue, as absent)", null, null],
      ["a name", "emails", ["emails"]],
      ["the default queue by name", DEFAULT_QUEUE, [DEFAULT_QUEUE]],
      ["a name of every allowed character, 64 long", `A0_.:-${"z".repeat(58)}`, [`A0_.:-${"z".repeat(58)}`]],
      ["an array of one", ["emails"], ["emails"]],
      ["an array, in its order", ["b", "a"], ["b", "a"]],
      ["an array naming a queue twice (each once)", ["a", "b", "a"], ["a", "b"]],
      [`${MAX_CLAIM_QUEUES} names`, names(MAX_CLAIM_QUEUES), names(MAX_CLAIM_QUEUES)],
    ])("accepts %s", (_name, queue, expected) => {
      expect(queues(queue)).toEqual({ ok: true, value: { workerId: "w", leaseSeconds: undefined, limit: 1, probeKeyPrefix: "", queues: expected } });
    });

    it.each<[string, unknown, string | RegExp]>([
      ["an empty array", [], COUNT_ERROR],
      [`${MAX_CLAIM_QUEUES + 1} names`, names(MAX_CLAIM_QUEUES + 1), COUNT_ERROR],
      ["an empty name", "", NAME_ERROR],
      ["a name starting with a dot", ".hidden", NAME_ERROR],
      ["a name with a space", "my queue", NAME_ERROR],
      ["a name with a slash", "a/b", NAME_ERROR],
      ["a name of 65 characters", "q".repeat(65), NAME_ERROR],
      ["a non-ASCII name", "é", NAME_ERROR],
      ["a number", 5, NAME_ERROR],
      ["an object", { name: "emails" }, NAME_ERROR],
      ["an array with a bad name", ["emails", "bad name"], NAME_ERROR],
      ["an array with a null", ["emails", null], NAME_ERROR],
      ["a nested array", [["emails"]], NAME_ERROR],
    ])("answers 400 for %s", (_name, queue, error) => {
      const answer = queues(queue);
      expect(answer.ok).toBe(false);
      if (typeof error === "string") expect(answer).toEqual({ ok: false, error });
      else expect(!answer.ok && answer.error).toMatch(error);
    });

    it("checks queue after the reference's fields", () => {
      expect(validateClaimNextRequest({ workerId: "w", limit: 0, queue: [] })).toEqual({ ok: false, error: LIMIT_INVALID });
      expect(validateClaimNextRequest({ workerId: "w", probeKeyPrefix: 5, queue: [] })).toEqual({ ok: false, error: PREFIX_INVALID });
    });
  });
});

describe("validateCompleteClaimNext (complete's claimNext)", () => {
  const body = (claimNext: unknown) => ({ workerId: "w1", releases: [{ jobId: "j", status: "done" }], claimNext });

  it("absent or null: no claim", () => {
    expect(validateCompleteClaimNext({ workerId: "w1", releases: [] })).toEqual({ ok: true, value: null });
    expect(validateCompleteClaimNext(body(null))).toEqual({ ok: true, value: null });
  });

  it("claim-next's fields, under the call's workerId, with claim-next's defaults", () => {
    expect(validateCompleteClaimNext(body({}))).toEqual({
      ok: true, value: { workerId: "w1", leaseSeconds: undefined, limit: 1, probeKeyPrefix: "", queues: null },
    });
    expect(validateCompleteClaimNext(body({ limit: MAX_CLAIM_NEXT_LIMIT, queue: ["a", "b", "a"], probeKeyPrefix: "p/", leaseSeconds: 45 }))).toEqual({
      ok: true, value: { workerId: "w1", leaseSeconds: 45, limit: MAX_CLAIM_NEXT_LIMIT, probeKeyPrefix: "p/", queues: ["a", "b"] },
    });
  });

  it.each([
    [5, "claimNext must be an object of claim-next's fields"],
    ["x", "claimNext must be an object of claim-next's fields"],
    [[], "claimNext must be an object of claim-next's fields"],
    [{ workerId: "w1" }, "claimNext takes the call's workerId: leave workerId out of it"],
    [{ limit: 0 }, `claimNext: limit must be an integer from 1 to ${MAX_CLAIM_NEXT_LIMIT}`],
    [{ limit: 1.5 }, `claimNext: limit must be an integer from 1 to ${MAX_CLAIM_NEXT_LIMIT}`],
  ])("refuses %j: %s", (claimNext, error) => {
    expect(validateCompleteClaimNext(body(claimNext))).toEqual({ ok: false, error });
  });

  it("the call's workerId is claim-next's: a missing one is claim-next's message", () => {
    expect(validateCompleteClaimNext({ claimNext: {} })).toEqual({ ok: false, error: "claimNext: workerId is required" });
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

/** A JSON string value whose serialization is exactly `bytes` UTF-8 bytes: `unit` repeated (1 to 4 bytes each), padded with ASCII. */
function jsonStringOfBytes(bytes: number, unit = "a"): string {
  const body = bytes - 2;
  const units = Math.floor(body / Buffer.byteLength(unit));
  const text = unit.repeat(units) + "a".repeat(body - units * Buffer.byteLength(unit));
  if (Buffer.byteLength(JSON.stringify(text)) !== bytes) throw new Error(`not ${bytes} bytes`);
  return text;
}

describe("validateRenewRequest: progress", () => {
  const renew = (progress: unknown) => validateRenewRequest({ jobId: "j", workerId: "w", progress });
  const TOO_BIG = `progress must be at most ${MAX_PROGRESS_BYTES} bytes as JSON`;

  it("takes any JSON of at most 4096 bytes", () => {
    expect(MAX_PROGRESS_BYTES).toBe(4096);
    for (const progress of [{ done: 1 }, 0, false, "", [], jsonStringOfBytes(4096), jsonStringOfBytes(4096, "€")]) {
      expect(renew(progress)).toMatchObject({ ok: true, value: { progress } });
    }
  });

  it.each<[string, unknown]>([
    ["4097 ASCII bytes", jsonStringOfBytes(4097, "a")],
    ["4097 bytes of 3-byte characters (1365 UTF-16 units)", jsonStringOfBytes(4097, "€")],
    ["an object of 5000 bytes", { text: "x".repeat(5000) }],
  ])("answers 400 for %s", (_name, progress) => {
    expect(renew(progress)).toEqual({ ok: false, error: TOO_BIG });
  });

  it("reads null as absent", () => {
    expect(renew(null)).toEqual({ ok: true, value: { jobId: "j", workerId: "w", leaseSeconds: undefined, leaseToken: undefined, progress: undefined } });
  });

  it("checks the ids and the token first", () => {
    expect(validateRenewRequest({ jobId: 5, workerId: "w", progress: "x".repeat(5000) })).toEqual({ ok: false, error: JOB_TYPE });
    expect(validateRenewRequest({ jobId: "j", workerId: "w", leaseToken: "", progress: "x".repeat(5000) })).toEqual({ ok: false, error: TOKEN_INVALID });
  });
});

describe("validateReleaseRequest: result and error", () => {
  const release = (extra: Record<string, unknown>) => validateReleaseRequest({ jobId: "j", workerId: "w", status: "done", ...extra });

  it("passes result and error through, null as absent", () => {
    expect(release({ result: { n: 1 }, error: "boom" })).toEqual({
      ok: true,
      value: { jobId: "j", workerId: "w", target: "done", leaseToken: undefined, result: { n: 1 }, error: "boom" },
    });
    const absent = release({ result: null, error: null });
    expect(absent.ok && absent.value.result).toBeUndefined();
    expect(absent.ok && absent.value.error).toBeUndefined();
    expect(release({ result: 0, error: "" })).toMatchObject({ ok: true, value: { result: 0, error: "" } });
  });

  it("takes a result of exactly 1 MB as JSON and refuses one byte more", () => {
    expect(MAX_RESULT_BYTES).toBe(1_048_576);
    expect(release({ result: jsonStringOfBytes(MAX_RESULT_BYTES, "\u00e9") })).toMatchObject({ ok: true });
    expect(release({ result: jsonStringOfBytes(MAX_RESULT_BYTES + 1, "\u00e9") }))
      .toEqual({ ok: false, error: `result must be at most ${MAX_RESULT_BYTES} bytes as JSON` });
  });

  it.each<[string, unknown]>([
    ["a number", 5],
    ["an object", { message: "x" }],
    ["false", false],
  ])("refuses an error that is %s", (_name, error) => {
    expect(release({ error })).toEqual({ ok: false, error: "error must be a string when given" });
  });

  it("takes an error of 65536 UTF-8 bytes and refuses one of 65537", () => {
    expect(release({ error: "a".repeat(MAX_ERROR_BYTES) })).toMatchObject({ ok: true });
    expect(release({ error: "\u{1F600}".repeat(MAX_ERROR_BYTES / 4) })).toMatchObject({ ok: true });
    expect(release({ error: "a".repeat(MAX_ERROR_BYTES + 1) })).toEqual({ ok: false, error: `error must be at most ${MAX_ERROR_BYTES} bytes` });
  });

  // The size of an error is its UTF-8 length, not its JSON length (where
  // every newline, tab, quote or backslash would count twice).
  it("counts an error's UTF-8 bytes, not its JSON escapes (a stack trace of newlines)", () => {
    const trace = "at f (x.js:1)\n".repeat(4682).slice(0, MAX_ERROR_BYTES); // 65,536 bytes, 4,681 newlines
    expect(Buffer.byteLength(trace)).toBe(MAX_ERROR_BYTES);
    expect(release({ error: trace })).toMatchObject({ ok: true });
  });

  it("checks the status and the token before result and error", () => {
    expect(release({ status: "x", error: 5 })).toEqual({ ok: false, error: STATUS_INVALID });
    expect(release({ leaseToken: "", result: "x".repeat(MAX_RESULT_BYTES) })).toEqual({ ok: false, error: TOKEN_INVALID });
  });
});

describe("validateJobIdRequest (cancel, retry)", () => {
  it.each<[string, unknown, string]>([
    ["no body", undefined, "jobId is required"],
    ["an empty jobId", { jobId: "" }, "jobId is required"],
    ["a numeric jobId", { jobId: 5 }, "jobId must be a string"],
  ])("%s -> %j", (_name, body, error) => {
    expect(validateJobIdRequest(body)).toEqual({ ok: false, error });
  });

  it("takes a jobId, ignoring the rest", () => {
    expect(validateJobIdRequest({ jobId: "j", workerId: 5 })).toEqual({ ok: true, value: { jobId: "j" } });
  });
});

const T = Date.UTC(2026, 11, 1, 9, 30, 0, 0);

describe("validateEnqueueRequest", () => {
  const enqueue = (...jobs: unknown[]) => validateEnqueueRequest({ jobs }, T);
  const one = (item: Record<string, unknown>) => enqueue({ probeKey: "p", ...item });
  const JOBS_ERROR = `jobs must be an array of 1 to ${MAX_ENQUEUE_JOBS} jobs`;

  it("applies every default: null payload, due now, priority 0, 25 attempts, no unique key", () => {
    expect(DEFAULT_MAX_ATTEMPTS).toBe(25);
    expect(one({})).toEqual({
      ok: true,
      value: [{
        probeKey: "p", queue: DEFAULT_QUEUE, payload: null, runAt: formatPbDate(T), priority: 0, maxAttempts: 25, uniqueKey: "",
        // docs/flow-control.md: no group, no timeout, no start_by.
        groupKey: "", timeoutSeconds: 0, startBy: "",
      }],
    });
  });

  it("reads null as absent for every optional field", () => {
    expect(one({ payload: null, runAt: null, delaySeconds: null, priority: null, maxAttempts: null, uniqueKey: null, queue: null }))
      .toEqual(one({}));
    expect(one({ group: null, timeoutSeconds: null, startWithinSeconds: null })).toEqual(one({}));
  });

  it("keeps the request order and every field", () => {
    const answer = enqueue(
      { probeKey: "a", payload: { x: [1] }, priority: -1000, maxAttempts: 0, uniqueKey: "k" },
      { probeKey: "b", payload: "123", delaySeconds: 1.5, priority: 1000, maxAttempts: 1000 },
    );
    expect(answer).toEqual({
      ok: true,
      value: [
        {
          probeKey: "a", queue: DEFAULT_QUEUE, payload: { x: [1] }, runAt: formatPbDate(T), priority: -1000, maxAttempts: 0, uniqueKey: "k",
          groupKey: "", timeoutSeconds: 0, startBy: "",
        },
        {
          probeKey: "b", queue: DEFAULT_QUEUE, payload: "123", runAt: formatPbDate(T + 1500), priority: 1000, maxAttempts: 1000, uniqueKey: "",
          groupKey: "", timeoutSeconds: 0, startBy: "",
        },
      ],
    });
  });

  it.each<[string, unknown]>([
    ["no body", undefined],
    ["no jobs", {}],
    ["jobs not an array", { jobs: { probeKey: "p" } }],
    ["an empty list", { jobs: [] }],
    ["1001 jobs", { jobs: Array.from({ length: 1001 }, () => ({ probeKey: "p" })) }],
  ])("answers 400 for %s", (_name, body) => {
    expect(validateEnqueueRequest(body, T)).toEqual({ ok: false, error: JOBS_ERROR });
  });

  it("takes exactly 1000 jobs", () => {
    const answer = validateEnqueueRequest({ jobs: Array.from({ length: 1000 }, (_, i) => ({ probeKey: `p${i}` })) }, T);
    expect(answer.ok && answer.value.length).toBe(1000);
  });

  it.each<[string, Record<string, unknown> | unknown, string]>([
    ["an item that is not an object", 5, "must be an object"],
    ["an item that is an array", ["p"], "must be an object"],
    ["an item that is null", null, "must be an object"],
    ["no probeKey", {}, "probeKey must be a non-empty string"],
    ["an empty probeKey", { probeKey: "" }, "probeKey must be a non-empty string"],
    ["a numeric probeKey", { probeKey: 5 }, "probeKey must be a non-empty string"],
    ["a payload over 1 MB", { probeKey: "p", payload: jsonStringOfBytes(MAX_PAYLOAD_BYTES + 1) }, `payload must be at most ${MAX_PAYLOAD_BYTES} bytes as JSON`],
    ["a payload over 1 MB in 3-byte characters", { probeKey: "p", payload: { t: "\u20ac".repeat(349_526) } }, `payload must be at most ${MAX_PAYLOAD_BYTES} bytes as JSON`],
    ["a priority of 1001", { probeKey: "p", priority: 1001 }, "priority must be an integer from -1000 to 1000"],
    ["a priority of -1001", { probeKey: "p", priority: -1001 }, "priority must be an integer from -1000 to 1000"],
    ["a priority of 1.5", { probeKey: "p", priority: 1.5 }, "priority must be an integer from -1000 to 1000"],
    ["a priority as text", { probeKey: "p", priority: "1" }, "priority must be an integer from -1000 to 1000"],
    ["maxAttempts -1", { probeKey: "p", maxAttempts: -1 }, "maxAttempts must be an integer from 0 to 1000 (0: no cap)"],
    ["maxAttempts 1001", { probeKey: "p", maxAttempts: 1001 }, "maxAttempts must be an integer from 0 to 1000 (0: no cap)"],
    ["maxAttempts 2.5", { probeKey: "p", maxAttempts: 2.5 }, "maxAttempts must be an integer from 0 to 1000 (0: no cap)"],
    ["maxAttempts true", { probeKey: "p", maxAttempts: true }, "maxAttempts must be an integer from 0 to 1000 (0: no cap)"],
    ["a numeric uniqueKey", { probeKey: "p", uniqueKey: 7 }, "uniqueKey must be a string"],
    ["runAt and delaySeconds", { probeKey: "p", runAt: "2026-12-01T10:00:00Z", delaySeconds: 5 }, "give runAt or delaySeconds, not both"],
    ["runAt and delaySeconds 0", { probeKey: "p", runAt: "2026-12-01T10:00:00Z", delaySeconds: 0 }, "give runAt or delaySeconds, not both"],
    ["a negative delaySeconds", { probeKey: "p", delaySeconds: -1 }, `delaySeconds must be a number from 0 to ${MAX_DELAY_SECONDS}`],
    ["delaySeconds as text", { probeKey: "p", delaySeconds: "5" }, `delaySeconds must be a number from 0 to ${MAX_DELAY_SECONDS}`],
    ["delaySeconds past 100 years", { probeKey: "p", delaySeconds: MAX_DELAY_SECONDS + 1 }, `delaySeconds must be a number from 0 to ${MAX_DELAY_SECONDS}`],
  ])("answers 400 for %s, naming the item", (_name, item, error) => {
    expect(enqueue({ probeKey: "ok" }, item)).toEqual({ ok: false, error: `jobs[1]: ${error}` });
  });

  it("takes a payload of exactly 1 MB as JSON", () => {
    expect(one({ payload: jsonStringOfBytes(MAX_PAYLOAD_BYTES) })).toMatchObject({ ok: true });
    expect(one({ payload: jsonStringOfBytes(MAX_PAYLOAD_BYTES, "\u{1F600}".slice(0, 2)) })).toMatchObject({ ok: true });
  });

  it("answers the first bad item, and checks fields in order", () => {
    expect(enqueue({ probeKey: "" }, { probeKey: "p", priority: 5000 })).toEqual({ ok: false, error: "jobs[0]: probeKey must be a non-empty string" });
    expect(one({ priority: 5000, maxAttempts: -1 })).toEqual({ ok: false, error: "jobs[0]: priority must be an integer from -1000 to 1000" });
  });

  const RUN_AT_ERROR = /^jobs\[0\]: runAt must be an ISO-8601 time with a zone/;

  it.each<[string, string, number]>([
    ["UTC", "2026-12-01T10:00:00Z", Date.UTC(2026, 11, 1, 10)],
    ["an offset", "2026-12-01T10:00:00+01:00", Date.UTC(2026, 11, 1, 9)],
    ["a negative offset with a fraction", "2026-12-01T10:00:00.25-02:30", Date.UTC(2026, 11, 1, 12, 30, 0, 250)],
    ["a PocketBase date", "2026-12-01 10:00:00.000Z", Date.UTC(2026, 11, 1, 10)],
    ["a time in the past (due at once)", "2020-01-01T00:00:00Z", Date.UTC(2020, 0, 1)],
  ])("takes a runAt in %s", (_name, runAt, ms) => {
    expect(one({ runAt })).toMatchObject({ ok: true, value: [{ runAt: formatPbDate(ms) }] });
  });

  it.each<[string, unknown]>([
    ["without a zone", "2026-12-01T10:00:00"],
    ["a date only", "2026-12-01"],
    ["a PocketBase date without its Z", "2026-12-01 10:00:00.000"],
    ["February 30", "2026-02-30T10:00:00Z"],
    ["an epoch number", 1764583200000],
    ["an empty string", ""],
  ])("answers 400 for a runAt %s", (_name, runAt) => {
    const answer = one({ runAt });
    expect(answer.ok).toBe(false);
    expect(!answer.ok && answer.error).toMatch(RUN_AT_ERROR);
  });

  describe("queue (docs/flow-control.md: absent or null is the default queue; any other value must be a name)", () => {
    const QUEUE_ERROR = /^jobs\[0\]: queue must be a queue name \(a queue name is 1 to 64 letters, digits and _ \. : -, starting with a letter or digit\)$/;

    it.each<[string, Record<string, unknown>, string]>([
      ["absent", {}, DEFAULT_QUEUE],
      ["null", { queue: null }, DEFAULT_QUEUE],
      ["a name", { queue: "emails" }, "emails"],
      ["a name with every allowed punctuation", { queue: "tenant-1.emails:high_prio" }, "tenant-1.emails:high_prio"],
      ["the default queue by name", { queue: DEFAULT_QUEUE }, DEFAULT_QUEUE],
    ])("takes %s", (_name, item, queue) => {
      expect(one(item)).toMatchObject({ ok: true, value: [{ queue }] });
    });

    it.each<[string, unknown]>([
      ['"" (not the default queue: a 400, as docs/flow-control.md says)', ""],
      ["a name with a space", "my queue"],
      ["a name starting with a dash", "-q"],
      ["a name of 65 characters", "q".repeat(65)],
      ["a number", 7],
      ["an array of names", ["emails"]],
      ["true", true],
    ])("answers 400 for %s, naming the item", (_name, queue) => {
      const answer = one({ queue });
      expect(answer.ok).toBe(false);
      expect(!answer.ok && answer.error).toMatch(QUEUE_ERROR);
    });

    it("keeps each item's own queue", () => {
      expect(enqueue({ probeKey: "a", queue: "q1" }, { probeKey: "b" }, { probeKey: "c", queue: "q2" }))
        .toMatchObject({ ok: true, value: [{ queue: "q1" }, { queue: DEFAULT_QUEUE }, { queue: "q2" }] });
    });
  });

  it("resolves delaySeconds against the request's time, 0 being now", () => {
    expect(one({ delaySeconds: 0 })).toMatchObject({ ok: true, value: [{ runAt: formatPbDate(T) }] });
    expect(one({ delaySeconds: 3600 })).toMatchObject({ ok: true, value: [{ runAt: formatPbDate(T + 3_600_000) }] });
    expect(one({ delaySeconds: MAX_DELAY_SECONDS })).toMatchObject({ ok: true, value: [{ runAt: formatPbDate(T + MAX_DELAY_SECONDS * 1000) }] });
  });
});

describe("parseZonedInstant", () => {
  it.each<[string, number]>([
    ["2026-12-01T09:30:00Z", T],
    ["2026-12-01T09:30Z", T],
    ["2026-12-01 09:30:00Z", T],
    ["2026-12-01T09:30:00.5Z", T + 500],
    ["2026-12-01T09:30:00.123456789Z", T + 123],
    ["2026-12-01T09:30:00.000Z", T],
    ["2026-12-01 09:30:00.000Z", T],
    ["2026-12-01T15:00:00+05:30", T],
    ["2026-12-01T01:30:00-08:00", T],
    ["2026-12-01T09:30:00+00:00", T],
    ["2026-12-01T09:30:00-00:00", T],
    ["2026-01-01T00:30:00+01:00", Date.UTC(2025, 11, 31, 23, 30)],
    ["2024-02-29T12:00:00Z", Date.UTC(2024, 1, 29, 12)],
    ["9999-12-31T23:59:59.999Z", Date.UTC(9999, 11, 31, 23, 59, 59, 999)],
    ["2026-12-01T09:30:00+23:59", T - (23 * 60 + 59) * 60_000],
  ])("%s", (text, ms) => {
    expect(parseZonedInstant(text)).toBe(ms);
  });

  it.each([
    "2026-12-01T09:30:00", // no zone
    "2026-12-01T09:30:00z",
    "2026-12-01T09:30:00+0100",
    "2026-12-01T09:30:00+01",
    "2026-12-01T09:30:00 Z",
    "2026-12-01T09:30:00.Z",
    "2026-12-01T09:30:00.1234567890Z",
    "2026-12-01T9:30:00Z",
    "2026-02-30T10:00:00Z", // Feb 30
    "2025-02-29T10:00:00Z", // not a leap year
    "2026-13-01T10:00:00Z",
    "2026-12-01T24:00:00Z",
    "2026-12-01T10:60:00Z",
    "2026-12-01T10:00:60Z",
    "2026-12-01T10:00:00+24:00",
    "2026-12-01T10:00:00+05:60",
    "9999-12-31T23:30:00-01:00", // year 10000: dates must stay 4-digit
    "0000-01-01T00:30:00+01:00", // year -1
    "+02026-12-01T10:00:00Z",
    "１９９９-01-01T00:00:00Z",
    "",
  ])("refuses %j", (text) => {
    expect(parseZonedInstant(text)).toBeNull();
  });
});
