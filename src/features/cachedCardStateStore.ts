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
//
// The bytes live in slabs (CardStateSlabs below), not in a copy per card: a copy of each state
// written (bytes.slice(), ~450 B) was an ArrayBuffer of its own, allocated outside V8's heap and
// freed by the collector, and that cost more than all the cache's other work. A card read and
// written through the cache took 2.0-2.9 µs of CPU with copies and 0.8-1.1 with slabs (5,000
// cards, batches of 256, both in one process, twelve runs on an AMD EPYC host, 2026-12-06);
// writeBatch's self time in bench section 8's drain profile went from 6.7-7.6 % to 3.6-3.8 %. A
// read hands out copies of what it serves, in one buffer per read: a slot is reused as soon as
// its card is dropped, which may come before the reader has decoded what it was given.
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

/**
 * One card's entry: its writes in flight and, once the last of them was answered "applied", where
 * its state's bytes are. One entry per card rather than a map of states beside a map of writes in
 * flight, which took eight lookups, inserts and deletes per card read and written instead of four
 * (a get per read; a get, on a first write a set, and a delete and set to reorder): 0.88-0.97
 * instead of 1.13-1.21 µs of CPU per card at 5,000 cards, 1.18-1.52 instead of 1.63-1.68 at
 * 100,000 (batches of 256, old and new alternating in separate processes, four pairs each, the
 * harness's own ~0.15 included; AMD EPYC host, 2026-12-06).
 */
interface CardEntry {
  /** Writes sent and not yet answered. */
  inFlight: number;
  /** The slab holding the state; undefined while nothing is servable (see CardStateSlabs). */
  slab: Slab | undefined;
  slot: number;
  length: number;
  position: StoredCardState["position"];
  writtenAtMs: number;
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
  /**
   * Every card with a state held or a write in flight, in order of last write answered "applied"
   * (a card with only writes in flight keeps its place, or is last if new): the first held state
   * is the one to drop.
   */
  readonly #cards = new Map<string, CardEntry>();
  /** Entries holding a state: what maxCards bounds. */
  #held = 0;
  readonly #slabs = new CardStateSlabs();
  /**
   * Bumped by clear(), which empties #cards: an entry taken before it is no longer in the map, and
   * the write it was taken for is not cached.
   */
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

  /** Cards whose state is held. */
  get size(): number {
    return this.#held;
  }

  /**
   * Forgets every card (a rebalance, a model switch); writes in flight are not cached. A read of
   * a card whose write is still in flight then goes to the store, which applies the write first.
   */
  clear(): void {
    this.#cards.clear();
    this.#held = 0;
    this.#slabs.clear();
    this.#generation++;
  }

