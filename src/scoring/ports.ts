// The ports the scoring core is handed. The core knows nothing of Kafka or Redis clients;
// adapters (src/features/*Store.ts, src/model/*) implement these at the edges.

/**
 * Where a transaction sits in its card's stream: Kafka offset × 4096 + frame index within the
 * record (a record may hold several transactions). Monotonic per card as long as a card's
 * records share a partition (record key = card_id), which is what makes compare-and-set on it
 * an exactly-once guard for state updates.
 */
export type StreamPosition = number;
export const MAX_FRAMES_PER_RECORD = 4096;
export const streamPosition = (offset: number, frameIndex: number): StreamPosition =>
  offset * MAX_FRAMES_PER_RECORD + frameIndex;

/** One past transaction kept for rebuilding state: its Protobuf payload and the shared
 * signal it was scored with, so a rebuild computes exactly the features it saw. */
export interface HistoryEntry {
  readonly payload: Uint8Array;
  readonly deviceCardCount: number;
}

export interface StoredCardState {
  /** Encoded CardState (src/features/cardStateCodec.ts), already HMAC-verified. */
  readonly bytes: Uint8Array;
  readonly position: StreamPosition;
}

export interface DeviceTouch {
  /** Hex of the device's ingestion hash. */
  readonly deviceKey: string;
  readonly cardId: string;
}

export interface StateReadRequest {
  readonly cardIds: readonly string[];
  /** Register each card on its device and count the device's distinct cards (24 h). */
  readonly deviceTouches: readonly DeviceTouch[];
  readonly nowMs: number;
}

export interface StateReadResult {
  /** Aligned with cardIds; undefined when absent, expired, or failing its HMAC. */
  readonly states: ReadonlyArray<StoredCardState | undefined>;
  /** Aligned with deviceTouches. */
  readonly deviceCardCounts: readonly number[];
  /** How many values failed HMAC verification (treated as absent). */
  readonly tampered: number;
  /**
   * Aligned with cardIds: the history of each card whose state value was absent, read in the
   * same round trip (undefined where the store did not read it: readHistories then does).
   */
  readonly histories?: ReadonlyArray<readonly HistoryEntry[] | undefined>;
}

export interface CardStateWrite {
  readonly cardId: string;
  readonly bytes: Uint8Array;
  readonly position: StreamPosition;
  /** Appended to the card's capped history only if the compare-and-set applies. */
  readonly history: readonly HistoryEntry[];
}

export type WriteOutcome = "applied" | "stale";

export interface CardStateStore {
  /** One round trip for a whole batch. */
  readBatch(request: StateReadRequest): Promise<StateReadResult>;
  /** Only for cards whose state was missing: one round trip. Oldest first. */
  readHistories(cardIds: readonly string[]): Promise<HistoryEntry[][]>;
  /** One round trip; each write applies only if its position is newer than the stored one. */
  writeBatch(writes: readonly CardStateWrite[]): Promise<WriteOutcome[]>;
}

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

export type RuleEffect = "decline" | "review" | "allow" | "score";

export interface RuleVerdict {
  /** 0..1: the rules' own estimate, the decision's score in fallback. */
  readonly score: number;
  readonly fired: ReadonlyArray<{ readonly id: string; readonly effect: RuleEffect }>;
}

export interface RuleInput {
  readonly tx: import("../codec/messages.js").Transaction;
  readonly hashes: import("../ingest/featureHashes.js").FeatureHashes;
  /** The card's state before this transaction; null when it could not be read. */
  readonly state: import("../features/cardState.js").CardState | null;
  /** Distinct cards on the device (24 h); null when the shared signal could not be read. */
  readonly deviceCardCount: number | null;
}

/** The compiled rule set (src/rules), deterministic and in-process. */
export interface RuleEvaluator {
  readonly version: string;
  evaluate(input: RuleInput): RuleVerdict;
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
