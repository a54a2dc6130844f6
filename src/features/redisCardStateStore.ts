// Card state in Redis: HMAC-verified reads, compare-and-set writes on stream position, a capped
// per-card history for rebuilding state, and per-device fan-out HyperLogLogs. Every method is one
// network round trip for the whole batch (src/features/redisRoundTrip.ts).
//
// Key layout ({...} is the Redis Cluster hash tag; a card's two keys share it so the write script
// may touch both):
//   <ns>:state:<featureSchemaVersion>:<modelVersion>:{<cardId>}
//       HASH  p = StreamPosition (decimal)   v = state bytes | HMAC-SHA256 (32 bytes)
//       The versions are in the key, so promoting a model (or a feature schema) switches every
//       card to new keys at once; the old ones are never read again and expire by TTL.
//   <ns>:hist:<featureSchemaVersion>:{<cardId>}
//       LIST of history entries, oldest first, capped at historyLength (cardHistoryCodec.ts),
//       each followed by a 16-byte HMAC over key + entry.
//       Model-independent, so a new model rebuilds its state from it instead of starting cold.
//   <ns>:dev:{<deviceKey>}:<windowMs>:<bucket>
//       HyperLogLog of the cards seen on a device in one bucket (a UTC day by default); the fan-out
//       is PFCOUNT over this bucket and the previous one (deviceWindowBuckets.ts).
//
// The MAC covers key, position and state bytes, so a value altered, rolled to another position
// or copied to another card's (or model's) key fails verification and is read as absent.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { ChainableCommander } from "ioredis";
import type {
  CardStateStore,
  CardStateWrite,
  HistoryEntry,
  StateReadRequest,
  StateReadResult,
  StoredCardState,
  StreamPosition,
  WriteOutcome,
} from "../scoring/ports.js";
import { DAY_MS, HOUR_MS } from "./cardState.js";
import { decodeHistoryEntry, encodeHistoryEntry } from "./cardHistoryCodec.js";
import { DEFAULT_DEVICE_WINDOW_MS, deviceWindowBucket } from "./deviceWindowBuckets.js";
import { roundTrip, type CommandReply, type QueuedCommand, type RedisClient } from "./redisRoundTrip.js";

export interface RedisCardStateStoreOptions {
  readonly redis: RedisClient;
  /** Prefix of every key, e.g. "fs". */
  readonly namespace: string;
  readonly modelVersion: string;
  readonly featureSchemaVersion: string;
  /** At least 32 bytes. */
  readonly hmacKey: Buffer;
  /** Lifetime of a card's state and history after its last write. */
  readonly ttlMs?: number;
  /** History entries kept per card. */
  readonly historyLength?: number;
  /** Width of a device fan-out bucket; the fan-out counts this bucket and the previous one. */
  readonly deviceWindowMs?: number;
}

/** Monotonic counters for metrics. Every card looked up is one read: a hit, a miss or tampered. */
export interface CardStateStoreStats {
  reads: number;
  hits: number;
  misses: number;
  /** State values that failed verification, read as absent; also history lists of the wrong type. */
  tampered: number;
  staleWrites: number;
  appliedWrites: number;
}

export type CardStateStoreErrorKind = "redis_reply";

/** A command of a batch failed in Redis; the batch as a whole is reported failed. */
export class CardStateStoreError extends Error {
  override readonly name = "CardStateStoreError";
  constructor(
    readonly kind: CardStateStoreErrorKind,
    message: string,
    readonly key: string,
    override readonly cause: Error,
  ) {
    super(message);
  }
}

const MAC_BYTES = 32;
const MIN_HMAC_KEY_BYTES = 32;
const DEFAULT_TTL_MS = 30 * DAY_MS;
const DEFAULT_HISTORY_LENGTH = 32;
/** A device bucket outlives the window it can be counted in by this, for clock skew. */
const DEVICE_BUCKET_SLACK_MS = HOUR_MS;
/** Names and versions go into keys verbatim: no separators or hash-tag braces. */
const isKeySafe = (part: string) => /^[A-Za-z0-9._-]+$/.test(part);
const isStoredPosition = (position: number) => Number.isSafeInteger(position) && position >= 0;
/** A key of the wrong type can only have been written by something else: poisoned, not an outage. */
const isWrongType = (error: Error) => error.message.startsWith("WRONGTYPE");

