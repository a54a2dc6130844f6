// A small hand-written SVG: p99 (and p50) latency per second over the run, with the budget
// drawn when it is in view. No chart library: a few dozen lines of geometry.
import type { SecondPoint } from "./latencyRecorder.js";

export interface ChartOptions {
  readonly title: string;
  readonly budgetMs?: number;
  readonly width?: number;
  readonly height?: number;
  readonly yLabel?: string;
}

const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** 1, 2, 5 × 10^k at or above x: axis maxima that read well. */
export function niceCeiling(x: number): number {
  if (!(x > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(x));
  for (const step of [1, 2, 5, 10]) if (step * power >= x) return step * power;
  return 10 * power;
}

const fmt = (n: number) => (n === 0 ? "0" : n >= 10 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(2));

export function renderLatencyChart(points: readonly SecondPoint[], options: ChartOptions): string {
  const width = options.width ?? 760;
  const height = options.height ?? 320;
  const margin = { left: 64, right: 20, top: 40, bottom: 44 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const lastSecond = Math.max(1, ...points.map((p) => p.second + 1));
  const highest = Math.max(0, ...points.map((p) => p.p99Ms));
  const budgetInView = options.budgetMs !== undefined && options.budgetMs <= highest * 1.5;
  const yMax = niceCeiling(Math.max(highest, budgetInView ? options.budgetMs! : 0) * 1.1 || 1);
  const x = (second: number) => margin.left + (plotW * (second + 0.5)) / lastSecond;
  const y = (ms: number) => margin.top + plotH - (plotH * Math.min(ms, yMax)) / yMax;

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="14" font-weight="600">${escapeXml(options.title)}</text>`,
  ];
  for (let k = 0; k <= 4; k++) {
    const value = (yMax * k) / 4;
    const yy = y(value).toFixed(1);
    parts.push(
      `<line x1="${margin.left}" y1="${yy}" x2="${width - margin.right}" y2="${yy}" stroke="#e5e7eb"/>`,
      `<text x="${margin.left - 8}" y="${yy}" text-anchor="end" dominant-baseline="middle" fill="#374151">${fmt(value)}</text>`,
    );
  }
  const xStep = Math.max(1, Math.ceil(lastSecond / 10));
  for (let s = 0; s < lastSecond; s += xStep) {
    parts.push(
      `<text x="${x(s).toFixed(1)}" y="${height - margin.bottom + 18}" text-anchor="middle" fill="#374151">${s}</text>`,
    );
  }
  parts.push(
    `<line x1="${margin.left}" y1="${margin.top + plotH}" x2="${width - margin.right}" y2="${margin.top + plotH}" stroke="#6b7280"/>`,
    `<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${margin.top + plotH}" stroke="#6b7280"/>`,
    `<text x="${margin.left + plotW / 2}" y="${height - 8}" text-anchor="middle" fill="#374151">seconds</text>`,
    `<text transform="translate(16 ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="#374151">${escapeXml(options.yLabel ?? "latency, ms")}</text>`,
  );
  if (budgetInView) {
    const yy = y(options.budgetMs!).toFixed(1);
    parts.push(
      `<line x1="${margin.left}" y1="${yy}" x2="${width - margin.right}" y2="${yy}" stroke="#dc2626" stroke-dasharray="6 4"/>`,
      `<text x="${width - margin.right - 4}" y="${Number(yy) - 6}" text-anchor="end" fill="#dc2626">budget ${options.budgetMs} ms</text>`,
    );
  }
  const line = (key: "p50Ms" | "p99Ms") =>
    points.map((p) => `${x(p.second).toFixed(1)},${y(p[key]).toFixed(1)}`).join(" ");
  if (points.length > 0) {
    parts.push(
      `<polyline points="${line("p50Ms")}" fill="none" stroke="#93c5fd" stroke-width="1.5"/>`,
      `<polyline points="${line("p99Ms")}" fill="none" stroke="#1d4ed8" stroke-width="2"/>`,
      ...points.map(
        (p) =>
          `<circle cx="${x(p.second).toFixed(1)}" cy="${y(p.p99Ms).toFixed(1)}" r="2.5" fill="#1d4ed8"><title>second ${p.second}: p99 ${fmt(p.p99Ms)} ms, p50 ${fmt(p.p50Ms)} ms, ${p.count} decisions</title></circle>`,
      ),
    );
  }
  parts.push(
    `<g transform="translate(${margin.left + 10} ${margin.top + 6})">`,
    `<line x1="0" y1="0" x2="18" y2="0" stroke="#1d4ed8" stroke-width="2"/><text x="24" y="0" dominant-baseline="middle">p99 per second</text>`,
    `<line x1="130" y1="0" x2="148" y2="0" stroke="#93c5fd" stroke-width="1.5"/><text x="154" y="0" dominant-baseline="middle">p50</text>`,
    `</g>`,
    `</svg>`,
  );
  return `${parts.join("\n")}\n`;
}
