/**
 * A job's detail, in a modal dialog opened from any list: its own record
 * (read by id, a primary-key lookup), its payload, result and progress, and
 * its history from probe_job_events (the batch endpoints' transitions of the
 * retained window, read once, then followed live). Escape closes it and the
 * focus goes back to what opened it.
 *
 * Payload and result may hold a megabyte of JSON each: they are shown cut to
 * a preview; "Show all" draws the rest in chunks the browser lays out only
 * when scrolled to (content-visibility), so the page does not freeze.
 */
import { HELD_STATUSES, inStatusClass, RETRYABLE_STATUSES } from "../lib/job-schema.js";
import { parsePbDate } from "../lib/lease.js";
import { formatBytes, formatCount, formatDuration } from "./format.js";
import {
  DETAIL_FIELDS, DETAIL_FIELDS_WITH_PAYLOAD, historyOfJob, historySince, JOB_EVENT_FIELDS, JOB_EVENTS_COLLECTION, JOB_EVENTS_KEEP_MS,
  JOB_HISTORY_LIMIT, JOB_HISTORY_SORT, jobHistoryFilter, JOBS_COLLECTION, sortHistory, type HistoryEntry, type JobRecord,
} from "./queries.js";
import type { RequestFailure, SdkBinding } from "./sdk-binding.js";
import { ThrottledRefresh } from "./throttle.js";
import { byId, element, setBreakableText, setText, type JobAction } from "./view.js";

/** A JSON value longer than this (characters of its indented text) or ... */
export const PREVIEW_CHARS = 2_000;
/** ... with more lines than this is shown cut, with a button for the rest. */
export const PREVIEW_LINES = 30;
/** Lines per chunk of a value shown whole (each chunk is laid out only when on screen). */
const CHUNK_LINES = 200;
/** The least time between two reads of the open job's record. */
const DETAIL_REFRESH_MS = 1_000;

/** The JSON text of a stored value, "" for none (PocketBase gives null for an empty json field). */
export function jsonText(value: unknown): string {
  if (value === null || value === undefined || value === "") return "";
  return JSON.stringify(value, null, 2);
}

/** The preview of a long text: its first lines up to PREVIEW_LINES and PREVIEW_CHARS; null when it is short enough to show whole. */
export function previewOf(text: string): string | null {
  if (text.length <= PREVIEW_CHARS && countLines(text, PREVIEW_LINES + 1) <= PREVIEW_LINES) return null;
  let end = 0;
  for (let line = 0; line < PREVIEW_LINES && end < text.length; line++) {
    const next = text.indexOf("\n", end);
    end = next === -1 ? text.length : next + 1;
  }
  return text.slice(0, Math.min(end, PREVIEW_CHARS)).trimEnd();
}

/** Lines of `text`, counted up to `max` (a megabyte is not split to count it). */
export function countLines(text: string, max = Number.POSITIVE_INFINITY): number {
  let lines = 1;
  for (let i = text.indexOf("\n"); i !== -1 && lines < max; i = text.indexOf("\n", i + 1)) lines++;
  return lines;
}

/** A short description of a transition, for the history table. */
export function describeEntry(entry: HistoryEntry): string {
  switch (entry.status) {
    case "claimed":
      return `claimed by ${entry.claimed_by}`;
    case "running":
      return `renewed by ${entry.claimed_by}`;
    case "pending":
      return entry.claimed_by === "" ? "pending" : `pending again (${entry.claimed_by} let go)`;
    default:
      return entry.status;
  }
}

type Opener = { element: HTMLElement; section: HTMLElement };

export class JobDetail {
  private record: JobRecord | null = null;
  private history: HistoryEntry[] = [];
  private historyTruncated = false;
  private liveCount = 0;
  private readonly refresher: ThrottledRefresh;
  private readonly shownJson = new Map<string, string>();
  private closed = false;

