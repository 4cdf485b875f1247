/**
 * The board: the signed-in page, kept live. How it stays light with 100,000
 * jobs and hundreds of changes a second: realtime events carry three fields
 * and only mark parts of the page stale; each part is re-read by a
 * ThrottledRefresh (at most one request in flight, at most one per gap);
 * numbers come from the server's aggregates (/api/fleet/stats,
 * /api/fleet/completions) and lists are bounded pages.
 */
import type { CompletionsResponse } from "../lib/completions.js";
import { formatPbDate, parsePbDate } from "../lib/lease.js";
import type { FleetStats } from "../lib/types.js";
import { actOnJob, toggleIdentity, type ActionContext } from "./actions.js";
import { drawChart } from "./chart.js";
import { JobDetail } from "./detail.js";
import { showEmptyState } from "./empty-state.js";
import { FlowCard } from "./flow-card.js";
import { formatCount, formatDuration, formatRate, ServerClock } from "./format.js";
import { Outage, serverAnswers, showConnection } from "./outage.js";
import { notice, showOnly } from "./page.js";
import {
  CHART_BUCKET_SECONDS, CHART_WINDOW_SECONDS, EVENT_FIELDS, EXPIRED_LIMIT, EXPIRED_SORT, expiredFilter, FAILED_LIMIT, FAILED_SORT,
  failedFilter, IN_FLIGHT_FIELDS, IN_FLIGHT_LIMIT, IN_FLIGHT_SORT, inFlightFilter, isSafeJobId, JOB_EVENT_FIELDS, JOB_EVENTS_COLLECTION,
  identityOf, JOBS_COLLECTION, JOBS_SHOWN_PER_WORKER, LIST_FIELDS, matchesPrefix, prefixQuery, staleTopics, TOPICS, WORKERS_COLLECTION,
  WORKERS_FIELDS, WORKERS_LIMIT, WORKERS_SORT, type Identity, type JobRow, type ShownJobs, type Topic,
} from "./queries.js";
import { asFailure, toFailure, type JobEvent, type RequestFailure, type SdkBinding, type Unsubscribe } from "./sdk-binding.js";
import { ThrottledRefresh } from "./throttle.js";
import {
  boundNote, byId, renderCounts, renderExpired, renderFailed, renderIdentities, renderInFlight, setText, tickAgo, tickLeases, type JobAction,
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

interface ListState {
  rows: JobRow[];
  ids: Set<string>;
}

export class Board implements ActionContext {
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
  /** The Queues card, read like the other parts. */
  readonly flowCard = new FlowCard(this, () => this.clock.now(), () => this.refresh("flow"));

  constructor(
    readonly sdk: SdkBinding,
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
    for (const note of ["filter-note", "in-flight-note", "expired-note", "failed-note", "chart-rate", "chart-rate-note", "chart-note"]) setText(byId(note), "");
    this.completions = null;
    byId("chart-svg").replaceChildren();
    byId("empty").hidden = true;
    byId("panels").hidden = false;
    for (const list of ["inFlight", "expired", "failed"] as const) this.showList(list, [], false);
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
          // A failure it shows on the card proves nothing of an outage.
          if (!(await this.flowCard.read())) return;
          break;
        }
      }
      this.outage.clear(startedAt);
    } catch (err) {
      this.failed(asFailure(err), topic);
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

  /** A read or an action failed: an outage or an ended session is the page's matter; else it is said where it belongs. */
  failed(failure: RequestFailure, topic?: Topic): void {
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
    if (empty) showEmptyState(this.prefix, this.sdk);
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

  /** `answered` false: emptied for a new filter, so neither rows nor "none" until the list's own answer. */
  private showList(list: "inFlight" | "expired" | "failed", rows: JobRow[], answered = true): void {
    const table = list === "inFlight" ? "in-flight" : list;
    const tbody = byId<HTMLTableElement>(table).tBodies[0]!;
    const ids =
      list === "inFlight"
        ? renderInFlight(tbody, rows, this.clock.now(), this.expandedWorkers, JOBS_SHOWN_PER_WORKER)
        : list === "expired"
          ? renderExpired(tbody, rows)
          : renderFailed(tbody, rows);
    this.lists[list] = { rows, ids };
    byId(`${table}-empty`).hidden = !answered || rows.length > 0;
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


  /** Each second: countdowns, "ago" texts, the oldest wait, and whether the realtime stream is up. */
  private tick(): void {
    const now = this.clock.now();
    const lapsed = tickLeases(byId<HTMLTableElement>("in-flight").tBodies[0]!, now);
    // A lease ran out: the job now waits for the sweeper, and no event says so.
    if (lapsed > 0) this.refresh("inFlight", "expired", "stats");
    tickAgo(byId("expired"), now, parsePbDate);
    tickAgo(byId("failed"), now, parsePbDate);
    tickAgo(byId("workers"), now, parsePbDate);
    this.flowCard.tick(now);
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

  /** A button of a list row or of the detail (its job is one shown). */
  act(action: JobAction, jobId: string, button: HTMLButtonElement): Promise<void> {
    const job = [...this.lists.inFlight.rows, ...this.lists.expired.rows, ...this.lists.failed.rows, ...(this.detail?.job ? [this.detail.job] : [])]
      .find((r) => r.id === jobId);
    return job === undefined ? Promise.resolve() : actOnJob(this, action, job, button, () => {
      this.refreshAll();
      if (this.detail?.jobId === jobId) this.detail.changed();
    });
  }

  /** A worker identity's Disable or Enable button. */
  toggleIdentity(id: string, button: HTMLButtonElement): Promise<void> {
    const identity = this.identities?.find((w) => w.id === id);
    return identity === undefined ? Promise.resolve() : toggleIdentity(this, identity, button, () => this.refresh("workers"));
  }
}
