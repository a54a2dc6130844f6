// Live decisions against a shadow candidate's, joined on transaction id: how far the candidate
// covered the live traffic, an agreement matrix of actions (live × shadow), how far the scores
// moved, why actions changed (compareDecisions, as replay's --compare-* reports it) and, given
// labels, each model's recall and precision, counting REVIEW and DECLINE as flagged.
import type { DecisionInit } from "../codec/messages.js";
import { ACTION_NAMES, actionName, type ActionName } from "../decisions/decisionJson.js";
import { compareDecisions, formatDiffReport, type DiffReport } from "./compareDecisions.js";
import type { RecordedDecisions } from "./recordedDecisions.js";

export interface FlaggingQuality {
  readonly truePositives: number;
  readonly falsePositives: number;
  readonly falseNegatives: number;
  /** null when nothing was flagged (precision) or no fraud was labelled (recall). */
  readonly precision: number | null;
  readonly recall: number | null;
}

export interface ShadowComparison {
  /** Live decisions in the range. */
  readonly live: number;
  /** Of those, with a shadow decision. */
  readonly compared: number;
  /** Live decisions without a shadow one (skipped, or shadow not running then). */
  readonly withoutShadow: number;
  readonly liveVersions: readonly string[];
  readonly shadowVersions: readonly string[];
  /** agreement[live action][shadow action] = count. */
  readonly agreement: Readonly<Record<ActionName, Readonly<Record<ActionName, number>>>>;
  readonly agreed: number;
  readonly meanAbsScoreDiff: number;
  readonly maxAbsScoreDiff: number;
  /** The changed actions, from live to shadow, and why. */
  readonly changes: DiffReport;
  /** Present when labels were given: over the compared transactions that have a label. */
  readonly labelled?: {
    readonly transactions: number;
    readonly live: FlaggingQuality;
    readonly shadow: FlaggingQuality;
  };
}

const ACTIONS: readonly ActionName[] = [...ACTION_NAMES, "UNSPECIFIED"];
const isFlagged = (d: DecisionInit) =>
  actionName(d.action) === "REVIEW" || actionName(d.action) === "DECLINE";

function quality(pairs: ReadonlyArray<{ flagged: boolean; fraud: boolean }>): FlaggingQuality {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const { flagged, fraud } of pairs) {
    if (flagged && fraud) tp++;
    else if (flagged) fp++;
    else if (fraud) fn++;
  }
  return {
    truePositives: tp,
    falsePositives: fp,
    falseNegatives: fn,
    precision: tp + fp === 0 ? null : tp / (tp + fp),
    recall: tp + fn === 0 ? null : tp / (tp + fn),
  };
}

export function compareShadow(
  live: RecordedDecisions,
  shadow: RecordedDecisions,
  labels?: ReadonlyMap<string, boolean>,
): ShadowComparison {
  const agreement = Object.fromEntries(
    ACTIONS.map((a) => [a, Object.fromEntries(ACTIONS.map((b) => [b, 0]))]),
  ) as Record<ActionName, Record<ActionName, number>>;
  const pairs: Array<{ live: DecisionInit; shadow: DecisionInit }> = [];
  for (const [id, l] of live) {
    const s = shadow.get(id);
    if (s) pairs.push({ live: l, shadow: s });
  }
  let agreed = 0;
  let sumDiff = 0;
  let maxDiff = 0;
  for (const p of pairs) {
    const from = actionName(p.live.action);
    const to = actionName(p.shadow.action);
    agreement[from][to]++;
    if (from === to) agreed++;
    const diff = Math.abs((p.live.score ?? 0) - (p.shadow.score ?? 0));
    sumDiff += diff;
    maxDiff = Math.max(maxDiff, diff);
  }
  const versions = (ds: Iterable<DecisionInit>) =>
    [...new Set([...ds].map((d) => d.modelVersion ?? ""))].sort();
  const labelledPairs = labels ? pairs.filter((p) => labels.has(p.live.transactionId ?? "")) : [];
  return {
    live: live.size,
    compared: pairs.length,
    withoutShadow: live.size - pairs.length,
    liveVersions: versions(live.values()),
    shadowVersions: versions(pairs.map((p) => p.shadow)),
    agreement,
    agreed,
    meanAbsScoreDiff: pairs.length === 0 ? 0 : sumDiff / pairs.length,
    maxAbsScoreDiff: maxDiff,
    changes: compareDecisions(
      pairs.map((p) => p.shadow),
      live,
    ),
    ...(labels && {
      labelled: {
        transactions: labelledPairs.length,
        live: quality(
          labelledPairs.map((p) => ({
            flagged: isFlagged(p.live),
            fraud: labels.get(p.live.transactionId ?? "")!,
          })),
        ),
        shadow: quality(
          labelledPairs.map((p) => ({
            flagged: isFlagged(p.shadow),
            fraud: labels.get(p.live.transactionId ?? "")!,
          })),
        ),
      },
    }),
  };
}

const ratio = (x: number | null) => (x === null ? "n/a" : x.toFixed(3));
const pct = (n: number, of: number) => (of === 0 ? "0.0" : ((100 * n) / of).toFixed(1));

export function formatShadowComparison(c: ShadowComparison): string {
  const lines = [
    `live ${c.liveVersions.join(", ") || "none"} vs shadow ${c.shadowVersions.join(", ") || "none"}: ` +
      `${c.compared} transactions compared of ${c.live} decided live (${c.withoutShadow} without a shadow decision)`,
    `actions agree on ${c.agreed} (${pct(c.agreed, c.compared)} %); |score diff| mean ${c.meanAbsScoreDiff.toFixed(4)}, max ${c.maxAbsScoreDiff.toFixed(4)}`,
    `  live ↓ / shadow →  ${ACTION_NAMES.map((a) => a.padStart(8)).join(" ")}`,
    ...ACTION_NAMES.map(
      (from) =>
        `  ${from.padEnd(17)}  ${ACTION_NAMES.map((to) => String(c.agreement[from][to]).padStart(8)).join(" ")}`,
    ),
  ];
  if (c.labelled) {
    const q = (name: string, x: FlaggingQuality) =>
      `  ${name.padEnd(7)} recall ${ratio(x.recall)}  precision ${ratio(x.precision)}  (flagged fraud ${x.truePositives}, flagged legitimate ${x.falsePositives}, missed fraud ${x.falseNegatives})`;
    lines.push(
      `on ${c.labelled.transactions} labelled transactions (REVIEW and DECLINE count as flagged):`,
      q("live", c.labelled.live),
      q("shadow", c.labelled.shadow),
    );
  }
  if (c.changes.changed > 0)
    lines.push(formatDiffReport(c.changes).replace(/^comparison with recorded decisions/, "live → shadow"));
  return lines.join("\n");
}
