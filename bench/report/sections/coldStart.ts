// Report chapter 7: `serve` from spawn to ready, and its first decisions with and without warm-up.
import { median } from "../../support/alternatingRounds.js";
import { slowestLine, STAGES } from "../../support/decisionLatencies.js";
import type { ColdStartResult } from "../../sections/coldStart.js";
import { barChart } from "../../../src/tools/svgCharts.js";
import { fmt, ms, STAGE_LABELS, table, x } from "../reportFormat.js";
import type { SectionRenderer } from "../sectionRenderer.js";

const PHASES = [
  "healthListeningMs",
  "modelVerified",
  "modelWarm",
  "schemasRegistered",
  "groupJoined",
  "readyMs",
] as const;
type ColdStartRun = ColdStartResult["runs"][number];

const phaseAt = (run: ColdStartRun, p: (typeof PHASES)[number]) =>
  p === "healthListeningMs" || p === "readyMs" ? run.timeline[p] : run.timeline.conditionsMetMs[p];

/** Median time between two conditions over the runs with warm-up. */
function spanMs(k: ColdStartResult, from: string, to: string): number {
  const spans = k.runs
    .filter((run) => run.warmUp)
    .map((run) => (run.timeline.conditionsMetMs[to] ?? NaN) - (run.timeline.conditionsMetMs[from] ?? NaN))
    .filter(Number.isFinite);
  return spans.length === 0 ? NaN : median(spans);
}
const modelWarmUpMs = (k: ColdStartResult) => spanMs(k, "modelVerified", "modelWarm");

