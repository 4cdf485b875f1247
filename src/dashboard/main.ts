/**
 * The fleet dashboard (served by PocketBase at /fleet/): signs in with the JS
 * SDK of the server's line, keeps the numbers live through PocketBase's
 * realtime stream, and acts only through the fleet endpoints.
 *
 * How it stays light with 100,000 jobs and hundreds of changes a second:
 * realtime events carry three fields and only mark parts of the page stale;
 * each part is re-read by a ThrottledRefresh (at most one request in flight,
 * at most one per gap); numbers come from the server's aggregates
 * (/api/fleet/stats, /api/fleet/completions) and lists are bounded pages.
 */
import type { CompletionsResponse } from "../lib/completions.js";
import { WORKER_FIELDS } from "../lib/identity.js";
import { parsePbDate } from "../lib/lease.js";
import type { FleetStats, FlowResponse, FlowStateResponse } from "../lib/types.js";
import { drawChart } from "./chart.js";
import { detectLine, loadBinding } from "./connection.js";
import { formatClock, formatCount, formatDuration, formatRate, ServerClock } from "./format.js";
import { formatPbDate } from "../lib/lease.js";
import { JobDetail } from "./detail.js";
import {
  CHART_BUCKET_SECONDS, CHART_WINDOW_SECONDS, EVENT_FIELDS, EXPIRED_LIMIT, EXPIRED_SORT, expiredFilter, FAILED_LIMIT, FAILED_SORT,
  failedFilter, IN_FLIGHT_FIELDS, IN_FLIGHT_LIMIT, IN_FLIGHT_SORT, inFlightFilter, isSafeJobId, JOB_EVENT_FIELDS, JOB_EVENTS_COLLECTION,
  enqueueCurl, identityOf, JOBS_COLLECTION, JOBS_SHOWN_PER_WORKER, LIST_FIELDS, matchesPrefix, prefixQuery, staleTopics, TOPICS, WORKERS_COLLECTION,
  WORKERS_FIELDS, WORKERS_LIMIT, WORKERS_SORT, type Identity, type JobRow, type ShownJobs, type Topic,
} from "./queries.js";
import { toFailure, type JobEvent, type Line, type RequestFailure, type SdkBinding, type Unsubscribe } from "./sdk-binding.js";
import { FLOW_PATH, flowFailureText, groupsHeld, isParked, moreNote, SCOPES_SHOWN } from "./queues.js";
import { ThrottledRefresh } from "./throttle.js";
import {
  boundNote, byId, renderCounts, renderExpired, renderFailed, renderIdentities, renderInFlight, renderScopes, setText, tickAgo, tickLeases, type JobAction,
} from "./view.js";

/** Least time between two reads of one part: a change shows within this plus one answer. */
const REFRESH_GAP_MS: { [topic in Topic]: number } = { stats: 500, completions: 1000, inFlight: 500, expired: 500, failed: 500, workers: 1000, flow: 2000 };
/**
 * Scheduled jobs falling due and leases running out change the numbers with
 * no write, so no event: the counts and the held lists are re-read this often
 * (besides at the end of each lease the page shows, see tick()).
 */
const QUIET_REFRESH_MS = 10_000;
/** While the realtime stream is down but the server answers, the page reads everything this often instead. */
const FALLBACK_REFRESH_MS = 2_000;
const HEALTH_TIMEOUT_MS = 3_000;
const FILTER_DEBOUNCE_MS = 250;

const origin = window.location.origin;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isFailure(value: unknown): value is RequestFailure {
  return typeof value === "object" && value !== null && typeof (value as RequestFailure).status === "number";
}

// ---- the page's frame: connection state, banner, notices ----------------------------------

type ConnectionState = "connecting" | "live" | "reconnecting" | "offline";

function showConnection(state: ConnectionState): void {
  const pill = byId("connection");
  pill.dataset["state"] = state;
  setText(pill, state === "connecting" ? "connecting…" : state === "reconnecting" ? "reconnecting…" : state);
}

function showOnly(part: "loading" | "signin" | "board"): void {
  byId("loading").hidden = part !== "loading";
  byId("signin").hidden = part !== "signin";
  byId("board").hidden = part !== "board";
}

let noticeTimer: ReturnType<typeof setTimeout> | undefined;
function notice(text: string, kind: "ok" | "refused" = "ok"): void {
  const box = byId("notice");
  box.dataset["kind"] = kind;
  setText(box, text);
  box.classList.add("visible");
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => box.classList.remove("visible"), 8_000);
}

