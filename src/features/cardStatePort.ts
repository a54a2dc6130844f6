// The card-state store as the scoring core sees it: what a store (Redis, in-memory) implements.
// It lives with the features, not in src/scoring, so the stores and codecs here never import the
// scoring core; the core imports it (through src/scoring/ports.ts).

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
  /**
   * Indexes into cardIds whose state could not be read because the part of the store holding
   * them failed (one master of a Redis Cluster down): their `states` entry is not "absent", it
   * is unknown. A store that can reach none of the parts a batch needs throws instead, so the
   * caller's circuit breaker sees a store outage as one; one dead node is not a store outage.
   * Their device touches were not counted either (deviceCardCounts holds no entry for them).
   */
  readonly unavailable?: readonly number[];
}

export interface CardStateWrite {
  readonly cardId: string;
  readonly bytes: Uint8Array;
  readonly position: StreamPosition;
  /** Appended to the card's capped history only if the compare-and-set applies. */
  readonly history: readonly HistoryEntry[];
}

/** "unavailable": the part of the store holding the card failed (see StateReadResult.unavailable). */
export type WriteOutcome = "applied" | "stale" | "unavailable";

export interface CardStateStore {
  /** One round trip for a whole batch. */
  readBatch(request: StateReadRequest): Promise<StateReadResult>;
  /** Only for cards whose state was missing: one round trip. Oldest first. */
  readHistories(cardIds: readonly string[]): Promise<HistoryEntry[][]>;
  /** One round trip; each write applies only if its position is newer than the stored one. */
  writeBatch(writes: readonly CardStateWrite[]): Promise<WriteOutcome[]>;
}
