import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BACKOFF_BASE_MS, BACKOFF_CAP_MS, BACKOFF_JITTER, DEFAULT_MAX_ATTEMPTS, hasAttemptsLeft, jsonByteLength, MAX_ATTEMPTS_ERROR,
  MAX_ENQUEUE_JOBS, MAX_MAX_ATTEMPTS, MAX_PAYLOAD_BYTES, MAX_PRIORITY, MAX_PROGRESS_BYTES, MIN_PRIORITY, retryBackoffMs,
} from "../../src/lib/queue";

describe("the queue's limits (docs/queue.md)", () => {
  it("are the documented ones", () => {
    expect([MAX_ENQUEUE_JOBS, MAX_PAYLOAD_BYTES, MAX_PROGRESS_BYTES]).toEqual([1000, 1_048_576, 4096]);
    expect([MIN_PRIORITY, MAX_PRIORITY, MAX_MAX_ATTEMPTS, DEFAULT_MAX_ATTEMPTS]).toEqual([-1000, 1000, 1000, 25]);
    expect([BACKOFF_BASE_MS, BACKOFF_CAP_MS, BACKOFF_JITTER]).toEqual([1000, 3_600_000, 0.25]);
    expect(MAX_ATTEMPTS_ERROR).toBe("max attempts reached");
  });
});

describe("retryBackoffMs", () => {
  it.each<[number, number]>([
    [0, 1000],
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [10, 512_000],
    [12, 2_048_000],
    [13, 3_600_000],
    [1000, 3_600_000],
    [Number.MAX_SAFE_INTEGER, 3_600_000],
  ])("waits after attempt %d, without jitter, %d ms", (attempts, ms) => {
    expect(retryBackoffMs(attempts, 0)).toBe(ms);
  });

  it("doubles from one attempt to the next until the cap", () => {
    for (let attempts = 1; attempts < 12; attempts++) {
      expect(retryBackoffMs(attempts + 1, 0)).toBe(2 * retryBackoffMs(attempts, 0));
    }
  });

  it("never waits under 1 s or over 1 h, for any attempts and any jitter (even one out of range)", () => {
    fc.assert(
      fc.property(fc.integer({ min: -5, max: 100_000 }), fc.double({ min: -10, max: 10, noNaN: true }), (attempts, r) => {
        const ms = retryBackoffMs(attempts, r);
        expect(ms).toBeGreaterThanOrEqual(BACKOFF_BASE_MS);
        expect(ms).toBeLessThanOrEqual(BACKOFF_CAP_MS);
      }),
      { numRuns: 2000 },
    );
  });

  it("adds at most 25% jitter and never takes any away", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 14 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempts, r) => {
        const plain = retryBackoffMs(attempts, 0);
        const ms = retryBackoffMs(attempts, r);
        expect(ms).toBeGreaterThanOrEqual(plain);
        expect(ms).toBeLessThanOrEqual(Math.min(BACKOFF_CAP_MS, plain * 1.25));
        expect(ms).toBe(Math.min(BACKOFF_CAP_MS, plain * (1 + 0.25 * r)));
      }),
      { numRuns: 2000 },
    );
  });

  it("grows with the jitter draw", () => {
    expect(retryBackoffMs(1, 0.5)).toBe(1125);
    expect(retryBackoffMs(3, 0.999)).toBeCloseTo(4999, 0);
    expect(retryBackoffMs(3, 1)).toBe(5000); // a draw of 1 (out of range) is held at 25%
    expect(retryBackoffMs(3, 7)).toBe(5000);
  });
});

describe("hasAttemptsLeft", () => {
  it.each<[number, number, boolean]>([
    [0, 0, true],
    [1000, 0, true], // 0: no cap
    [5, -1, true], // a hand-edited negative cap: none
    [0, 1, true],
    [1, 1, false],
    [24, 25, true],
    [25, 25, false],
    [26, 25, false],
  ])("attempts %d under max %d: %s", (attempts, max, left) => {
    expect(hasAttemptsLeft(attempts, max)).toBe(left);
  });
});

/** What jsonByteLength must equal: the UTF-8 size of the JSON text. */
const utf8OfJson = (value: unknown) => {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, "utf8");
};

/** Any UTF-16 text, lone surrogates included. */
const anyUtf16 = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 30 }).map((units) => String.fromCharCode(...units));

describe("jsonByteLength", () => {
  it.each<[string, unknown, number]>([
    ["ASCII", "abc", 5],
    ["2-byte characters", "é", 4],
    ["3-byte characters", "€", 5],
    ["a surrogate pair (4 bytes)", "\u{1F600}", 6],
    ["a lone high surrogate (escaped by JSON.stringify)", "\uD800", 8],
    ["a lone low surrogate", "\uDC00", 8],
    ["a lone high surrogate before a pair", "\uD800\uD83D\uDE00", 12],
    ["a control character (escaped)", "\u0001", 8],
    ["a quote and a newline (escaped)", '"\n', 6],
    ["an object", { a: [1, "é"] }, 14],
    ["null", null, 4],
    ["undefined (not JSON)", undefined, 0],
  ])("%s", (_name, value, bytes) => {
    expect(jsonByteLength(value)).toBe(bytes);
    expect(jsonByteLength(value)).toBe(utf8OfJson(value));
  });

  it("equals Buffer.byteLength(JSON.stringify(x)) for any JSON value, any text", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), anyUtf16, fc.dictionary(anyUtf16, anyUtf16), fc.array(anyUtf16)), (value) => {
        expect(jsonByteLength(value)).toBe(utf8OfJson(value));
      }),
      { numRuns: 3000 },
    );
  });
});
