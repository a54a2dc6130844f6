// Report chapter 1: `serve` end to end under open-loop load, and the highest rate within budget.
import { STAGES } from "../../support/decisionLatencies.js";
import type { EndToEndResult, RateStep } from "../../sections/endToEnd.js";
import { barChart, lineChart } from "../../../src/tools/svgCharts.js";
import { fmt, ms, pct, STAGE_LABELS, table } from "../reportFormat.js";
import type { SectionRenderer } from "../sectionRenderer.js";

const fallbackCauses = (s: RateStep) =>
  Object.entries(s.fallbackCauses)
    .map(([cause, n]) => `${cause.replace("FALLBACK_CAUSE_", "").toLowerCase()} ${n}`)
    .join(", ") || "—";

export const endToEndReport: SectionRenderer<EndToEndResult> = {
  heading: "1. End to end",

  summaryRows: (e) => [
    ...e.fixedRates.map((s) => [
      `1. End to end, ${fmt(s.targetRate)} tx/s${s.measureS === undefined ? "" : ` for ${s.measureS} s`}`,
      `p50 ${ms(s.endToEnd.p50Ms)} / p99 ${ms(s.endToEnd.p99Ms)} / p99.9 ${ms(s.endToEnd.p999Ms)} / max ${ms(s.endToEnd.maxMs)} ms`,
      `${pct(s.withinBudgetShare)} within ${e.budgetMs} ms, ${pct(1 - s.fallbackShare)} by the model` +
        (s.undecided > 0 ? `, ${s.undecided} undecided` : "") +
        (s.scorerCpu === undefined
          ? ""
          : `; scorer ${s.scorerCpu.corePercent} % of a core, ${s.scorerCpu.usPerTransaction} µs CPU/tx (Kafka client included)`),
    ]),
    [
      `1. Highest rate with p99 ≤ ${e.budgetMs} ms, model deciding ≥ ${pct(1 - e.search.maxFallbackShare)}`,
      `${fmt(e.search.highestRateUnderBudget)} tx/s`,
      e.search.probes
        .map((p) => `${fmt(p.targetRate)}: p99 ${ms(p.endToEnd.p99Ms)} ms, ${pct(1 - p.fallbackShare)} model`)
        .join("; ") || "—",
    ],
  ],

  chapter(e, chart) {
    const steps: Array<RateStep & { kind: string }> = [
      ...e.fixedRates.map((s) => ({ ...s, kind: "fixed" })),
      ...e.search.probes.map((s) => ({ ...s, kind: "search" })),
    ];
    return [
      `\`fraud-scorer serve\` (child process, defaults: ${e.maxBatch === undefined ? "" : `max batch ${e.maxBatch}, linger ${e.lingerMs} ms, `}budget ${e.budgetMs} ms, fp32 model on CPU) against ` +
        `the local broker and Redis; ${e.partitions} partitions; open-loop load from \`src/traffic\` at each rate for ` +
        `${e.warmupS} s (not counted) + ${e.measureS} s (the first fixed rate, the product's promise, longer: see its row). Latency runs from each transaction's scheduled send time to its ` +
        `decision's broker append time (LogAppendTime), so a late load generator counts against us (coordinated-omission ` +
        `safe). Transactions still undecided at the end of the drain window are counted at their age then. ` +
        `${e.scorerStarts} scorer start(s): a step that fails (backlog left, or rules deciding) gets a fresh scorer for the next one. ` +
        `Scorer CPU: the serve process's own process_cpu_seconds_total (every thread, the Kafka client included) from the start of the measured window to the last send, per second and per transaction sent.`,
      "",
      table(
        [
          "Rate (tx/s)",
          "Measured s",
          "Sent at",
          "Decided",
          "Undecided",
          "p50 ms",
          "p95 ms",
          "p99 ms",
          "p99.9 ms",
          "max ms",
          "≤ budget",
          "By the model",
          "Fallback causes",
          "Scorer CPU: % of a core, µs/tx",
        ],
        steps.map((s) => [
          `${fmt(s.targetRate)}${s.kind === "search" ? " (search)" : ""}`,
          s.measureS ?? e.measureS,
          fmt(s.achievedRate),
          s.decided,
          s.undecided,
          ms(s.endToEnd.p50Ms),
          ms(s.endToEnd.p95Ms),
          ms(s.endToEnd.p99Ms),
          ms(s.endToEnd.p999Ms),
          ms(s.endToEnd.maxMs),
          pct(s.withinBudgetShare),
          pct(1 - s.fallbackShare),
          fallbackCauses(s),
          s.scorerCpu === undefined ? "—" : `${s.scorerCpu.corePercent} %, ${s.scorerCpu.usPerTransaction}`,
        ]),
      ),
      "",
      `**Highest rate with p99 ≤ ${e.budgetMs} ms and the model deciding at least ${pct(1 - e.search.maxFallbackShare)} ` +
        `of transactions: ${fmt(e.search.highestRateUnderBudget)} tx/s** (bisected between the fixed rates with ` +
        `${e.search.probes.length} probe(s); one run per rate, so ± the noise of this machine). A rate at which the rules ` +
        "decide instead (state call timed out, deferred state lane catching up, budget exhausted) meets the budget only by " +
        "degrading, so it does not count.",
      "",
      "Per-stage breakdown, p50 / p99 in ms, from each Decision's `timings`. State read to state write are per batch and " +
        "taken over the model's decisions only (a rules fallback skips them); queue runs from the record timestamp to " +
        "pick-up by the scoring loop, so it holds producing, the broker, the consumer's fetch and waiting for the batch " +
        "ahead; publish + ack is the broker append time minus `decided_at_ms` (whole milliseconds).",
      "",
      table(
        ["Rate (tx/s)", "model decisions", ...STAGES.map((st) => STAGE_LABELS[st])],
        steps.map((s) => [
          fmt(s.targetRate),
          s.stages.model.count,
          ...STAGES.map((st) =>
            s.stages[st].count > 0 ? `${ms(s.stages[st].p50Ms)} / ${ms(s.stages[st].p99Ms)}` : "—",
          ),
        ]),
      ),
      "",
      chart(
        "end-to-end",
        lineChart(
          (
            [
              ["p50", "p50Ms"],
              ["p99", "p99Ms"],
              ["p99.9", "p999Ms"],
              ["max", "maxMs"],
            ] as const
          ).map(([name, key]) => ({
            name,
            points: steps.map((s) => [s.targetRate, s.endToEnd[key]] as const),
          })),
          {
            title: "End-to-end latency by offered rate",
            xLabel: "offered rate (transactions/s)",
            yLabel: "ms (log scale)",
            logY: true,
            reference: { y: e.budgetMs, label: `budget ${e.budgetMs} ms` },
          },
        ),
      ),
      "",
      chart(
        "stages",
        barChart(
          steps.map((s) => ({
            label: `${fmt(s.targetRate)}/s`,
            bars: STAGES.filter((st) => s.stages[st].count > 0).map((st) => ({
              name: STAGE_LABELS[st],
              value: s.stages[st].p99Ms,
            })),
          })),
          { title: "Stage p99 by offered rate", yLabel: "ms (log scale)", logY: true },
        ),
      ),
      "",
    ];
  },
};
