/**
 * Whether the server answers, as the page shows it: the connection pill and,
 * while the server is away, the banner and the checks of /api/health that end it.
 */
import { formatClock } from "./format.js";
import { origin } from "./page.js";
import type { RequestFailure } from "./sdk-binding.js";
import { byId, setText } from "./view.js";

const HEALTH_TIMEOUT_MS = 3_000;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type ConnectionState = "connecting" | "live" | "reconnecting" | "offline";

export function showConnection(state: ConnectionState): void {
  const pill = byId("connection");
  pill.dataset["state"] = state;
  setText(pill, state === "connecting" ? "connecting…" : state === "reconnecting" ? "reconnecting…" : state);
}

/** The server is not answering: say so once, then check /api/health until it answers. */
export class Outage {
  private since: number | null = null;
  private checking = false;

  constructor(private readonly onBack: () => void) {}

  get active(): boolean {
    return this.since !== null;
  }

  report(failure: RequestFailure): void {
    if (this.since === null) this.since = Date.now();
    const banner = byId("offline");
    setText(
      banner,
      `PocketBase at ${origin} stopped answering at ${formatClock(this.since)} (${failure.message}). ` +
        "The numbers below are the last it sent; this page reconnects by itself as soon as it answers again.",
    );
    banner.hidden = false;
    document.body.classList.add("stale");
    showConnection("offline");
    void this.checkUntilBack();
  }

  /**
   * Called when something succeeded: the outage is over. A request sent
   * before the outage was noticed (`startedAt`) proves nothing: a stopping
   * server still answers what it had in hand.
   */
  clear(startedAt = Number.POSITIVE_INFINITY): void {
    if (this.since === null || startedAt < this.since) return;
    this.since = null;
    byId("offline").hidden = true;
    document.body.classList.remove("stale");
    this.onBack();
  }

  private async checkUntilBack(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      for (let delay = 500; this.since !== null; delay = Math.min(delay * 1.5, 3_000)) {
        await sleep(delay);
        if (await serverAnswers()) this.clear();
      }
    } finally {
      this.checking = false;
    }
  }
}

export async function serverAnswers(): Promise<boolean> {
  try {
    const res = await fetch(`${origin}/api/health`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS), cache: "no-store" });
    return res.ok;
  } catch {
    return false;
  }
}