/** The server is not answering: say so once, then check /api/health until it answers. */
class Outage {
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

async function serverAnswers(): Promise<boolean> {
  try {
    const res = await fetch(`${origin}/api/health`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS), cache: "no-store" });
    return res.ok;
  } catch {
    return false;
  }
}

// ---- confirmation -------------------------------------------------------------------------

function confirmAction(title: string, text: string, okLabel: string): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>("confirm");
  setText(byId("confirm-title"), title);
  setText(byId("confirm-text"), text);
  setText(byId("confirm-ok"), okLabel);
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.showModal();
    // The safe choice has the focus: Enter alone never confirms.
    byId("confirm-cancel").focus();
  });
}

// ---- the board ----------------------------------------------------------------------------

interface ListState {
  rows: JobRow[];
  ids: Set<string>;
}

class Board {
  private prefix = new URLSearchParams(window.location.search).get("prefix") ?? "";
  private readonly clock = new ServerClock();
  private readonly refreshers: Map<Topic, ThrottledRefresh>;
  private readonly lists: { [name in "inFlight" | "expired" | "failed"]: ListState } = {
    inFlight: { rows: [], ids: new Set() },
    expired: { rows: [], ids: new Set() },
    failed: { rows: [], ids: new Set() },
  };
  private stats: { value: FleetStats; readAt: number } | null = null;
  private completions: CompletionsResponse | null = null;
  private timers: ReturnType<typeof setInterval>[] = [];
  private realtimeDownTicks = 0;
  private lastFallback = 0;
  private stopped = false;
  private subscriptions: Promise<Unsubscribe | null>[] = [];
  private readonly outage = new Outage(() => this.refreshAll());
  /** The open job detail, if any (its id is in the URL as ?job=). */
  private detail: JobDetail | null = null;
  /** The worker identities shown; null when the server has no fleet_workers collection (an install older than it). */
  private identities: Identity[] | null = [];
  /** Workers whose in-flight jobs are all shown (the rest show JOBS_SHOWN_PER_WORKER). */
  private readonly expandedWorkers = new Set<string>();
  /** The last GET /api/fleet/flow answer and when it came (this reader's clock); the card's failures, of reading and of its buttons. */
  private flow: { state: FlowStateResponse; readAt: number } | null = null;
  private flowErrors = { read: "", act: "" };
  /** Bumped by each Pause or Resume: a read begun before one is dropped (the one after it shows the change). */
  private flowWrites = 0;

  constructor(
    private readonly sdk: SdkBinding,
    private readonly onSessionEnded: (message: string) => void,
  ) {
    this.refreshers = new Map(TOPICS.map((topic) => [topic, new ThrottledRefresh(() => this.read(topic), REFRESH_GAP_MS[topic])]));
  }

  start(): void {
    const input = byId<HTMLInputElement>("filter-prefix");
    input.value = this.prefix;
    showOnly("board");
    this.subscribe();
    this.refreshAll();
    this.timers.push(setInterval(() => this.tick(), 1_000));
    this.timers.push(setInterval(() => {
      // Flow figures move with no event too: rate windows roll, parks end, and probe_flow is written with SQL.
      this.refresh("stats", "inFlight", "expired", "flow");
      // The hooks stamp last_seen_at with SQL, which realtime does not see (a missing collection is asked for again on reconnection).
      if (this.identities !== null) this.refresh("workers");
    }, QUIET_REFRESH_MS));
    // Each bucket's end moves the chart and its headline along with no event (a quiet fleet's rate falls to 0).
    this.timers.push(setInterval(() => {
      if (this.completions?.buckets.some((b) => b.done + b.failed > 0)) this.refresh("completions");
    }, CHART_BUCKET_SECONDS * 1000));
    const linked = new URLSearchParams(window.location.search).get("job") ?? "";
    if (isSafeJobId(linked)) this.openDetail(linked, byId("main"));
  }

