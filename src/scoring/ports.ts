// The ports the scoring core is handed. The core knows nothing of Kafka or Redis clients;
// adapters (src/features/*Store.ts, src/model/*) implement these at the edges. The card-state
// store and rule-set ports are declared beside their implementations (src/features/
// cardStatePort.ts, src/rules/ruleEvaluatorPort.ts), so neither folder imports the core; they
// are re-exported here so the core's callers find every port in one place.

export {
  MAX_FRAMES_PER_RECORD,
  streamPosition,
  type CardStateStore,
  type CardStateWrite,
  type DeviceTouch,
  type HistoryEntry,
  type StateReadRequest,
  type StateReadResult,
  type StoredCardState,
  type StreamPosition,
  type WriteOutcome,
} from "../features/cardStatePort.js";
export type { RuleEffect } from "../rules/ruleSet.js";
export type { RuleEvaluator, RuleInput, RuleVerdict } from "../rules/ruleEvaluatorPort.js";

/** One batched step of the stateful model (src/model implements it on ONNX Runtime). */
export interface ModelStepper {
  readonly modelVersion: string;
  readonly featureSchemaVersion: string;
  readonly hiddenSize: number;
  readonly featureCount: number;
  /** x is [batch × featureCount], h and c are [batch × hiddenSize], row-major. */
  step(
    x: Float32Array,
    h: Float32Array,
    c: Float32Array,
    batch: number,
  ): Promise<{ score: Float32Array; h: Float32Array; c: Float32Array }>;
}

export interface Clock {
  /** Wall-clock epoch milliseconds (record timestamps are on this scale). */
  nowMs(): number;
  /** Monotonic microseconds, for stage timings. */
  monotonicUs(): number;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  monotonicUs: () => performance.now() * 1000,
};
