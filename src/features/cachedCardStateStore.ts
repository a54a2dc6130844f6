// The states this process last wrote, kept in memory in front of the store, so a card's next
// read does not fetch, verify and parse again what the process itself just wrote. Records are
// keyed by card id, so while a partition is this instance's, nobody else writes its cards: the
// store then holds exactly what this process's last applied write put there, and the cache holds
// the same bytes. Kafka Streams and Flink keep state where its partition is processed for the
// same reason; here the store stays the durable copy, written through on every batch as before.
//
// What keeps the copy equal to the store:
// - a card is served from memory only once its last write was answered "applied", and no write
//   of it is in flight (a read then goes to the store, which applies the write first: one
//   connection, in order);
// - a write answered "stale" or "unavailable", or failing, leaves the card uncached;
// - clear() forgets every card, and writes in flight then are not cached when answered. The
//   caller clears on every rebalance (another instance may have owned the partitions meanwhile)
//   and on every model switch;
// - an entry older than maxAgeMs is not served (a state the store may have expired by TTL).
// A store changed underneath by something else (an operator's DEL, a restore) is not seen while
// the card stays cached; its next write still goes through the store's compare-and-set.
//
// Every read still makes its store call, for the device fan-out and the uncached cards; a read
// whose cards are all cached and that touches no device (the breaker's trial read) asks the
// store for its first card, so a read always says whether the store answers.
import type {
  CardStateStore,
  CardStateWrite,
  HistoryEntry,
  StateReadRequest,
  StateReadResult,
  StoredCardState,
  WriteOutcome,
} from "./cardStatePort.js";

export interface CachedCardStateStoreOptions {
  /** Cards kept; the least recently written is dropped beyond this. */
  readonly maxCards: number;
  /** An entry older than this (since its write was answered) is read from the store again. */
  readonly maxAgeMs: number;
  /** Monotonic milliseconds (performance.now() unless told). */
  readonly nowMs?: () => number;
}

interface CachedState extends StoredCardState {
  readonly writtenAtMs: number;
}

export interface CardStateCacheStats {
  /** Cards read from memory. */
  hits: number;
  /** Cards read from the store. */
  misses: number;
}

export class CachedCardStateStore implements CardStateStore {
  readonly #store: CardStateStore;
  readonly #maxCards: number;
  readonly #maxAgeMs: number;
  readonly #nowMs: () => number;
  /** In order of last write answered: the first is the one to drop. */
  readonly #states = new Map<string, CachedState>();
  /** Writes sent and not yet answered, per card. */
  readonly #writesInFlight = new Map<string, number>();
  /** Bumped by clear(): a write sent under an older generation is not cached. */
  #generation = 0;
  readonly #stats: CardStateCacheStats = { hits: 0, misses: 0 };

  constructor(store: CardStateStore, { maxCards, maxAgeMs, nowMs }: CachedCardStateStoreOptions) {
    if (!Number.isSafeInteger(maxCards) || maxCards < 1) throw new RangeError("maxCards must be ≥ 1");
    if (!(maxAgeMs > 0)) throw new RangeError("maxAgeMs must be > 0");
    this.#store = store;
    this.#maxCards = maxCards;
    this.#maxAgeMs = maxAgeMs;
    this.#nowMs = nowMs ?? (() => performance.now());
  }

  get stats(): Readonly<CardStateCacheStats> {
    return this.#stats;
  }

  get size(): number {
    return this.#states.size;
  }

  /** Forgets every card (a rebalance, a model switch); writes in flight are not cached. */
  clear(): void {
    this.#states.clear();
    this.#generation++;
  }

  async readBatch(request: StateReadRequest): Promise<StateReadResult> {
    const { cardIds } = request;
    const now = this.#nowMs();
    const states = new Array<StoredCardState | undefined>(cardIds.length);
    /** Indexes into cardIds read from the store. */
    const fromStore: number[] = [];
    for (let k = 0; k < cardIds.length; k++) {
      const cardId = cardIds[k]!;
      const cached = this.#states.get(cardId);
      if (
        cached !== undefined &&
        now - cached.writtenAtMs <= this.#maxAgeMs &&
        !this.#writesInFlight.has(cardId)
      )
        states[k] = cached;
      else fromStore.push(k);
    }
    if (fromStore.length === cardIds.length) {
      this.#stats.misses += cardIds.length;
      return this.#store.readBatch(request);
    }
    if (fromStore.length === 0 && request.deviceTouches.length === 0) fromStore.push(0);
    this.#stats.misses += fromStore.length;
    this.#stats.hits += cardIds.length - fromStore.length;
    const read = await this.#store.readBatch({ ...request, cardIds: fromStore.map((k) => cardIds[k]!) });
    let histories: Array<readonly HistoryEntry[] | undefined> | undefined;
    fromStore.forEach((k, j) => {
      states[k] = read.states[j];
      const history = read.histories?.[j];
      if (history !== undefined) (histories ??= new Array(cardIds.length))[k] = history;
    });
    return {
      states,
      deviceCardCounts: read.deviceCardCounts,
      tampered: read.tampered,
      ...(histories !== undefined && { histories }),
      ...(read.unavailable !== undefined && { unavailable: read.unavailable.map((j) => fromStore[j]!) }),
    };
  }

  readHistories(cardIds: readonly string[]): Promise<HistoryEntry[][]> {
    return this.#store.readHistories(cardIds);
  }

  async writeBatch(writes: readonly CardStateWrite[]): Promise<WriteOutcome[]> {
    const generation = this.#generation;
    for (const { cardId } of writes) {
      this.#states.delete(cardId);
      this.#writesInFlight.set(cardId, (this.#writesInFlight.get(cardId) ?? 0) + 1);
    }
    let outcomes: WriteOutcome[] | undefined;
    try {
      outcomes = await this.#store.writeBatch(writes);
      return outcomes;
    } finally {
      const now = this.#nowMs();
      const current = generation === this.#generation;
      for (let k = 0; k < writes.length; k++) {
        const { cardId, bytes, position } = writes[k]!;
        const left = this.#writesInFlight.get(cardId)! - 1;
        if (left > 0) {
          this.#writesInFlight.set(cardId, left);
          continue;
        }
        this.#writesInFlight.delete(cardId);
        // A copy: the write's bytes are a view of its batch's buffer, which would stay alive.
        if (current && outcomes?.[k] === "applied")
          this.#states.set(cardId, { bytes: bytes.slice(), position, writtenAtMs: now });
      }
      for (const cardId of this.#states.keys()) {
        if (this.#states.size <= this.#maxCards) break;
        this.#states.delete(cardId);
      }
    }
  }
}

/**
 * `store` with the states it writes kept in memory, as `serve` runs it (redis.stateCacheCards,
 * redis.stateTtlMs); `store` itself when maxCards is 0.
 */
export function withWrittenStatesCached(
  store: CardStateStore,
  { maxCards, stateTtlMs }: { readonly maxCards: number; readonly stateTtlMs: number },
): CardStateStore | CachedCardStateStore {
  if (maxCards === 0) return store;
  // Well inside the store's TTL, which each write restarts.
  return new CachedCardStateStore(store, { maxCards, maxAgeMs: stateTtlMs / 2 });
}
