/**
 * The Queues card (docs/flow-control.md "The client"): the last answer of GET
 * /api/fleet/flow drawn as the queues and the held groups, each queue's Pause
 * or Resume button, and the card's own failures, of reading and of its buttons.
 */
import type { FlowResponse, FlowStateResponse } from "../lib/types.js";
import type { ActionContext } from "./actions.js";
import { notice } from "./page.js";
import { FLOW_PATH, flowFailureText, groupsHeld, isParked, moreNote, SCOPES_SHOWN } from "./queues.js";
import { asFailure } from "./sdk-binding.js";
import { byId, renderScopes, setText } from "./view.js";

export class FlowCard {
  /** The last answer and when it came (this reader's clock). */
  private flow: { state: FlowStateResponse; readAt: number } | null = null;
  private errors = { read: "", act: "" };
  /** Bumped by each Pause or Resume: a read begun before one is dropped (the one after it shows the change). */
  private writes = 0;

  /** `now` is the server's time; `refresh` asks for a read (throttled by the board). */
  constructor(
    private readonly context: ActionContext,
    private readonly now: () => number,
    private readonly refresh: () => void,
  ) {}

  /**
   * Reads the figures and shows them; false when that failed and the card says so.
   * An ended session (401) is thrown: it is the page's matter; any other failure (a 400,
   * 403, 503, or no answer: the other parts tell an outage) stays on the card.
   */
  async read(): Promise<boolean> {
    try {
      const writes = this.writes;
      const state = await this.context.sdk.send<FlowStateResponse>(FLOW_PATH, { method: "GET" });
      if (writes === this.writes) this.show(state);
      return true;
    } catch (err) {
      const failure = asFailure(err);
      this.errors.read = flowFailureText("Reading the queues", failure, this.flow?.readAt ?? null);
      this.showErrors();
      if (failure.status === 401) throw failure;
      return false;
    }
  }

  /**
   * A queue's Pause or Resume button: the answer's settings are shown at once, then the figures re-read; a
   * failure is said on the card. The button stays enabled, so it keeps the focus (a second click asks the same).
   */
  async setPaused(queue: string, paused: boolean): Promise<void> {
    const verb = paused ? "Paus" : "Resum";
    try {
      const { flow } = await this.context.sdk.send<FlowResponse>(FLOW_PATH, { method: "POST", body: { queue, paused } });
      const shown = this.flow?.state.queues.find((q) => q.name === queue);
      if (shown !== undefined) Object.assign(shown, flow);
      this.writes++;
      this.errors.act = "";
      notice(`${verb}ed ${queue}.`);
      this.draw();
    } catch (err) {
      const failure = asFailure(err);
      this.errors.act = flowFailureText(`${verb}ing ${queue}`, failure, null);
      if (failure.status === 401) this.context.failed(failure);
    } finally {
      // Also after a failure: with no answer it may have been done, and the figures say.
      this.refresh();
      this.showErrors();
    }
  }

  /** Each second: a park's time left; when one has ended, the server's figures say what now holds. */
  tick(now: number): void {
    const scopes = this.flow === null ? [] : [...this.flow.state.queues, ...this.flow.state.groups];
    if (scopes.some((s) => s.parkedUntil !== null)) {
      if (scopes.some((s) => s.parkedUntil !== null && !isParked(s, now))) this.refresh();
      this.draw();
    }
  }

  private show(state: FlowStateResponse): void {
    this.flow = { state, readAt: Date.now() };
    this.errors.read = "";
    this.showErrors();
    this.draw();
  }

  private draw(): void {
    if (this.flow === null) return;
    const now = this.now();
    const { queues, groups } = this.flow.state;
    const held = groupsHeld(groups, now);
    const shownQueues = queues.slice(0, SCOPES_SHOWN);
    const shownGroups = held.slice(0, SCOPES_SHOWN);
    renderScopes(byId<HTMLTableElement>("queues").tBodies[0]!, shownQueues, now, true);
    renderScopes(byId<HTMLTableElement>("groups").tBodies[0]!, shownGroups, now, false);
    byId("queues").hidden = queues.length === 0;
    byId("groups").hidden = held.length === 0;
    byId("queues-empty").hidden = queues.length > 0;
    byId("groups-empty").hidden = held.length > 0;
    setText(byId("queues-note"), moreNote(queues.length, shownQueues.length, queues.length));
    setText(byId("groups-note"), moreNote(held.length, shownGroups.length, groups.length));
  }

  private showErrors(): void {
    const box = byId("queues-error");
    const text = [this.errors.act, this.errors.read].filter(Boolean).join(" ");
    box.hidden = text === "";
    setText(box, text);
  }
}