export const coldStartReport: SectionRenderer<ColdStartResult> = {
  heading: "7. Cold start",

  summaryRows: (result) => {
    const k = withMissingAsNaN(result);
    return [
      [
        `7. Cold start: the first ${k.transactions} transactions at ${k.ratePerSecond} tx/s without vs with model warm-up`,
        `p99 ${ms(k.withoutWarmUp.firstDecisionsP99Ms)} vs ${ms(k.withWarmUp.firstDecisionsP99Ms)} ms, max ${ms(k.withoutWarmUp.firstDecisionsMaxMs)} vs ${ms(k.withWarmUp.firstDecisionsMaxMs)} ms, scorer ${fmt(k.withoutWarmUp.firstDecisionsCpuUsPerTx)} vs ${fmt(k.withWarmUp.firstDecisionsCpuUsPerTx)} µs CPU/tx; first decision ${ms(k.withoutWarmUp.firstDecisionMs)} vs ${ms(k.withWarmUp.firstDecisionMs)} ms; start → ready ${fmt(k.withWarmUp.startToReadyMs)} ms, of which warm-up ${fmt(modelWarmUpMs(k))} ms`,
        `no warm-up ${x(k.firstDecisionsP99WithoutOverWith)} p99, ${x(k.firstDecisionWithoutOverWith)} first decision, ${x(k.firstModelStageWithoutOverWith)} model stage`,
      ],
    ];
  },

  chapter: (result, chart) => {
    const k = withMissingAsNaN(result);
    return [
      `\`serve\` spawned with new topics and group, /readyz polled every 20 ms; then ${k.transactions} transactions at ` +
        `${k.ratePerSecond} tx/s. Without warm-up = \`MODEL_WARM_UP=false\`. Milliseconds from spawn (health up, ready: as polled) or from the process start by the scorer's own clock (each condition, which a poll answered late by a busy start-up would overstate); medians in the summary.`,
      "",
      table(
        [
          "Run",
          "Warm-up",
          "health up",
          "model verified",
          "model warm",
          "schemas registered",
          "group joined",
          "ready",
          "first decision ms",
          "its model stage ms",
          `first ${k.transactions}: p50 / p99 / max ms`,
          "scorer µs CPU / tx",
          "loop delay max ms",
          "load's send lag max ms",
        ],
        k.runs.map((run, i) => [
          i + 1,
          run.warmUp ? "on" : "off",
          ...PHASES.map((p) => fmt(phaseAt(run, p) ?? NaN)),
          ms(run.firstDecisionMs),
          fmt(run.firstDecisionModelUs / 1000),
          `${ms(run.firstDecisions.p50Ms)} / ${ms(run.firstDecisions.p99Ms)} / ${ms(run.firstDecisions.maxMs)}`,
          fmt(run.cpuUsPerTransaction),
          fmt(run.loopDelayMaxMs),
          fmt(run.sendLagMaxMs),
        ]),
      ),
      "",
      "The first decision's own stages, ms (everything it paid for first: the consumer's first fetch, the state " +
        "store's first round trips and Lua script load, the model's first run, the producer's first send):",
      "",
      table(
        ["Run", "Warm-up", "end to end", ...STAGES.map((st) => STAGE_LABELS[st])],
        k.runs.map((run, i) => [
          i + 1,
          run.warmUp ? "on" : "off",
          ms(run.firstDecisionMs),
          ...STAGES.map((st) => fmt(run.firstDecisionStagesMs[st])),
        ]),
      ),
      "",
      "The slowest decision of each run: when it was due (from the load's first scheduled send) and where its time went, ms:",
      "",
      ...k.runs.map(
        (run, i) =>
          `- run ${i + 1} (warm-up ${run.warmUp ? "on" : "off"}): ${run.slowest[0] ? slowestLine(run.slowest[0]) : "—"}`,
      ),
      "",
      "The scorer's CPU runs from the first send until every transaction is decided (its process_cpu_seconds_total, every thread, the Kafka client included), against about 250 µs per transaction at a steady 1,000 tx/s (section 1): what a start costs beyond that is cold code (V8 compiles as the load arrives; the Kafka client's fetch and produce paths, the Redis client, the scoring code) on two cores the load generator, Kafka and Redis share. " +
        `The model's warm-up (model verified → model warm) takes ${fmt(modelWarmUpMs(k))} ms (median). ` +
        `Median p99 of the first ${k.transactions}: **${ms(k.withWarmUp.firstDecisionsP99Ms)} ms with warm-up, ${ms(k.withoutWarmUp.firstDecisionsP99Ms)} ms without** ` +
        `(${x(k.firstDecisionsP99WithoutOverWith)}); max ${ms(k.withWarmUp.firstDecisionsMaxMs)} vs ${ms(k.withoutWarmUp.firstDecisionsMaxMs)} ms. ` +
        `Median first decision: ${ms(k.withWarmUp.firstDecisionMs)} ms with warm-up, ${ms(k.withoutWarmUp.firstDecisionMs)} ms without ` +
        `(${x(k.firstDecisionWithoutOverWith)}; its model stage ${x(k.firstModelStageWithoutOverWith)}). Start to ready: ` +
        `${fmt(k.withWarmUp.startToReadyMs)} ms with warm-up, ${fmt(k.withoutWarmUp.startToReadyMs)} ms without.`,
      "",
      chart(
        "cold-start",
        barChart(
          [
            { label: "warm-up on", v: k.withWarmUp },
            { label: "warm-up off", v: k.withoutWarmUp },
          ].map(({ label, v }) => ({
            label,
            bars: [
              { name: "first decision ms", value: v.firstDecisionMs },
              { name: "its model stage ms", value: v.firstDecisionModelUs / 1000 },
              { name: `first ${k.transactions} p50 ms`, value: v.firstDecisionsP50Ms },
              { name: `first ${k.transactions} p99 ms`, value: v.firstDecisionsP99Ms },
              { name: `first ${k.transactions} max ms`, value: v.firstDecisionsMaxMs },
            ].filter((bar) => Number.isFinite(bar.value)),
          })),
          { title: "First decisions after a cold start", yLabel: "ms (log scale)", logY: true },
        ),
      ),
      "",
    ];
  },
};

/**
 * Results written before section 7 ran at the promised rate (2026-12-03) have no p99, CPU, loop
 * delay, send lag or slowest decisions: they render as NaN and "—" rather than failing.
 */
function withMissingAsNaN(k: ColdStartResult): ColdStartResult {
  const variant = (v: ColdStartResult["withWarmUp"]) => ({
    ...v,
    firstDecisionsP99Ms: v.firstDecisionsP99Ms ?? NaN,
    firstDecisionsCpuUsPerTx: v.firstDecisionsCpuUsPerTx ?? NaN,
  });
  return {
    ...k,
    withWarmUp: variant(k.withWarmUp),
    withoutWarmUp: variant(k.withoutWarmUp),
    firstDecisionsP99WithoutOverWith: k.firstDecisionsP99WithoutOverWith ?? NaN,
    runs: k.runs.map((run) => ({
      ...run,
      cpuUsPerTransaction: run.cpuUsPerTransaction ?? NaN,
      loopDelayMaxMs: run.loopDelayMaxMs ?? NaN,
      sendLagMaxMs: run.sendLagMaxMs ?? NaN,
      slowest: run.slowest ?? [],
    })),
  };
}
