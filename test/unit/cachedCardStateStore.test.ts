import { describe, expect, it } from "vitest";
import { CachedCardStateStore, CardStateSlabs } from "../../src/features/cachedCardStateStore.js";
import type {
  CardStateStore,
  CardStateWrite,
  StateReadRequest,
  StateReadResult,
  WriteOutcome,
} from "../../src/features/cardStatePort.js";
import { MemoryCardStateStore } from "../../src/features/memoryCardStateStore.js";

const write = (cardId: string, position: number, marker = position % 256): CardStateWrite => ({
  cardId,
  position,
  bytes: Uint8Array.of(marker, 0xab),
  history: [{ payload: Uint8Array.of(marker), deviceCardCount: 1 }],
});

/** The in-memory store, recording which cards each read asked it for; writes may be held. */
class RecordingStore implements CardStateStore {
  readonly inner = new MemoryCardStateStore();
  readonly readsAsked: string[][] = [];
  heldWrites: Promise<void> | undefined;
  failWrites = false;
  unavailableCard: string | undefined;

  async readBatch(request: StateReadRequest): Promise<StateReadResult> {
    this.readsAsked.push([...request.cardIds]);
    // As the Redis store does: the history of each card without state comes with the read.
    const stored = await this.inner.readBatch(request);
    const read = { ...stored, histories: stored.states.map((s) => (s ? undefined : [])) };
    const k = this.unavailableCard === undefined ? -1 : request.cardIds.indexOf(this.unavailableCard);
    return k < 0 ? read : { ...read, unavailable: [k] };
  }

  readHistories(cardIds: readonly string[]) {
    return this.inner.readHistories(cardIds);
  }

  async writeBatch(writes: readonly CardStateWrite[]): Promise<WriteOutcome[]> {
    await this.heldWrites;
    if (this.failWrites) throw new Error("store down");
    return this.inner.writeBatch(writes);
  }
}

const read = (store: CardStateStore, cardIds: string[], touches = true) =>
  store.readBatch({
    cardIds,
    deviceTouches: touches ? cardIds.map((cardId) => ({ deviceKey: "d1", cardId })) : [],
    nowMs: 0,
  });

function setUp({ maxCards = 100, maxAgeMs = 60_000 } = {}) {
  const store = new RecordingStore();
  let now = 0;
  const cached = new CachedCardStateStore(store, { maxCards, maxAgeMs, nowMs: () => now });
  return { store, cached, advance: (ms: number) => (now += ms) };
}

