/**
 * The completions chart: one bar per bucket of /api/fleet/completions, done
 * stacked under failed, in jobs per second. Plain SVG, redrawn in place.
 */
import type { CompletionsResponse } from "../lib/completions.js";
import { formatRate } from "./format.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 120;

/** The headline rate averages the complete buckets of this last stretch. */
export const HEADLINE_SECONDS = 30;

export interface ChartSummary {
  /**
   * Completions (done + failed) per second over the last complete
   * HEADLINE_SECONDS (less early in a window): the mean height of the bars
   * the chart marks with the rate line, so the number and the bars agree.
   */
  currentRate: number;
  /** How many buckets currentRate averages (the last complete ones); 0 when none is complete. */
  headlineBuckets: number;
  /** Index of the bucket still filling (drawn lighter, not in currentRate); -1 when none. */
  fillingIndex: number;
  peakRate: number;
  totalDone: number;
  totalFailed: number;
}

/** Per-second rates of each bucket; the bucket still filling is divided by the seconds it has had. */
export function bucketRates(data: CompletionsResponse, serverNowMs: number): { done: number; failed: number }[] {
  const bucketMs = data.bucketSeconds * 1000;
  return data.buckets.map((b) => {
    const elapsed = Math.min(bucketMs, Math.max(1000, serverNowMs - b.start)) / 1000;
    return { done: b.done / elapsed, failed: b.failed / elapsed };
  });
}

export function summarize(data: CompletionsResponse, serverNowMs: number): ChartSummary {
  const rates = bucketRates(data, serverNowMs);
  const bucketMs = data.bucketSeconds * 1000;
  const isComplete = (b: { start: number }) => b.start + bucketMs <= serverNowMs;
  let lastComplete = -1;
  data.buckets.forEach((b, i) => {
    if (isComplete(b)) lastComplete = i;
  });
  const wanted = Math.max(1, Math.round(HEADLINE_SECONDS / data.bucketSeconds));
  const first = Math.max(0, lastComplete - wanted + 1);
  const recent = lastComplete < 0 ? [] : rates.slice(first, lastComplete + 1);
  const fillingIndex = data.buckets.findIndex((b) => !isComplete(b) && b.start <= serverNowMs);
  return {
    currentRate: recent.length === 0 ? 0 : recent.reduce((sum, r) => sum + r.done + r.failed, 0) / recent.length,
    headlineBuckets: recent.length,
    fillingIndex,
    peakRate: rates.reduce((max, r) => Math.max(max, r.done + r.failed), 0),
    totalDone: data.buckets.reduce((sum, b) => sum + b.done, 0),
    totalFailed: data.buckets.reduce((sum, b) => sum + b.failed, 0),
  };
}

/** Redraws `svg` (an <svg> element of the page) from the data. */
export function drawChart(svg: SVGSVGElement, data: CompletionsResponse, serverNowMs: number): ChartSummary {
  const rates = bucketRates(data, serverNowMs);
  const summary = summarize(data, serverNowMs);
  // A round top so that the scale does not jitter with every refresh.
  const top = niceCeiling(Math.max(1, summary.peakRate));
  svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
  svg.setAttribute("preserveAspectRatio", "none");
  const slot = WIDTH / Math.max(1, rates.length);
  const parts: SVGElement[] = [];
  for (const fraction of [0.5, 1]) parts.push(line(0, WIDTH, HEIGHT - HEIGHT * fraction, "gridline"));
  rates.forEach((rate, i) => {
    const doneHeight = (rate.done / top) * HEIGHT;
    const failedHeight = (rate.failed / top) * HEIGHT;
    // The bucket still filling is an estimate from a few seconds: lighter, and not in the headline.
    const filling = i === summary.fillingIndex;
    if (doneHeight > 0) parts.push(bar(i * slot, HEIGHT - doneHeight, slot, doneHeight, "done", filling));
    if (failedHeight > 0) parts.push(bar(i * slot, HEIGHT - doneHeight - failedHeight, slot, failedHeight, "failed", filling));
  });
  if (summary.headlineBuckets > 0) {
    // The headline, drawn over the bars it averages.
    const lastComplete = summary.fillingIndex === -1 ? rates.length - 1 : summary.fillingIndex - 1;
    const y = Math.max(1, HEIGHT - (summary.currentRate / top) * HEIGHT);
    parts.push(line((lastComplete - summary.headlineBuckets + 1) * slot, (lastComplete + 1) * slot, y, "rate-line"));
  }
  svg.replaceChildren(...parts);
  svg.dataset["top"] = String(top);
  svg.dataset["rate"] = String(summary.currentRate);
  const minutes = Math.round((data.bucketSeconds * data.buckets.length) / 60);
  svg.setAttribute(
    "aria-label",
    `Completions per second over the last ${minutes} minutes: ${formatRate(summary.currentRate)} over the last ${summary.headlineBuckets * data.bucketSeconds} s, ` +
      `peak ${formatRate(summary.peakRate)}, ${summary.totalDone} done and ${summary.totalFailed} failed in the window.`,
  );
  return summary;
}

function bar(x: number, y: number, width: number, height: number, kind: "done" | "failed", filling: boolean): SVGElement {
  const rect = document.createElementNS(SVG, "rect");
  rect.setAttribute("x", (x + width * 0.1).toFixed(2));
  rect.setAttribute("y", y.toFixed(2));
  rect.setAttribute("width", (width * 0.8).toFixed(2));
  rect.setAttribute("height", height.toFixed(2));
  rect.setAttribute("class", filling ? `bar-${kind} filling` : `bar-${kind}`);
  return rect;
}

function line(x1: number, x2: number, y: number, className: string): SVGElement {
  const rule = document.createElementNS(SVG, "line");
  rule.setAttribute("x1", x1.toFixed(2));
  rule.setAttribute("x2", x2.toFixed(2));
  rule.setAttribute("y1", y.toFixed(2));
  rule.setAttribute("y2", y.toFixed(2));
  rule.setAttribute("class", className);
  return rule;
}

/** 1, 2, 5, 10, 20, 50, ...: the least such number at or above `value`. */
export function niceCeiling(value: number): number {
  let step = 1;
  for (;;) {
    for (const m of [1, 2, 5]) if (step * m >= value) return step * m;
    step *= 10;
  }
}