  constructor(
    readonly jobId: string,
    private readonly sdk: SdkBinding,
    private readonly serverNow: () => number,
    private readonly opener: Opener,
    private readonly onFailure: (failure: RequestFailure) => void,
    private readonly onClosed: () => void,
  ) {
    this.refresher = new ThrottledRefresh(() => this.readRecord(false), DETAIL_REFRESH_MS);
  }

  get job(): JobRecord | null {
    return this.record;
  }

  /** Opens the dialog and reads the record (with its payload), then the history. */
  async open(): Promise<void> {
    const dialog = byId<HTMLDialogElement>("job-detail");
    this.clear();
    setText(byId("detail-title"), "Loading…");
    setText(byId("detail-id"), this.jobId);
    dialog.addEventListener("close", this.handleClose, { once: true });
    dialog.showModal();
    byId("detail-close").focus();
    await this.readRecord(true);
    if (this.record !== null) await this.readHistory();
  }

  /** Closes it at once (another detail opens, or the board stops): its close event would come too late. */
  close(): void {
    if (this.closed) return;
    const dialog = byId<HTMLDialogElement>("job-detail");
    dialog.removeEventListener("close", this.handleClose);
    this.finish();
    if (dialog.open) dialog.close();
  }

  /** Escape, the Close button, or the form: back where the reader was. */
  private readonly handleClose = (): void => {
    if (this.closed) return;
    this.finish();
    // The button that opened it, or its list if the row is gone meanwhile.
    const target = this.opener.element.isConnected ? this.opener.element : this.opener.section;
    if (target.tabIndex < 0 && !(target instanceof HTMLButtonElement)) target.tabIndex = -1;
    target.focus();
  };

  private finish(): void {
    this.closed = true;
    this.refresher.stop();
    this.clear();
    this.onClosed();
  }

  /** The job changed (a realtime event): re-read its record, at most once a second. */
  changed(): void {
    if (!this.closed) this.refresher.request();
  }

  /** A batch event record that lists this job (from the realtime stream): one more history entry, no read. */
  addBatchEvent(event: { id: string; source?: unknown; created?: unknown; changes?: unknown }): void {
    if (this.closed) return;
    const entries = historyOfJob([event], this.jobId);
    if (entries.length === 0) return;
    this.history = sortHistory([...entries, ...this.history]);
    this.drawHistory();
  }

  /** A record save of this job seen on the realtime stream (claim, renew, release, cancel, retry by id: no batch event). */
  addRecordSave(record: { [field: string]: unknown }, at: string): void {
    if (this.closed) return;
    this.history = sortHistory([
      {
        eventId: `live:${++this.liveCount}`,
        at,
        source: "record save (seen live)",
        status: String(record["status"] ?? ""),
        claimed_by: String(record["claimed_by"] ?? ""),
        lease_expires_at: String(record["lease_expires_at"] ?? ""),
        version: Number(record["version"] ?? 0),
      },
      ...this.history,
    ]);
    this.drawHistory();
  }

  /** Each second: the relative times and the lease countdown. */
  tick(): void {
    if (this.closed) return;
    const now = this.serverNow();
    for (const el of Array.from(byId("job-detail").querySelectorAll<HTMLElement>("[data-rel]"))) {
      const at = parsePbDate(el.dataset["rel"] ?? "");
      if (at === null) continue;
      const seconds = (at - now) / 1000;
      const future = el.dataset["future"] === "lease";
      setText(el, future ? (seconds > 0 ? `in ${formatDuration(Math.ceil(seconds))}` : `expired ${formatDuration(-seconds)} ago`) : relative(seconds));
    }
  }

