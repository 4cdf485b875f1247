/**
 * Construction-time checks of Worker and Sweeper options. A bad value is
 * refused with a sentence naming the option, instead of becoming a busy loop
 * (a poll interval of 0 or NaN) or a retry that never ends.
 */
import { MAX_LEASE_SECONDS, MIN_LEASE_SECONDS } from "../lib/lease.js";
import { reservedWorkerIdError } from "../lib/validate.js";

export interface NumberRule {
  /** Applied to finite numbers only: NaN and ±Infinity never pass. */
  test: (n: number) => boolean;
  /** What the option must be, as the end of "`name` must be ...". */
  expected: string;
}

/** A pause or an interval: waiting 0 ms (or NaN ms) between idle polls is a spin. */
export const POSITIVE_MS: NumberRule = { test: (n) => n > 0, expected: "a finite number of milliseconds > 0" };
export const NON_NEGATIVE_MS: NumberRule = { test: (n) => n >= 0, expected: "a finite number of milliseconds >= 0" };
/** The lease bounds the server clamps to: asking for more or less would not be what the worker gets. */
export const LEASE_SECONDS: NumberRule = {
  test: (n) => n >= MIN_LEASE_SECONDS && n <= MAX_LEASE_SECONDS,
  expected: `a number of seconds from ${MIN_LEASE_SECONDS} to ${MAX_LEASE_SECONDS}`,
};

export function integerFrom(min: number, max = Number.MAX_SAFE_INTEGER): NumberRule {
  return {
    test: (n) => Number.isInteger(n) && n >= min && n <= max,
    expected: max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`,
  };
}

/** `value`, or `fallback` when it is undefined; throws a TypeError naming `owner` and `name` when it breaks `rule`. */
export function numberOption(owner: string, name: string, value: unknown, fallback: number, rule: NumberRule): number {
  const n = value === undefined ? fallback : value;
  if (typeof n !== "number" || !Number.isFinite(n) || !rule.test(n)) {
    throw new TypeError(`${owner}: \`${name}\` must be ${rule.expected} (got ${describe(value)})`);
  }
  return n;
}

/**
 * A worker id the Worker or Sweeper will claim under: a non-empty string the
 * server does not reserve for itself (it answers 400 to those).
 */
export function workerIdOption(owner: string, name: string, value: unknown): string {
  if (typeof value !== "string" || value === "") {
    throw new TypeError(`${owner}: \`${name}\` must be a non-empty string (got ${describe(value)})`);
  }
  const reserved = reservedWorkerIdError(value);
  if (reserved !== null) throw new TypeError(`${owner}: \`${name}\`: ${reserved}`);
  return value;
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
