/**
 * Whether a parsed JSON value is an object (not null, not an array): what every
 * answer check starts from. Its fields are `any` because each check then tests
 * the ones it reads.
 */
export function isObject(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
