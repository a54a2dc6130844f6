// Section 8 of the report: the hot path's CPU by stage, its profile, and the steady runs.
import type { HotPathResult } from "../sections/hotPath.js";
import type { NoisyNeighbourResult } from "../sections/noisyNeighbour.js";

const row = (cells: ReadonlyArray<string | number>) => `| ${cells.join(" | ")} |`;
const head = (cells: readonly string[]) =>
  [row(cells), `|${cells.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`].join("\n");
const us = (v: number | null) => (v === null ? "(Kafka port)" : v.toFixed(2));
const pct = (share: number) => `${(share * 100).toFixed(share > 0.99 && share < 1 ? 2 : 1)} %`;

const STAGE_ROWS = [
  ["consume", "consume"],
  ["decodeAndHashes", "decode + hashes"],
  ["stateRead", "state read (+ rebuild)"],
  ["features", "features"],
  ["model", "model"],
  ["policy", "policy / rules / state advance"],
  ["stateWrite", "state write"],
  ["scoringOther", "scoreBatch, untimed"],
  ["encode", "encode decision"],
  ["metrics", "metrics"],
  ["produce", "produce"],
  ["commit", "commit"],
] as const;

export function hotPathSection(h: HotPathResult | { readonly error: string } | undefined): string[] {
  const out = ["## 8. Hot path (in process, real Redis)", ""];
  if (h === undefined) return [...out, "_Not run._", ""];
  if ("error" in h) return [...out, `_Did not complete: ${h.error}_`, ""];
  const d = h.drain;
  out.push(
    `A drain of ${d.transactions} transactions in batches of ${d.maxBatch}, scored as fast as the loop goes: ` +
      `**${d.cpuUsPerTransaction} µs of CPU per transaction** (process.cpuUsage, every thread), ` +
      `${d.transactionsPerSecond} tx/s, the model deciding ${pct(d.modelShare)}. By stage, µs of CPU per transaction:`,
    "",
    head(["Stage", "µs / tx"]),
    ...STAGE_ROWS.map(([key, label]) => row([label, us(d.stages[key])])),
    "",
    "Self time of the drain's CPU profile by owner:",
    "",
    head(["Owner", "self %"]),
    ...Object.entries(d.owners).map(([owner, p]) => row([owner, p])),
    "",
    "Top frames by self time:",
    "",
    head(["Frame", "where", "self %"]),
    ...d.topFrames.map((f) => row([`\`${f.name}\``, f.where, f.selfPercent])),
    "",
    "Steady arrivals (1 ms timer), scored through the scoring queue; latency from arrival to decision:",
    "",
    head([
      "Run",
      "% of a core",
      "µs CPU / tx",
      "p50 ms",
      "p99 ms",
      "max ms",
      "model decided",
      "loop delay p99 / max ms",
      "fallback causes",
    ]),
    ...h.steady.map((s) =>
      row([
        s.label,
        s.corePercent,
        s.cpuUsPerTransaction,
        s.p50Ms,
        s.p99Ms,
        s.maxMs,
        pct(s.modelShare),
        `${s.eventLoopDelayMs.p99} / ${s.eventLoopDelayMs.max}`,
        Object.entries(s.fallbackCauses)
          .map(([cause, n]) => `${cause} ${n}`)
          .join(", ") || "none",
      ]),
    ),
    "",
  );
  return out;
}

export function noisyNeighbourSection(
  n: NoisyNeighbourResult | { readonly error: string } | undefined,
): string[] {
  const out = ["## 9. Noisy neighbour (end to end)", ""];
  if (n === undefined) return [...out, "_Not run._", ""];
  if ("error" in n) return [...out, `_Did not complete: ${n.error}_`, ""];
  out.push(
    `${n.rate} tx/s through \`serve\` on fresh scorers, alone and beside a process spinning on one core at ` +
      "normal priority. Latency from scheduled send to the decision's broker append.",
    "",
    head(["Run", "p50 ms", "p99 ms", "max ms", "model decided", "undecided", "fallback causes"]),
    ...[
      ["alone", n.alone],
      ["beside a CPU hog", n.besideHog],
    ].map(([label, s]) => {
      const step = s as NoisyNeighbourResult["alone"];
      return row([
        label as string,
        step.endToEnd.p50Ms,
        step.endToEnd.p99Ms,
        step.endToEnd.maxMs,
        pct(1 - step.fallbackShare),
        step.undecided,
        Object.entries(step.fallbackCauses)
          .map(([cause, k]) => `${cause} ${k}`)
          .join(", ") || "none",
      ]);
    }),
    "",
  );
  return out;
}
