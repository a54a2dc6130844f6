// The few ways a bench report writes a number or a table, shared by every section's renderer so
// the report reads as one document.
import { STAGES } from "../support/decisionLatencies.js";
import { formatNumber } from "../../src/tools/svgCharts.js";
import type { SectionError } from "./benchResults.js";

export const fmt = formatNumber;
export const ms = (v: number) => fmt(v);
export const x = (ratio: number) => `×${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(2)}`;
export const pct = (share: number) => `${(share * 100).toFixed(share > 0 && share < 0.01 ? 2 : 1)} %`;
export const failed = (e: SectionError) => `_Did not complete: ${e.error}_`;

export const STAGE_LABELS: Record<(typeof STAGES)[number], string> = {
  queue: "queue",
  decode: "decode",
  stateRead: "state read",
  features: "features",
  model: "model",
  policy: "policy",
  stateWrite: "state write",
  publish: "publish + ack",
};

/** A Markdown table; numeric columns (all but the first, unless told) are right-aligned. */
export const table = (
  head: readonly string[],
  rows: ReadonlyArray<readonly (string | number)[]>,
  { leftColumns = 1 }: { leftColumns?: number } = {},
) =>
  [
    `| ${head.join(" | ")} |`,
    `|${head.map((_, i) => (i < leftColumns ? "---" : "---:")).join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
