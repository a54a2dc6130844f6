// Replayed decisions against recorded ones: how many actions changed, from → to, why (the
// difference in what decided: fallback vs model, rules that fired, the score crossing a
// threshold, another model or rule set), with a few examples of each transition.
import type { DecisionInit } from "../codec/messages.js";
import { actionName, fallbackCauseName, float32Text, type ActionName } from "../decisions/decisionJson.js";
import type { RecordedDecisions } from "./recordedDecisions.js";

export interface DiffExample {
  readonly transaction_id: string;
  readonly from: ActionName;
  readonly to: ActionName;
  readonly recorded_score: number;
  readonly replayed_score: number;
  readonly recorded_reasons: readonly string[];
  readonly replayed_reasons: readonly string[];
  readonly why: readonly string[];
}

export interface DiffReport {
  /** Replayed transactions that had a recorded decision. */
  readonly compared: number;
  /** Replayed transactions with no recorded decision. */
  readonly notRecorded: number;
  readonly unchanged: number;
  readonly changed: number;
  /** "APPROVE → DECLINE" → count, most frequent first. */
  readonly transitions: Readonly<Record<string, number>>;
  /** Why actions changed → count, most frequent first; one change may have several reasons. */
  readonly byReason: Readonly<Record<string, number>>;
  /** Score moved by more than 0.01 although the action stayed. */
  readonly scoreOnlyChanges: number;
  readonly examples: Readonly<Record<string, readonly DiffExample[]>>;
}

const rulesOf = (d: DecisionInit) => (d.reasonCodes ?? []).filter((r) => r.startsWith("rule:"));

const fallbackLabel = (d: DecisionInit) =>
  d.fallback
    ? `rules fallback (${(fallbackCauseName(d.fallbackCause) ?? "unknown").toLowerCase()})`
    : "model";

/** Why a transaction's action changed, most specific first. */
export function reasonsForChange(recorded: DecisionInit, replayed: DecisionInit): string[] {
  const why: string[] = [];
  if (
    (recorded.fallback ?? false) !== (replayed.fallback ?? false) ||
    recorded.fallbackCause !== replayed.fallbackCause
  )
    why.push(`decided by: ${fallbackLabel(recorded)} → ${fallbackLabel(replayed)}`);
  const before = new Set(rulesOf(recorded));
  const after = new Set(rulesOf(replayed));
  for (const r of after) if (!before.has(r)) why.push(`now fires: ${r}`);
  for (const r of before) if (!after.has(r)) why.push(`no longer fires: ${r}`);
  if ((recorded.modelVersion ?? "") !== (replayed.modelVersion ?? ""))
    why.push(`model: ${recorded.modelVersion || "none"} → ${replayed.modelVersion || "none"}`);
  if ((recorded.rulesVersion ?? "") !== (replayed.rulesVersion ?? ""))
    why.push(`rules: ${recorded.rulesVersion || "none"} → ${replayed.rulesVersion || "none"}`);
  if (why.length === 0) why.push("score crossed a threshold");
  return why;
}

const sortedCounts = (counts: Map<string, number>): Record<string, number> =>
  Object.fromEntries([...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));

export function compareDecisions(
  replayed: readonly DecisionInit[],
  recorded: RecordedDecisions,
  { examplesPerTransition = 3 }: { examplesPerTransition?: number } = {},
): DiffReport {
  let compared = 0;
  let notRecorded = 0;
  let changed = 0;
  let scoreOnlyChanges = 0;
  const transitions = new Map<string, number>();
  const reasons = new Map<string, number>();
  const examples = new Map<string, DiffExample[]>();
  for (const now of replayed) {
    const before = recorded.get(now.transactionId ?? "");
    if (!before) {
      notRecorded++;
      continue;
    }
    compared++;
    const from = actionName(before.action);
    const to = actionName(now.action);
    if (from === to) {
      if (Math.abs((before.score ?? 0) - (now.score ?? 0)) > 0.01) scoreOnlyChanges++;
      continue;
    }
    changed++;
    const transition = `${from} → ${to}`;
    transitions.set(transition, (transitions.get(transition) ?? 0) + 1);
    const why = reasonsForChange(before, now);
    for (const w of why) reasons.set(w, (reasons.get(w) ?? 0) + 1);
    const list = examples.get(transition) ?? [];
    if (list.length < examplesPerTransition) {
      list.push({
        transaction_id: now.transactionId ?? "",
        from,
        to,
        recorded_score: float32Text(before.score ?? 0),
        replayed_score: float32Text(now.score ?? 0),
        recorded_reasons: [...(before.reasonCodes ?? [])],
        replayed_reasons: [...(now.reasonCodes ?? [])],
        why,
      });
      examples.set(transition, list);
    }
  }
  const orderedTransitions = sortedCounts(transitions);
  return {
    compared,
    notRecorded,
    unchanged: compared - changed,
    changed,
    transitions: orderedTransitions,
    byReason: sortedCounts(reasons),
    scoreOnlyChanges,
    examples: Object.fromEntries(Object.keys(orderedTransitions).map((t) => [t, examples.get(t) ?? []])),
  };
}

const pct = (n: number, of: number) => (of === 0 ? "0.0" : ((100 * n) / of).toFixed(1));

export function formatDiffReport(report: DiffReport): string {
  const lines = [
    `comparison with recorded decisions: ${report.compared} compared, ${report.changed} actions changed (${pct(report.changed, report.compared)} %), ${report.unchanged} unchanged` +
      (report.notRecorded > 0 ? `, ${report.notRecorded} had no recorded decision` : ""),
  ];
  if (report.scoreOnlyChanges > 0)
    lines.push(`  ${report.scoreOnlyChanges} kept their action with a score that moved by more than 0.01`);
  if (report.changed === 0) return lines.join("\n");
  lines.push("  from → to:");
  for (const [t, n] of Object.entries(report.transitions))
    lines.push(`    ${t.padEnd(22)} ${String(n).padStart(7)}`);
  lines.push("  why:");
  for (const [w, n] of Object.entries(report.byReason)) lines.push(`    ${String(n).padStart(7)}  ${w}`);
  lines.push("  examples:");
  for (const [t, list] of Object.entries(report.examples)) {
    for (const e of list) {
      lines.push(
        `    ${t}  ${e.transaction_id}  score ${e.recorded_score} → ${e.replayed_score}  [${e.recorded_reasons.join(", ")}] → [${e.replayed_reasons.join(", ")}]  (${e.why.join("; ")})`,
      );
    }
  }
  return lines.join("\n");
}
