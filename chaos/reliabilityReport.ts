// docs/RELIABILITY.md: one row per scenario, each with the date and commit it was measured on.
// Rows live in docs/reliability-results.json, so `--only <name>` re-measures one row and
// keeps the others (with their own dates) instead of dropping them.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ScenarioOutcome, TargetCheck } from "./scenario.js";

export interface ReliabilityRow {
  readonly scenario: string;
  readonly summary: string;
  readonly date: string;
  readonly commit: string;
  readonly scale: number;
  readonly load: string;
  readonly transactions: number;
  readonly lost: number;
  readonly duplicates: number;
  readonly p99Ms: number;
  readonly p100Ms: number;
  readonly longestStallMs: number;
  readonly fallbackShare: number;
  readonly targets: readonly TargetCheck[];
  readonly notes: readonly string[];
  /** Set when the scenario itself failed to run (a harness or start-up error). */
  readonly error?: string;
}

export function rowOf(
  scenario: string,
  summary: string,
  meta: { date: string; commit: string; scale: number },
  o: ScenarioOutcome,
): ReliabilityRow {
  const d = o.decisions;
  return {
    scenario,
    summary,
    ...meta,
    load: o.load,
    transactions: d.sent,
    lost: d.lost,
    duplicates: d.duplicates,
    p99Ms: d.p99Ms,
    p100Ms: d.p100Ms,
    longestStallMs: d.longestStallMs,
    fallbackShare: d.fallbackShare,
    targets: o.targets,
    notes: o.notes,
  };
}

export function failedRow(
  scenario: string,
  summary: string,
  meta: { date: string; commit: string; scale: number },
  error: Error,
): ReliabilityRow {
  return {
    scenario,
    summary,
    ...meta,
    load: "—",
    transactions: 0,
    lost: 0,
    duplicates: 0,
    p99Ms: Number.NaN,
    p100Ms: Number.NaN,
    longestStallMs: Number.NaN,
    fallbackShare: Number.NaN,
    targets: [
      {
        target: "scenario ran to the end",
        met: false,
        required: true,
        measured: error.message.split("\n")[0]!.slice(0, 300),
      },
    ],
    notes: [],
    error: (error.stack ?? error.message).slice(0, 2_000),
  };
}

const resultsFile = (root: string) => join(root, "docs/reliability-results.json");

export function mergeRows(
  root: string,
  rows: readonly ReliabilityRow[],
  order: readonly string[],
): ReliabilityRow[] {
  const file = resultsFile(root);
  const previous: ReliabilityRow[] = existsSync(file)
    ? (JSON.parse(readFileSync(file, "utf8")) as ReliabilityRow[])
    : [];
  const byName = new Map(previous.map((r) => [r.scenario, r]));
  for (const row of rows) byName.set(row.scenario, row);
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
  const merged = [...byName.values()].sort((a, b) => rank(a.scenario) - rank(b.scenario));
  writeFileSync(file, `${JSON.stringify(merged, null, 2)}\n`);
  return merged;
}

/** A target as the report and the console show it: met or not, what, and what was measured. */
export const targetLine = (t: TargetCheck): string =>
  `${t.met ? "✓" : "✗"} ${t.target}${t.required === true ? " (required)" : ""}: ${t.measured}`;

const num = (v: number, unit = " ms") =>
  v === null || !Number.isFinite(v) ? "—" : `${Math.round(v).toLocaleString("en")}${unit}`;
const share = (v: number) => (v === null || !Number.isFinite(v) ? "—" : `${(v * 100).toFixed(1)} %`);
const missedOf = (r: ReliabilityRow, required: boolean) =>
  r.targets
    .filter((t) => !t.met && (t.required === true) === required)
    .map((t) => t.target)
    .join("; ");
const verdict = (r: ReliabilityRow) => {
  const required = missedOf(r, true);
  const goals = missedOf(r, false);
  if (required === "" && goals === "") return "met";
  return [
    required === "" ? "required met" : `**required missed**: ${required}`,
    goals === "" ? "" : `**goal missed**: ${goals}`,
  ]
    .filter((part) => part !== "")
    .join("; ");
};

export function renderReliability(rows: readonly ReliabilityRow[]): string {
  const lines = [
    "# Reliability",
    "",
    "Written by `npm run chaos` (chaos/run.ts); do not edit by hand. Each scenario runs the real",
    "scorer (`fraud-scorer serve` child processes) on the local stack under open-loop load from",
    "`fraud-scorer produce`, injects its fault, and is then checked from the topics alone by an",
    "independent reader (read_committed): every transaction id decided, duplicate decision records",
    "counted, each card's Redis state applied exactly once (its txCount equals its transactions),",
    "and every scorer log line free of secrets and raw card ids.",
    "",
    "Latency runs from a transaction's record timestamp (its scheduled send time) to its first",
    "decision's broker append time (the run's decisions topic uses LogAppendTime). Longest stall:",
    "the longest gap between consecutive decisions of one input partition's transactions. Rows",
    "measured at a reduced scale (scale < 1) are smaller runs of the same scenario.",
    "",
    "Targets marked (required) decide the suite's exit status: nothing lost, decided once or",
    "counted, state applied exactly once, no secret or card id logged, stalls ≤ 3 s after a member",
    "crash, Redis outage p100 ≤ 200 ms, every malformed record in the DLQ with a reason and no",
    "crash, 0 duplicates with exactly-once. The others are goals: measured and marked when missed,",
    "without failing the run.",
    "",
    "| Scenario | Load | Transactions | Lost | Duplicates | p99 | p100 | Longest stall | Fallback share | Targets | Date, commit, scale |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.load} | ${num(r.transactions, "")} | ${num(r.lost, "")} | ${num(r.duplicates, "")} | ${num(r.p99Ms)} | ${num(r.p100Ms)} | ${num(r.longestStallMs)} | ${share(r.fallbackShare)} | ${verdict(r)} | ${r.date}, ${r.commit}, ${r.scale} |`,
    ),
    "",
    "## Per scenario",
    "",
  ];
  for (const r of rows) {
    lines.push(`### ${r.scenario}`, "", r.summary + ".", "");
    for (const t of r.targets) lines.push(`- ${targetLine(t)}`);
    for (const n of r.notes) lines.push(`- note: ${n}`);
    if (r.error !== undefined) lines.push("", "```", r.error, "```");
    lines.push("");
  }
  return lines.join("\n");
}
