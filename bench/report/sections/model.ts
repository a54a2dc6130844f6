// Report chapter 5: one LSTM step, fp32 against int8 and batch 1 against a large batch.
import type { ModelResult, StepAfterIdle } from "../../sections/model.js";
import { barChart } from "../../../src/tools/svgCharts.js";
import { fmt, table, x } from "../reportFormat.js";
import type { SectionRenderer } from "../sectionRenderer.js";

export const modelReport: SectionRenderer<ModelResult> = {
  heading: "5. Model",

  summaryRows(m) {
    const usPerTransaction = (precision: string, batch: number) =>
      fmt(m.variants.find((a) => a.precision === precision && a.batchSize === batch)!.usPerTransaction);
    const sizes = [...new Set(m.variants.map((a) => a.batchSize))].sort((a, b) => a - b);
    const [small, large] = [sizes[0]!, sizes.at(-1)!];
    return [
      [
        "5. Model: fp32 vs int8 (µs per transaction)",
        `batch ${small}: ${usPerTransaction("fp32", small)} vs ${usPerTransaction("int8", small)}; batch ${large}: ${usPerTransaction("fp32", large)} vs ${usPerTransaction("int8", large)}`,
        `fp32 ${x(m.fp32OverInt8AtBatch1)} at batch ${small}, ${x(m.fp32OverInt8AtLargestBatch)} at ${large}`,
      ],
      [
        `5. Model: batch ${small} vs ${large} (µs per transaction)`,
        `fp32 ${usPerTransaction("fp32", small)} vs ${usPerTransaction("fp32", large)}`,
        `batch ${small} costs ${x(m.batch1OverLargestFp32)} per transaction (int8 ${x(m.batch1OverLargestInt8)})`,
      ],
      ...(m.afterIdle === undefined
        ? []
        : [
            [
              `5. Model: a step of ${m.afterIdle.batchSize} back to back vs after ${m.afterIdle.gapMs} ms idle (µs of CPU)`,
              `fp32 ${fmt(m.afterIdle.backToBackCpuUs)} vs ${fmt(m.afterIdle.afterSleepCpuUs)} (asleep), ${fmt(m.afterIdle.afterSpinCpuUs)} (spinning)`,
              `after the gap ${x(m.afterIdle.afterSleepOverBackToBack)} asleep, ${x(m.afterIdle.afterSpinOverBackToBack)} spinning`,
            ],
          ]),
    ];
  },

  chapter: (m, chart) => [
    `One LSTM step (${m.featureCount} features, hidden ${m.hiddenSize}) on ONNX Runtime, CPU provider, one intra-op thread. ` +
      "fp32 = model.onnx (what `serve` runs: scores independent of batch neighbours); int8 = model.int8.onnx (DynamicQuantizeLSTM, per-batch input quantization). Both opened directly.",
    "",
    table(
      [
        "Precision",
        "Batch",
        "µs / transaction (median step ÷ batch)",
        "incl. stalls (round mean)",
        "step p50 µs",
        "step p99 µs",
      ],
      m.variants.map((v) => [
        v.precision,
        v.batchSize,
        fmt(v.usPerTransaction),
        fmt(v.meanUsPerTransaction),
        fmt(v.stepP50Us),
        fmt(v.stepP99Us),
      ]),
    ),
    "",
    `fp32 ÷ int8: ${x(m.fp32OverInt8AtBatch1)} at batch 1, ${x(m.fp32OverInt8AtLargestBatch)} at the largest batch. ` +
      `Batch 1 ÷ largest batch, per transaction: int8 ${x(m.batch1OverLargestInt8)}, fp32 ${x(m.batch1OverLargestFp32)}.`,
    "",
    ...(m.afterIdle === undefined ? [] : afterIdleParagraph(m.afterIdle)),
    chart(
      "model",
      barChart(
        [...new Set(m.variants.map((v) => v.batchSize))].map((batch) => ({
          label: `batch ${batch}`,
          bars: m.variants
            .filter((v) => v.batchSize === batch)
            .map((v) => ({ name: v.precision, value: v.usPerTransaction })),
        })),
        { title: "Model step: µs per transaction", yLabel: "µs per transaction (log scale)", logY: true },
      ),
    ),
    "",
  ],
};

function afterIdleParagraph(a: StepAfterIdle): string[] {
  return [
    `The fp32 step at batch ${a.batchSize}, a steady 1,000 tx/s batch, after ${a.gapMs} ms without one (the batch linger between such batches), against back to back; CPU of the process around the step, medians of ${a.samples} samples, the three kinds interleaved:`,
    "",
    table(
      ["Step", "µs of CPU", "÷ back to back"],
      [
        ["back to back (the last of 10)", fmt(a.backToBackCpuUs), "1"],
        [`after ${a.gapMs} ms asleep`, fmt(a.afterSleepCpuUs), x(a.afterSleepOverBackToBack)],
        [
          `after ${a.gapMs} ms spinning (a JavaScript loop)`,
          fmt(a.afterSpinCpuUs),
          x(a.afterSpinOverBackToBack),
        ],
      ],
    ),
    "",
    spinVerdict(a),
    "",
  ];
}

/** What the two gaps say, read from the figures (a ratio of 1.25 or more counts as dearer). */
function spinVerdict(a: StepAfterIdle): string {
  const dearer = (ratio: number) => ratio >= 1.25;
  if (!dearer(a.afterSleepOverBackToBack))
    return "Here a step after the gap cost about what one back to back does.";
  return dearer(a.afterSpinOverBackToBack)
    ? "The step cost more after the gap even when the thread stayed busy on its core, so it is not the thread having slept: the same instructions on the same data cost more when they last ran milliseconds ago. What a steady rate pays per batch is in part this, whatever the code (section 8's steady runs)."
    : "After the spinning gap the step cost about what one back to back does: it is the thread having slept (the core's idle state, or what ran on it meanwhile) that a steady rate pays for per batch.";
}
