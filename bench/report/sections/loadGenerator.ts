// Report chapter 11: the load generator's own cost and its cost with Kafka.
import type { LoadGeneratorResult, LoadGeneratorStep } from "../../sections/loadGenerator.js";
import { fmt } from "../reportFormat.js";
import type { SectionRenderer } from "../sectionRenderer.js";

/** The generator's budget per transaction: it must leave the cores to the scorer. */
export const GENERATOR_BUDGET_US = 10;

const row = (s: LoadGeneratorStep) => [
  s.sink === "discard" ? "discarding" : "Kafka",
  s.perRecord,
  fmt(s.targetRate),
  fmt(s.achievedRate),
  fmt(s.transactionsPerRecord),
  fmt(s.cpuMicrosPerTransaction),
  `${(s.coreShare * 100).toFixed(0)} %`,
  `${fmt(s.sendLagP50Ms)} / ${fmt(s.sendLagP99Ms)} / ${fmt(s.sendLagMaxMs)}`,
  s.stalls,
  s.failed,
];

function loadGeneratorChapter(g: LoadGeneratorResult): string[] {
  const head = [
    "Sink",
    "per record (max)",
    "asked tx/s",
    "sent tx/s",
    "per record (mean)",
    "CPU µs per tx",
    "of one core",
    "send lag p50 / p99 / max ms",
    "stalls",
    "failed",
  ];
  const table = [
    `| ${head.join(" | ")} |`,
    `|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`,
    ...g.steps.map((s) => `| ${row(s).join(" | ")} |`),
  ].join("\n");
  return [
    `\`fraud-scorer produce\`'s code (\`produceTraffic\`), ${g.seconds} s per rate after a warm-up, each sink and packing in ` +
      `a process of its own; CPU is that process's \`process.cpuUsage\` from the first send to the last acknowledgement, ` +
      `divided by the transactions sent. The discarding sink plans, encodes, packs and paces exactly as for Kafka and ` +
      `drops the records: the generator's own cost apart from the client's. Up to N transactions of one partition per ` +
      `record, a record leaving when full or when its ${g.lingerMs} ms linger window ends; ${g.partitions} partitions. ` +
      `Send lag: how long after its scheduled time a transaction was handed to the sink (its record timestamp stays the ` +
      `scheduled time). Budget: ≤ ${GENERATOR_BUDGET_US} µs per transaction.`,
    "",
    table,
    "",
  ];
}

function loadGeneratorSummaryRows(g: LoadGeneratorResult): string[][] {
  return (["discard", "kafka"] as const).flatMap((sink) => {
    const steps = g.steps.filter((s) => s.sink === sink);
    if (steps.length === 0) return [];
    const top = (n: number) =>
      steps
        .filter((s) => s.perRecord === n)
        .reduce<LoadGeneratorStep | undefined>(
          (best, s) => (best === undefined || s.targetRate > best.targetRate ? s : best),
          undefined,
        );
    const cells = [...new Set(steps.map((s) => s.perRecord))].flatMap((n) => {
      const s = top(n);
      return s
        ? [
            `${n}/record: ${fmt(s.cpuMicrosPerTransaction)} µs/tx, ${fmt(s.achievedRate)} of ${fmt(s.targetRate)} tx/s, lag p99 ${fmt(s.sendLagP99Ms)} ms`,
          ]
        : [];
    });
    const worst = Math.max(...steps.map((s) => s.cpuMicrosPerTransaction));
    return [
      [
        `11. Load generator, ${sink === "discard" ? "own cost (discarding sink)" : "with Kafka"}`,
        cells.join("; "),
        `worst ${fmt(worst)} µs/tx (budget ${GENERATOR_BUDGET_US})`,
      ],
    ];
  });
}

export const loadGeneratorReport: SectionRenderer<LoadGeneratorResult> = {
  heading: "11. Load generator",
  summaryRows: loadGeneratorSummaryRows,
  chapter: loadGeneratorChapter,
};
