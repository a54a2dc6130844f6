// The evaluation report written beside the model: JSON for machines, markdown for people.
import type { ScoreMetrics } from "./metrics.js";

export interface EvaluationTargets {
  readonly int8PrAucWithin: number;
  readonly recallAt1PctFprVsRules: number;
}

export const TARGETS: EvaluationTargets = { int8PrAucWithin: 0.01, recallAt1PctFprVsRules: 2 };

export interface EvaluationReport {
  readonly model: { name: string; version: string; featureSchemaVersion: string; hiddenSize: number };
  readonly data: { source: string; split: string; transactions: number; fraud: number; unlabelled: number };
  readonly rulesVersion: string;
  readonly results: { fp32: ScoreMetrics; int8: ScoreMetrics; rules: ScoreMetrics };
  readonly targets: {
    int8PrAucGap: number;
    int8PrAucWithinTarget: boolean;
    recallAt1PctFprRatioVsRules: number;
    recallRatioMeetsTarget: boolean;
  };
  readonly training: { seed: number; epochs: number; bestEpoch: number; seconds: number; history: unknown[] };
  readonly createdAt: string;
}

export function judgeTargets(results: EvaluationReport["results"]): EvaluationReport["targets"] {
  const gap = Math.abs(results.fp32.prAuc - results.int8.prAuc);
  const ratio =
    results.rules.recallAt1PctFpr > 0
      ? results.int8.recallAt1PctFpr / results.rules.recallAt1PctFpr
      : Infinity;
  return {
    int8PrAucGap: gap,
    int8PrAucWithinTarget: gap <= TARGETS.int8PrAucWithin,
    recallAt1PctFprRatioVsRules: ratio,
    recallRatioMeetsTarget: ratio >= TARGETS.recallAt1PctFprVsRules,
  };
}

const pct = (v: number) => `${(100 * v).toFixed(1)} %`;
const f4 = (v: number) => v.toFixed(4);

export function renderMarkdown(r: EvaluationReport): string {
  const row = (name: string, m: ScoreMetrics) =>
    `| ${name} | ${f4(m.rocAuc)} | ${f4(m.prAuc)} | ${pct(m.recallAt0_5PctFpr)} | ${pct(m.recallAt1PctFpr)} |`;
  const yes = (ok: boolean) => (ok ? "met" : "**not met**");
  return [
    `# Evaluation: ${r.model.name} ${r.model.version}`,
    "",
    `Held-out **${r.data.split}** split of \`${r.data.source}\`: ${r.data.transactions} transactions, ${r.data.fraud} labelled fraud` +
      ` (${pct(r.data.fraud / Math.max(1, r.data.transactions))}). Every card's LSTM state is carried from its first transaction,` +
      " as in serving; the exported ONNX graphs are stepped one transaction at a time with ONNX Runtime.",
    "",
    "| scorer | ROC-AUC | PR-AUC | recall @ 0.5 % FPR | recall @ 1 % FPR |",
    "| --- | --- | --- | --- | --- |",
    row("LSTM fp32 (model.onnx)", r.results.fp32),
    row("LSTM int8 (model.int8.onnx)", r.results.int8),
    row(`rules only (${r.rulesVersion})`, r.results.rules),
    "",
    "Targets:",
    `- int8 PR-AUC within 0.01 of fp32: gap ${f4(r.targets.int8PrAucGap)} — ${yes(r.targets.int8PrAucWithinTarget)}`,
    `- int8 recall at 1 % FPR ≥ 2 × rules: ${r.targets.recallAt1PctFprRatioVsRules.toFixed(2)} × — ${yes(r.targets.recallRatioMeetsTarget)}`,
    "",
    `Feature schema \`${r.model.featureSchemaVersion}\`, hidden size ${r.model.hiddenSize}; training seed ${r.training.seed},` +
      ` best epoch ${r.training.bestEpoch} of ${r.training.epochs}, ${r.training.seconds.toFixed(0)} s. Created ${r.createdAt}.`,
    "",
  ].join("\n");
}
