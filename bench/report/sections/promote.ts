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
      `${ms(k.after.endToEnd.p99Ms)} vs ${ms(k.before.endToEnd.p99Ms)} ms (max ${ms(k.after.endToEnd.maxMs)} vs ${ms(k.before.endToEnd.maxMs)}); ${fmt(k.rebuild.cards)} cards rebuilt in ${fmt(k.rebuild.windowS)} s at ${fmt(k.rebuild.cpuUsPerRebuild)} µs CPU each`,
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
    `Rebuild from history in the first ${fmt(k.rebuild.windowS)} s after the switch: ${fmt(k.rebuild.cards)} cards rebuilt over ` +
      `${fmt(k.rebuild.transactions)} transactions; scorer CPU ${fmt(k.rebuild.cpuUsPerTxBefore)} µs per transaction before, ` +
      `${fmt(k.rebuild.cpuUsPerTxAfter)} after, so about ${fmt(k.rebuild.cpuUsPerRebuild)} µs per rebuilt card ` +
      `((CPU after − transactions × CPU per transaction before) / cards; process CPU from the scorer's own metrics).`,
  ],
};
