// The server's maintenance tick (src/handlers/maintenance.ts) also runs from
// cron at every minute's start, on every server, the shared one too: it
// repairs the counting triggers, runs retention and flow upkeep. A test that
// counts what one request of its own did to those runs between two such ticks.
import { sleep } from "./race";

/** Waits, if need be, until the current minute is 5 to 45 s old: 40 s clear of the cron's tick on either side. */
export async function clearOfTheCronTick(): Promise<void> {
  const second = (Date.now() % 60_000) / 1000;
  if (second < 5 || second > 45) await sleep(((65 - second) % 60) * 1000);
}
