// The demo's report: the same facts printed to the terminal and written as markdown with the
// latency chart beside it. A live run measures end to end through Kafka; an offline run (no
// Kafka to be had) measures scoring alone, and every heading says which.
import { cpus, platform, release } from "node:os";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ACTION_NAMES } from "../../decisions/decisionJson.js";
import type { TallySummary } from "./decisionTally.js";
import { lineChart } from "../svgCharts.js";
import type { RunLatencySummary, SecondPoint } from "./latencyRecorder.js";
import type { StageLine } from "./stageBreakdown.js";

export interface DemoReport {
  readonly mode: "live" | "offline";
  /** Why the run is offline, in the user's terms. */
  readonly offlineReason?: string;
  readonly startedAt: string;
  readonly model: string;
  readonly rules: string;
  readonly traffic: {
    readonly source: string;
    readonly ratePerSecond?: number;
    readonly durationSeconds: number;
    readonly warmupSeconds: number;
    readonly planned: number;
    readonly sent: number;
  };
  readonly where?: string;
  readonly throughput: {
    readonly decided: number;
    readonly missing: number;
    readonly decisionsPerSecond: number;
  };
  readonly latency: RunLatencySummary;
  readonly latencyPerSecond: readonly SecondPoint[];
  readonly latencyMeaning: string;
  /** The scorer's per-stage timings (live runs). */
  readonly stages?: readonly StageLine[];
  readonly budgetMs: number;
  readonly tally: TallySummary;
  readonly notes: readonly string[];
}

const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const pct = (n: number, of: number) => (of === 0 ? "–" : `${((100 * n) / of).toFixed(2)} %`);
const int = (n: number) => Math.round(n).toLocaleString("en-US");

export const machineDescription = (): string => {
  const cores = cpus();
  return `${cores.length} × ${cores[0]?.model.trim() ?? "unknown CPU"}, ${platform()} ${release()}, Node ${process.version}`;
};

export const CHART_FILE = "latency-p99.svg";

export function reportMarkdown(r: DemoReport): string {
  const { latency: l, tally: t } = r;
  const offline = r.mode === "offline";
  const lines = [
    `# fraud-scorer demo${offline ? " — OFFLINE (no Kafka)" : ""}`,
    "",
    ...(offline
      ? [
          `> **Offline run.** ${r.offlineReason ?? "No Kafka was available."} The same scoring path (scoreBatch, the committed model, the rules) ran through \`fraud-scorer replay\`'s engine on simulated transactions, with in-memory card state. The latency below is scoring time per batch, not end to end through Kafka.`,
          "",
        ]
      : []),
    `- started ${r.startedAt} on ${machineDescription()}`,
    `- model ${r.model}; rules ${r.rules}`,
    `- traffic: ${r.traffic.source}; ${r.traffic.ratePerSecond !== undefined ? `open loop at ${int(r.traffic.ratePerSecond)} tx/s, ` : "as fast as it scores, "}${r.traffic.durationSeconds} s measured` +
      (r.traffic.warmupSeconds > 0 ? ` after a ${r.traffic.warmupSeconds} s warm-up (not counted)` : ""),
    ...(r.where ? [`- ${r.where}`] : []),
    "",
    "## Throughput",
    "",
    `| planned | sent | decided | missing | decisions/s |`,
    `|---:|---:|---:|---:|---:|`,
    `| ${int(r.traffic.planned)} | ${int(r.traffic.sent)} | ${int(r.throughput.decided)} | ${int(r.throughput.missing)} | ${int(r.throughput.decisionsPerSecond)} |`,
    "",
    `## Latency — ${r.latencyMeaning}`,
    "",
    `| p50 | p95 | p99 | p99.9 | max | within ${r.budgetMs} ms |`,
    `|---:|---:|---:|---:|---:|---:|`,
    `| ${ms(l.p50Ms)} ms | ${ms(l.p95Ms)} ms | ${ms(l.p99Ms)} ms | ${ms(l.p999Ms)} ms | ${ms(l.maxMs)} ms | ${(100 * l.withinBudget).toFixed(2)} % |`,
    "",
    `![p99 latency per second](${CHART_FILE})`,
    "",
    ...(r.stages
      ? [
          "Where the time went (from the timings each decision carries):",
          "",
          `| stage | p50 | p99 |`,
          `|---|---:|---:|`,
          ...r.stages.map((s) => `| ${s.stage} | ${ms(s.p50Ms)} ms | ${ms(s.p99Ms)} ms |`),
          "",
        ]
      : []),
    "## Decisions",
    "",
    `| action | count | share |`,
    `|---|---:|---:|`,
    ...ACTION_NAMES.map((a) => `| ${a} | ${int(t.actions[a])} | ${pct(t.actions[a], t.decisions)} |`),
    "",
    `Fallback (rules decided alone): ${int(t.fallbacks)} = ${pct(t.fallbacks, t.decisions)}` +
      (t.fallbacks > 0
        ? ` — ${Object.entries(t.fallbackCauses)
            .map(([c, n]) => `${c} ${int(n)}`)
            .join(", ")}`
        : ""),
    "",
    "## Fraud on the labelled traffic",
    "",
    `| | labelled fraud | labelled legitimate |`,
    `|---|---:|---:|`,
    ...(["DECLINE", "REVIEW", "APPROVE"] as const).map(
      (a) => `| ${a} | ${int(t.labelled.fraud[a])} | ${int(t.labelled.legitimate[a])} |`,
    ),
    "",
    `Fraud caught (declined or sent to review): ${int(t.fraudCaught)} of ${int(t.fraudCaught + t.fraudMissed)} (${pct(t.fraudCaught, t.fraudCaught + t.fraudMissed)}); missed (approved): ${int(t.fraudMissed)}. Legitimate payments declined or reviewed: ${(100 * t.falsePositiveRate).toFixed(2)} %.`,
    ...(r.notes.length > 0 ? ["", "## Notes", "", ...r.notes.map((n) => `- ${n}`)] : []),
    "",
  ];
  return lines.join("\n");
}

