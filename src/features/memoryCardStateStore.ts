// The card-state store in process memory, with the Redis store's semantics: compare-and-set on
// stream position, history capped and kept in the same binary form, device fan-out over the same
// buckets (exact sets where Redis has HyperLogLogs). Replay uses it so a re-run never touches live
// state; unit tests use it as the reference behaviour. No TTL: a run is shorter than a state's life.
import type {
  CardStateStore,
  CardStateWrite,
  HistoryEntry,
  StateReadRequest,
  StateReadResult,
  StoredCardState,
  WriteOutcome,
} from "./cardStatePort.js";
import { decodeHistoryEntry, encodeHistoryEntry } from "./cardHistoryCodec.js";
import { deviceWindowBucket } from "./deviceWindowBuckets.js";
import { cardHistoryOptions, type CardHistoryOptions } from "./cardStateStoreOptions.js";

export type MemoryCardStateStoreOptions = CardHistoryOptions;

export class MemoryCardStateStore implements CardStateStore {
  readonly #historyLength: number;
  readonly #deviceWindowMs: number;
  readonly #states = new Map<string, StoredCardState>();
  readonly #histories = new Map<string, Buffer[]>();
  /** bucket → device → cards; only the current and previous bucket are kept. */
  readonly #deviceBuckets = new Map<number, Map<string, Set<string>>>();

  constructor(options: MemoryCardStateStoreOptions = {}) {
    const { historyLength, deviceWindowMs } = cardHistoryOptions(options);
    this.#historyLength = historyLength;
    this.#deviceWindowMs = deviceWindowMs;
  }

  async readBatch({ cardIds, deviceTouches, nowMs }: StateReadRequest): Promise<StateReadResult> {
    const states = cardIds.map((cardId) => {
      const stored = this.#states.get(cardId);
      // A copy, as Redis would hand out: the caller may not reach into the store.
      return stored && { bytes: Uint8Array.from(stored.bytes), position: stored.position };
    });
    const bucket = deviceWindowBucket(nowMs, this.#deviceWindowMs);
    this.#dropBucketsBefore(bucket - 1);
    const deviceCardCounts = deviceTouches.map(({ deviceKey, cardId }) => {
      const current = this.#cardsOn(bucket, deviceKey, true);
      current.add(cardId);
      const previous = this.#cardsOn(bucket - 1, deviceKey, false);
      let count = current.size;
      for (const card of previous ?? []) if (!current.has(card)) count++;
      return count;
    });
    return { states, deviceCardCounts, tampered: 0 };
  }

  async readHistories(cardIds: readonly string[]): Promise<HistoryEntry[][]> {
    return cardIds.map((cardId) =>
      (this.#histories.get(cardId) ?? []).map((bytes) => decodeHistoryEntry(Buffer.from(bytes))!),
    );
  }

  async writeBatch(writes: readonly CardStateWrite[]): Promise<WriteOutcome[]> {
    return writes.map(({ cardId, bytes, position, history }): WriteOutcome => {
      const stored = this.#states.get(cardId);
      if (stored !== undefined && stored.position >= position) return "stale";
      this.#states.set(cardId, { bytes: Uint8Array.from(bytes), position });
      const kept = [...(this.#histories.get(cardId) ?? []), ...history.map(encodeHistoryEntry)];
      this.#histories.set(cardId, kept.slice(-this.#historyLength));
      return "applied";
    });
  }

  #cardsOn(bucket: number, deviceKey: string, create: true): Set<string>;
  #cardsOn(bucket: number, deviceKey: string, create: false): Set<string> | undefined;
  #cardsOn(bucket: number, deviceKey: string, create: boolean): Set<string> | undefined {
    let devices = this.#deviceBuckets.get(bucket);
    if (devices === undefined) {
      if (!create) return undefined;
      devices = new Map();
      this.#deviceBuckets.set(bucket, devices);
    }
    let cards = devices.get(deviceKey);
    if (cards === undefined && create) {
      cards = new Set();
      devices.set(deviceKey, cards);
    }
    return cards;
  }

  #dropBucketsBefore(oldestKept: number): void {
    for (const bucket of this.#deviceBuckets.keys())
      if (bucket < oldestKept) this.#deviceBuckets.delete(bucket);
  }
}
