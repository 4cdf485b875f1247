/**
 * The Queues card's words and choices (docs/flow-control.md "The client"): what a queue's
 * or group's settings and figures from GET /api/fleet/flow say, which groups
 * are worth listing, and how much of a long answer the card shows. Pure: no
 * DOM, no SDK; unit-tested.
 */
import { parsePbDate } from "../lib/lease.js";
import type { FlowScopeState } from "../lib/types.js";
import { formatClock, formatCount, formatDuration } from "./format.js";

export const FLOW_PATH = "/api/fleet/flow";
/** The most scopes of each kind the endpoint lists, the first by name (src/lib/flow-endpoint.ts's MAX_FLOW_LIST, not imported: that module brings the server's rules along). */
export const MAX_FLOW_LIST = 500;
/** The most rows of each list (queues, groups) the card shows; it says how many more the answer held. */
export const SCOPES_SHOWN = 50;

/** Whether the scope is parked at `nowMs` (the answer's parkedUntil may have passed since it was read). */
export function isParked(s: FlowScopeState, nowMs: number): boolean {
  const until = s.parkedUntil === null ? null : parsePbDate(s.parkedUntil);
  return until !== null && until > nowMs;
}

/** Why the scope hands out no job now, in words (none: it does): paused, parked, held ≥ concurrency, claims in the window ≥ the rate limit. */
export function holdReasons(s: FlowScopeState, nowMs: number): string[] {
  const reasons: string[] = [];
  if (s.paused) reasons.push("paused");
  if (isParked(s, nowMs)) reasons.push(`parked, ${formatDuration(Math.ceil((parsePbDate(s.parkedUntil!)! - nowMs) / 1000))} left`);
  if (s.concurrency !== null && s.held >= s.concurrency) reasons.push("at its concurrency limit");
  if (s.rateLimit !== null && s.claimsInWindow >= s.rateLimit.limit) reasons.push("at its rate limit");
  return reasons;
}

/** The state column: every reason it holds jobs back, or "open". */
export function stateText(s: FlowScopeState, nowMs: number): string {
  return holdReasons(s, nowMs).join(" · ") || "open";
}

/** "3 of 10" (held of its concurrency), "3, no limit". */
export function heldText(s: FlowScopeState): string {
  return s.concurrency === null ? `${formatCount(s.held)}, no limit` : `${formatCount(s.held)} of ${formatCount(s.concurrency)}`;
}

/** "7 of 10 per 60 s" (claims in the current window of its rate limit), "no limit". */
export function rateText(s: FlowScopeState): string {
  const r = s.rateLimit;
  return r === null ? "no limit" : `${formatCount(s.claimsInWindow)} of ${formatCount(r.limit)} per ${formatCount(r.periodSeconds)} s`;
}

/** The groups the card lists: paused, parked, or at a limit. */
export function groupsHeld(groups: readonly FlowScopeState[], nowMs: number): FlowScopeState[] {
  return groups.filter((g) => holdReasons(g, nowMs).length > 0);
}

/**
 * What the card says of a list cut to `shown` of `count` rows: how many
 * more, and when the answer was itself cut (`answered` at the endpoint's
 * bound), that others may be past it. "" when nothing is left out.
 */
export function moreNote(count: number, shown: number, answered: number): string {
  const more = count - shown;
  return `${more > 0 ? `+ ${formatCount(more)} more not shown` : ""} ${answered >= MAX_FLOW_LIST ? `(the server lists only the first ${MAX_FLOW_LIST} by name)` : ""}`.trim();
}

/** A queue's button: what it says, its accessible name, and the `paused` it asks for. */
export function pauseButton(s: FlowScopeState): { text: string; label: string; paused: boolean } {
  const text = s.paused ? "Resume" : "Pause";
  return { text, label: `${text} ${s.name}`, paused: !s.paused };
}

/**
 * The card's message when a read or a button's POST failed (a 400, 403, 503,
 * a server without the endpoint, or no answer): what failed, why, and how old
 * the figures still shown are.
 */
export function flowFailureText(what: string, failure: { status: number; message: string }, lastReadMs: number | null): string {
  const why = failure.status === 0 ? "no answer" : `HTTP ${failure.status}`;
  return `${what} failed (${why}): ${failure.message}${lastReadMs === null ? "" : `. The figures shown are from ${formatClock(lastReadMs)}.`}`;
}
