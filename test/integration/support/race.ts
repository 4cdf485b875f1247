// Firing many requests at once. Node's fetch (undici) keeps connections alive
// and opens as many as are in flight, so after the first round every caller
// has a warm connection and the requests reach PocketBase together.

/** n calls started in the same tick; resolves when all have answered. */
export function together<T>(n: number, call: (i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => call(i)));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Count of items matching a predicate. */
export function count<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  return items.reduce((n, item) => (predicate(item) ? n + 1 : n), 0);
}