  /** Opens a job's detail; `opener` gets the focus back when it closes. */
  openDetail(jobId: string, opener: HTMLElement): void {
    if (!isSafeJobId(jobId)) return;
    this.detail?.close();
    const section = (opener.closest("section") as HTMLElement | null) ?? byId<HTMLElement>("main");
    const detail: JobDetail = new JobDetail(
      jobId, this.sdk, () => this.clock.now(), { element: opener, section },
      (failure) => this.failed(failure),
      () => {
        if (this.detail === detail) this.detail = null;
        this.setUrlParam("job", "");
      },
    );
    this.detail = detail;
    this.setUrlParam("job", jobId);
    void detail.open();
  }

  /** Shows all of a worker's in-flight jobs, or its first few again. */
  toggleWorker(workerId: string): void {
    if (this.expandedWorkers.has(workerId)) this.expandedWorkers.delete(workerId);
    else this.expandedWorkers.add(workerId);
    this.showList("inFlight", this.lists.inFlight.rows);
  }

  private setUrlParam(name: string, value: string): void {
    const url = new URL(window.location.href);
    if (value === "") url.searchParams.delete(name);
    else url.searchParams.set(name, value);
    window.history.replaceState(null, "", url);
  }

  stop(): void {
    this.stopped = true;
    this.detail?.close();
    for (const timer of this.timers) clearInterval(timer);
    for (const refresher of this.refreshers.values()) refresher.stop();
    // The SDK closes the realtime stream once nothing is subscribed (a later sign-in subscribes anew).
    for (const subscription of this.subscriptions) void subscription.then((unsubscribe) => unsubscribe?.().catch(() => undefined));
    this.subscriptions = [];
  }

  setPrefix(prefix: string): void {
    if (prefix === this.prefix) return;
    this.prefix = prefix;
    this.setUrlParam("prefix", prefix);
    // Nothing of the old filter stays shown beside the new one's first answers (its reads answer in any order).
    this.stats = null;
    for (const value of byId("counts").querySelectorAll(".count-value")) setText(value, "–");
    for (const note of ["filter-note", "in-flight-note", "expired-note", "failed-note"]) setText(byId(note), "");
    for (const list of ["inFlight", "expired", "failed"] as const) this.showList(list, []);
    this.refreshAll();
  }

  refreshAll(): void {
    this.refresh(...TOPICS);
  }

  private refresh(...topics: Topic[]): void {
    for (const topic of topics) this.refreshers.get(topic)!.request();
  }

  /** Realtime: every job change marks parts stale; PB_CONNECT (first connection and each reconnection) re-reads all. */
  private subscribe(): void {
    // Not awaited: while the server is away the SDK keeps reconnecting and these settle when it is back.
    const keep = (subscription: Promise<Unsubscribe>) =>
      this.subscriptions.push(
        subscription.catch((err) => {
          this.failed(toFailure(err));
          return null;
        }),
      );
    keep(this.sdk.onRealtimeConnect(() => {
      if (this.stopped) return;
      this.realtimeDownTicks = 0;
      this.outage.clear();
      showConnection("live");
      this.refreshAll();
    }));
    // Record saves (enqueue, claim, renew, release, cancel, retry) send probe_jobs events.
    keep(this.sdk.subscribe(JOBS_COLLECTION, EVENT_FIELDS, (event) => {
      this.markStale(event);
      if (this.detail !== null && event.record["id"] === this.detail.jobId) this.detail.addRecordSave(event.record, formatPbDate(this.clock.now()));
    }));
    // The batch endpoints (claim-next, heartbeat, complete, sweep) write with one SQL statement, which
    // realtime does not see; they save one probe_job_events record per batch listing every job written.
    keep(this.sdk.subscribe(JOB_EVENTS_COLLECTION, JOB_EVENT_FIELDS, (event) => {
      const changes = event.record["changes"];
      if (!Array.isArray(changes)) return;
      for (const change of changes) this.markStale({ action: "update", record: change as JobEvent["record"] });
      this.detail?.addBatchEvent(event.record as { id: string });
    }));
    // Admins get every fleet_workers change (created, disabled, renamed); the event only says to re-read.
    keep(this.sdk.subscribe(WORKERS_COLLECTION, "id", () => this.refresh("workers")));
  }

  private markStale(event: JobEvent): void {
    if (this.stopped) return;
    if (this.detail !== null && event.record["id"] === this.detail.jobId) this.detail.changed();
    // The queues card counts every job, whatever the filter.
    this.refresh("flow", ...staleTopics(event, this.prefix, this.shown()));
  }

  private shown(): ShownJobs {
    return { inFlight: this.lists.inFlight.ids, expired: this.lists.expired.ids, failed: this.lists.failed.ids };
  }