describe("CachedCardStateStore", () => {
  it("serves a card it wrote from memory, a copy of the bytes written, with the position", async () => {
    const { store, cached } = setUp();
    const w = write("card-1", 4096, 7);
    expect(await cached.writeBatch([w])).toEqual(["applied"]);
    (w.bytes as Uint8Array)[0] = 99; // the batch's buffer is reused
    const result = await read(cached, ["card-1", "card-2"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-2"]);
    expect(result.states[0]).toMatchObject({ bytes: Uint8Array.of(7, 0xab), position: 4096 });
    expect(result.states[1]).toBeUndefined();
    // The device fan-out still comes from the store, for every touch.
    expect(result.deviceCardCounts).toEqual([1, 2]);
    // The histories of uncached cards keep their places.
    expect(result.histories?.[0]).toBeUndefined();
    expect(result.histories?.[1]).toEqual([]);
    expect(cached.stats).toEqual({ hits: 1, misses: 1 });
  });

  it("reads a card from the store while a write of it is in flight, and caches the last one answered", async () => {
    const { store, cached } = setUp();
    let release!: () => void;
    store.heldWrites = new Promise((resolve) => (release = resolve));
    const first = cached.writeBatch([write("card-1", 4096, 1)]);
    const second = cached.writeBatch([write("card-1", 8192, 2)]);
    await read(cached, ["card-1"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-1"]);
    release();
    expect(await first).toEqual(["applied"]);
    expect(await second).toEqual(["applied"]);
    const result = await read(cached, ["card-1", "card-2"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-2"]);
    expect(result.states[0]).toMatchObject({ bytes: Uint8Array.of(2, 0xab), position: 8192 });
  });

  it("does not cache a write answered stale, or a write that failed", async () => {
    const { store, cached } = setUp();
    await store.inner.writeBatch([write("card-1", 9000)]);
    expect(await cached.writeBatch([write("card-1", 4096)])).toEqual(["stale"]);
    await read(cached, ["card-1"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-1"]);

    store.failWrites = true;
    await expect(cached.writeBatch([write("card-2", 4096)])).rejects.toThrow("store down");
    await read(cached, ["card-2"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-2"]);
    expect(cached.size).toBe(0);
  });

  it("forgets every card on clear(), and does not cache a write in flight across it", async () => {
    const { store, cached } = setUp();
    await cached.writeBatch([write("card-1", 4096)]);
    let release!: () => void;
    store.heldWrites = new Promise((resolve) => (release = resolve));
    const inFlight = cached.writeBatch([write("card-2", 4096)]);
    cached.clear();
    release();
    expect(await inFlight).toEqual(["applied"]);
    await read(cached, ["card-1", "card-2"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-1", "card-2"]);
  });

  it("reads an entry older than maxAgeMs from the store again", async () => {
    const { store, cached, advance } = setUp({ maxAgeMs: 1_000 });
    await cached.writeBatch([write("card-1", 4096)]);
    advance(1_000);
    await read(cached, ["card-1", "card-2"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-2"]);
    advance(1);
    await read(cached, ["card-1", "card-2"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-1", "card-2"]);
  });

  it("keeps at most maxCards, dropping the least recently written", async () => {
    const { store, cached } = setUp({ maxCards: 2 });
    await cached.writeBatch([write("card-1", 4096), write("card-2", 4096)]);
    await cached.writeBatch([write("card-1", 8192)]);
    await cached.writeBatch([write("card-3", 4096)]);
    expect(cached.size).toBe(2);
    await read(cached, ["card-1", "card-2", "card-3"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-2"]);
  });

  it("counts only the states it holds against maxCards, and skips a card whose write is in flight when dropping", async () => {
    const { store, cached } = setUp({ maxCards: 2 });
    await cached.writeBatch([write("card-1", 4096, 1), write("card-2", 4096, 2)]);
    let release!: () => void;
    store.heldWrites = new Promise((resolve) => (release = resolve));
    const card1 = cached.writeBatch([write("card-1", 8192, 11)]);
    store.heldWrites = undefined;
    // card-1 is the oldest entry but holds nothing while its write is in flight: card-2 goes.
    expect(await cached.writeBatch([write("card-3", 4096, 3), write("card-4", 4096, 4)])).toEqual([
      "applied",
      "applied",
    ]);
    expect(cached.size).toBe(2);
    await read(cached, ["card-1", "card-2", "card-3", "card-4"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-1", "card-2"]);
    release();
    expect(await card1).toEqual(["applied"]);
    // card-1 is now the most recently written, and card-3 the least.
    expect(cached.size).toBe(2);
    const result = await read(cached, ["card-1", "card-3", "card-4"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-3"]);
    expect(result.states[0]).toMatchObject({ bytes: Uint8Array.of(11, 0xab), position: 8192 });
    expect(result.states[2]).toMatchObject({ bytes: Uint8Array.of(4, 0xab), position: 4096 });
  });

  it("keeps counting a card's writes in flight while other cards are dropped, so none of them is served early", async () => {
    const { store, cached } = setUp({ maxCards: 1 });
    await cached.writeBatch([write("card-1", 4096, 1)]);
    let releaseFirst!: () => void;
    store.heldWrites = new Promise((resolve) => (releaseFirst = resolve));
    const first = cached.writeBatch([write("card-1", 8192, 2)]);
    store.heldWrites = undefined;
    // Over maxCards: card-1, the oldest entry, has a write in flight and must stay counted.
    await cached.writeBatch([write("card-2", 4096), write("card-3", 4096)]);
    let releaseSecond!: () => void;
    store.heldWrites = new Promise((resolve) => (releaseSecond = resolve));
    const second = cached.writeBatch([write("card-1", 12288, 3)]);
    releaseFirst();
    expect(await first).toEqual(["applied"]);
    // The second write is still in flight: card-1 comes from the store, not from memory.
    await read(cached, ["card-1"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-1"]);
    releaseSecond();
    expect(await second).toEqual(["applied"]);
    const result = await read(cached, ["card-1", "card-3"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-3"]);
    expect(result.states[0]).toMatchObject({ bytes: Uint8Array.of(3, 0xab), position: 12288 });
  });

  it("still asks the store when every card is cached and no device is touched", async () => {
    const { store, cached } = setUp();
    await cached.writeBatch([write("card-1", 4096), write("card-2", 4096)]);
    const result = await read(cached, ["card-1", "card-2"], false);
    expect(store.readsAsked.at(-1)).toEqual(["card-1"]);
    expect(result.states.map((s) => s?.position)).toEqual([4096, 4096]);
  });

  it("maps the store's unavailable cards back to the caller's indexes", async () => {
    const { store, cached } = setUp();
    await cached.writeBatch([write("card-1", 4096)]);
    store.unavailableCard = "card-3";
    const result = await read(cached, ["card-1", "card-2", "card-3"]);
    expect(store.readsAsked.at(-1)).toEqual(["card-2", "card-3"]);
    expect(result.unavailable).toEqual([2]);
  });

  it("serves every cached card's last bytes whole while slots of several sizes are freed and reused", async () => {
    const { cached } = setUp({ maxCards: 5_000 });
    const last = new Map<string, Uint8Array>();
    // Cards rewritten, evicted and back, with states of 1 to 704 bytes: new slabs as larger states
    // come, cards moving out of the earlier ones; 5,000 live cards fill many pages of any slab.
    for (let step = 0; step < 12_000; step++) {
      const cardId = `card-${(step * 37) % 6_007}`;
      const length = step % 10 === 0 ? 65 + ((step * 131) % 640) : 1 + ((step * 131) % 64);
      const bytes = Uint8Array.from({ length }, (_, i) => (step + i * 7) % 251);
      expect(await cached.writeBatch([{ cardId, position: step, bytes, history: [] }])).toEqual(["applied"]);
      last.set(cardId, bytes.slice());
      bytes.fill(0); // the caller's buffer is reused
    }
    expect(cached.size).toBe(5_000);
    const cardIds = [...last.keys()];
    const result = await read(cached, cardIds, false);
    const served = cardIds.filter((_, k) => result.states[k] !== undefined);
    expect(served.length).toBeGreaterThanOrEqual(4_999); // the trial read asks the store for one
    for (const cardId of served)
      expect(result.states[cardIds.indexOf(cardId)]!.bytes).toEqual(last.get(cardId));
  });

  it("hands a read copies that later writes, evictions and clear() leave as they were", async () => {
    const { cached } = setUp({ maxCards: 2 });
    const bytesOf = (marker: number) => new Uint8Array(300).fill(marker);
    await cached.writeBatch([
      { cardId: "card-1", position: 1, bytes: bytesOf(1), history: [] },
      { cardId: "card-2", position: 1, bytes: bytesOf(2), history: [] },
    ]);
    const before = await read(cached, ["card-1", "card-2"]);
    // card-1's slot is freed by its rewrite, card-2's by eviction; both are taken again.
    await cached.writeBatch([{ cardId: "card-1", position: 2, bytes: bytesOf(3), history: [] }]);
    await cached.writeBatch([{ cardId: "card-3", position: 1, bytes: bytesOf(4), history: [] }]);
    expect(before.states[0]!.bytes).toEqual(bytesOf(1));
    expect(before.states[1]!.bytes).toEqual(bytesOf(2));
    const after = await read(cached, ["card-1", "card-3"]);
    expect(after.states[0]).toMatchObject({ bytes: bytesOf(3), position: 2 });
    expect(after.states[1]).toMatchObject({ bytes: bytesOf(4), position: 1 });
    cached.clear();
    expect(after.states[1]!.bytes).toEqual(bytesOf(4));
  });

  it("puts new states in one slab whose slots fit the largest seen, and starts another after clear()", () => {
    const slabs = new CardStateSlabs();
    const first = slabs.slabFor(100);
    expect(first.slotBytes).toBe(128);
    expect(slabs.slabFor(20)).toBe(first);
    expect(slabs.slabFor(128)).toBe(first);
    const larger = slabs.slabFor(129);
    expect(larger.slotBytes).toBe(192);
    expect(slabs.slabFor(100)).toBe(larger);
    expect(() => first.store(new Uint8Array(129))).toThrow(RangeError);
    slabs.clear();
    const fresh = slabs.slabFor(10);
    expect(fresh).not.toBe(larger);
    expect(fresh.slotBytes).toBe(64);
  });
});
