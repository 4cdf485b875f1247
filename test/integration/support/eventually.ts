/** Resolves with `check`'s value once it passes (polled every `pollMs`), or fails with its last error after `ms`. */
export async function eventually<T>(check: () => Promise<T>, ms = 20_000, pollMs = 50): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
}