  /** One part re-read; a failure is reported, and the result of a read for an older filter is dropped. */
  private async read(topic: Topic): Promise<void> {
    if (this.stopped) return;
    const prefix = this.prefix;
    const startedAt = Date.now();
    try {
      switch (topic) {
        case "stats": {
          const stats = await this.sdk.send<FleetStats>("/api/fleet/stats", { method: "GET", query: prefixQuery(prefix) });
          if (prefix === this.prefix) this.showStats(stats);
          break;
        }
        case "completions": {
          const sentAt = Date.now();
          const data = await this.sdk.send<CompletionsResponse>("/api/fleet/completions", {
            method: "GET",
            query: { windowSeconds: CHART_WINDOW_SECONDS, bucketSeconds: CHART_BUCKET_SECONDS, ...prefixQuery(prefix) },
          });
          this.clock.observe(data.now, sentAt, Date.now());
          if (prefix === this.prefix) this.showCompletions(data);
          break;
        }
        case "inFlight":
        case "expired":
        case "failed": {
          const rows = await this.readList(topic, prefix);
          if (prefix === this.prefix) this.showList(topic, rows);
          break;
        }
        case "workers": {
          try {
            const page = await this.sdk.listWithTotal<{ [field: string]: unknown }>(WORKERS_COLLECTION, WORKERS_LIMIT, {
              filter: "", sort: WORKERS_SORT, fields: WORKERS_FIELDS,
            });
            this.showIdentities(page.items.map(identityOf), page.totalItems);
          } catch (err) {
            // A server without the migration answers 404: say so there, and keep the rest of the page.
            if ((err as RequestFailure).status !== 404) throw err;
            this.showIdentities(null, 0);
          }
          break;
        }
        case "flow": {
          try {
            const writes = this.flowWrites;
            const state = await this.sdk.send<FlowStateResponse>(FLOW_PATH, { method: "GET" });
            if (writes === this.flowWrites) this.showFlow(state);
          } catch (err) {
            const failure = isFailure(err) ? err : toFailure(err);
            this.flowErrors.read = flowFailureText("Reading the queues", failure, this.flow?.readAt ?? null);
            this.showFlowErrors();
            // An ended session is the page's matter; any other failure (a 400, 403, 503, or no answer: the
            // other parts tell an outage) stays on the card.
            if (failure.status === 401) throw failure;
            return;
          }
          break;
        }
      }
      this.outage.clear(startedAt);
    } catch (err) {
      this.failed(isFailure(err) ? err : toFailure(err), topic);
    }
  }

  private async readList(list: "inFlight" | "expired" | "failed", prefix: string): Promise<JobRow[]> {
    const now = this.clock.now();
    const query =
      list === "inFlight"
        ? { limit: IN_FLIGHT_LIMIT, filter: inFlightFilter(prefix, now), sort: IN_FLIGHT_SORT, fields: IN_FLIGHT_FIELDS }
        : list === "expired"
          ? { limit: EXPIRED_LIMIT, filter: expiredFilter(prefix, now), sort: EXPIRED_SORT, fields: LIST_FIELDS }
          : { limit: FAILED_LIMIT, filter: failedFilter(prefix), sort: FAILED_SORT, fields: LIST_FIELDS };
    const rows = await this.sdk.list<JobRow>(JOBS_COLLECTION, query.limit, { filter: query.filter, sort: query.sort, fields: query.fields });
    // The filter may only narrow a prefix with quotes or backslashes up to them (queries.ts): check each row.
    return rows.filter((row) => matchesPrefix(row.probe_key, prefix));
  }

  private failed(failure: RequestFailure, topic?: Topic): void {
    if (failure.status === 0) {
      this.outage.report(failure);
    } else if (failure.status === 401 || failure.status === 403) {
      this.onSessionEnded("Your session has ended (the server no longer accepts its token): sign in again.");
    } else if (topic === "completions") {
      setText(byId("chart-note"), `unavailable: ${failure.message}`);
    } else {
      notice(`Reading ${topic ?? "the server"} failed: ${failure.message}`, "refused");
    }
  }

