// The dashboard's Queues card, its pure part (src/dashboard/queues.ts): what a
// queue's or group's settings and figures from GET /api/fleet/flow say, which
// groups the card lists (paused, parked, or at a limit), how it says what a
// long answer leaves out, its buttons' words, and its failure message. The
// card itself is tested in a real browser by test/integration/dashboard-queues.test.ts.
import { describe, expect, it } from "vitest";
import { MAX_FLOW_LIST as SERVER_MAX_FLOW_LIST } from "../../src/lib/flow-endpoint";
import { formatPbDate } from "../../src/lib/lease";
import type { FlowScopeState } from "../../src/lib/types";
import { formatClock } from "../../src/dashboard/format";
import { TOPICS } from "../../src/dashboard/queries";
import {
  FLOW_PATH, flowFailureText, groupsHeld, heldText, holdReasons, isParked, MAX_FLOW_LIST, moreNote, pauseButton, rateText, SCOPES_SHOWN,
  stateText,
} from "../../src/dashboard/queues";
import { NOW } from "./support/rows";

/** A scope as the endpoint answers it: no settings, nothing held, due or claimed, unless overridden. */
function scope(overrides: Partial<FlowScopeState> = {}): FlowScopeState {
  return { name: "emails", paused: false, concurrency: null, rateLimit: null, parkedUntil: null, held: 0, due: 0, claimsInWindow: 0, ...overrides };
}

describe("a scope's state", () => {
  it("is open with no settings, whatever its counts", () => {
    expect(holdReasons(scope({ held: 40, due: 1000, claimsInWindow: 0 }), NOW)).toEqual([]);
    expect(stateText(scope({ held: 40 }), NOW)).toBe("open");
  });

  it("says paused", () => {
    expect(stateText(scope({ paused: true }), NOW)).toBe("paused");
  });

  it("says parked with the time left, until its parkedUntil passes (the answer may be older than that)", () => {
    const parked = scope({ parkedUntil: formatPbDate(NOW + 125_000) });
    expect(isParked(parked, NOW)).toBe(true);
    expect(stateText(parked, NOW)).toBe("parked, 2 min 05 s left");
    // Part of a second left counts as a second.
    expect(stateText(parked, NOW + 124_500)).toBe("parked, 1 s left");
    expect(isParked(parked, NOW + 125_000)).toBe(false);
    expect(stateText(parked, NOW + 125_000)).toBe("open");
    expect(isParked(scope({ parkedUntil: formatPbDate(NOW - 1) }), NOW)).toBe(false);
    // An unreadable date is not a park (the server only ever answers its own form).
    expect(isParked(scope({ parkedUntil: "soon" }), NOW)).toBe(false);
    expect(isParked(scope(), NOW)).toBe(false);
  });

  it("is at its concurrency limit when held reaches it, not before", () => {
    expect(stateText(scope({ concurrency: 3, held: 2 }), NOW)).toBe("open");
    expect(stateText(scope({ concurrency: 3, held: 3 }), NOW)).toBe("at its concurrency limit");
    // A lowered limit under jobs still held.
    expect(stateText(scope({ concurrency: 3, held: 5 }), NOW)).toBe("at its concurrency limit");
  });

  it("is at its rate limit when the claims in the window reach the limit, not before", () => {
    const rateLimit = { limit: 10, periodSeconds: 60 };
    expect(stateText(scope({ rateLimit, claimsInWindow: 9 }), NOW)).toBe("open");
    expect(stateText(scope({ rateLimit, claimsInWindow: 10 }), NOW)).toBe("at its rate limit");
  });

  it("lists every reason at once, in a fixed order", () => {
    const all = scope({
      paused: true, parkedUntil: formatPbDate(NOW + 30_000), concurrency: 1, held: 1, rateLimit: { limit: 1, periodSeconds: 5 }, claimsInWindow: 1,
    });
    expect(holdReasons(all, NOW)).toEqual(["paused", "parked, 30 s left", "at its concurrency limit", "at its rate limit"]);
    expect(stateText(all, NOW)).toBe("paused · parked, 30 s left · at its concurrency limit · at its rate limit");
  });
});

describe("a scope's figures", () => {
  it("writes held of its concurrency, or that it has none", () => {
    expect(heldText(scope({ held: 3, concurrency: 10 }))).toBe("3 of 10");
    expect(heldText(scope({ held: 1234, concurrency: 100_000 }))).toBe("1,234 of 100,000");
    expect(heldText(scope({ held: 7 }))).toBe("7, no limit");
  });

  it("writes the claims of the current window of its rate limit, or that it has none", () => {
    expect(rateText(scope({ rateLimit: { limit: 10, periodSeconds: 60 }, claimsInWindow: 7 }))).toBe("7 of 10 per 60 s");
    expect(rateText(scope({ rateLimit: { limit: 5000, periodSeconds: 86_400 }, claimsInWindow: 0 }))).toBe("0 of 5,000 per 86,400 s");
    expect(rateText(scope({ claimsInWindow: 0 }))).toBe("no limit");
  });
});

