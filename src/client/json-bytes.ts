/**
 * JSON sizes as the client measures them: one JSON.stringify per value and
 * Node's own UTF-8 count (Buffer.byteLength), where src/lib's jsonByteLength
 * (written for goja, without Buffer) counts with regular expressions. The
 * same figures: a JSON text has no lone surrogates (JSON.stringify escapes
 * them), so both count every character alike.
 */

/** Bytes of `value` as JSON text in UTF-8; 0 when it has none (undefined, a function). Throws what JSON.stringify throws. */
export function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : utf8Bytes(text);
}

/** UTF-8 bytes of a text, counted by Node. */
function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * Why `value` cannot be sent as a JSON field of at most `maxBytes` UTF-8 bytes
 * (the phrase ends "must be ..."), or null when it can: serialized once.
 */
export function jsonSizeProblem(value: unknown, maxBytes: number): string | null {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    // BigInt, a cycle, a toJSON that throws.
    return `a JSON value (${err instanceof Error ? err.message : String(err)})`;
  }
  if (text === undefined) return "a JSON value (not a function, a symbol or undefined)";
  // (Each UTF-16 unit is at most 3 bytes: a short text needs no count.)
  if (text.length * 3 <= maxBytes) return null;
  const bytes = utf8Bytes(text);
  return bytes > maxBytes ? `JSON of at most ${maxBytes} bytes (it is ${bytes})` : null;
}