  private showStats(stats: FleetStats): void {
    this.stats = { value: stats, readAt: Date.now() };
    renderCounts(byId("counts"), stats, stats.oldestPendingAgeSeconds);
    const empty = stats.total === 0;
    byId("empty").hidden = !empty;
    byId("panels").hidden = empty;
    if (empty) this.showEmptyState();
    const filterNote = this.prefix === "" ? "" : `${formatCount(stats.total)} job${stats.total === 1 ? "" : "s"} match`;
    setText(byId("filter-note"), filterNote);
    setText(byId("in-flight-note"), this.inFlightNote(stats));
    const sweeper = stats.sweeper.scheduled ? `the server sweeper runs "${stats.sweeper.schedule}"` : "no server sweeper is scheduled";
    setText(byId("expired-note"), [boundNote(this.lists.expired.rows.length, EXPIRED_LIMIT, stats.expiredLeases), sweeper].filter(Boolean).join(" · "));
    setText(byId("failed-note"), boundNote(this.lists.failed.rows.length, FAILED_LIMIT, stats.counts.failed));
  }

  /** "3 workers · 48 jobs", and when the read was cut at its bound, which workers it could not list. */
  private inFlightNote(stats: FleetStats): string {
    const rows = this.lists.inFlight.rows;
    const workers = new Set(rows.map((r) => r.claimed_by)).size;
    const summary = rows.length === 0 ? "" : `${formatCount(workers)} worker${workers === 1 ? "" : "s"} · ${formatCount(rows.length)} job${rows.length === 1 ? "" : "s"}`;
    if (rows.length < IN_FLIGHT_LIMIT) return summary;
    const live = stats.counts.claimed + stats.counts.running - stats.expiredLeases;
    const last = rows[rows.length - 1]!.claimed_by;
    return `${boundNote(rows.length, IN_FLIGHT_LIMIT, live)} jobs, by worker id: workers after ${last} are not listed`;
  }

  private showEmptyState(): void {
    const text = byId("empty-text");
    const title = byId("empty-title");
    text.replaceChildren();
    const para = (content: string) => {
      const p = document.createElement("p");
      p.textContent = content;
      text.append(p);
    };
    if (this.prefix !== "") {
      setText(title, "No job matches this filter");
      para(`No job's probe_key starts with "${this.prefix}". Clear the probe_key prefix above to see every job.`);
      return;
    }
    setText(title, "No jobs yet");
    para("Nothing has been enqueued on this server. Enqueue jobs with the pb-fleet client and start a worker; this page shows them live as they run:");
    const code = document.createElement("pre");
    code.textContent =
      `await client.enqueue("probe/a", { payload: { url: "https://a.example" } });\n` +
      `new Worker(client, { workerId: "w-1", handler: async (job) => ({ ok: true }) }).start();`;
    text.append(code);
    para("Or from a shell: sign in for a token, then enqueue a job (put your password in place of YOUR_PASSWORD):");
    const shell = document.createElement("pre");
    shell.id = "empty-curl";
    shell.textContent = enqueueCurl(origin, this.sdk.line, this.sdk.account());
    text.append(shell);
  }

  private showCompletions(data: CompletionsResponse): void {
    this.completions = data;
    // The server's own time of the answer: which buckets were complete when it counted them.
    const summary = drawChart(byId<SVGSVGElement>("chart-svg"), data, data.now);
    setText(byId("chart-rate"), formatRate(summary.currentRate));
    setText(byId("chart-rate-note"), summary.headlineBuckets === 0 ? "no complete bucket yet" : `done + failed, mean of the last ${summary.headlineBuckets * data.bucketSeconds} s (the marked bars)`);
    setText(byId("chart-top"), formatRate(Number(byId<SVGSVGElement>("chart-svg").dataset["top"])));
    setText(byId("chart-from"), `−${Math.round((data.bucketSeconds * data.buckets.length) / 60)} min`);
    setText(byId("chart-note"), `${formatCount(summary.totalDone)} done, ${formatCount(summary.totalFailed)} failed in the window`);
  }

  private showList(list: "inFlight" | "expired" | "failed", rows: JobRow[]): void {
    const tbody = byId<HTMLTableElement>(list === "inFlight" ? "in-flight" : list).tBodies[0]!;
    const ids =
      list === "inFlight"
        ? renderInFlight(tbody, rows, this.clock.now(), this.expandedWorkers, JOBS_SHOWN_PER_WORKER)
        : list === "expired"
          ? renderExpired(tbody, rows)
          : renderFailed(tbody, rows);
    this.lists[list] = { rows, ids };
    byId(`${list === "inFlight" ? "in-flight" : list}-empty`).hidden = rows.length > 0;
    tickAgo(tbody, this.clock.now(), parsePbDate);
    if (this.stats !== null) this.showStats(this.stats.value);
  }

