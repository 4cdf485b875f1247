/**
 * Drawing the page's parts from what the server answered. Rows are keyed by
 * job id and updated in place, so a refresh under load neither rebuilds the
 * tables nor moves the keyboard focus off a button the reader is on.
 */
import type { FleetStats } from "../lib/types.js";
import { formatCount, formatDuration, truncate } from "./format.js";
import { groupByWorker, leaseSecondsLeft, type JobRow } from "./queries.js";

export function byId<T extends Element = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`the page has no #${id}`);
  return el as unknown as T;
}

/** Sets text only when it changed (no layout work for the same number). */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

// ---- counts -------------------------------------------------------------------------------

interface CountCard {
  stat: string;
  label: string;
  hint: string;
  value(stats: FleetStats, ageSeconds: number | null): string;
  /** Draws attention when not zero. */
  alarm?: (stats: FleetStats) => boolean;
}

const COUNT_CARDS: CountCard[] = [
  { stat: "pending", label: "Pending", hint: "due now, waiting for a worker", value: (s) => formatCount(s.counts.pending - s.scheduled) },
  { stat: "scheduled", label: "Scheduled", hint: "pending, due later", value: (s) => formatCount(s.scheduled) },
  { stat: "retrying", label: "Retrying", hint: "pending again after a failed attempt", value: (s) => formatCount(s.retrying) },
  { stat: "claimed", label: "Claimed", hint: "held, not yet renewed", value: (s) => formatCount(s.counts.claimed) },
  { stat: "running", label: "Running", hint: "held and renewed", value: (s) => formatCount(s.counts.running) },
  { stat: "expired", label: "Expired leases", hint: "held by a worker that stopped renewing", value: (s) => formatCount(s.expiredLeases), alarm: (s) => s.expiredLeases > 0 },
  { stat: "done", label: "Done", hint: "finished", value: (s) => formatCount(s.counts.done) },
  { stat: "failed", label: "Failed", hint: "failed for good", value: (s) => formatCount(s.counts.failed), alarm: (s) => s.counts.failed > 0 },
  { stat: "dead-lettered", label: "Dead-lettered", hint: "out of attempts, or given up at the orphan cap", value: (s) => formatCount(s.deadLettered), alarm: (s) => s.deadLettered > 0 },
  { stat: "cancelled", label: "Cancelled", hint: "cancelled by an operator", value: (s) => formatCount(s.counts.cancelled) },
  { stat: "oldest", label: "Oldest wait", hint: "the longest a due job has waited", value: (_s, age) => (age === null ? "–" : formatDuration(age)) },
  { stat: "total", label: "Total", hint: "every job of the filter", value: (s) => formatCount(s.total) },
];

export function renderCounts(container: HTMLElement, stats: FleetStats, oldestAgeSeconds: number | null): void {
  if (container.childElementCount === 0) {
    for (const card of COUNT_CARDS) {
      const box = element("div", "count");
      box.dataset["stat"] = card.stat;
      box.title = card.hint;
      box.append(element("span", "count-label", card.label), element("span", "count-value", "–"), element("span", "count-hint", card.hint));
      container.append(box);
    }
  }
  COUNT_CARDS.forEach((card, i) => {
    const box = container.children[i] as HTMLElement;
    setText(box.querySelector(".count-value")!, card.value(stats, oldestAgeSeconds));
    box.classList.toggle("alarm", card.alarm?.(stats) ?? false);
  });
}

// ---- keyed rows ---------------------------------------------------------------------------

/**
 * Makes `tbody` hold one row per key, in order: rows of keys still wanted are
 * kept (and only moved when out of place), new ones made, the rest removed.
 */
