// Two small hand-written SVG charts (grouped bars, lines over a numeric axis), enough for the
// bench results page and the demo report; no chart library. Either may use a log scale, for
// values spanning decades.

export interface Bar {
  readonly name: string;
  readonly value: number;
}

export interface BarGroup {
  readonly label: string;
  readonly bars: readonly Bar[];
}

export interface Series {
  readonly name: string;
  readonly points: ReadonlyArray<readonly [x: number, y: number]>;
}

interface Frame {
  readonly title: string;
  readonly yLabel: string;
  readonly logY?: boolean;
  /** A horizontal reference line, e.g. the budget. */
  readonly reference?: { readonly y: number; readonly label: string };
}

const PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563", "#ca8a04"];
const W = 760;
const H = 340;
const M = { left: 70, right: 20, top: 40, bottom: 70 };
const PW = W - M.left - M.right;
const PH = H - M.top - M.bottom;

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
export const formatNumber = (n: number): string =>
  n >= 100_000
    ? `${Math.round(n / 1000)}k`
    : n >= 100
      ? n.toFixed(0)
      : n >= 10
        ? n.toFixed(1)
        : n >= 1
          ? n.toFixed(2)
          : n.toPrecision(2);

/** Axis ticks are round numbers: 0.1, 1, 10, 250, 1000, 20k. */
const tickLabel = (t: number) =>
  t >= 1_000_000
    ? `${t / 1_000_000}M`
    : t >= 10_000
      ? `${t / 1000}k`
      : t >= 1
        ? String(t)
        : String(Number(t.toPrecision(1)));

/** y → pixel, and the tick values, for a linear axis from 0 or a log axis over whole decades. */
function yAxis(values: readonly number[], logY: boolean) {
  const positive = values.filter((v) => v > 0 && Number.isFinite(v));
  const top = Math.max(1e-9, ...positive);
  if (logY) {
    const lo = Math.floor(Math.log10(Math.min(top, ...positive)));
    const hi = Math.max(lo + 1, Math.ceil(Math.log10(top)));
    const y = (v: number) => M.top + PH - (PH * (Math.log10(Math.max(v, 10 ** lo)) - lo)) / (hi - lo);
    return { y, ticks: Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i)) };
  }
  const step = niceStep(top / 5);
  const max = Math.ceil((top * 1.1) / step) * step;
  const y = (v: number) => M.top + PH - (PH * Math.max(0, v)) / max;
  return { y, ticks: Array.from({ length: Math.round(max / step) + 1 }, (_, i) => i * step) };
}

function niceStep(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

function frame({ title, yLabel, reference }: Frame, axis: ReturnType<typeof yAxis>): string[] {
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="14" font-weight="600">${esc(title)}</text>`,
    `<text transform="translate(16 ${M.top + PH / 2}) rotate(-90)" text-anchor="middle" fill="#374151">${esc(yLabel)}</text>`,
  ];
  for (const t of axis.ticks) {
    const y = axis.y(t).toFixed(1);
    parts.push(
      `<line x1="${M.left}" x2="${M.left + PW}" y1="${y}" y2="${y}" stroke="#e5e7eb"/>`,
      `<text x="${M.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle" fill="#4b5563">${tickLabel(t)}</text>`,
    );
  }
  parts.push(`<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + PH}" stroke="#9ca3af"/>`);
  if (reference) {
    const y = axis.y(reference.y).toFixed(1);
    parts.push(
      `<line x1="${M.left}" x2="${M.left + PW}" y1="${y}" y2="${y}" stroke="#b91c1c" stroke-dasharray="6 4"/>`,
      `<text x="${M.left + PW - 4}" y="${Number(y) - 5}" text-anchor="end" fill="#b91c1c">${esc(reference.label)}</text>`,
    );
  }
  return parts;
}