export function reportText(r: DemoReport): string {
  const { latency: l, tally: t } = r;
  const offline = r.mode === "offline";
  return [
    "",
    offline
      ? "fraud-scorer demo — OFFLINE: no Kafka, scoring only (replay engine on simulated data)"
      : "fraud-scorer demo — live, end to end through Kafka",
    ...(offline && r.offlineReason ? [`  why offline: ${r.offlineReason}`] : []),
    `  model ${r.model} · rules ${r.rules}`,
    `  traffic   ${r.traffic.source}${r.traffic.ratePerSecond !== undefined ? `, open loop ${int(r.traffic.ratePerSecond)} tx/s` : ""} for ${r.traffic.durationSeconds} s` +
      (r.traffic.warmupSeconds > 0 ? ` (+${r.traffic.warmupSeconds} s warm-up)` : ""),
    `  throughput ${int(r.throughput.decisionsPerSecond)} decisions/s · ${int(r.throughput.decided)} decided of ${int(r.traffic.sent)} sent · ${int(r.throughput.missing)} missing`,
    `  latency   ${r.latencyMeaning}`,
    `            p50 ${ms(l.p50Ms)} ms · p95 ${ms(l.p95Ms)} ms · p99 ${ms(l.p99Ms)} ms · max ${ms(l.maxMs)} ms · ${(100 * l.withinBudget).toFixed(2)} % within ${r.budgetMs} ms`,
    ...(r.stages
      ? [
          `            scorer p50: ${r.stages
            .filter((s) => !s.stage.startsWith("features") && !s.stage.startsWith("policy"))
            .map((s) => `${s.stage.split(" (")[0]} ${ms(s.p50Ms)} ms`)
            .join(" · ")}`,
        ]
      : []),
    `  decisions ${ACTION_NAMES.map((a) => `${a} ${int(t.actions[a])}`).join(" · ")} · fallback ${pct(t.fallbacks, t.decisions)}`,
    `  fraud     caught ${int(t.fraudCaught)} of ${int(t.fraudCaught + t.fraudMissed)} (${pct(t.fraudCaught, t.fraudCaught + t.fraudMissed)}), missed ${int(t.fraudMissed)}; legitimate flagged ${(100 * t.falsePositiveRate).toFixed(2)} %`,
    "",
  ].join("\n");
}

export async function writeDemoReport(
  dir: string,
  r: DemoReport,
): Promise<{ markdown: string; chart: string }> {
  await mkdir(dir, { recursive: true });
  const markdown = join(dir, "report.md");
  const chart = join(dir, CHART_FILE);
  const title =
    r.mode === "live"
      ? "End-to-end latency per second (scheduled send → decision in Kafka)"
      : "OFFLINE: scoring time per batch, per second (no Kafka)";
  await writeFile(markdown, reportMarkdown(r));
  await writeFile(chart, latencyChart(r.latencyPerSecond, title, r.budgetMs));
  await writeFile(join(dir, "report.json"), `${JSON.stringify(r, null, 2)}\n`);
  return { markdown, chart };
}

/** p99 and p50 per second; the budget line only when it is in view (not far above the data). */
export function latencyChart(points: readonly SecondPoint[], title: string, budgetMs: number): string {
  const highest = Math.max(0, ...points.map((p) => p.p99Ms));
  return lineChart(
    [
      { name: "p99 per second", points: points.map((p) => [p.second, p.p99Ms] as const) },
      { name: "p50", points: points.map((p) => [p.second, p.p50Ms] as const) },
    ],
    {
      title,
      xLabel: "seconds",
      yLabel: "latency, ms",
      ...(budgetMs <= highest * 1.5 ? { reference: { y: budgetMs, label: `budget ${budgetMs} ms` } } : {}),
    },
  );
}