  private showIdentities(identities: Identity[] | null, total: number): void {
    this.identities = identities;
    const table = byId<HTMLTableElement>("workers");
    renderIdentities(table.tBodies[0]!, identities ?? []);
    table.hidden = identities === null;
    byId("workers-missing").hidden = identities !== null;
    byId("workers-empty").hidden = identities?.length !== 0;
    setText(byId("workers-note"), boundNote(identities?.length ?? 0, WORKERS_LIMIT, total));
    tickAgo(table, this.clock.now(), parsePbDate);
  }

  private showFlow(state: FlowStateResponse): void {
    this.flow = { state, readAt: Date.now() };
    this.flowErrors.read = "";
    this.showFlowErrors();
    this.drawFlow();
  }

  private drawFlow(): void {
    if (this.flow === null) return;
    const now = this.clock.now();
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

  private showFlowErrors(): void {
    const box = byId("queues-error");
    const text = [this.flowErrors.act, this.flowErrors.read].filter(Boolean).join(" ");
    box.hidden = text === "";
    setText(box, text);
  }

  /**
   * A queue's Pause or Resume button: the answer's settings are shown at once, then the figures re-read; a
   * failure is said on the card. The button stays enabled, so it keeps the focus (a second click asks the same).
   */
  async setPaused(queue: string, paused: boolean): Promise<void> {
    const verb = paused ? "Paus" : "Resum";
    try {
      const { flow } = await this.sdk.send<FlowResponse>(FLOW_PATH, { method: "POST", body: { queue, paused } });
      const shown = this.flow?.state.queues.find((q) => q.name === queue);
      if (shown !== undefined) Object.assign(shown, flow);
      this.flowWrites++;
      this.flowErrors.act = "";
      notice(`${verb}ed ${queue}.`);
      this.drawFlow();
    } catch (err) {
      const failure = isFailure(err) ? err : toFailure(err);
      this.flowErrors.act = flowFailureText(`${verb}ing ${queue}`, failure, null);
      if (failure.status === 401) this.failed(failure);
    } finally {
      // Also after a failure: with no answer it may have been done, and the figures say.
      this.refresh("flow");
      this.showFlowErrors();
    }
  }

  /** Each second: countdowns, "ago" texts, the oldest wait, and whether the realtime stream is up. */
  private tick(): void {
    const now = this.clock.now();
    const lapsed = tickLeases(byId<HTMLTableElement>("in-flight").tBodies[0]!, now);
    // A lease ran out: the job now waits for the sweeper, and no event says so.
    if (lapsed > 0) this.refresh("inFlight", "expired", "stats");
    tickAgo(byId("expired"), now, parsePbDate);
    tickAgo(byId("failed"), now, parsePbDate);
    tickAgo(byId("workers"), now, parsePbDate);
    // A park's time left; when one has ended, the server's figures say what now holds.
    const scopes = this.flow === null ? [] : [...this.flow.state.queues, ...this.flow.state.groups];
    if (scopes.some((s) => s.parkedUntil !== null)) {
      if (scopes.some((s) => s.parkedUntil !== null && !isParked(s, now))) this.refresh("flow");
      this.drawFlow();
    }
    this.detail?.tick();
    if (this.stats !== null && this.stats.value.oldestPendingAgeSeconds !== null) {
      const age = this.stats.value.oldestPendingAgeSeconds + (Date.now() - this.stats.readAt) / 1000;
      setText(byId("counts").querySelector('[data-stat="oldest"] .count-value')!, formatDuration(age));
    }
    this.watchRealtime();
  }

  private watchRealtime(): void {
    if (this.sdk.isRealtimeConnected()) {
      this.realtimeDownTicks = 0;
      if (!this.outage.active) showConnection("live");
      return;
    }
    this.realtimeDownTicks++;
    if (this.realtimeDownTicks < 2 || this.outage.active) return;
    showConnection("reconnecting");
    void serverAnswers().then((answers) => {
      if (!answers) {
        this.outage.report({ status: 0, message: "no answer to /api/health" });
      } else if (Date.now() - this.lastFallback >= FALLBACK_REFRESH_MS) {
        // Answers, but the stream stays down (a proxy that cuts it, say): read instead of waiting for events.
        this.lastFallback = Date.now();
        this.refreshAll();
      }
    });
  }

  /** A button of a list row: confirm, then the fleet endpoint (its rules decide). */
  async act(action: JobAction, jobId: string, button: HTMLButtonElement): Promise<void> {
    const job = [...this.lists.inFlight.rows, ...this.lists.expired.rows, ...this.lists.failed.rows, ...(this.detail?.job ? [this.detail.job] : [])]
      .find((r) => r.id === jobId);
    if (job === undefined) return;
    // Captured now: once the job leaves its list the button is detached and finds no section.
    const section: HTMLElement = (button.closest("section") as HTMLElement | null) ?? byId("main");
    const name = `${job.probe_key} (${job.id})`;
    const ask =
      action === "retry"
        ? ["Retry this job?", `${name} goes back to pending, due now, with its attempts reset to 0.`, "Retry"]
        : action === "cancel"
          ? ["Cancel this job?", `${name} becomes cancelled. If a worker holds it, its next renew is refused and its handler is aborted.`, "Cancel job"]
          : [
              "Re-queue this job?",
              `${name} is held by ${job.claimed_by}, whose lease has ended. It goes back to pending on that holder's behalf, as the sweeper would; the server refuses if the holder renewed since.`,
              "Re-queue",
            ];
    if (!(await confirmAction(ask[0]!, ask[1]!, ask[2]!))) {
      button.focus();
      return;
    }
    button.disabled = true;
    try {
      if (action === "retry") {
        const res = await this.sdk.send<{ retried: boolean; reason?: string }>("/api/fleet/retry", { method: "POST", body: { jobId } });
        if (res.retried) notice(`Retried ${job.probe_key}: pending again.`);
        else notice(`Not retried: ${res.reason ?? "the job is no longer failed or cancelled"}.`, "refused");
      } else if (action === "cancel") {
        const res = await this.sdk.send<{ cancelled: boolean }>("/api/fleet/cancel", { method: "POST", body: { jobId } });
        if (res.cancelled) notice(`Cancelled ${job.probe_key}.`);
        else notice("Not cancelled: the job has already finished.", "refused");
      } else {
        const res = await this.sdk.send<{ released: boolean; reason?: string }>("/api/fleet/release", {
          method: "POST",
          body: { jobId, workerId: job.claimed_by, status: "pending" },
        });
        if (res.released) notice(`Re-queued ${job.probe_key}: pending again.`);
        else notice(`Not re-queued: ${res.reason === "refused_lease_live" ? "the holder renewed its lease since (refused_lease_live)" : res.reason}.`, "refused");
      }
      this.refreshAll();
      if (this.detail?.jobId === jobId) this.detail.changed();
    } catch (err) {
      this.refused(err);
    } finally {
      button.disabled = false;
      // The row (or the detail's button) may be gone now: keep the keyboard in the same section, or dialog.
      if (!button.isConnected) {
        if (byId<HTMLDialogElement>("job-detail").open) {
          byId("detail-close").focus();
        } else {
          section.tabIndex = -1;
          section.focus();
        }
      }
    }
  }

  /** An action the server did not do: an outage or an ended session as everywhere, else its refusal as a notice. */
  private refused(err: unknown): void {
    const failure = isFailure(err) ? err : toFailure(err);
    if (failure.status === 0 || failure.status === 401 || failure.status === 403) this.failed(failure);
    else notice(`The server refused: ${failure.message}`, "refused");
  }

  /** A worker identity's Disable or Enable button: confirm, then its record through the record API (admins only). */
  async toggleIdentity(id: string, button: HTMLButtonElement): Promise<void> {
    const identity = this.identities?.find((w) => w.id === id);
    if (identity === undefined) return;
    const disabled = !identity.disabled;
    const verb = disabled ? "Disable" : "Enable";
    const effect = disabled ? ": its calls to /api/fleet/* are refused from now on, and the jobs it holds are swept once their leases end" : " may call /api/fleet/* again";
    if (!(await confirmAction(`${verb} this worker identity?`, `${identity.name} (${id})${effect}.`, verb))) {
      button.focus();
      return;
    }
    button.disabled = true;
    try {
      await this.sdk.update(WORKERS_COLLECTION, id, { [WORKER_FIELDS.disabled]: disabled });
      notice(`${verb}d ${identity.name}.`);
      this.refresh("workers");
    } catch (err) {
      this.refused(err);
    } finally {
      button.disabled = false;
    }
  }
}

// ---- start --------------------------------------------------------------------------------

async function connect(): Promise<SdkBinding> {
  const outage = new Outage(() => undefined);
  for (let delay = 1_000; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      const line: Line = await detectLine(origin);
      const sdk = await loadBinding(origin, line);
      outage.clear();
      return sdk;
    } catch (err) {
      outage.report(isFailure(err) ? err : toFailure(err));
      await sleep(delay);
    }
  }
}

