// The diff report answers: how many actions changed, from what to what, why, with examples.
import { describe, expect, it } from "vitest";
import { Action, FallbackCause, type DecisionInit } from "../../../src/codec/messages.js";
import { compareDecisions, formatDiffReport } from "../../../src/replay/compareDecisions.js";

const d = (id: string, action: number, more: Partial<DecisionInit> = {}): DecisionInit => ({
  transactionId: id,
  action,
  score: 0.2,
  reasonCodes: [],
  modelVersion: "m1",
  rulesVersion: "r1",
  fallback: false,
  ...more,
});

describe("comparison with recorded decisions", () => {
  const recorded = new Map<string, DecisionInit>([
    ["a", d("a", Action.ACTION_APPROVE)],
    [
      "b",
      d("b", Action.ACTION_REVIEW, {
        fallback: true,
        fallbackCause: FallbackCause.FALLBACK_CAUSE_TIMEOUT,
        score: 0.6,
      }),
    ],
    ["c", d("c", Action.ACTION_APPROVE, { score: 0.4 })],
    ["e", d("e", Action.ACTION_APPROVE, { score: 0.1 })],
  ]);
  const replayed = [
    d("a", Action.ACTION_APPROVE),
    d("b", Action.ACTION_APPROVE, { score: 0.1 }),
    d("c", Action.ACTION_DECLINE, { score: 0.9, reasonCodes: ["rule:impossible-travel"] }),
    d("e", Action.ACTION_APPROVE, { score: 0.3 }),
    d("new", Action.ACTION_APPROVE),
  ];
  const report = compareDecisions(replayed, recorded);

  it("counts changed, unchanged and unrecorded transactions", () => {
    expect(report).toMatchObject({
      compared: 4,
      changed: 2,
      unchanged: 2,
      notRecorded: 1,
      scoreOnlyChanges: 1,
    });
  });

  it("counts transitions and names why each happened", () => {
    expect(report.transitions).toEqual({ "APPROVE → DECLINE": 1, "REVIEW → APPROVE": 1 });
    expect(report.byReason).toEqual({
      "decided by: rules fallback (timeout) → model": 1,
      "now fires: rule:impossible-travel": 1,
    });
  });

  it("gives examples per transition, and says which model and rule set changed", () => {
    expect(report.examples["APPROVE → DECLINE"]).toEqual([
      expect.objectContaining({ transaction_id: "c", recorded_score: 0.4, replayed_score: 0.9 }),
    ]);
    const other = compareDecisions([d("a", Action.ACTION_DECLINE, { modelVersion: "m2" })], recorded);
    expect(other.byReason).toEqual({ "model: m1 → m2": 1 });
    expect(formatDiffReport(report)).toContain("APPROVE → DECLINE");
  });
});
