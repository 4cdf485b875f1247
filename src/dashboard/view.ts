/**
 * Drawing the page's parts from what the server answered. Rows are keyed by
 * job id and updated in place, so a refresh under load neither rebuilds the
 * tables nor moves the keyboard focus off a button the reader is on.
 */
import type { FleetStats, FlowScopeState } from "../lib/types.js";
import { breakSegments, formatCount, formatDuration, truncate } from "./format.js";
import { leaseSecondsLeft, workerGroupsShown, type Identity, type JobRow } from "./queries.js";
import { heldText, pauseButton, rateText, stateText } from "./queues.js";

export function byId<T extends Element = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`the page has no #${id}`);
  return el as unknown as T;
}

/** Sets text only when it changed (no layout work for the same number). */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

export function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
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
  /** A hint that depends on the numbers (else `hint`). */
  detail?: (stats: FleetStats) => string;
  /** Draws attention when not zero. */
  alarm?: (stats: FleetStats) => boolean;
}

const COUNT_CARDS: CountCard[] = [
  { stat: "pending", label: "Pending", hint: "due now, waiting for a worker", value: (s) => formatCount(s.counts.pending - s.scheduled) },
  { stat: "scheduled", label: "Scheduled", hint: "pending, due later", value: (s) => formatCount(s.scheduled) },
  { stat: "retrying", label: "Retrying", hint: "pending again after a failed attempt", value: (s) => formatCount(s.retrying) },
  // Claimed and running are both "a worker has it": one number, split in the hint (a short job is done before its first renew).
  {
    stat: "in-flight", label: "In flight", hint: "held by a worker",
    value: (s) => formatCount(s.counts.claimed + s.counts.running),
    detail: (s) => `${formatCount(s.counts.running)} running (renewed) · ${formatCount(s.counts.claimed)} claimed (not yet renewed)`,
  },
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
    if (card.detail !== undefined) {
      const detail = card.detail(stats);
      setText(box.querySelector(".count-hint")!, detail);
      box.title = `${card.hint}: ${detail}`;
    }
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

/**
 * Writes a key or worker id with a line-break opportunity after each
 * separator (breakSegments): it wraps between its parts, and only a part
 * wider than the whole column is cut (overflow-wrap: break-word).
 */
export function setBreakableText(el: HTMLElement, text: string): void {
  if (el.dataset["text"] === text) return;
  el.dataset["text"] = text;
  const parts: (string | HTMLElement)[] = [];
  for (const segment of breakSegments(text)) {
    if (parts.length > 0) parts.push(document.createElement("wbr"));
    parts.push(segment);
  }
  el.replaceChildren(...parts);
}

/** The job's key and id: a button that opens the job's detail (main.ts listens for [data-detail]). */
function jobCell(job: JobRow): HTMLTableCellElement {
  const cell = element("td", "job");
  const open = element("button", "job-link");
  open.type = "button";
  open.dataset["detail"] = job.id;
  open.setAttribute("aria-label", `Details of ${job.probe_key} (${job.id})`);
  open.append(element("span", "probe-key"), element("span", "job-id", job.id));
  setBreakableText(open.querySelector(".probe-key")!, job.probe_key);
  cell.append(open);
  cell.title = `${job.probe_key} (${job.id}): details`;
  return cell;
}

function refillJobCell(cell: HTMLTableCellElement, job: JobRow): void {
  setBreakableText(cell.querySelector(".probe-key")!, job.probe_key);
}

/** A table cell with the column's name for the phone layout, where rows are stacked and the header hidden. */
function cell(className: string, label: string): HTMLTableCellElement {
  const td = element("td", className);
  td.dataset["label"] = label;
  return td;
}

function attemptsText(job: JobRow): string {
  return job.max_attempts > 0 ? `${job.attempts} / ${job.max_attempts}` : String(job.attempts);
}

/**
 * In-flight jobs under one header row per holder: every worker of the rows,
 * each with its first jobs (by lease end) and a row saying how many more it
 * holds, with a button to show them all (`expanded`). Returns the shown job ids.
 */
export function renderInFlight(tbody: HTMLTableSectionElement, rows: readonly JobRow[], serverNowMs: number, expanded: ReadonlySet<string>, perWorker: number): Set<string> {
  const groups = workerGroupsShown(rows, expanded, perWorker);
  type Entry = { group: (typeof groups)[number] } | { job: JobRow } | { more: (typeof groups)[number] };
  const byKey = new Map<string, Entry>();
  const keys: string[] = [];
  for (const group of groups) {
    keys.push(`w:${group.workerId}`);
    byKey.set(`w:${group.workerId}`, { group });
    for (const job of group.shown) {
      keys.push(`j:${job.id}`);
      byKey.set(`j:${job.id}`, { job });
    }
    if (group.hidden > 0 || group.shown.length > perWorker) {
      keys.push(`m:${group.workerId}`);
      byKey.set(`m:${group.workerId}`, { more: group });
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
      } else if ("more" in entry) {
        row.className = "more";
        const td = element("td");
        td.colSpan = 5;
        const toggle = element("button", "small quiet");
        toggle.type = "button";
        toggle.dataset["expand"] = entry.more.workerId;
        td.append(element("span", "muted more-text"), toggle);
        row.append(td);
      } else {
        const job = entry.job;
        row.dataset["jobId"] = job.id;
        const lease = cell("lease", "Lease left");
        lease.append(element("span", "lease-left"));
        const actions = cell("actions", "");
        actions.append(actionButton("cancel", "Cancel", job));
        row.append(jobCell(job), cell("status", "Status"), cell("attempts", "Attempt"), lease, actions);
      }
      return row;
    },
    (row, key) => {
      const entry = byKey.get(key)!;
      if ("group" in entry) {
        setBreakableText(row.querySelector(".worker")!, entry.group.workerId || "(no holder)");
        const n = entry.group.jobs.length;
        setText(row.querySelector(".worker-count")!, ` · ${n} job${n === 1 ? "" : "s"}`);
        return;
      }
      if ("more" in entry) {
        const { workerId, hidden, jobs } = entry.more;
        const name = workerId || "(no holder)";
        setText(row.querySelector(".more-text")!, hidden > 0 ? `+ ${formatCount(hidden)} more job${hidden === 1 ? "" : "s"} held by this worker ` : "");
        const toggle = row.querySelector<HTMLButtonElement>("button")!;
        setText(toggle, hidden > 0 ? `Show all ${formatCount(jobs.length)}` : "Show fewer");
        toggle.setAttribute("aria-label", hidden > 0 ? `Show all ${jobs.length} jobs held by ${name}` : `Show fewer jobs of ${name}`);
        toggle.setAttribute("aria-expanded", String(hidden === 0));
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
  return new Set(groups.flatMap((g) => g.shown.map((r) => r.id)));
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
      const actions = cell("actions", "");
      actions.append(actionButton("requeue", "Re-queue", job, true), actionButton("cancel", "Cancel", job));
      row.append(jobCell(job), cell("holder", "Dead holder"), cell("ago", "Expired"), actions);
      return row;
    },
    (row, id) => {
      const job = byId.get(id)!;
      refillJobCell(row.cells[0]!, job);
      const reclaims = job.reclaim_count ?? 0;
      setBreakableText(row.cells[1]!, job.claimed_by + (reclaims > 0 ? ` (reclaimed ${reclaims}×)` : ""));
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
      const errorCell = cell("last-error", "Last error");
      errorCell.append(element("span", "tag", "dead-lettered"), element("span", "error-text"));
      const actions = cell("actions", "");
      actions.append(actionButton("retry", "Retry", job, true));
      row.append(jobCell(job), errorCell, cell("attempts", "Attempts"), cell("ago", "Failed"), actions);
      return row;
    },
    (row, id) => {
      const job = byId.get(id)!;
      refillJobCell(row.cells[0]!, job);
      const errorCell = row.cells[1]!;
      (errorCell.querySelector(".tag") as HTMLElement).hidden = (job.dead_lettered_at ?? "") === "";
      setText(errorCell.querySelector(".error-text")!, truncate(job.last_error || "(no error text)", 160));
      errorCell.title = job.last_error ?? "";
      setText(row.cells[2]!, attemptsText(job));
      row.cells[3]!.dataset["at"] = job.finished_at || job.dead_lettered_at || "";
    },
  );
  return new Set(byId.keys());
}

/**
 * Worker identities, one row each (keyed by id). A disabled one is marked by
 * its row's class and a "disabled" tag, and its button (main.ts listens for
 * [data-identity]) enables it again. Never-seen identities say "never"; the
 * others are `.ago` cells, ticked with the rest.
 */
export function renderIdentities(tbody: HTMLTableSectionElement, identities: readonly Identity[]): void {
  const byId = new Map(identities.map((w) => [w.id, w]));
  syncRows(
    tbody,
    identities.map((w) => w.id),
    (id) => {
      const row = element("tr");
      row.dataset["identityId"] = id;
      const name = element("td", "job");
      name.append(element("span", "probe-key"), element("span", "tag", "disabled"), element("span", "job-id", id));
      const button = element("button", "small");
      button.type = "button";
      button.dataset["identity"] = id;
      const actions = cell("actions", "");
      actions.append(button);
      row.append(name, cell("queues", "Queues"), cell("enqueue", "Can enqueue"), cell("seen", "Last seen"), actions);
      return row;
    },
    (row, id) => {
      const w = byId.get(id)!;
      row.classList.toggle("disabled", w.disabled);
      setBreakableText(row.querySelector(".probe-key")!, w.name);
      (row.querySelector(".tag") as HTMLElement).hidden = !w.disabled;
      setText(row.cells[1]!, w.queues);
      setText(row.cells[2]!, w.canEnqueue ? "yes" : "no");
      const seen = row.cells[3]!;
      seen.dataset["at"] = w.lastSeenAt;
      seen.classList.toggle("ago", w.lastSeenAt !== "");
      if (w.lastSeenAt === "") setText(seen, "never");
      const button = row.querySelector("button")!;
      const label = w.disabled ? "Enable" : "Disable";
      setText(button, label);
      button.setAttribute("aria-label", `${label} ${w.name}`);
    },
  );
}

/**
 * Queues (with a Pause or Resume button each: main.ts listens for
 * [data-queue]) or groups, one row per name: its state in words (paused,
 * parked and for how long, at a limit, or open), held of its concurrency,
 * due, and its rate window.
 */
export function renderScopes(tbody: HTMLTableSectionElement, scopes: readonly FlowScopeState[], serverNowMs: number, buttons: boolean): void {
  const byName = new Map(scopes.map((s) => [s.name, s]));
  syncRows(
    tbody,
    scopes.map((s) => s.name),
    (name) => {
      const row = element("tr");
      row.dataset["scope"] = name;
      const cells = [element("td", "job"), cell("state", "State"), cell("held", "Held"), cell("due", "Due"), cell("rate", "Rate window")];
      cells[0]!.append(element("span", "probe-key"));
      if (buttons) {
        const button = element("button", "small");
        button.type = "button";
        button.dataset["queue"] = name;
        cells.push(cell("actions", ""));
        cells[5]!.append(button);
      }
      row.append(...cells);
      return row;
    },
    (row, name) => {
      const s = byName.get(name)!;
      setBreakableText(row.querySelector(".probe-key")!, name);
      const state = stateText(s, serverNowMs);
      row.classList.toggle("held-back", state !== "open");
      setText(row.cells[1]!, state);
      setText(row.cells[2]!, heldText(s));
      setText(row.cells[3]!, formatCount(s.due));
      setText(row.cells[4]!, rateText(s));
      const button = row.querySelector("button");
      if (button !== null) {
        const b = pauseButton(s);
        setText(button, b.text);
        button.setAttribute("aria-label", b.label);
        button.dataset["paused"] = String(b.paused);
      }
    },
  );
}

/** "50 of 1,234 shown" when a list is cut at its bound, else "". */
export function boundNote(shown: number, limit: number, total: number | null): string {
  if (shown < limit) return "";
  return total === null ? `first ${formatCount(limit)} shown` : `${formatCount(limit)} of ${formatCount(total)} shown`;
}
