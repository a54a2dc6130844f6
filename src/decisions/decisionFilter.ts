// Which decisions `decisions tail` shows: by action and by whether the rules decided alone.
import type { DecisionInit } from "../codec/messages.js";
import { actionName, ACTION_NAMES, type ActionName } from "./decisionJson.js";

export interface DecisionFilter {
  /** Shown actions; all when absent. */
  readonly actions?: ReadonlySet<ActionName>;
  /** true: fallbacks only; false: model decisions only; absent: both. */
  readonly fallback?: boolean;
}

export const matchesFilter = (d: DecisionInit, { actions, fallback }: DecisionFilter): boolean =>
  (actions === undefined || actions.has(actionName(d.action))) &&
  (fallback === undefined || (d.fallback ?? false) === fallback);

/** "decline,review" → the set, or a message naming the unknown action. */
export function parseActions(text: string): ReadonlySet<ActionName> | string {
  const names = text
    .split(",")
    .map((a) => a.trim().toUpperCase())
    .filter((a) => a !== "");
  const unknown = names.filter((a) => !(ACTION_NAMES as readonly string[]).includes(a));
  if (names.length === 0 || unknown.length > 0)
    return `--action "${text}": expected a comma-separated list of ${ACTION_NAMES.map((a) => a.toLowerCase()).join(", ")}`;
  return new Set(names as ActionName[]);
}