function syncRows(tbody: HTMLTableSectionElement, keys: readonly string[], make: (key: string) => HTMLTableRowElement, fill: (row: HTMLTableRowElement, key: string) => void): void {
  const wanted = new Set(keys);
  const existing = new Map<string, HTMLTableRowElement>();
  for (const row of Array.from(tbody.rows)) {
    const key = row.dataset["key"] ?? "";
    if (wanted.has(key)) existing.set(key, row);
    else row.remove();
  }
  keys.forEach((key, i) => {
    let row = existing.get(key);
    if (row === undefined) {
      row = make(key);
      row.dataset["key"] = key;
    }
    fill(row, key);
    if (tbody.rows[i] !== row) tbody.insertBefore(row, tbody.rows[i] ?? null);
  });
}

export type JobAction = "retry" | "cancel" | "requeue";
/** Buttons carry the job id and action; one listener on the page handles them all. */
function actionButton(action: JobAction, label: string, job: JobRow, primary = false): HTMLButtonElement {
  const button = element("button", primary ? "small primary" : "small", label);
  button.type = "button";
  button.dataset["action"] = action;
  button.dataset["jobId"] = job.id;
  button.setAttribute("aria-label", `${label} ${job.probe_key}`);
  return button;
}

function jobCell(job: JobRow): HTMLTableCellElement {
  const cell = element("td", "job");
  cell.append(element("span", "probe-key", job.probe_key), element("span", "job-id", job.id));
  cell.title = `${job.probe_key} (${job.id})`;
  return cell;
}

function refillJobCell(cell: HTMLTableCellElement, job: JobRow): void {
  setText(cell.querySelector(".probe-key")!, job.probe_key);
}

function attemptsText(job: JobRow): string {
  return job.max_attempts > 0 ? `${job.attempts} / ${job.max_attempts}` : String(job.attempts);
}

/** In-flight jobs under one header row per holder. Returns the shown job ids. */
export function renderInFlight(tbody: HTMLTableSectionElement, rows: readonly JobRow[], serverNowMs: number): Set<string> {
  const groups = groupByWorker(rows);
  const byKey = new Map<string, { group: (typeof groups)[number] } | { job: JobRow }>();
  const keys: string[] = [];
  for (const group of groups) {
    keys.push(`w:${group.workerId}`);
    byKey.set(`w:${group.workerId}`, { group });
    for (const job of group.jobs) {
      keys.push(`j:${job.id}`);
      byKey.set(`j:${job.id}`, { job });
    }
  }
  syncRows(
    tbody,
    keys,
    (key) => {
      const entry = byKey.get(key)!;
      const row = element("tr");
      if ("group" in entry) {
        row.className = "group";
        const th = element("th");
        th.scope = "rowgroup";
        th.colSpan = 5;
        th.append(element("span", "worker"), element("span", "muted worker-count"));
        row.append(th);
      } else {
        const job = entry.job;
        row.dataset["jobId"] = job.id;
        const lease = element("td", "lease");
        lease.append(element("span", "lease-left"));
        const actions = element("td", "actions");
        actions.append(actionButton("cancel", "Cancel", job));
        row.append(jobCell(job), element("td", "status"), element("td", "attempts"), lease, actions);
      }
      return row;
    },
    (row, key) => {
      const entry = byKey.get(key)!;
      if ("group" in entry) {
        setText(row.querySelector(".worker")!, entry.group.workerId || "(no holder)");
        const n = entry.group.jobs.length;
        setText(row.querySelector(".worker-count")!, ` · ${n} job${n === 1 ? "" : "s"}`);
        return;
      }
      const job = entry.job;
      refillJobCell(row.cells[0]!, job);
      setText(row.cells[1]!, job.status);
      row.cells[1]!.className = `status status-${job.status}`;
      setText(row.cells[2]!, attemptsText(job));
      const left = row.querySelector<HTMLElement>(".lease-left")!;
      left.dataset["lease"] = job.lease_expires_at;
    },
  );
  tickLeases(tbody, serverNowMs);
  return new Set(rows.map((r) => r.id));
}

/**
 * Rewrites every lease countdown from the (estimated) server time; the page
 * calls it each second. Answers how many leases have run out since the list
 * was read: those jobs now wait for the sweeper, with no write that would send an event.
 */