  private async readRecord(withPayload: boolean): Promise<void> {
    if (this.closed) return;
    try {
      const record = await this.sdk.getOne<JobRecord>(JOBS_COLLECTION, this.jobId, withPayload ? DETAIL_FIELDS_WITH_PAYLOAD : DETAIL_FIELDS);
      if (this.closed) return;
      // The payload is written once (at enqueue): refreshes leave it out and keep the first read's.
      if (!withPayload && this.record !== null) record.payload = this.record.payload;
      this.record = record;
      byId("detail-error").hidden = true;
      this.drawRecord();
    } catch (err) {
      if (this.closed) return;
      const failure = err as RequestFailure;
      if (failure.status === 404) {
        this.showError(this.record === null ? `No job ${this.jobId} on this server.` : "This job has been deleted (retention, or by hand).");
      } else if (failure.status === 0 || failure.status === 401 || failure.status === 403) {
        this.onFailure(failure);
      } else {
        this.showError(`Reading the job failed: ${failure.message}`);
      }
      if (this.record === null) setText(byId("detail-title"), "Job not found");
    }
  }

  private async readHistory(): Promise<void> {
    if (this.closed || this.record === null) return;
    const note = byId("detail-history-note");
    setText(note, "Reading…");
    try {
      const events = await this.sdk.list<{ id: string; source: string; created: string; changes: unknown }>(JOB_EVENTS_COLLECTION, JOB_HISTORY_LIMIT, {
        filter: jobHistoryFilter(this.jobId, historySince(this.serverNow(), this.record.created)),
        sort: JOB_HISTORY_SORT,
        fields: JOB_EVENT_FIELDS,
      });
      if (this.closed) return;
      this.historyTruncated = events.length >= JOB_HISTORY_LIMIT;
      // Entries that arrived live while the read was on its way are kept (sortHistory drops repeats).
      this.history = sortHistory([...historyOfJob(events, this.jobId), ...this.history]);
      this.drawHistory();
    } catch (err) {
      if (this.closed) return;
      const failure = err as RequestFailure;
      if (failure.status === 0 || failure.status === 401 || failure.status === 403) this.onFailure(failure);
      setText(note, `Reading the history failed: ${failure.message}`);
    }
  }

  private showError(text: string): void {
    const box = byId("detail-error");
    setText(box, text);
    box.hidden = false;
  }

  private clear(): void {
    this.shownJson.clear();
    for (const id of ["detail-fields", "detail-actions", "detail-payload", "detail-result", "detail-progress", "detail-last-error"]) byId(id).replaceChildren();
    byId<HTMLTableElement>("detail-history").tBodies[0]!.replaceChildren();
    byId("detail-error").hidden = true;
    delete byId("detail-title").dataset["text"];
    setText(byId("detail-status"), "");
    setText(byId("detail-history-note"), "");
  }

  private drawRecord(): void {
    const job = this.record!;
    setBreakableText(byId("detail-title"), job.probe_key);
    setText(byId("detail-id"), job.id);
    const status = byId("detail-status");
    setText(status, job.dead_lettered_at !== "" && job.status === "failed" ? "failed · dead-lettered" : job.status);
    status.className = `status-pill status-${job.status}`;
    this.drawActions(job);
    const leaseLive = (parsePbDate(job.lease_expires_at) ?? 0) > this.serverNow();
    const held = inStatusClass(HELD_STATUSES, job.status);
    const fields: [string, string | HTMLElement][] = [
      ["Status", statusExplained(job)],
      ["Attempts", job.max_attempts > 0 ? `${job.attempts} of ${job.max_attempts}` : String(job.attempts)],
      ["Priority", String(job.priority)],
      ["Run at", dateValue(job.run_at)],
      ["Created", dateValue(job.created)],
      ["Updated", dateValue(job.updated)],
    ];
    if (job.claimed_by !== "") fields.push([held ? "Held by" : "Last holder", breakable(job.claimed_by)]);
    if (job.claimed_at !== "") fields.push(["Claimed at", dateValue(job.claimed_at)]);
    if (held) fields.push(["Lease", job.lease_expires_at === "" ? "none (expired)" : dateValue(job.lease_expires_at, "lease", leaseLive ? "" : "expired")]);
    if (job.finished_at !== "") fields.push(["Finished at", dateValue(job.finished_at)]);
    if (job.dead_lettered_at !== "") fields.push(["Dead-lettered at", dateValue(job.dead_lettered_at)]);
    if (job.requeued_at !== "") fields.push(["Re-queued at", dateValue(job.requeued_at)]);
    if (job.reclaim_count > 0) fields.push(["Reclaimed", `${job.reclaim_count}× (taken over after a lease ran out)`]);
    if (job.consecutive_orphan_count > 0) fields.push(["Orphaned in a row", String(job.consecutive_orphan_count)]);
    if (job.unique_key !== "") fields.push(["Unique key", breakable(job.unique_key)]);
    fields.push(["Version", String(job.version)]);
    const list = byId("detail-fields");
    list.replaceChildren(...fields.flatMap(([name, value]) => {
      const dd = element("dd");
      dd.append(value);
      return [element("dt", undefined, name), dd];
    }));
    const lastError = byId("detail-last-error");
    lastError.replaceChildren(job.last_error === "" ? element("p", "muted", "none") : element("pre", "error-block", job.last_error));
    lastError.parentElement!.classList.toggle("is-empty", job.last_error === "");
    this.drawJson("detail-payload", "payload", job.payload);
    this.drawJson("detail-result", "result", job.result);
    this.drawJson("detail-progress", "progress", job.progress);
    this.tick();
  }

