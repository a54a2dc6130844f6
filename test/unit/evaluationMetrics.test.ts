import { describe, expect, it } from "vitest";
import { prAuc, recallAtFpr, rocAuc, scoreMetrics } from "../../pipelines/evaluate/metrics.js";

describe("evaluation metrics", () => {
  it("a perfect ranking scores 1 on every metric", () => {
    const m = scoreMetrics([0.9, 0.8, 0.1, 0.2, 0.3], [1, 1, 0, 0, 0]);
    expect(m).toMatchObject({ rocAuc: 1, prAuc: 1, recallAt1PctFpr: 1, positives: 2, transactions: 5 });
  });

  it("ROC-AUC is the probability a fraud outranks a legitimate payment, ties counting half", () => {
    // pairs (pos, neg): (0.8,0.5)>, (0.8,0.9)<, (0.5,0.5)=, (0.5,0.9)< → (1 + 0.5) / 4
    expect(rocAuc([0.8, 0.5, 0.5, 0.9], [1, 1, 0, 0])).toBeCloseTo(0.375, 12);
  });

  it("all-equal scores earn no credit for an arbitrary order", () => {
    const labels = [1, 0, 0, 0, 1, 0, 0, 0, 0, 0];
    const flat = labels.map(() => 0.5);
    expect(rocAuc(flat, labels)).toBeCloseTo(0.5, 12);
    expect(prAuc(flat, labels)).toBeCloseTo(0.2, 12);
    expect(recallAtFpr(flat, labels, 0.01)).toBe(0);
  });

  it("recall at a false-positive budget takes the best threshold inside the budget", () => {
    const negatives = Array.from({ length: 200 }, (_, i) => i / 1000); // 0 … 0.199
    const scores = [0.5, 0.3, 0.15, ...negatives];
    const labels = [1, 1, 1, ...negatives.map(() => 0)];
    // 0.15 sits above 49 negatives: reaching it costs 24.5 % FPR; the first two cost nothing.
    expect(recallAtFpr(scores, labels, 0.01)).toBeCloseTo(2 / 3, 12);
    expect(recallAtFpr(scores, labels, 0.25)).toBe(1);
  });
});
