import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { Cluster, Redis } from "ioredis";
import {
  CardStateStoreError,
  RedisCardStateStore,
  redactedKey,
  type RedisCardStateStoreOptions,
} from "../../src/state/redisCardStateStore.js";
import { clusterSlot, type RedisClient } from "../../src/state/redisRoundTrip.js";
import { deleteNamespace } from "../../src/state/namespaceKeys.js";
import { DAY_MS, HOUR_MS } from "../../src/features/cardState.js";
import type { CardStateWrite, DeviceTouch, HistoryEntry } from "../../src/scoring/ports.js";
import { startPrivateRedis, startPrivateRedisCluster } from "../../stack/privateRedis.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const HMAC_KEY = randomBytes(32);
const TTL_MS = 7 * DAY_MS;
const NOW = 20_000 * DAY_MS + 12 * HOUR_MS;

/** Bytes that would not survive a UTF-8 round trip. */
const awkwardBytes = (seed: number) => Uint8Array.of(0x00, 0xff, 0xc3, 0x28, 0x80, seed & 0xff, 0xfe, 0x00);
const entry = (n: number, deviceCardCount = 1): HistoryEntry => ({
  payload: Uint8Array.of(0xff, n, 0x00, 0xc3),
  deviceCardCount,
});
const write = (cardId: string, position: number, history: HistoryEntry[] = []): CardStateWrite => ({
  cardId,
  position,
  bytes: awkwardBytes(position),
  history,
});
const payloadsOf = (entries: readonly HistoryEntry[]) => entries.map((e) => [...e.payload]);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("RedisCardStateStore against Redis", () => {
  let redis: Redis;
  const namespace = `test-cs-${randomUUID().slice(0, 8)}`;
  const storeFor = (options: Partial<RedisCardStateStoreOptions> = {}) =>
    new RedisCardStateStore({
      redis,
      namespace,
      modelVersion: "m1",
      featureSchemaVersion: "f1",
      hmacKey: HMAC_KEY,
      ttlMs: TTL_MS,
      ...options,
    });
  const readOne = async (store: RedisCardStateStore, cardId: string) =>
    store.readBatch({ cardIds: [cardId], deviceTouches: [], nowMs: NOW });

  beforeAll(async () => {
    redis = new Redis(REDIS_URL, { lazyConnect: true });
    await redis.connect();
  });

  afterAll(async () => {
    await deleteNamespace(redis, namespace);
    await redis.quit();
  });

  it("state bytes and position round-trip through write and read unchanged", async () => {
    const store = storeFor();
    const bytes = Uint8Array.from(randomBytes(300));
    bytes.set([0x00, 0xff, 0xc3, 0x28], 0);
    const position = 2 ** 52 + 12_345; // offsets × 4096 get large; still exact in a double

    expect(await store.writeBatch([{ cardId: "rt-1", bytes, position, history: [] }])).toEqual(["applied"]);
    const read = await readOne(store, "rt-1");

    expect(read.states).toHaveLength(1);
    expect(Buffer.from(read.states[0]!.bytes).equals(Buffer.from(bytes))).toBe(true);
    expect(read.states[0]!.position).toBe(position);
    expect(read.tampered).toBe(0);
    expect(store.stats).toMatchObject({ reads: 1, hits: 1, misses: 0, appliedWrites: 1 });
  });

  it("keys follow the documented layout", async () => {
    const store = storeFor();
    await store.writeBatch([write("layout-1", 1, [entry(1)])]);
    await store.readBatch({
      cardIds: [],
      deviceTouches: [{ deviceKey: "ab12", cardId: "layout-1" }],
      nowMs: NOW,
    });

    const stateKey = `${namespace}:cardstate:f1:m1:{layout-1}`;
    expect(await redis.type(stateKey)).toBe("string");
    expect((await redis.getBuffer(stateKey))!.readBigUInt64BE(0)).toBe(1n); // the position first
    expect(await redis.type(`${namespace}:hist:f1:{layout-1}`)).toBe("list");
    expect(await redis.exists(`${namespace}:dev:{ab12}:${DAY_MS}:20000`)).toBe(1);
  });

  it("reads state and history stored in the documented format", async () => {
    const store = storeFor();
    const framedKey = (key: string) => {
      const length = Buffer.alloc(4);
      length.writeUInt32BE(Buffer.byteLength(key, "utf8"));
      return Buffer.concat([length, Buffer.from(key, "utf8")]);
    };
    const cardId = "kompat-é-1";
    const stateKey = `${namespace}:cardstate:f1:m1:{${cardId}}`;
    const bytes = Buffer.from(awkwardBytes(7));
    const position = Buffer.alloc(8);
    position.writeBigUInt64BE(41n);
    const mac = createHmac("sha256", HMAC_KEY)
      .update(framedKey(stateKey))
      .update(position)
      .update(bytes)
      .digest();
    await redis.set(stateKey, Buffer.concat([position, bytes, mac]));
    const historyCard = "kompat-é-2";
    const historyKey = `${namespace}:hist:f1:{${historyCard}}`;
    const stored = Buffer.from([0, 3, 0xff, 1, 0x00, 0xc3]); // u16 device count | payload
    const entryMac = createHmac("sha256", HMAC_KEY).update(framedKey(historyKey)).update(stored).digest();
    await redis.rpush(historyKey, Buffer.concat([stored, entryMac.subarray(0, 16)]));

    const read = await store.readBatch({ cardIds: [cardId, historyCard], deviceTouches: [], nowMs: NOW });

    expect(read.tampered).toBe(0);
    expect(read.states[0]?.position).toBe(41);
    expect(Buffer.from(read.states[0]!.bytes).equals(bytes)).toBe(true);
    expect(read.states[1]).toBeUndefined();
    expect(read.histories?.[1]?.map((e) => [e.deviceCardCount, ...e.payload])).toEqual([
      [3, 0xff, 1, 0x00, 0xc3],
    ]);
  });

  it("reads states aligned with the requested cards, absent ones undefined", async () => {
    const store = storeFor();
    await store.writeBatch([write("align-a", 10), write("align-b", 20)]);
    const read = await store.readBatch({
      cardIds: ["align-b", "align-x", "align-a"],
      deviceTouches: [],
      nowMs: NOW,
    });
    expect(read.states.map((s) => s?.position)).toEqual([20, undefined, 10]);
    expect(store.stats).toMatchObject({ reads: 3, hits: 2, misses: 1, tampered: 0 });
  });

  it("a replayed offset does not apply twice", async () => {
    const store = storeFor();
    const replayed = write("replay-1", 4096 * 7, [entry(7)]);

    expect(await store.writeBatch([replayed])).toEqual(["applied"]);
    expect(await store.writeBatch([replayed])).toEqual(["stale"]);

    expect(payloadsOf((await store.readHistories(["replay-1"]))[0]!)).toEqual([[0xff, 7, 0x00, 0xc3]]);
    expect(store.stats).toMatchObject({ appliedWrites: 1, staleWrites: 1 });
  });

  it("an older position is stale and leaves the newer state and history in place", async () => {
    const store = storeFor();
    await store.writeBatch([write("older-1", 9000, [entry(9)])]);
    expect(await store.writeBatch([write("older-1", 8999, [entry(8)])])).toEqual(["stale"]);

    expect((await readOne(store, "older-1")).states[0]?.position).toBe(9000);
    expect(payloadsOf((await store.readHistories(["older-1"]))[0]!)).toEqual([[0xff, 9, 0x00, 0xc3]]);
  });

  it("positions compare as numbers, not strings", async () => {
    const store = storeFor();
    await store.writeBatch([write("numeric-1", 9)]);
    expect(await store.writeBatch([write("numeric-1", 10)])).toEqual(["applied"]);
  });

  it("keeps the newest historyLength entries oldest first, with their device counts", async () => {
    const store = storeFor({ historyLength: 3 });
    await store.writeBatch([write("hist-1", 1, [entry(1, 2), entry(2, 70_000)])]);
    await store.writeBatch([write("hist-1", 2, [entry(3, 4)])]);
    await store.writeBatch([write("hist-1", 3, [entry(4, 5)])]);

    const [history] = await store.readHistories(["hist-1"]);
    expect(payloadsOf(history!)).toEqual([
      [0xff, 2, 0x00, 0xc3],
      [0xff, 3, 0x00, 0xc3],
      [0xff, 4, 0x00, 0xc3],
    ]);
    expect(history!.map((e) => e.deviceCardCount)).toEqual([65_535, 4, 5]);
    expect(await store.readHistories(["hist-unknown"])).toEqual([[]]);
  });

  it("trims a history list only once it is an eighth longer than historyLength; readers take the newest", async () => {
    const store = storeFor({ historyLength: 16 });
    const key = store.historyKey("trim-1");
    const lengths: number[] = [];
    for (let n = 1; n <= 40; n++) {
      await store.writeBatch([write("trim-1", n, [entry(n)])]);
      lengths.push(await redis.llen(key));
    }
    // Grows to 16 + 2, then each push past that trims back to 16.
    expect(lengths.slice(0, 18)).toEqual(Array.from({ length: 18 }, (_, i) => i + 1));
    expect(lengths[18]).toBe(16);
    expect(Math.max(...lengths)).toBe(18);
    const newest = Array.from({ length: 16 }, (_, i) => [0xff, 25 + i, 0x00, 0xc3]);
    const [history] = await store.readHistories(["trim-1"]);
    expect(payloadsOf(history!)).toEqual(newest);
    // The read script's history of a card without state (another model's keys) is the same.
    const other = storeFor({ historyLength: 16, modelVersion: "m-trim" });
    const read = await readOne(other, "trim-1");
    expect(read.states[0]).toBeUndefined();
    expect(payloadsOf([...read.histories![0]!])).toEqual(newest);
  });

  it("a forged or altered history entry is left out of the rebuild and counted", async () => {
    const store = storeFor();
    await store.writeBatch([write("forged-hist", 1, [entry(1, 2), entry(2, 3)])]);
    const key = store.historyKey("forged-hist");
    const [first] = await redis.lrangeBuffer(key, 0, 0);
    first![3] = first![3]! ^ 0x01; // alter the first entry's payload
    await redis.lset(key, 0, first!);
    await redis.rpush(key, Buffer.from([0, 1, 0xff, 9, 0, 0xc3])); // an entry nobody signed
    const tamperedBefore = store.stats.tampered;
    const [history] = await store.readHistories(["forged-hist"]);
    expect(payloadsOf(history!)).toEqual([[0xff, 2, 0x00, 0xc3]]);
    expect(store.stats.tampered).toBe(tamperedBefore + 1);
  });

  it("a tampered state value is treated as absent and counted", async () => {
    const store = storeFor();
    await store.writeBatch([write("tamper-1", 100), write("tamper-2", 100)]);
    const key = store.stateKey("tamper-1");
    const value = (await redis.getBuffer(key))!;
    value[8 + 2]! ^= 0x01; // a state byte, after the position
    await redis.set(key, value, "KEEPTTL");

    const read = await store.readBatch({ cardIds: ["tamper-1", "tamper-2"], deviceTouches: [], nowMs: NOW });

    expect(read.states[0]).toBeUndefined();
    expect(read.states[1]?.position).toBe(100);
    expect(read.tampered).toBe(1);
    expect(store.stats).toMatchObject({ reads: 2, hits: 1, misses: 0, tampered: 1 });
  });

  it("a rewritten position fails verification, whatever it was rewritten to", async () => {
    const store = storeFor();
    const cards = ["tamper-p1", "tamper-p2", "tamper-p3", "tamper-p4"];
    await store.writeBatch(cards.map((cardId) => write(cardId, 100)));
    // A newer, an older, a position past 2^53 and one whose top bit is set (negative if signed).
    const rewrites = [101n, 99n, 2n ** 53n + 2n, 2n ** 63n + 100n];
    for (const [i, position] of rewrites.entries()) {
      const value = (await redis.getBuffer(store.stateKey(cards[i]!)))!;
      value.writeBigUInt64BE(position, 0);
      await redis.set(store.stateKey(cards[i]!), value, "KEEPTTL");
    }

    const read = await store.readBatch({ cardIds: cards, deviceTouches: [], nowMs: NOW });
    expect(read.states).toEqual([undefined, undefined, undefined, undefined]);
    expect(read.tampered).toBe(4);
  });

  it("a value too short to hold its position and MAC is tampered", async () => {
    const store = storeFor();
    await redis.set(store.stateKey("short-1"), Buffer.alloc(39));
    await redis.set(store.stateKey("short-2"), "");
    const read = await store.readBatch({ cardIds: ["short-1", "short-2"], deviceTouches: [], nowMs: NOW });
    expect(read.states).toEqual([undefined, undefined]);
    expect(read.tampered).toBe(2);
  });

  it("a value moved to another card's key fails the HMAC", async () => {
    const store = storeFor();
    // Same-length ids, so only the key's content tells them apart.
    await store.writeBatch([write("moved-aaa", 50)]);
    await redis.set(store.stateKey("moved-bbb"), (await redis.getBuffer(store.stateKey("moved-aaa")))!);

    const read = await store.readBatch({
      cardIds: ["moved-bbb", "moved-aaa"],
      deviceTouches: [],
      nowMs: NOW,
    });
    expect(read.states[0]).toBeUndefined();
    expect(read.states[1]?.position).toBe(50);
    expect(read.tampered).toBe(1);
  });

  it("a value written under another HMAC key fails verification", async () => {
    await storeFor({ hmacKey: randomBytes(32) }).writeBatch([write("other-key-1", 1)]);
    const read = await readOne(storeFor(), "other-key-1");
    expect(read.states[0]).toBeUndefined();
    expect(read.tampered).toBe(1);
  });

  it("state of another model version is not read, but its history is", async () => {
    const v1 = storeFor({ modelVersion: "m1" });
    const v2 = storeFor({ modelVersion: "m2" });
    await v1.writeBatch([write("promote-1", 77, [entry(77)])]);

    const read = await readOne(v2, "promote-1");
    expect(read.states[0]).toBeUndefined();
    expect(read.tampered).toBe(0);
    expect(v2.stats).toMatchObject({ misses: 1, hits: 0 });
    expect(payloadsOf((await v2.readHistories(["promote-1"]))[0]!)).toEqual([[0xff, 77, 0x00, 0xc3]]);
    // The new model's first write is not blocked by the old model's position.
    expect(await v2.writeBatch([write("promote-1", 10)])).toEqual(["applied"]);
  });

  it("a state in the HASH layout of earlier releases is not read: a miss rebuilt from history, not tampering", async () => {
    const store = storeFor();
    await store.writeBatch([write("old-layout-1", 7, [entry(7)])]);
    const value = (await redis.getBuffer(store.stateKey("old-layout-1")))!;
    await redis.del(store.stateKey("old-layout-1"));
    const oldKey = `${namespace}:state:f1:m1:{old-layout-1}`;
    await redis.hset(oldKey, "p", "7", "v", value.subarray(8));

    const read = await readOne(store, "old-layout-1");
    expect(read.states[0]).toBeUndefined();
    expect(read.tampered).toBe(0);
    expect(payloadsOf(read.histories![0]!)).toEqual([[0xff, 7, 0x00, 0xc3]]);
    expect(await store.writeBatch([write("old-layout-1", 8, [entry(8)])])).toEqual(["applied"]);
    expect(await redis.type(oldKey)).toBe("hash"); // left to its TTL
  });

  it("a state copied under another model's key fails verification", async () => {
    const v1 = storeFor({ modelVersion: "m1" });
    const v2 = storeFor({ modelVersion: "m2" });
    await v1.writeBatch([write("copy-model-1", 5)]);
    await redis.set(v2.stateKey("copy-model-1"), (await redis.getBuffer(v1.stateKey("copy-model-1")))!);
    expect((await readOne(v2, "copy-model-1")).tampered).toBe(1);
  });

  it("a key of the wrong type reads as tampered and is replaced by the next write", async () => {
    const store = storeFor();
    await redis.hset(store.stateKey("wrongtype-1"), "p", "9", "v", "poison");
    await redis.set(store.historyKey("wrongtype-1"), "poison");

    const read = await readOne(store, "wrongtype-1");
    expect(read.states[0]).toBeUndefined();
    expect(read.tampered).toBe(1);
    expect(await store.readHistories(["wrongtype-1"])).toEqual([[]]);

    expect(await store.writeBatch([write("wrongtype-1", 3, [entry(3)])])).toEqual(["applied"]);
    expect((await readOne(store, "wrongtype-1")).states[0]?.position).toBe(3);
    expect((await store.readHistories(["wrongtype-1"]))[0]).toHaveLength(1);
  });

  it("a history key of the wrong type is removed by a write that appends nothing", async () => {
    const store = storeFor();
    await redis.set(store.historyKey("wrongtype-2"), "poison");
    expect(await store.writeBatch([write("wrongtype-2", 4, [])])).toEqual(["applied"]);
    expect(await redis.type(store.historyKey("wrongtype-2"))).toBe("none");
    expect((await readOne(store, "wrongtype-2")).states[0]?.position).toBe(4);
  });

  it("sets the TTL on state, history and device buckets", async () => {
    const store = storeFor();
    await store.writeBatch([write("ttl-1", 1, [entry(1)])]);
    await store.readBatch({
      cardIds: [],
      deviceTouches: [{ deviceKey: "ttl-dev", cardId: "ttl-1" }],
      nowMs: NOW,
    });

    for (const key of [store.stateKey("ttl-1"), store.historyKey("ttl-1")]) {
      const pttl = await redis.pttl(key);
      expect(pttl).toBeGreaterThan(TTL_MS - 60_000);
      expect(pttl).toBeLessThanOrEqual(TTL_MS);
    }
    // NOW is noon of its day: the bucket must live through the end of tomorrow (36 h) plus slack.
    const devicePttl = await redis.pttl(store.deviceBucketKey("ttl-dev", 20_000));
    expect(devicePttl).toBeGreaterThan(36 * HOUR_MS);
    expect(devicePttl).toBeLessThanOrEqual(37 * HOUR_MS);
  });

  it("a device bucket's expiry is set by the touch that changes it, and kept by one that does not", async () => {
    const store = storeFor();
    const key = store.deviceBucketKey("ttl-dev-2", 20_000);
    const touch = (cardId: string, nowMs: number) =>
      store.readBatch({ cardIds: [], deviceTouches: [{ deviceKey: "ttl-dev-2", cardId }], nowMs });
    await touch("ttl-2a", NOW);
    const created = await redis.pttl(key);
    // Hours later the same card again: nothing changes, the bucket keeps its expiry (the end of
    // tomorrow plus slack, the same moment a PEXPIRE now would set).
    await touch("ttl-2a", NOW + 6 * HOUR_MS);
    expect(Math.abs((await redis.pttl(key)) - created)).toBeLessThan(60_000);
    // A bucket that lost its expiry (PERSIST stands in for anything that would) gets it back from
    // the next touch that changes it; the count is what it was plus the new card.
    await redis.persist(key);
    const read = await touch("ttl-2b", NOW);
    expect(read.deviceCardCounts).toEqual([2]);
    expect(await redis.pttl(key)).toBeGreaterThan(36 * HOUR_MS);
  });

  it("device fan-out counts distinct cards over today and yesterday", async () => {
    const store = storeFor();
    const dev = `fan-${randomUUID().slice(0, 6)}`;
    const touches = (...cards: string[]): DeviceTouch[] =>
      cards.map((cardId) => ({ deviceKey: dev, cardId }));
    const counts = async (nowMs: number, ...cards: string[]) =>
      (await store.readBatch({ cardIds: [], deviceTouches: touches(...cards), nowMs })).deviceCardCounts;

    expect(await counts(NOW - 2 * DAY_MS, "old-card")).toEqual([1]);
    expect(await counts(NOW - DAY_MS, "c1", "c2", "c1")).toEqual([2, 3, 3]);
    // Today: c2 again (counted once), c3 new; the card from two days ago has dropped out.
    expect(await counts(NOW, "c2", "c3")).toEqual([2, 3]);
  });

  it("device fan-out keeps devices apart and aligns counts with touches", async () => {
    const store = storeFor();
    const read = await store.readBatch({
      cardIds: ["apart-1"],
      deviceTouches: [
        { deviceKey: "apart-a", cardId: "x" },
        { deviceKey: "apart-b", cardId: "x" },
        { deviceKey: "apart-a", cardId: "y" },
      ],
      nowMs: NOW,
    });
    expect(read.deviceCardCounts).toEqual([1, 1, 2]);
    expect(read.states).toEqual([undefined]);
  });

  it("a batch of 64 cards is one script call and one socket write per call", async () => {
    const store = storeFor();
    const cards = Array.from({ length: 64 }, (_, i) => `batch-${i}`);
    const trips = countRoundTrips(redis);

    await store.writeBatch(cards.map((cardId, i) => write(cardId, i + 1, [entry(i)])));
    // A lone script call goes out on the client, without a pipeline.
    expect(trips.take()).toEqual({ pipelines: 0, execs: 0, socketWrites: 1, commands: 0, scriptCalls: 1 });

    const read = await store.readBatch({
      cardIds: cards,
      deviceTouches: cards.map((cardId, i) => ({ deviceKey: `batch-dev-${i % 8}`, cardId })),
      nowMs: NOW,
    });
    expect(read.states.every((s) => s !== undefined)).toBe(true);
    // States, fan-out and the histories of cards without state: one script call.
    expect(trips.take()).toEqual({ pipelines: 0, execs: 0, socketWrites: 1, commands: 0, scriptCalls: 1 });

    const histories = await store.readHistories(cards);
    expect(histories.every((h) => h.length === 1)).toBe(true);
    expect(trips.take()).toEqual({ pipelines: 1, execs: 1, socketWrites: 1, commands: 64, scriptCalls: 0 });
  });

  it("a failed batch names its key without the card id", async () => {
    const store = storeFor();
    const bucketKey = store.deviceBucketKey("redact-dev", Math.floor(NOW / DAY_MS));
    await redis.set(bucketKey, "not a HyperLogLog");
    const failed = await store
      .readBatch({
        cardIds: ["4111-secret-card"],
        deviceTouches: [{ deviceKey: "redact-dev", cardId: "4111-secret-card" }],
        nowMs: NOW,
      })
      .then(
        () => undefined,
        (err: unknown) => err as CardStateStoreError,
      );
    await redis.del(bucketKey);
    expect(failed).toBeInstanceOf(CardStateStoreError);
    expect(failed!.kind).toBe("redis_reply");
    expect(`${failed!.message} ${failed!.key}`).not.toContain("4111-secret-card");
    expect(failed!.key).toBe(redactedKey(store.stateKey("4111-secret-card")));
  });

  it("an empty batch makes no round trip", async () => {
    const store = storeFor();
    const trips = countRoundTrips(redis);
    expect(await store.writeBatch([])).toEqual([]);
    expect(await store.readHistories([])).toEqual([]);
    expect(await store.readBatch({ cardIds: [], deviceTouches: [], nowMs: NOW })).toEqual({
      states: [],
      deviceCardCounts: [],
      tampered: 0,
      histories: [],
    });
    expect(trips.take().socketWrites).toBe(0);
  });

  it("rejects configuration that would make keys ambiguous or the MAC weak", () => {
    expect(() => storeFor({ modelVersion: "a:b" })).toThrow(RangeError);
    expect(() => storeFor({ featureSchemaVersion: "{x}" })).toThrow(RangeError);
    expect(() => storeFor({ hmacKey: randomBytes(31) })).toThrow(RangeError);
  });

  it("rejects a position that cannot be stored exactly", async () => {
    await expect(storeFor().writeBatch([write("bad-pos", 2 ** 53)])).rejects.toThrow(RangeError);
    await expect(storeFor().writeBatch([write("bad-pos", -1)])).rejects.toThrow(RangeError);
    expect(await redis.exists(storeFor().stateKey("bad-pos"))).toBe(0);
  });
});