function legend(names: readonly string[]): string[] {
  let x = M.left;
  const y = H - 16;
  return names.flatMap((name, i) => {
    const out = [
      `<rect x="${x}" y="${y - 9}" width="12" height="12" fill="${PALETTE[i % PALETTE.length]}"/>`,
      `<text x="${x + 16}" y="${y + 1}" fill="#111827">${esc(name)}</text>`,
    ];
    x += 28 + name.length * 7;
    return out;
  });
}

export function barChart(groups: readonly BarGroup[], options: Frame): string {
  const names = [...new Set(groups.flatMap((g) => g.bars.map((b) => b.name)))];
  const axis = yAxis(
    [
      ...groups.flatMap((g) => g.bars.map((b) => b.value)),
      ...(options.reference ? [options.reference.y] : []),
    ],
    options.logY ?? false,
  );
  const parts = frame(options, axis);
  const groupW = PW / Math.max(1, groups.length);
  const barW = Math.min(48, (groupW * 0.8) / Math.max(1, names.length));
  groups.forEach((g, gi) => {
    const x0 = M.left + gi * groupW + (groupW - barW * names.length) / 2;
    for (const bar of g.bars) {
      const i = names.indexOf(bar.name);
      const x = x0 + i * barW;
      const y = axis.y(bar.value);
      const base = M.top + PH;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${Math.max(0, base - y).toFixed(1)}" fill="${PALETTE[i % PALETTE.length]}"><title>${esc(`${g.label} · ${bar.name}: ${formatNumber(bar.value)}`)}</title></rect>`,
        `<text x="${(x + barW / 2 - 1).toFixed(1)}" y="${(y - 4).toFixed(1)}" text-anchor="middle" font-size="10" fill="#111827">${formatNumber(bar.value)}</text>`,
      );
    }
    parts.push(
      `<text x="${(M.left + gi * groupW + groupW / 2).toFixed(1)}" y="${M.top + PH + 18}" text-anchor="middle" fill="#111827">${esc(g.label)}</text>`,
    );
  });
  parts.push(...legend(names), "</svg>");
  return parts.join("\n") + "\n";
}

export function lineChart(series: readonly Series[], options: Frame & { readonly xLabel: string }): string {
  const xs = [...new Set(series.flatMap((s) => s.points.map(([x]) => x)))].sort((a, b) => a - b);
  const axis = yAxis(
    [
      ...series.flatMap((s) => s.points.map(([, y]) => y)),
      ...(options.reference ? [options.reference.y] : []),
    ],
    options.logY ?? false,
  );
  const parts = frame(options, axis);
  // x positions by rank: rates are few and uneven (1k, 5k, 10k, 20k plus search probes).
  const xAt = (x: number) => M.left + (PW * (xs.indexOf(x) + 0.5)) / Math.max(1, xs.length);
  // At most about a dozen labels: a minute of seconds would otherwise overlap.
  const labelEvery = Math.ceil(xs.length / 12);
  xs.forEach((x, i) => {
    if (i % labelEvery === 0)
      parts.push(
        `<text x="${xAt(x).toFixed(1)}" y="${M.top + PH + 18}" text-anchor="middle" fill="#111827">${formatNumber(x)}</text>`,
      );
  });
  parts.push(
    `<text x="${M.left + PW / 2}" y="${M.top + PH + 36}" text-anchor="middle" fill="#374151">${esc(options.xLabel)}</text>`,
  );
  series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length];
    const points = [...s.points].sort((a, b) => a[0] - b[0]);
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.map(([x, y]) => `${xAt(x).toFixed(1)},${axis.y(y).toFixed(1)}`).join(" ")}"/>`,
      ...points.map(
        ([x, y]) =>
          `<circle cx="${xAt(x).toFixed(1)}" cy="${axis.y(y).toFixed(1)}" r="3" fill="${color}"><title>${esc(`${s.name} at ${formatNumber(x)}: ${formatNumber(y)}`)}</title></circle>`,
      ),
    );
  });
  parts.push(...legend(series.map((s) => s.name)), "</svg>");
  return parts.join("\n") + "\n";
}
