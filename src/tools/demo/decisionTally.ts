// What the decisions said: the action mix, how often the rules decided alone and why, and on
// labelled traffic how much fraud was declined, sent to review, or approved (missed).
import type { DecisionInit } from "../../codec/messages.js";
import {
  actionName,
  ACTION_NAMES,
  fallbackCauseName,
  type ActionName,
} from "../../decisions/decisionJson.js";

export interface FraudOutcome {
  readonly fraud: Readonly<Record<ActionName, number>>;
  readonly legitimate: Readonly<Record<ActionName, number>>;
  readonly unlabelled: number;
}

export interface TallySummary {
  readonly decisions: number;
  readonly actions: Readonly<Record<ActionName, number>>;
  readonly fallbacks: number;
  readonly fallbackCauses: Readonly<Record<string, number>>;
  readonly labelled: FraudOutcome;
  /** Labelled fraud declined or sent to review, of all labelled fraud. */
  readonly fraudCaught: number;
  readonly fraudMissed: number;
  /** Labelled legitimate declined or reviewed, of all labelled legitimate. */
  readonly falsePositiveRate: number;
}

const zeroActions = (): Record<ActionName, number> => ({ APPROVE: 0, REVIEW: 0, DECLINE: 0, UNSPECIFIED: 0 });

export class DecisionTally {
  #decisions = 0;
  readonly #actions = zeroActions();
  #fallbacks = 0;
  readonly #causes = new Map<string, number>();
  readonly #fraud = zeroActions();
  readonly #legitimate = zeroActions();
  #unlabelled = 0;

  add(d: DecisionInit, isFraud: boolean | undefined): void {
    this.#decisions++;
    const action = actionName(d.action);
    this.#actions[action]++;
    if (d.fallback) {
      this.#fallbacks++;
      const cause = (fallbackCauseName(d.fallbackCause) ?? "UNKNOWN").toLowerCase();
      this.#causes.set(cause, (this.#causes.get(cause) ?? 0) + 1);
    }
    if (isFraud === undefined) this.#unlabelled++;
    else (isFraud ? this.#fraud : this.#legitimate)[action]++;
  }

  get decisions(): number {
    return this.#decisions;
  }

  get fallbacks(): number {
    return this.#fallbacks;
  }

  summary(): TallySummary {
    const flagged = (r: Record<ActionName, number>) => r.DECLINE + r.REVIEW;
    const total = (r: Record<ActionName, number>) => ACTION_NAMES.reduce((n, a) => n + r[a], 0);
    const legitimate = total(this.#legitimate);
    return {
      decisions: this.#decisions,
      actions: { ...this.#actions },
      fallbacks: this.#fallbacks,
      fallbackCauses: Object.fromEntries([...this.#causes].sort((a, b) => b[1] - a[1])),
      labelled: {
        fraud: { ...this.#fraud },
        legitimate: { ...this.#legitimate },
        unlabelled: this.#unlabelled,
      },
      fraudCaught: flagged(this.#fraud),
      fraudMissed: this.#fraud.APPROVE,
      falsePositiveRate: legitimate === 0 ? 0 : flagged(this.#legitimate) / legitimate,
    };
  }
}