async function main(): Promise<void> {
  showOnly("loading");
  const sdk = await connect();
  const accountNoun = sdk.line === "0.22" ? "admin" : "superuser";
  setText(byId("server-line"), `PocketBase ${sdk.line === "0.22" ? "0.22" : "0.23+"}`);
  setText(byId("signin-hint"), `Sign in with the email and password of a PocketBase ${accountNoun} of this server.`);
  let board: Board | null = null;
  let filterTimer: ReturnType<typeof setTimeout> | undefined;

  const showSignIn = (message = "") => {
    board?.stop();
    board = null;
    sdk.signOut();
    showOnly("signin");
    showConnection("connecting");
    byId("sign-out").hidden = true;
    setText(byId("account"), "");
    const error = byId("signin-error");
    error.hidden = message === "";
    setText(error, message);
    byId("signin-email").focus();
  };
  const startBoard = () => {
    board?.stop();
    board = new Board(sdk, showSignIn);
    setText(byId("account"), sdk.account());
    byId("sign-out").hidden = false;
    board.start();
  };

  byId<HTMLFormElement>("signin-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const email = byId<HTMLInputElement>("signin-email").value.trim();
    const password = byId<HTMLInputElement>("signin-password").value;
    const submit = byId<HTMLFormElement>("signin-form").querySelector("button")!;
    submit.disabled = true;
    sdk
      .signIn(email, password)
      .then(() => {
        byId<HTMLInputElement>("signin-password").value = "";
        startBoard();
      })
      .catch((err) => {
        const failure = isFailure(err) ? err : toFailure(err);
        const error = byId("signin-error");
        error.hidden = false;
        setText(
          error,
          failure.status === 0
            ? `PocketBase at ${origin} is not answering: ${failure.message}`
            : failure.status === 400
              ? `Wrong email or password for a ${accountNoun} of this server.`
              : failure.message,
        );
      })
      .finally(() => (submit.disabled = false));
  });
  byId("sign-out").addEventListener("click", () => showSignIn());
  byId<HTMLFormElement>("filter").addEventListener("submit", (event) => event.preventDefault());
  byId<HTMLInputElement>("filter-prefix").addEventListener("input", (event) => {
    clearTimeout(filterTimer);
    const value = (event.target as HTMLInputElement).value;
    filterTimer = setTimeout(() => board?.setPrefix(value), FILTER_DEBOUNCE_MS);
  });
  // One listener for every list's buttons and the detail's (the dialog is outside <main>).
  document.body.addEventListener("click", (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>("button[data-action], button[data-detail], button[data-expand], button[data-identity], button[data-queue]");
    if (button === null || board === null) return;
    if (button.dataset["detail"] !== undefined) board.openDetail(button.dataset["detail"], button);
    else if (button.dataset["expand"] !== undefined) board.toggleWorker(button.dataset["expand"]);
    else if (button.dataset["identity"] !== undefined) void board.toggleIdentity(button.dataset["identity"], button);
    else if (button.dataset["queue"] !== undefined) void board.setPaused(button.dataset["queue"], button.dataset["paused"] === "true");
    else void board.act(button.dataset["action"] as JobAction, button.dataset["jobId"] ?? "", button);
  });
  byId("detail-close").addEventListener("click", () => byId<HTMLDialogElement>("job-detail").close());

  if (!sdk.hasSession()) {
    showSignIn();
    return;
  }
  try {
    await sdk.refreshSession();
  } catch (err) {
    const failure = isFailure(err) ? err : toFailure(err);
    // Gone (status 0) or failing: keep the session and let the board wait for the server.
    if (failure.status >= 400 && failure.status < 500) {
      showSignIn("Your session has ended: sign in again.");
      return;
    }
  }
  startBoard();
}

void main();
