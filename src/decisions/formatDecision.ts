// One decision as one readable line for a terminal:
//   15:40:01.123  DECLINE  0.93  tx-00012345  card-0042  12.4 ms  rule:card-testing-cashout feature:amount_eur
// with the action coloured and fallbacks marked, or as NDJSON for pipes.
import type { DecisionInit } from "../codec/messages.js";
import { actionName, decisionToJson, fallbackCauseName, float32Text } from "./decisionJson.js";

export interface FormatOptions {
  readonly colour: boolean;
}

export interface DecisionMeta {
  readonly partition?: number;
  readonly offset?: string;
}

const ANSI = { red: 31, green: 32, yellow: 33, magenta: 35, dim: 2, bold: 1 } as const;
type Style = keyof typeof ANSI;

const paint = (on: boolean, text: string, ...styles: Style[]) =>
  on && styles.length > 0 ? `${styles.map((s) => `\u001b[${ANSI[s]}m`).join("")}${text}\u001b[0m` : text;

const ACTION_STYLE: Record<string, Style[]> = {
  DECLINE: ["bold", "red"],
  REVIEW: ["bold", "yellow"],
  APPROVE: ["green"],
};

/** HH:MM:SS.mmm in UTC: logs and decisions compare without a time-zone guess. */
const clockTime = (ms: number) => new Date(ms).toISOString().slice(11, 23);

export function formatDecisionLine(d: DecisionInit, { colour }: FormatOptions): string {
  const action = actionName(d.action);
  const score = float32Text(d.score ?? 0).toFixed(3);
  const totalMs = ((d.timings?.totalUs ?? 0) / 1000).toFixed(1);
  const fields = [
    paint(colour, clockTime(Number(d.decidedAtMs ?? 0)), "dim"),
    paint(colour, action.padEnd(7), ...(ACTION_STYLE[action] ?? [])),
    score,
    d.transactionId ?? "",
    paint(colour, d.cardId ?? "", "dim"),
    `${totalMs.padStart(6)} ms`,
  ];
  if (d.fallback)
    fields.push(
      paint(colour, `fallback:${(fallbackCauseName(d.fallbackCause) ?? "unknown").toLowerCase()}`, "magenta"),
    );
  const reasons = d.reasonCodes ?? [];
  if (reasons.length > 0) fields.push(reasons.join(" "));
  return fields.join("  ");
}

export function formatDecisionJson(d: DecisionInit, meta: DecisionMeta = {}): string {
  return JSON.stringify({
    ...decisionToJson(d),
    ...(meta.partition !== undefined ? { partition: meta.partition } : {}),
    ...(meta.offset !== undefined ? { offset: meta.offset } : {}),
  });
}
