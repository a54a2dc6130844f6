// The checks every scenario makes, whatever its fault: nothing lost, nothing decided that was
// not sent, each card's state applied exactly once, no secret or card id in a log line.
import type { FaultRunResult } from "./faultRun.js";
import { requirement, type ScenarioOutcome, type TargetCheck } from "./scenario.js";

export const ms = (value: number): string => (Number.isFinite(value) ? `${Math.round(value)} ms` : "n/a");

export function outcome(
  load: string,
  result: FaultRunResult,
  targets: readonly TargetCheck[],
  notes: readonly string[] = [],
): ScenarioOutcome {
  const d = result.decisions;
  const always: TargetCheck[] = [
    requirement(
      "the load was sent",
      d.sent > 0 && result.loadFailure === undefined,
      result.loadFailure ?? `${d.sent} transactions on the topic`,
    ),
    requirement(
      "0 lost",
      d.lost === 0,
      `${d.lost} of ${d.sent} undecided${d.lost > 0 ? ` (e.g. ${d.lostExamples.join(", ")})` : ""}`,
    ),
    requirement("0 decisions for ids never sent", d.unexpected === 0, String(d.unexpected)),
    requirement("group caught up after the load", result.drained, result.drained ? "yes" : "no"),
    requirement(
      "no secret in the logs",
      result.logs.secretLeaks === 0,
      `${result.logs.secretLeaks} lines of ${result.logs.lines}`,
    ),
    requirement(
      "no raw card id in the logs",
      result.logs.cardIdLeaks === 0,
      `${result.logs.cardIdLeaks} lines of ${result.logs.lines}`,
    ),
  ];
  if (result.cardState !== undefined) {
    const s = result.cardState;
    always.push(
      requirement(
        "each card's state applied exactly once",
        s.mismatched === 0,
        `${s.mismatched} of ${s.cards} cards off${s.mismatched > 0 ? ` (${s.examples.join("; ")})` : ""}`,
      ),
    );
  }
  return {
    load,
    decisions: d,
    ...(result.cardState !== undefined ? { cardState: result.cardState } : {}),
    logs: result.logs,
    notes: [
      ...notes,
      ...(result.loadFailure !== undefined ? [result.loadFailure] : []),
      ...(result.loadSummary !== undefined ? [`load generator: ${result.loadSummary}`] : []),
      ...result.logs.examples,
    ],
    targets: [...always, ...targets],
  };
}
