// What scoreBatch is handed: the transactions (as the consumer prepared them) and the scoring
// context (ports, guards, budget, policy). Shared by the orchestrator and its steps.
import type { Transaction } from "../codec/messages.js";
import type { FeatureHashes } from "../ingest/featureHashes.js";
import type { DeferredStateLane } from "./deferredStateLane.js";
import type { CallFailure, GuardedCall } from "./guardedCall.js";
import type { PolicyThresholds } from "./policy.js";
import type { StateWritesInFlight } from "./stateWritesInFlight.js";
import type { CardStateStore, Clock, ModelStepper, RuleEvaluator, StreamPosition } from "./ports.js";

export interface ScoringItem {
  readonly tx: Transaction;
  /** The transaction's Protobuf payload, kept in the card's history for rebuilds. */
  readonly payload: Uint8Array;
  readonly hashes: FeatureHashes;
  readonly position: StreamPosition;
  /** When the budget started: the Kafka record's timestamp (epoch ms). */
  readonly budgetStartMs: number;
  readonly decodeUs: number;
}

export interface ScoringGuards {
  readonly stateRead: GuardedCall;
  readonly model: GuardedCall;
  readonly stateWrite: GuardedCall;
}

export interface ScoringEvents {
  stateOutcome?(outcome: "hit" | "miss" | "rebuild" | "tampered" | "stale_write", count: number): void;
  dependencyFailure?(
    dependency: "state_read" | "model" | "state_write",
    failure: CallFailure,
    error?: Error,
  ): void;
  /**
   * A decision-making model step succeeded: features x[rows, F] and scores[rows]. The drift
   * monitor's tap; rebuilds from history and explanation rows are not passed here.
   */
  modelStepped?(x: Float32Array, score: Float32Array, rows: number): void;
}

export interface ScoringContext {
  readonly store: CardStateStore;
  /** Undefined while no verified model is loaded: every decision is then the rules'. */
  readonly model: ModelStepper | undefined;
  readonly rules: RuleEvaluator;
  readonly thresholds: PolicyThresholds;
  readonly budgetMs: number;
  /** Below this much remaining budget a transaction is not sent to the state store or model. */
  readonly minBudgetForModelMs: number;
  readonly guards: ScoringGuards;
  readonly clock: Clock;
  /** How many features to name in reason codes for REVIEW/DECLINE model decisions (0 = none). */
  readonly explainTopFeatures?: number;
  readonly events?: ScoringEvents;
  /**
   * Where state work goes when a state call times out or fails, to be applied later in order
   * (see deferredStateLane.ts). Without one (replay, tests) such transactions leave state as is.
   */
  readonly stateLane?: DeferredStateLane;
  /** Transactions queued behind this batch (the scoring queue's depth). */
  readonly backlog?: () => number;
  /** From this backlog on, a wholly late batch's state work goes to the lane in bulk. */
  readonly backlogForLane?: number;
  /**
   * The state writes of earlier batches still being answered, where batches overlap (the stream
   * processor's decideBatch); without it a batch runs to its write's end before the next starts.
   */
  readonly writesInFlight?: StateWritesInFlight;
}