describe("the groups the card lists", () => {
  it("keeps those paused, parked or at a limit, in the answer's order, and leaves out the open ones", () => {
    const groups = [
      scope({ name: "a.example", concurrency: 5, held: 2 }),
      scope({ name: "b.example", parkedUntil: formatPbDate(NOW + 60_000) }),
      scope({ name: "c.example", rateLimit: { limit: 2, periodSeconds: 1 }, claimsInWindow: 1 }),
      scope({ name: "d.example", concurrency: 2, held: 2 }),
      scope({ name: "e.example", paused: true }),
      scope({ name: "f.example", rateLimit: { limit: 2, periodSeconds: 1 }, claimsInWindow: 2 }),
      // Its park has passed since the answer.
      scope({ name: "g.example", parkedUntil: formatPbDate(NOW - 1000) }),
    ];
    expect(groupsHeld(groups, NOW).map((g) => g.name)).toEqual(["b.example", "d.example", "e.example", "f.example"]);
    expect(groupsHeld(groups, NOW + 60_000).map((g) => g.name)).toEqual(["d.example", "e.example", "f.example"]);
    expect(groupsHeld([], NOW)).toEqual([]);
  });
});

describe("what a long list leaves out", () => {
  it("is the endpoint's bound, as the server has it", () => {
    expect(MAX_FLOW_LIST).toBe(SERVER_MAX_FLOW_LIST);
    expect(SCOPES_SHOWN).toBeLessThan(MAX_FLOW_LIST);
  });

  it("says nothing when every row is shown and the answer was not cut", () => {
    expect(moreNote(0, 0, 0)).toBe("");
    expect(moreNote(50, 50, 50)).toBe("");
    expect(moreNote(3, 3, 499)).toBe("");
  });

  it("says how many more rows the card leaves out", () => {
    expect(moreNote(51, 50, 51)).toBe("+ 1 more not shown");
    expect(moreNote(499, 50, 499)).toBe("+ 449 more not shown");
    // Groups: 80 held back of the 300 the server listed.
    expect(moreNote(80, 50, 300)).toBe("+ 30 more not shown");
  });

  it("says when the server's answer was itself cut at its bound", () => {
    expect(moreNote(500, 50, 500)).toBe("+ 450 more not shown (the server lists only the first 500 by name)");
    // Two groups held back among the 500 listed: others may be past them.
    expect(moreNote(2, 2, 500)).toBe("(the server lists only the first 500 by name)");
  });
});

describe("a queue's button", () => {
  it("pauses an open (or only parked) queue and resumes a paused one, named in its label", () => {
    expect(pauseButton(scope({ name: "emails" }))).toEqual({ text: "Pause", label: "Pause emails", paused: true });
    expect(pauseButton(scope({ name: "probes:eu", paused: true }))).toEqual({ text: "Resume", label: "Resume probes:eu", paused: false });
    expect(pauseButton(scope({ name: "x", parkedUntil: formatPbDate(NOW + 5000) }))).toEqual({ text: "Pause", label: "Pause x", paused: true });
  });
});

describe("the card's failures", () => {
  it("say what failed, with the status or that no answer came, and the server's message", () => {
    expect(flowFailureText("Reading the queues", { status: 503, message: "the transaction failed" }, null)).toBe(
      "Reading the queues failed (HTTP 503): the transaction failed",
    );
    expect(flowFailureText("Pausing emails", { status: 400, message: "queue must be a queue name" }, null)).toBe(
      "Pausing emails failed (HTTP 400): queue must be a queue name",
    );
    expect(flowFailureText("Reading the queues", { status: 0, message: "Failed to fetch" }, null)).toBe(
      "Reading the queues failed (no answer): Failed to fetch",
    );
  });

  it("say how old the figures still shown are", () => {
    expect(flowFailureText("Reading the queues", { status: 403, message: "forbidden" }, NOW)).toBe(
      `Reading the queues failed (HTTP 403): forbidden. The figures shown are from ${formatClock(NOW)}.`,
    );
  });

  it("are read from the fleet endpoint, as one part of the page re-read with the others", () => {
    expect(FLOW_PATH).toBe("/api/fleet/flow");
    expect(TOPICS).toContain("flow");
    expect(new Set(TOPICS).size).toBe(TOPICS.length);
  });
});