export function tickLeases(tbody: HTMLTableSectionElement, serverNowMs: number): number {
  let lapsed = 0;
  for (const left of Array.from(tbody.querySelectorAll<HTMLElement>(".lease-left"))) {
    const seconds = leaseSecondsLeft(left.dataset["lease"] ?? "", serverNowMs);
    if (seconds === null || seconds <= 0) {
      lapsed++;
      setText(left, "expired");
      left.dataset["seconds"] = "0";
      left.classList.add("lapsed");
    } else {
      setText(left, formatDuration(Math.ceil(seconds)));
      left.dataset["seconds"] = String(Math.ceil(seconds));
      left.classList.toggle("soon", seconds < 5);
    }
  }
  return lapsed;
}

/** How long ago each `.ago` cell's instant was, from the (estimated) server time. */
export function tickAgo(root: HTMLElement, serverNowMs: number, parse: (text: string) => number | null): void {
  for (const cell of Array.from(root.querySelectorAll<HTMLElement>(".ago"))) {
    const at = parse(cell.dataset["at"] ?? "");
    setText(cell, at === null ? "–" : `${formatDuration((serverNowMs - at) / 1000)} ago`);
  }
}

export function renderExpired(tbody: HTMLTableSectionElement, rows: readonly JobRow[]): Set<string> {
  const byId = new Map(rows.map((r) => [r.id, r]));
  syncRows(
    tbody,
    rows.map((r) => r.id),
    (id) => {
      const job = byId.get(id)!;
      const row = element("tr");
      row.dataset["jobId"] = id;
      const actions = element("td", "actions");
      actions.append(actionButton("requeue", "Re-queue", job, true), actionButton("cancel", "Cancel", job));
      row.append(jobCell(job), element("td", "holder"), element("td", "ago"), actions);
      return row;
    },
    (row, id) => {
      const job = byId.get(id)!;
      refillJobCell(row.cells[0]!, job);
      setText(row.cells[1]!, job.claimed_by + (job.reclaim_count > 0 ? ` (reclaimed ${job.reclaim_count}×)` : ""));
      row.cells[2]!.dataset["at"] = job.lease_expires_at;
    },
  );
  return new Set(byId.keys());
}

export function renderFailed(tbody: HTMLTableSectionElement, rows: readonly JobRow[]): Set<string> {
  const byId = new Map(rows.map((r) => [r.id, r]));
  syncRows(
    tbody,
    rows.map((r) => r.id),
    (id) => {
      const job = byId.get(id)!;
      const row = element("tr");
      row.dataset["jobId"] = id;
      const errorCell = element("td", "last-error");
      errorCell.append(element("span", "tag", "dead-lettered"), element("span", "error-text"));
      const actions = element("td", "actions");
      actions.append(actionButton("retry", "Retry", job, true));
      row.append(jobCell(job), errorCell, element("td", "attempts"), element("td", "ago"), actions);
      return row;
    },
    (row, id) => {
      const job = byId.get(id)!;
      refillJobCell(row.cells[0]!, job);
      const errorCell = row.cells[1]!;
      (errorCell.querySelector(".tag") as HTMLElement).hidden = job.dead_lettered_at === "";
      setText(errorCell.querySelector(".error-text")!, truncate(job.last_error || "(no error text)", 160));
      errorCell.title = job.last_error;
      setText(row.cells[2]!, attemptsText(job));
      row.cells[3]!.dataset["at"] = job.finished_at || job.dead_lettered_at;
    },
  );
  return new Set(byId.keys());
}

/** "50 of 1,234 shown" when a list is cut at its bound, else "". */
export function boundNote(shown: number, limit: number, total: number | null): string {
  if (shown < limit) return "";
  return total === null ? `first ${formatCount(limit)} shown` : `${formatCount(limit)} of ${formatCount(total)} shown`;
}