// KEYS[1] state hash, KEYS[2] history list.
// ARGV[1] position, ARGV[2] value, ARGV[3] ttl ms, ARGV[4] history length, ARGV[5..] history entries.
// A stored `p` that is not a number (tampered) does not block the write. A key of the wrong type
// (also tampered) is replaced rather than failing the card's writes until it expires.
const CAS_WRITE_LUA = `
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then redis.call('DEL', KEYS[1]) end
if redis.call('TYPE', KEYS[2]).ok ~= 'list' then redis.call('DEL', KEYS[2]) end
local stored = tonumber(redis.call('HGET', KEYS[1], 'p') or '')
if stored and stored >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'p', ARGV[1], 'v', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if #ARGV > 4 then
  redis.call('RPUSH', KEYS[2], unpack(ARGV, 5))
  redis.call('LTRIM', KEYS[2], -tonumber(ARGV[4]), -1)
end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
`;
const CAS_COMMAND = "fraudScorerCasCardState";
type CasPipeline = ChainableCommander & {
  [CAS_COMMAND](stateKey: string, historyKey: string, ...args: (string | number | Buffer)[]): void;
};

export class RedisCardStateStore implements CardStateStore {
  readonly #redis: RedisClient;
  readonly #namespace: string;
  readonly #statePrefix: string;
  readonly #historyPrefix: string;
  readonly #hmacKey: Buffer;
  readonly #ttlMs: number;
  readonly #historyLength: number;
  readonly #deviceWindowMs: number;
  readonly #stats: CardStateStoreStats = {
    reads: 0,
    hits: 0,
    misses: 0,
    tampered: 0,
    staleWrites: 0,
    appliedWrites: 0,
  };

  constructor({
    redis,
    namespace,
    modelVersion,
    featureSchemaVersion,
    hmacKey,
    ttlMs = DEFAULT_TTL_MS,
    historyLength = DEFAULT_HISTORY_LENGTH,
    deviceWindowMs = DEFAULT_DEVICE_WINDOW_MS,
  }: RedisCardStateStoreOptions) {
    for (const [name, part] of Object.entries({ namespace, modelVersion, featureSchemaVersion })) {
      if (!isKeySafe(part))
        throw new RangeError(`${name} ${JSON.stringify(part)} must match [A-Za-z0-9._-]+`);
    }
    if (hmacKey.length < MIN_HMAC_KEY_BYTES) {
      throw new RangeError(`hmacKey must be at least ${MIN_HMAC_KEY_BYTES} bytes, got ${hmacKey.length}`);
    }
    if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) throw new RangeError(`ttlMs must be a positive integer`);
    if (!Number.isSafeInteger(historyLength) || historyLength <= 0) {
      throw new RangeError(`historyLength must be a positive integer`);
    }
    if (!Number.isSafeInteger(deviceWindowMs) || deviceWindowMs <= 0) {
      throw new RangeError(`deviceWindowMs must be a positive integer`);
    }
    this.#redis = redis;
    this.#namespace = namespace;
    this.#statePrefix = `${namespace}:state:${featureSchemaVersion}:${modelVersion}:`;
    this.#historyPrefix = `${namespace}:hist:${featureSchemaVersion}:`;
    this.#hmacKey = Buffer.from(hmacKey);
    this.#ttlMs = ttlMs;
    this.#historyLength = historyLength;
    this.#deviceWindowMs = deviceWindowMs;
    // defineCommand sends EVALSHA and falls back to EVAL on NOSCRIPT (e.g. after a failover).
    redis.defineCommand(CAS_COMMAND, { numberOfKeys: 2, lua: CAS_WRITE_LUA });
  }

  get stats(): Readonly<CardStateStoreStats> {
    return this.#stats;
  }

  stateKey(cardId: string): string {
    return `${this.#statePrefix}{${cardId}}`;
  }

  historyKey(cardId: string): string {
    return `${this.#historyPrefix}{${cardId}}`;
  }

  deviceBucketKey(deviceKey: string, bucket: number): string {
    return `${this.#namespace}:dev:{${deviceKey}}:${this.#deviceWindowMs}:${bucket}`;
  }

  async readBatch({ cardIds, deviceTouches, nowMs }: StateReadRequest): Promise<StateReadResult> {
    const commands: QueuedCommand[] = [];
    const stateKeys = cardIds.map((cardId) => this.stateKey(cardId));
    for (const key of stateKeys) commands.push({ key, enqueue: (p) => p.hmgetBuffer(key, "p", "v") });

    const bucket = deviceWindowBucket(nowMs, this.#deviceWindowMs);
    // Alive through the end of the next bucket, the last one that counts it; relative to Redis's
    // clock, so a batch of old records cannot set an expiry in the past and delete the key.
    const bucketTtlMs = (bucket + 2) * this.#deviceWindowMs - nowMs + DEVICE_BUCKET_SLACK_MS;
    const countReplyIndex: number[] = [];
    const expiring = new Set<string>();
    for (const { deviceKey, cardId } of deviceTouches) {
      const current = this.deviceBucketKey(deviceKey, bucket);
      const previous = this.deviceBucketKey(deviceKey, bucket - 1);
      commands.push({ key: current, enqueue: (p) => p.pfadd(current, cardId) });
      if (!expiring.has(current)) {
        expiring.add(current);
        commands.push({ key: current, enqueue: (p) => p.pexpire(current, bucketTtlMs) });
      }
      countReplyIndex.push(commands.length);
      commands.push({ key: current, enqueue: (p) => p.pfcount(current, previous) });
    }

    const replies = await roundTrip(this.#redis, commands);

    let tampered = 0;
    const states = stateKeys.map((key, i): StoredCardState | undefined => {
      const [error, reply] = replies[i]!;
      const outcome = error ? throwUnlessWrongType(error, key) : this.#verify(key, reply as HmgetReply);
      this.#stats.reads++;
      if (outcome === "tampered") {
        tampered++;
        this.#stats.tampered++;
        return undefined;
      }
      if (outcome === undefined) this.#stats.misses++;
      else this.#stats.hits++;
      return outcome;
    });
    for (let i = stateKeys.length; i < commands.length; i++) throwIfFailed(replies[i]!, commands[i]!.key);
    const deviceCardCounts = countReplyIndex.map((i) => Number(replies[i]![1]));
    return { states, deviceCardCounts, tampered };
  }

  async readHistories(cardIds: readonly string[]): Promise<HistoryEntry[][]> {
    const keys = cardIds.map((cardId) => this.historyKey(cardId));
    const replies = await roundTrip(
      this.#redis,
      keys.map((key) => ({ key, enqueue: (p) => p.lrangeBuffer(key, 0, -1) })),
    );
    return keys.map((key, i) => {
      const [error, reply] = replies[i]!;
      if (error) {
        throwUnlessWrongType(error, key);
        this.#stats.tampered++;
        return [];
      }
      let forged = false;
      const entries = (reply as Buffer[]).flatMap((stored) => {
        const entry = this.#verifyHistoryEntry(key, stored);
        if (entry === undefined) forged = true;
        return entry ?? [];
      });
      if (forged) this.#stats.tampered++;
      return entries;
    });
  }

  async writeBatch(writes: readonly CardStateWrite[]): Promise<WriteOutcome[]> {
    const commands = writes.map(({ cardId, bytes, position, history }): QueuedCommand => {
      if (!isStoredPosition(position)) {
        throw new RangeError(`position ${position} of card ${cardId} is not a non-negative safe integer`);
      }
      const stateKey = this.stateKey(cardId);
      const historyKey = this.historyKey(cardId);
      const value = Buffer.concat([bytes, this.#mac(stateKey, position, bytes)]);
      const entries = history.map((entry) => this.#signHistoryEntry(historyKey, encodeHistoryEntry(entry)));
      return {
        key: stateKey,
        enqueue: (p) =>
          (p as CasPipeline)[CAS_COMMAND](
            stateKey,
            historyKey,
            String(position),
            value,
            this.#ttlMs,
            this.#historyLength,
            ...entries,
          ),
      };
    });
    const replies = await roundTrip(this.#redis, commands);
    return replies.map((reply, i): WriteOutcome => {
      throwIfFailed(reply, commands[i]!.key);
      if (reply[1] === 1) {
        this.#stats.appliedWrites++;
        return "applied";
      }
      this.#stats.staleWrites++;
      return "stale";
    });
  }

  #verify(key: string, [p, v]: HmgetReply): StoredCardState | undefined | "tampered" {
    if (p === null && v === null) return undefined;
    if (p === null || v === null || v.length < MAC_BYTES) return "tampered";
    const position = Number(p.toString("latin1"));
    if (!isStoredPosition(position)) return "tampered";
    const bytes = v.subarray(0, v.length - MAC_BYTES);
    const expected = this.#mac(key, position, bytes);
    if (!timingSafeEqual(expected, v.subarray(v.length - MAC_BYTES))) return "tampered";
    return { bytes, position };
  }

  /**
   * History entries are signed too (a truncated HMAC over key and entry): a rebuild steps the
   * model over them, so a forged entry would otherwise reach a decision. A forged or mangled
   * entry is dropped from the rebuild and counted as tampering.
   */
  #signHistoryEntry(historyKey: string, entry: Buffer): Buffer {
    return Buffer.concat([entry, this.#historyMac(historyKey, entry)]);
  }

  #verifyHistoryEntry(historyKey: string, stored: Buffer): HistoryEntry | undefined {
    if (stored.length < HISTORY_MAC_BYTES) return undefined;
    const entry = stored.subarray(0, stored.length - HISTORY_MAC_BYTES);
    const mac = stored.subarray(stored.length - HISTORY_MAC_BYTES);
    if (!timingSafeEqual(this.#historyMac(historyKey, entry), mac)) return undefined;
    return decodeHistoryEntry(entry);
  }

  #historyMac(historyKey: string, entry: Buffer): Buffer {
    const keyBytes = Buffer.from(historyKey, "utf8");
    const keyLength = Buffer.allocUnsafe(4);
    keyLength.writeUInt32BE(keyBytes.length, 0);
    return createHmac("sha256", this.#hmacKey)
      .update(keyLength)
      .update(keyBytes)
      .update(entry)
      .digest()
      .subarray(0, HISTORY_MAC_BYTES);
  }

  /** HMAC-SHA256 over u32 key length | key | u64 position | state bytes (unambiguous framing). */
  #mac(key: string, position: StreamPosition, bytes: Uint8Array): Buffer {
    const keyBytes = Buffer.from(key, "utf8");
    const header = Buffer.allocUnsafe(12);
    header.writeUInt32BE(keyBytes.length, 0);
    header.writeUInt32BE(Math.floor(position / 2 ** 32), 4);
    header.writeUInt32BE(position >>> 0, 8);
    return createHmac("sha256", this.#hmacKey)
      .update(header.subarray(0, 4))
      .update(keyBytes)
      .update(header.subarray(4))
      .update(bytes)
      .digest();
  }
}

type HmgetReply = [p: Buffer | null, v: Buffer | null];

/** 128 bits: ample against forgery for an entry that lives at most the state TTL. */
const HISTORY_MAC_BYTES = 16;

function throwIfFailed([error]: CommandReply, key: string): void {
  if (error) throw replyError(error, key);
}

function throwUnlessWrongType(error: Error, key: string): "tampered" {
  if (!isWrongType(error)) throw replyError(error, key);
  return "tampered";
}

const replyError = (error: Error, key: string) =>
  new CardStateStoreError("redis_reply", `Redis command on ${key} failed: ${error.message}`, key, error);
