// Report chapter 7: `serve` from spawn to ready, and its first decisions with and without warm-up.
import { median } from "../../support/alternatingRounds.js";
import { STAGES } from "../../support/decisionLatencies.js";
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

/** Median time between "model verified" and "model warm" over the runs with warm-up. */
function warmUpMs(k: ColdStartResult): number {
  const spans = k.runs
    .filter((run) => run.warmUp)
    .map(
      (run) =>
        (run.timeline.conditionsMetMs.modelWarm ?? NaN) - (run.timeline.conditionsMetMs.modelVerified ?? NaN),
    )
    .filter(Number.isFinite);
  return spans.length === 0 ? NaN : median(spans);
}

export const coldStartReport: SectionRenderer<ColdStartResult> = {
  heading: "7. Cold start",

  summaryRows: (k) => [
    [
      "7. Cold start: first decision without vs with model warm-up",
      `${ms(k.withoutWarmUp.firstDecisionMs)} vs ${ms(k.withWarmUp.firstDecisionMs)} ms (model stage ${fmt(k.withoutWarmUp.firstDecisionModelUs / 1000)} vs ${fmt(k.withWarmUp.firstDecisionModelUs / 1000)} ms); start → ready ${fmt(k.withWarmUp.startToReadyMs)} ms, of which warm-up ${fmt(warmUpMs(k))} ms`,
      `no warm-up ${x(k.firstDecisionWithoutOverWith)} first decision, ${x(k.firstModelStageWithoutOverWith)} model stage`,
    ],
  ],

  chapter: (k, chart) => [
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
        `first ${k.transactions}: p50 / max ms`,
      ],
      k.runs.map((run, i) => [
        i + 1,
        run.warmUp ? "on" : "off",
        ...PHASES.map((p) => fmt(phaseAt(run, p) ?? NaN)),
        ms(run.firstDecisionMs),
        fmt(run.firstDecisionModelUs / 1000),
        `${ms(run.firstDecisions.p50Ms)} / ${ms(run.firstDecisions.maxMs)}`,
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
    `The warm-up itself (model verified → model warm) takes ${fmt(warmUpMs(k))} ms (median). ` +
      `Median first decision: **${ms(k.withWarmUp.firstDecisionMs)} ms with warm-up, ${ms(k.withoutWarmUp.firstDecisionMs)} ms without** ` +
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
            { name: `first ${k.transactions} max ms`, value: v.firstDecisionsMaxMs },
          ],
        })),
        { title: "First decisions after a cold start", yLabel: "ms (log scale)", logY: true },
      ),
    ),
    "",
  ],
};
