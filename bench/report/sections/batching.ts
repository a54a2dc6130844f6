// Report chapter 3: continuous batching against wait-to-fill batching, in process.
import type { BatchingResult } from "../../sections/batching.js";
import { barChart } from "../../../src/tools/svgCharts.js";
import { fmt, ms, table, x } from "../reportFormat.js";
import type { SectionRenderer } from "../sectionRenderer.js";

export const batchingReport: SectionRenderer<BatchingResult> = {
  heading: "3. Batching",

  summaryRows: (b) =>
    b.loads.map((load) => [
      `3. Batching at ${load.name} load (${fmt(load.ratePerSecond)} tx/s): wait-for-${b.maxBatch}-or-${b.dynamicMaxWaitMs} ms vs continuous`,
      `p50 ${ms(load.dynamic.timeToDecision.p50Ms)} vs ${ms(load.continuous.timeToDecision.p50Ms)} ms, p99 ${ms(load.dynamic.timeToDecision.p99Ms)} vs ${ms(load.continuous.timeToDecision.p99Ms)} ms`,
      `dynamic p50 ${x(load.p50Ratio)}, p99 ${x(load.p99Ratio)}`,
    ]),

  chapter: (b, chart) => [
    `In process: the real \`scoreBatch\`, fp32 model and rules, an in-memory card-state store; an open-loop arrival ` +
      `schedule feeds either the product's \`ScoringQueue\` (continuous: whatever arrived while the last batch ran, ≤ ${b.maxBatch}` +
      `${b.lingerMs ? `, a short batch waiting until its oldest is ${b.lingerMs} ms old` : ""}) ` +
      `or the foil in bench/sections/dynamicBatcher.ts (wait until ${b.maxBatch} arrive or ${b.dynamicMaxWaitMs} ms pass). ` +
      `Time to decision: scheduled arrival → decision published. Back-to-back capacity here: ${fmt(b.capacityPerSecond)} tx/s; ` +
      `the high load is kept under it.`,
    "",
    table(
      [
        "Load",
        "Rate (tx/s)",
        "Continuous p50 / p99 ms",
        "mean batch",
        "Dynamic p50 / p99 ms",
        "mean batch",
        "Dynamic ÷ continuous p50",
        "p99",
      ],
      b.loads.map((l) => [
        l.name,
        fmt(l.ratePerSecond),
        `${ms(l.continuous.timeToDecision.p50Ms)} / ${ms(l.continuous.timeToDecision.p99Ms)}`,
        fmt(l.continuous.meanBatch),
        `${ms(l.dynamic.timeToDecision.p50Ms)} / ${ms(l.dynamic.timeToDecision.p99Ms)}`,
        fmt(l.dynamic.meanBatch),
        x(l.p50Ratio),
        x(l.p99Ratio),
      ]),
    ),
    "",
    chart(
      "batching",
      barChart(
        b.loads.map((l) => ({
          label: `${l.name} (${fmt(l.ratePerSecond)}/s)`,
          bars: [
            { name: "continuous p50", value: l.continuous.timeToDecision.p50Ms },
            { name: "continuous p99", value: l.continuous.timeToDecision.p99Ms },
            { name: "dynamic p50", value: l.dynamic.timeToDecision.p50Ms },
            { name: "dynamic p99", value: l.dynamic.timeToDecision.p99Ms },
          ],
        })),
        { title: "Time to decision: continuous vs wait-to-fill batching", yLabel: "ms" },
      ),
    ),
    "",
  ],
};
