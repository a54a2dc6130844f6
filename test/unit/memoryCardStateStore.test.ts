import { describe, expect, it } from "vitest";
import { MemoryCardStateStore } from "../../src/features/memoryCardStateStore.js";
import { DAY_MS, HOUR_MS } from "../../src/features/cardState.js";
import type { CardStateWrite, HistoryEntry } from "../../src/scoring/ports.js";

const entry = (n: number, deviceCardCount = 1): HistoryEntry => ({
  payload: Uint8Array.of(n, n + 1, n + 2),
  deviceCardCount,
});
const write = (cardId: string, position: number, history: HistoryEntry[] = []): CardStateWrite => ({
  cardId,
  position,
  bytes: Uint8Array.of(position % 256, 0xab),
  history,
});
const readState = async (store: MemoryCardStateStore, cardId: string) =>
  (await store.readBatch({ cardIds: [cardId], deviceTouches: [], nowMs: 0 })).states[0];
const payloadsOf = (entries: HistoryEntry[]) => entries.map((e) => [...e.payload]);

describe("MemoryCardStateStore compare-and-set", () => {
  it("a replayed position does not apply twice", async () => {
    const store = new MemoryCardStateStore();
    expect(await store.writeBatch([write("card-1", 4096, [entry(1)])])).toEqual(["applied"]);
    expect(await store.writeBatch([write("card-1", 4096, [entry(1)])])).toEqual(["stale"]);

    const [history] = await store.readHistories(["card-1"]);
    expect(payloadsOf(history!)).toEqual([[1, 2, 3]]);
  });

  it("an older position is stale and leaves the newer state in place", async () => {
    const store = new MemoryCardStateStore();
    await store.writeBatch([write("card-1", 9000, [entry(9)])]);
    expect(await store.writeBatch([write("card-1", 8000, [entry(8)])])).toEqual(["stale"]);

    expect(await readState(store, "card-1")).toEqual({
      bytes: Uint8Array.of(9000 % 256, 0xab),
      position: 9000,
    });
    expect(payloadsOf((await store.readHistories(["card-1"]))[0]!)).toEqual([[9, 10, 11]]);
  });

  it("a newer position replaces the state", async () => {
    const store = new MemoryCardStateStore();
    await store.writeBatch([write("card-1", 1)]);
    expect(await store.writeBatch([write("card-1", 2)])).toEqual(["applied"]);
    expect((await readState(store, "card-1"))?.position).toBe(2);
  });

  it("a card written twice in one batch applies both writes in order", async () => {
    const store = new MemoryCardStateStore();
    const outcomes = await store.writeBatch([write("card-1", 1, [entry(1)]), write("card-1", 2, [entry(2)])]);
    expect(outcomes).toEqual(["applied", "applied"]);
    expect((await readState(store, "card-1"))?.position).toBe(2);
    expect(payloadsOf((await store.readHistories(["card-1"]))[0]!)).toEqual([
      [1, 2, 3],
      [2, 3, 4],
    ]);
  });

  it("an unknown card reads as absent with an empty history", async () => {
    const store = new MemoryCardStateStore();
    await store.writeBatch([write("card-1", 1, [entry(1)])]);
    expect(await readState(store, "card-2")).toBeUndefined();
    expect(await store.readHistories(["card-2"])).toEqual([[]]);
  });

  it("state handed out cannot be changed through the returned bytes", async () => {
    const store = new MemoryCardStateStore();
    const written = write("card-1", 1);
    await store.writeBatch([written]);
    (written.bytes as Uint8Array)[0] = 0xff;
    (await readState(store, "card-1"))!.bytes[1] = 0xff;
    expect((await readState(store, "card-1"))!.bytes).toEqual(Uint8Array.of(1, 0xab));
  });
});

describe("MemoryCardStateStore history", () => {
  it("keeps only the newest historyLength entries, oldest first", async () => {
    const store = new MemoryCardStateStore({ historyLength: 3 });
    await store.writeBatch([write("card-1", 1, [entry(1), entry(2)])]);
    await store.writeBatch([write("card-1", 2, [entry(3)])]);
    await store.writeBatch([write("card-1", 3, [entry(4), entry(5)])]);

    const [history] = await store.readHistories(["card-1"]);
    expect(payloadsOf(history!)).toEqual([
      [3, 4, 5],
      [4, 5, 6],
      [5, 6, 7],
    ]);
  });

  it("keeps each entry's device card count, clamped to what two bytes hold", async () => {
    const store = new MemoryCardStateStore();
    await store.writeBatch([write("card-1", 1, [entry(1, 7), entry(2, 70_000)])]);
    const [history] = await store.readHistories(["card-1"]);
    expect(history!.map((e) => e.deviceCardCount)).toEqual([7, 65_535]);
  });

  it("returns histories aligned with the requested cards", async () => {
    const store = new MemoryCardStateStore();
    await store.writeBatch([write("card-a", 1, [entry(10)]), write("card-b", 1, [entry(20)])]);
    const histories = await store.readHistories(["card-b", "card-x", "card-a"]);
    expect(histories.map(payloadsOf)).toEqual([[[20, 21, 22]], [], [[10, 11, 12]]]);
  });
});

describe("MemoryCardStateStore device fan-out", () => {
  const day = 20_000;
  const at = (dayIndex: number, hour: number) => dayIndex * DAY_MS + hour * HOUR_MS;
  const touch = (store: MemoryCardStateStore, nowMs: number, ...touches: [string, string][]) =>
    store
      .readBatch({
        cardIds: [],
        nowMs,
        deviceTouches: touches.map(([deviceKey, cardId]) => ({ deviceKey, cardId })),
      })
      .then((r) => r.deviceCardCounts);

  it("counts distinct cards per device, the touching card included", async () => {
    const store = new MemoryCardStateStore();
    expect(
      await touch(store, at(day, 1), ["dev-a", "c1"], ["dev-a", "c2"], ["dev-a", "c1"], ["dev-b", "c1"]),
    ).toEqual([1, 2, 2, 1]);
  });

  it("counts yesterday's cards with today's, once each", async () => {
    const store = new MemoryCardStateStore();
    await touch(store, at(day, 23), ["dev-a", "c1"], ["dev-a", "c2"]);
    expect(await touch(store, at(day + 1, 1), ["dev-a", "c2"], ["dev-a", "c3"])).toEqual([2, 3]);
  });

  it("forgets cards seen before yesterday", async () => {
    const store = new MemoryCardStateStore();
    await touch(store, at(day, 12), ["dev-a", "c1"]);
    await touch(store, at(day + 1, 12), ["dev-a", "c2"]);
    expect(await touch(store, at(day + 2, 0), ["dev-a", "c3"])).toEqual([2]);
  });

  it("uses buckets of deviceWindowMs when configured", async () => {
    const store = new MemoryCardStateStore({ deviceWindowMs: HOUR_MS });
    await touch(store, 10 * HOUR_MS, ["dev-a", "c1"]);
    await touch(store, 11 * HOUR_MS, ["dev-a", "c2"]);
    expect(await touch(store, 12 * HOUR_MS, ["dev-a", "c3"])).toEqual([2]);
  });
});