describe("RedisCardStateStore when Redis misbehaves", () => {
  it("a Redis outage rejects instead of reading as absent state", async () => {
    const server = await startPrivateRedis();
    const redis = new Redis(server.port, "127.0.0.1", {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    redis.on("error", () => {});
    try {
      await redis.connect();
      const store = throwawayStore(redis);
      await store.writeBatch([write("outage-1", 1)]);
      expect(
        (await store.readBatch({ cardIds: ["outage-1"], deviceTouches: [], nowMs: NOW })).states[0],
      ).toBeDefined();

      await server.stop();
      await expect(
        store.readBatch({ cardIds: ["outage-1"], deviceTouches: [], nowMs: NOW }),
      ).rejects.toThrow();
      await expect(store.writeBatch([write("outage-1", 2)])).rejects.toThrow();
      expect(store.stats.misses).toBe(0);
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });

  it("writes still apply after Redis loses its scripts", async () => {
    const server = await startPrivateRedis();
    const redis = new Redis(server.port, "127.0.0.1");
    try {
      const store = throwawayStore(redis);
      expect(await store.writeBatch([write("flush-1", 1), write("flush-2", 1)])).toEqual([
        "applied",
        "applied",
      ]);
      await redis.script("FLUSH");
      expect(await store.writeBatch([write("flush-1", 2), write("flush-2", 1)])).toEqual([
        "applied",
        "stale",
      ]);
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });
});

describe("RedisCardStateStore on a Redis Cluster", () => {
  let cluster: Cluster;
  let stopCluster: () => Promise<void>;

  beforeAll(async () => {
    const started = await startPrivateRedisCluster();
    stopCluster = started.stop;
    cluster = new Cluster(started.ports.map((port) => ({ host: "127.0.0.1", port })));
    await new Promise<void>((resolve, reject) => {
      cluster.once("ready", resolve);
      cluster.once("error", reject);
    });
  }, 60_000);

  afterAll(async () => {
    cluster?.disconnect();
    await stopCluster?.();
  });

  it("computes the same slot as the cluster for the store's keys", async () => {
    const store = throwawayStore(cluster);
    const keys = [
      "plain",
      "ünïcode-{tag}",
      "{}empty-tag",
      "{a}{b}",
      store.stateKey("c-1"),
      store.historyKey("c-1"),
    ];
    for (const key of keys) expect(clusterSlot(key)).toBe(await cluster.cluster("KEYSLOT", key));
    expect(clusterSlot(store.stateKey("c-1"))).toBe(clusterSlot(store.historyKey("c-1")));
  });

  it("a batch spanning every node reads, writes and counts in one script call per node", async () => {
    const store = throwawayStore(cluster);
    const cards = Array.from({ length: 64 }, (_, i) => `cl-card-${i}`);
    const nodes = new Set(cards.map((c) => cluster.slots[clusterSlot(store.stateKey(c))]![0]));
    expect(nodes.size).toBe(3);
    // The store defines its scripts on a node's client at its first call there: one read first,
    // so the counting spies find them.
    await store.readBatch({ cardIds: cards, deviceTouches: [], nowMs: NOW });
    const trips = countRoundTrips(cluster);

    const outcomes = await store.writeBatch(cards.map((cardId, i) => write(cardId, i + 1, [entry(i)])));
    expect(outcomes.every((o) => o === "applied")).toBe(true);
    expect(trips.take()).toMatchObject({ pipelines: 0, scriptCalls: 3 });

    const read = await store.readBatch({
      cardIds: cards,
      deviceTouches: cards.map((cardId) => ({ deviceKey: "cl-dev", cardId })),
      nowMs: NOW,
    });
    expect(read.states.map((s) => s?.position)).toEqual(cards.map((_, i) => i + 1));
    expect(read.deviceCardCounts.at(-1)).toBe(64);
    expect(trips.take()).toMatchObject({ pipelines: 0, scriptCalls: 3 });

    const histories = await store.readHistories(cards);
    expect(histories.map((h) => h[0]?.payload[1])).toEqual(cards.map((_, i) => i));
    expect(await store.writeBatch([write("cl-card-5", 6)])).toEqual(["stale"]);
  });
});

const throwawayStore = (redis: RedisClient) =>
  new RedisCardStateStore({
    redis,
    namespace: "throwaway",
    modelVersion: "m1",
    featureSchemaVersion: "f1",
    hmacKey: HMAC_KEY,
  });

interface RoundTrips {
  pipelines: number;
  execs: number;
  socketWrites: number;
  /** Commands sent in pipelines. */
  commands: number;
  /** Calls of the store's scripts, pipelined or not. */
  scriptCalls: number;
}

const SCRIPT_METHODS = ["fraudScorerReadCardStatesBuffer", "fraudScorerCasCardStates"] as const;

/**
 * Counts pipelines, their exec() calls and commands, calls of the store's scripts and
 * (standalone) writes to the socket; on a Cluster those of the cluster client and of each
 * master's own client. Create the store first: its constructor defines the scripts.
 */
function countRoundTrips(redis: RedisClient): { take(): RoundTrips } {
  const zero = (): RoundTrips => ({ pipelines: 0, execs: 0, socketWrites: 0, commands: 0, scriptCalls: 0 });
  let counts = zero();
  const clients: RedisClient[] = redis instanceof Cluster ? [redis, ...redis.nodes("master")] : [redis];
  for (const client of clients) {
    spyOnPipelines(client, () => counts);
    spyOnScripts(client, () => counts);
  }
  if (redis instanceof Redis) {
    const write = redis.stream.write.bind(redis.stream) as (...a: unknown[]) => boolean;
    vi.spyOn(redis.stream, "write").mockImplementation((...args: unknown[]) => {
      counts.socketWrites++;
      return write(...args);
    });
  }
  return {
    take() {
      const taken = counts;
      counts = zero();
      return taken;
    },
  };
}

function spyOnPipelines(redis: RedisClient, countsOf: () => RoundTrips): void {
  const createPipeline = redis.pipeline.bind(redis);
  vi.spyOn(redis, "pipeline").mockImplementation((...args) => {
    const counts = countsOf();
    const pipeline = createPipeline(...args);
    counts.pipelines++;
    const exec = pipeline.exec.bind(pipeline);
    vi.spyOn(pipeline, "exec").mockImplementation((...execArgs) => {
      counts.execs++;
      counts.commands += pipeline.length;
      return exec(...execArgs);
    });
    return pipeline;
  });
}

/** A pipeline copies the client's script methods when created, so pipelined calls count too. */
function spyOnScripts(redis: RedisClient, countsOf: () => RoundTrips): void {
  const scripted = redis as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of SCRIPT_METHODS) {
    if (typeof scripted[name] !== "function") continue;
    const call = scripted[name].bind(redis);
    vi.spyOn(scripted, name).mockImplementation((...args: unknown[]) => {
      countsOf().scriptCalls++;
      return call(...args);
    });
  }
}