  async readBatch(request: StateReadRequest): Promise<StateReadResult> {
    const { cardIds } = request;
    const now = this.#nowMs();
    const states = new Array<StoredCardState | undefined>(cardIds.length);
    /** Indexes into cardIds read from the store. */
    const fromStore: number[] = [];
    /** Indexes into cardIds served from memory, and their entries. */
    const servedAt: number[] = [];
    const served: CardEntry[] = [];
    let servedBytes = 0;
    for (let k = 0; k < cardIds.length; k++) {
      const entry = this.#cards.get(cardIds[k]!);
      // No state is held while a write is in flight (writeBatch drops it when sending).
      if (entry?.slab !== undefined && now - entry.writtenAtMs <= this.#maxAgeMs) {
        servedAt.push(k);
        served.push(entry);
        servedBytes += entry.length;
      } else fromStore.push(k);
    }
    if (served.length > 0) {
      // Copies, made now: the slots may hold other cards by the time the reader decodes.
      const copies = new Uint8Array(servedBytes);
      let at = 0;
      for (let j = 0; j < served.length; j++) {
        const { slab, slot, length, position } = served[j]!;
        slab!.copyOut(slot, length, copies, at);
        states[servedAt[j]!] = { bytes: copies.subarray(at, at + length), position };
        at += length;
      }
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
    const entries = new Array<CardEntry>(writes.length);
    for (let k = 0; k < writes.length; k++) {
      const { cardId } = writes[k]!;
      let entry = this.#cards.get(cardId);
      if (entry === undefined) {
        entry = { inFlight: 0, slab: undefined, slot: 0, length: 0, position: 0, writtenAtMs: 0 };
        this.#cards.set(cardId, entry);
      } else this.#release(entry);
      entry.inFlight++;
      entries[k] = entry;
    }
    let outcomes: WriteOutcome[] | undefined;
    try {
      outcomes = await this.#store.writeBatch(writes);
      return outcomes;
    } finally {
      const now = this.#nowMs();
      const current = generation === this.#generation;
      for (let k = 0; k < writes.length; k++) {
        const entry = entries[k]!;
        // Not in the map any more after a clear(): nothing to count or cache.
        if (!current || --entry.inFlight > 0) continue;
        const { cardId, bytes, position } = writes[k]!;
        this.#cards.delete(cardId);
        if (outcomes?.[k] !== "applied") continue;
        // A copy: the write's bytes are a view of its batch's buffer, which would stay alive.
        const slab = this.#slabs.slabFor(bytes.length);
        entry.slab = slab;
        entry.slot = slab.store(bytes);
        entry.length = bytes.length;
        entry.position = position;
        entry.writtenAtMs = now;
        this.#held++;
        // Last in the map's order: the most recently written.
        this.#cards.set(cardId, entry);
      }
      if (this.#held > this.#maxCards) this.#evict();
    }
  }

  /** Drops the least recently written states until at most maxCards are held. */
  #evict(): void {
    for (const [cardId, entry] of this.#cards) {
      if (this.#held <= this.#maxCards) break;
      // An entry holds a state only with no write in flight: writeBatch releases it when sending.
      if (entry.slab === undefined) continue;
      this.#release(entry);
      this.#cards.delete(cardId);
    }
  }

  /** Frees the entry's slot, if it holds a state: nothing of the card is servable any more. */
  #release(entry: CardEntry): void {
    if (entry.slab === undefined) return;
    entry.slab.free(entry.slot);
    entry.slab = undefined;
    this.#held--;
  }
}

/** Slot sizes are multiples of this. */
const SLOT_ALIGN_BYTES = 64;
/** Pages are allocated as the cache fills, about this large each. */
const PAGE_BYTES = 256 * 1024;

/** Fixed-size slots in pages allocated as they are needed; a freed slot is reused first. */
export class Slab {
  readonly slotBytes: number;
  readonly #slotsPerPage: number;
  readonly #pages: Uint8Array[] = [];
  readonly #free: number[] = [];
  /** Slots ever handed out: the next new one. */
  #used = 0;

  constructor(slotBytes: number) {
    this.slotBytes = slotBytes;
    this.#slotsPerPage = Math.max(1, Math.floor(PAGE_BYTES / slotBytes));
  }

  /** Copies `bytes` (at most the slot size) into a free slot; returns the slot. */
  store(bytes: Uint8Array): number {
    if (bytes.length > this.slotBytes)
      throw new RangeError(`${bytes.length} bytes do not fit a slot of ${this.slotBytes}`);
    const slot = this.#free.length > 0 ? this.#free.pop()! : this.#used++;
    const page = Math.floor(slot / this.#slotsPerPage);
    if (page === this.#pages.length) this.#pages.push(new Uint8Array(this.#slotsPerPage * this.slotBytes));
    this.#pages[page]!.set(bytes, (slot % this.#slotsPerPage) * this.slotBytes);
    return slot;
  }

  /** Copies the first `length` bytes of `slot` into `out` at `at`. */
  copyOut(slot: number, length: number, out: Uint8Array, at: number): void {
    const from = (slot % this.#slotsPerPage) * this.slotBytes;
    out.set(this.#pages[Math.floor(slot / this.#slotsPerPage)]!.subarray(from, from + length), at);
  }

  free(slot: number): void {
    this.#free.push(slot);
  }
}

/**
 * The slab new states go to: its slots fit the largest state seen, and a larger one starts a new
 * slab. A card's state grows as its history fills and then keeps its size, so after warm-up every
 * card is in one slab; an earlier slab's cards move out as they are written again (or are
 * dropped), and it is freed with the last of them. Slabs per size class instead kept the pages of
 * every size a card had passed through, each at its peak.
 */
export class CardStateSlabs {
  #current: Slab | undefined;

  slabFor(length: number): Slab {
    if (this.#current === undefined || length > this.#current.slotBytes)
      this.#current = new Slab(Math.max(1, Math.ceil(length / SLOT_ALIGN_BYTES)) * SLOT_ALIGN_BYTES);
    return this.#current;
  }

  /** New states go to a new slab; the old ones are freed with their last cards. */
  clear(): void {
    this.#current = undefined;
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