  private drawActions(job: JobRecord): void {
    const box = byId("detail-actions");
    const actions: [JobAction, string][] = [];
    const held = inStatusClass(HELD_STATUSES, job.status);
    if (inStatusClass(RETRYABLE_STATUSES, job.status)) actions.push(["retry", "Retry"]);
    if (held && (parsePbDate(job.lease_expires_at) ?? 0) <= this.serverNow()) actions.push(["requeue", "Re-queue"]);
    if (job.status === "pending" || held) actions.push(["cancel", "Cancel job"]);
    const key = actions.map(([a]) => a).join(",");
    if (box.dataset["actions"] === key) return;
    box.dataset["actions"] = key;
    box.replaceChildren(...actions.map(([action, label], i) => {
      const button = element("button", i === 0 && action !== "cancel" ? "small primary" : "small", label);
      button.type = "button";
      button.dataset["action"] = action;
      button.dataset["jobId"] = job.id;
      return button;
    }));
  }

  /** A JSON field: whole when short, else a preview with "Show all" and "Download". Redrawn only when its value changed. */
  private drawJson(containerId: string, name: string, value: unknown): void {
    const text = jsonText(value);
    if (this.shownJson.get(containerId) === text) return;
    this.shownJson.set(containerId, text);
    const box = byId(containerId);
    box.parentElement!.classList.toggle("is-empty", text === "");
    if (text === "") {
      box.replaceChildren(element("p", "muted", "none"));
      return;
    }
    const preview = previewOf(text);
    if (preview === null) {
      box.replaceChildren(element("pre", "json", text));
      return;
    }
    const lines = countLines(text);
    const size = formatBytes(new Blob([text]).size);
    const note = element("p", "muted json-note", `Showing the first lines of ${formatCount(lines)} (${size}).`);
    const showAll = element("button", "small", `Show all ${formatCount(lines)} lines`);
    showAll.type = "button";
    showAll.setAttribute("aria-label", `Show all of the ${name} (${formatCount(lines)} lines, ${size})`);
    const download = element("button", "small quiet", "Download JSON");
    download.type = "button";
    download.setAttribute("aria-label", `Download the ${name} as a JSON file`);
    const bar = element("div", "json-bar");
    bar.append(note, showAll, download);
    const pre = element("pre", "json", `${preview}\n…`);
    box.replaceChildren(bar, pre);
    showAll.addEventListener("click", () => {
      const whole = wholeJson(text);
      pre.replaceWith(whole);
      setText(note, `All ${formatCount(lines)} lines (${size}).`);
      showAll.remove();
      whole.focus();
    });
    download.addEventListener("click", () => {
      // A blob: URL is this page's own origin; nothing leaves the browser.
      const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
      const link = element("a");
      link.href = url;
      link.download = `${this.jobId}-${name}.json`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
  }

  private drawHistory(): void {
    const tbody = byId<HTMLTableElement>("detail-history").tBodies[0]!;
    tbody.replaceChildren(...this.history.map((entry) => {
      const row = element("tr");
      row.dataset["eventId"] = entry.eventId;
      const time = element("td", "when");
      time.append(element("span", undefined, entry.at.slice(11, 19) || "–"));
      row.append(
        time,
        element("td", `status status-${entry.status}`, describeEntry(entry)),
        leaseCell(entry),
        element("td", "version", String(entry.version)),
        element("td", "source", entry.source),
      );
      return row;
    }));
    const n = this.history.length;
    const minutes = Math.round(JOB_EVENTS_KEEP_MS / 60_000);
    setText(
      byId("detail-history-note"),
      n === 0
        ? `No batch transition of this job in the last ${minutes} minutes.`
        : `${formatCount(n)} transition${n === 1 ? "" : "s"}, newest first${this.historyTruncated ? ` (the latest ${JOB_HISTORY_LIMIT} batch events read)` : ""}. Times are the server's (UTC).`,
    );
  }
}

function relative(seconds: number): string {
  return seconds <= 0 ? `${formatDuration(-seconds)} ago` : `in ${formatDuration(seconds)}`;
}

function breakable(text: string): HTMLElement {
  const span = element("span", "mono breakable");
  setBreakableText(span, text);
  return span;
}

/** A stored date as the server wrote it (UTC, to the second), and how long ago (or until) it is, kept current by tick(). */
function dateValue(text: string, kind: "" | "lease" = "", extra = ""): HTMLElement {
  const span = element("span");
  if (text === "") {
    span.textContent = "–";
    return span;
  }
  span.append(element("span", "mono", `${text.slice(0, 19)} UTC`), " ");
  const rel = element("span", extra === "expired" ? "muted rel lapsed" : "muted rel");
  rel.dataset["rel"] = text;
  if (kind === "lease") rel.dataset["future"] = "lease";
  span.append(rel);
  return span;
}

function leaseCell(entry: HistoryEntry): HTMLTableCellElement {
  const td = element("td", "lease");
  const held = inStatusClass(HELD_STATUSES, entry.status);
  td.textContent = held && entry.lease_expires_at !== "" ? `until ${entry.lease_expires_at.slice(11, 19)}` : "–";
  return td;
}

/** The status with what it means here (claimed vs running is the one new readers ask about). */
function statusExplained(job: JobRecord): string {
  switch (job.status) {
    case "pending":
      return job.attempts > 0 ? "pending: waiting for a worker, after a failed attempt" : "pending: waiting for a worker";
    case "claimed":
      return "claimed: a worker won it; its lease has not been renewed yet";
    case "running":
      return "running: its holder has renewed the lease (a heartbeat)";
    case "done":
      return "done";
    case "failed":
      return job.dead_lettered_at !== "" ? "failed, dead-lettered: out of attempts (or given up at the orphan cap)" : "failed";
    case "cancelled":
      return "cancelled by an operator";
  }
}

/** The whole of a long JSON text, in chunks laid out only when scrolled to: a megabyte opens in a few tens of milliseconds. */
function wholeJson(text: string): HTMLElement {
  const box = element("div", "json whole");
  box.tabIndex = 0;
  box.setAttribute("role", "region");
  box.setAttribute("aria-label", "The whole value");
  let start = 0;
  const chunks: HTMLElement[] = [];
  while (start < text.length) {
    let end = start;
    let lines = 0;
    while (lines < CHUNK_LINES && end < text.length) {
      const next = text.indexOf("\n", end);
      end = next === -1 ? text.length : next + 1;
      lines++;
    }
    const chunk = element("div", "chunk", text.slice(start, end));
    // Its height before it is laid out: the scrollbar is right from the start.
    chunk.style.containIntrinsicSize = `auto ${lines * 1.35}em`;
    chunks.push(chunk);
    start = end;
  }
  box.append(...chunks);
  return box;
}
