// Report chapter 12: p99 across a promote, and what rebuilding card state from history cost.
import type { PromoteResult, PromoteWindow } from "../../sections/promote.js";
import { fmt, ms, pct, table, x } from "../reportFormat.js";
import type { SectionRenderer } from "../sectionRenderer.js";

const row = (label: string, w: PromoteWindow) => [
  label,
  `${w.fromS} … ${w.toS} s`,
  w.decided,
  w.undecided,
  ms(w.endToEnd.p50Ms),
  ms(w.endToEnd.p99Ms),
  ms(w.endToEnd.maxMs),
  pct(w.fallbackShare),
];

export const promoteReport: SectionRenderer<PromoteResult> = {
  heading: "12. Across a promote (end to end)",

  summaryRows: (k) => [
    [
      `12. Promote ${k.from} → ${k.to} at ${k.rate} tx/s: p99 in the ${k.after.toS} s after the switch vs before`,
      `${ms(k.after.endToEnd.p99Ms)} vs ${ms(k.before.endToEnd.p99Ms)} ms (max ${ms(k.after.endToEnd.maxMs)} vs ${ms(k.before.endToEnd.maxMs)}); ${fmt(k.rebuild.cards)} cards rebuilt in ${fmt(k.rebuild.windowS)} s, ${fmt(k.rebuild.cpuUsPerRebuild)} µs CPU each (in process)`,
      `${x(k.after.endToEnd.p99Ms / Math.max(0.001, k.before.endToEnd.p99Ms))} p99`,
    ],
  ],

  chapter: (k) => [
    `\`serve\` on ${k.from} at ${k.rate} tx/s; \`model promote\` of ${k.to} published ${fmt(k.publishedAtS)} s in, switched ` +
      `${fmt(k.publishToSwitchMs)} ms later (verify, load, warm up beside the running model). The switch second is the first ` +
      `second of scheduled sends with a decision of ${k.to} (second ${k.switchAtS}). Latency: scheduled send → decision ` +
      `appended, ms.`,
    "",
    table(
      ["Window", "Seconds from switch", "decided", "undecided", "p50", "p99", "max", "rules fallback"],
      [row("before", k.before), row("after", k.after)],
    ),
    "",
    `Rebuild from history in the first ${fmt(k.rebuild.windowS)} s after the switch: the scorer rebuilt ` +
      `${fmt(k.rebuild.cards)} cards while deciding ${fmt(k.rebuild.transactions)} transactions ` +
      `(\`fraud_card_state_total{outcome="rebuild"}\`).`,
    "",
    `What a rebuild costs, in process (committed model, in-memory store, batches of 64, ${k.rebuild.rounds} ` +
      `alternating rounds of ${fmt(k.rebuild.measuredTransactions)} transactions, CPU by process.cpuUsage): ` +
      `${fmt(k.rebuild.cpuUsPerTxHit)} µs per transaction when the card's state is there, ` +
      `${fmt(k.rebuild.cpuUsPerTxRebuild)} µs when it is rebuilt from history (${fmt(k.rebuild.cardsPerRound)} cards a ` +
      `round, ${fmt(k.rebuild.historyEntriesPerCard)} history entries each): ` +
      `**${fmt(k.rebuild.cpuUsPerRebuild)} µs per rebuilt card**.`,
  ],
};
