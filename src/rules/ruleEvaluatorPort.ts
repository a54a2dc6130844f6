// The rule set as the scoring core sees it: what src/rules hands the core. It lives with the rules
// so they never import the scoring core; the core imports it (through src/scoring/ports.ts).
import type { Transaction } from "../codec/messages.js";
import type { CardState } from "../features/cardState.js";
import type { FeatureHashes } from "../ingest/featureHashes.js";
import type { RuleEffect } from "./ruleSet.js";

export interface RuleVerdict {
  /** 0..1: the rules' own estimate, the decision's score in fallback. */
  readonly score: number;
  readonly fired: ReadonlyArray<{ readonly id: string; readonly effect: RuleEffect }>;
}

export interface RuleInput {
  readonly tx: Transaction;
  readonly hashes: FeatureHashes;
  /** The card's state before this transaction; null when it could not be read. */
  readonly state: CardState | null;
  /** Distinct cards on the device (24 h); null when the shared signal could not be read. */
  readonly deviceCardCount: number | null;
  /**
   * The raw feature values (FEATURE_COUNT, computeFeatures' rawOut) of this transaction with this
   * state and device count, when the model's step already computed them: not computed again.
   */
  readonly rawFeatures?: Float64Array;
}

/** The compiled rule set (src/rules), deterministic and in-process. */
export interface RuleEvaluator {
  readonly version: string;
  evaluate(input: RuleInput): RuleVerdict;
}
