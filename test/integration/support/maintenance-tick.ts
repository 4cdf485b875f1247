// The server's maintenance tick (src/handlers/maintenance.ts) also runs from
// cron at every minute's start, on every server, the shared one too: it
// repairs the counting triggers, runs retention and flow upkeep (which fails
// pending jobs past their start_by). A test that counts what its own requests
// did, or compares rows with a model, runs between two such ticks.
import { sleep } from "./race";

/**
 * Waits, if need be, until the next `needMs` (at most 50 s) fall between two
 * of the cron's ticks, with 3 s to spare on either side.
 */
export async function clearOfTheCronTick(needMs = 40_000): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute >= 3_000 && 60_000 - intoMinute >= Math.min(needMs, 50_000) + 3_000) return;
  await sleep((intoMinute < 3_000 ? 3_000 : 63_000) - intoMinute);
}
