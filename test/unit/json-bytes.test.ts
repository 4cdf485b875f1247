// The client's JSON size check (src/client/json-bytes.ts): the UTF-8 bytes of
// the JSON text, the same count as src/lib's jsonByteLength (what the server's
// limits are written against), and the sentences the client's TypeErrors use.
import { describe, expect, it } from "vitest";
import { jsonBytes, jsonSizeProblem } from "../../src/client/json-bytes";
import { jsonByteLength } from "../../src/lib/queue";

describe("jsonBytes", () => {
  it("counts as src/lib's jsonByteLength: ASCII, 2-, 3- and 4-byte characters, escapes and a lone surrogate", () => {
    for (const value of [{ a: 1 }, "é", { k: "€ and 😀" }, ["\n", "\u0000", '"'], "\ud800", null, 12.5]) {
      expect(jsonBytes(value)).toBe(jsonByteLength(value));
    }
    expect(jsonBytes(undefined)).toBe(0);
  });
});

describe("jsonSizeProblem", () => {
  it("is null for a value that fits, to the byte, and names the size of one that does not", () => {
    const fits = "€".repeat(10); // 30 bytes + 2 quotes
    expect(jsonSizeProblem(fits, 32)).toBeNull();
    expect(jsonSizeProblem(fits, 31)).toBe("JSON of at most 31 bytes (it is 32)");
  });

  it("refuses what is not JSON: undefined, a function, a BigInt, a cycle", () => {
    expect(jsonSizeProblem(undefined, 100)).toBe("a JSON value (not a function, a symbol or undefined)");
    expect(jsonSizeProblem(() => 1, 100)).toBe("a JSON value (not a function, a symbol or undefined)");
    expect(jsonSizeProblem(10n, 100)).toMatch(/^a JSON value \(.*BigInt/);
    const cycle: Record<string, unknown> = {};
    cycle["self"] = cycle;
    expect(jsonSizeProblem(cycle, 100)).toMatch(/^a JSON value \(.*circular/i);
  });
});
