/**
 * The completions chart: one bar per bucket of /api/fleet/completions, done
 * stacked under failed, in jobs per second. Plain SVG, redrawn in place.
 */
import type { CompletionsResponse } from "../lib/completions.js";
import { formatRate } from "./format.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 120;

export interface ChartSummary {
  /** Done per second over the last complete 30 s (or less, early in a window). */
  currentRate: number;
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
  const complete = data.buckets.filter((b) => b.start + data.bucketSeconds * 1000 <= serverNowMs);
  const recent = complete.slice(-Math.max(1, Math.round(30 / data.bucketSeconds)));
  const recentSeconds = recent.length * data.bucketSeconds;
  return {
    currentRate: recentSeconds === 0 ? 0 : recent.reduce((sum, b) => sum + b.done, 0) / recentSeconds,
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
  for (const fraction of [0.5, 1]) parts.push(line(HEIGHT - HEIGHT * fraction));
  rates.forEach((rate, i) => {
    const doneHeight = (rate.done / top) * HEIGHT;
    const failedHeight = (rate.failed / top) * HEIGHT;
    if (doneHeight > 0) parts.push(bar(i * slot, HEIGHT - doneHeight, slot, doneHeight, "done"));
    if (failedHeight > 0) parts.push(bar(i * slot, HEIGHT - doneHeight - failedHeight, slot, failedHeight, "failed"));
  });
  svg.replaceChildren(...parts);
  svg.dataset["top"] = String(top);
  const minutes = Math.round((data.bucketSeconds * data.buckets.length) / 60);
  svg.setAttribute(
    "aria-label",
    `Completions per second over the last ${minutes} minutes: ${formatRate(summary.currentRate)} now, peak ${formatRate(summary.peakRate)}, ` +
      `${summary.totalDone} done and ${summary.totalFailed} failed in the window.`,
  );
  return summary;
}

function bar(x: number, y: number, width: number, height: number, kind: "done" | "failed"): SVGElement {
  const rect = document.createElementNS(SVG, "rect");
  rect.setAttribute("x", (x + width * 0.1).toFixed(2));
  rect.setAttribute("y", y.toFixed(2));
  rect.setAttribute("width", (width * 0.8).toFixed(2));
  rect.setAttribute("height", height.toFixed(2));
  rect.setAttribute("class", `bar-${kind}`);
  return rect;
}

function line(y: number): SVGElement {
  const rule = document.createElementNS(SVG, "line");
  rule.setAttribute("x1", "0");
  rule.setAttribute("x2", String(WIDTH));
  rule.setAttribute("y1", y.toFixed(2));
  rule.setAttribute("y2", y.toFixed(2));
  rule.setAttribute("class", "gridline");
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
