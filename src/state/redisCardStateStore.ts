// Card state in Redis: HMAC-verified reads, compare-and-set writes on stream position, a capped
// per-card history for rebuilding state, and per-device fan-out HyperLogLogs. Every method is one
// network round trip for the whole batch (src/state/redisRoundTrip.ts), and reads and writes
// are one script call per batch (per node on a Cluster, the script flagged allow-cross-slot-keys):
// building one Redis command per card cost more CPU than everything else the scorer does.
// The read script returns the history of every card without state in the same reply, so a new
// card costs no second round trip.
//
// Key layout ({...} is the Redis Cluster hash tag; a card's two keys share it so the write script
// may touch both):
//   <ns>:cardstate:<featureSchemaVersion>:<modelVersion>:{<cardId>}
//       STRING  StreamPosition (u64 big-endian) | state bytes | HMAC-SHA256 (32 bytes)
//       The versions are in the key, so promoting a model (or a feature schema) switches every
//       card to new keys at once; the old ones are never read again and expire by TTL.
//       Until 2026-12 this was a HASH under <ns>:state:… (fields p and v). A state of some
//       400 bytes is over hash-max-listpack-value, so every card's hash was a hash table of its
//       own (HMGET, HGET and HSET with their key and field lookups were a fifth of Redis's CPU
//       samples in the bench's drain), and a write took HGET, HSET and PEXPIRE where a string
//       takes one SET … PX … GET. As a string, a state key takes 600 bytes instead of 760
//       (MEMORY USAGE), and Redis spent 4–14 % less CPU per card read and written (4,096 cards
//       in batches of 256, one history entry each; four runs of 12–30 alternating rounds).
//       The old keys are not read: a card's first transaction under this layout rebuilds its
//       state from its history, as after a promotion, and they expire by TTL.
//   <ns>:hist:<featureSchemaVersion>:{<cardId>}
//       LIST of history entries, oldest first (cardHistoryCodec.ts), each followed by a 16-byte
//       HMAC over key + entry. Readers take the newest historyLength; the list is trimmed back to
//       them once it holds an eighth more (historyTrimAbove), not on every write.
//       Model-independent, so a new model rebuilds its state from it instead of starting cold.
//   <ns>:dev:{<deviceKey>}:<windowMs>:<bucket>
//       HyperLogLog of the cards seen on a device in one bucket (a UTC day by default); the fan-out
//       is PFCOUNT over this bucket and the previous one (deviceWindowBuckets.ts).
//
// The MAC covers key, position and state bytes, so a value altered, rolled to another position
// or copied to another card's (or model's) key fails verification and is read as absent.
import { createHash, timingSafeEqual } from "node:crypto";
import type {
  CardStateStore,
  CardStateWrite,
  HistoryEntry,
  StateReadRequest,
  StateReadResult,
  StoredCardState,
  StreamPosition,
  WriteOutcome,
} from "../features/cardStatePort.js";
import { DAY_MS, HOUR_MS } from "../features/cardState.js";
import { decodeHistoryEntry, encodeHistoryEntry } from "../features/cardHistoryCodec.js";
import { deviceWindowBucket } from "../features/deviceWindowBuckets.js";
import { cardHistoryOptions, type CardHistoryOptions } from "../features/cardStateStoreOptions.js";
import { HMAC_SHA256_BYTES, HmacSha256 } from "./hmacSha256.js";
import { PACKED_ARGS_LUA, PackedScriptArgs } from "./packedScriptArgs.js";
import { readU64 } from "./u64.js";
import { isKeySafe } from "./namespaceKeys.js";
import {
  groupByNode,
  isWholeStoreFailure,
  nodeRoundTrip,
  roundTrip,
  type CommandReply,
  type QueuedCommand,
  type RedisClient,
} from "./redisRoundTrip.js";

export interface RedisCardStateStoreOptions extends CardHistoryOptions {
  readonly redis: RedisClient;
  /** Prefix of every key, e.g. "fs". */
  readonly namespace: string;
  readonly modelVersion: string;
  readonly featureSchemaVersion: string;
  /** At least 32 bytes. */
  readonly hmacKey: Buffer;
  /** Lifetime of a card's state and history after its last write. */
  readonly ttlMs?: number;
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

/**
 * A command of a batch failed in Redis and no node of the batch answered (one dead master of
 * several is reported per card instead: StateReadResult.unavailable). Its key is
 * redacted (redactedKey): errors are logged, and a log line never carries a card id.
 */
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

const MAC_BYTES = HMAC_SHA256_BYTES;
/** A stored value begins with its stream position, u64 big-endian (struct's '>I8' in the scripts). */
const POSITION_BYTES = 8;
const MIN_HMAC_KEY_BYTES = 32;
const DEFAULT_TTL_MS = 30 * DAY_MS;
/** A device bucket outlives the window it can be counted in by this, for clock skew. */
const DEVICE_BUCKET_SLACK_MS = HOUR_MS;
const isStoredPosition = (position: number) => Number.isSafeInteger(position) && position >= 0;
/** A key of the wrong type can only have been written by something else: poisoned, not an outage. */
const isWrongType = (error: Error) => error.message.startsWith("WRONGTYPE");

// The keys travel inside ARGV, packed (packedScriptArgs.ts): a Cluster refuses (CROSSSLOT) a
// command whose declared keys span slots, whatever the script's flags. KEYS[1] is the first of
// them, declared so the call is routed (or MOVED) to the node that serves it; the caller sends
// every key of a call to that node.
//
// The script builds each key from its hash tag (a card id, a device key) between a head and a
// tail sent once per call: a card's keys were two thirds of the bytes packed, encoded and sent
// per card, and building them cost more CPU than the card's MAC.
//
// ARGV: bucket TTL ms, state key head, history key head, device key head, current and previous
// bucket key tails, -historyLength, packed: card count, per card its id; touch count, per touch
// its device key and card id.
// Per card two replies: the state value (nil when absent, "wrongtype" for a key of the wrong
// type, which is too short to verify) and, when the state is absent or unreadable, the history
// list ("wrongtype" when not a list); then one PFCOUNT per touch.
// A bucket's expiry is set by a touch whose PFADD changes it (its creation is one): the TTL names
// the same moment whenever it is set (the end of the next bucket, plus slack), so a touch that
// finds its card already counted, as a card's later transactions on the same device do, leaves
// the expiry as it is. Setting it once per bucket key per call cost Redis a PEXPIRE for nearly
// every touch.
// The states are read with a GET per card, not one MGET per call: MGET saved Redis 0.2 µs of CPU
// per card (2.37 against 2.58 µs, 256 cards a call, medians of 10 alternating rounds, 2026-12-05)
// and reads a key of the wrong type as absent, which would hide a tampered key.
const READ_BATCH_LUA = `#!lua flags=allow-cross-slot-keys
local bucketTtl, stateHead, historyHead, deviceHead, currentTail, previousTail, historyFrom, b =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]
${PACKED_ARGS_LUA}
local out = {}
for i = 1, u32() do
  local card
  card, o = struct.unpack('>I4c0', b, o)
  local v = redis.pcall('GET', stateHead .. card .. '}')
  if type(v) == 'table' then v = 'wrongtype' end
  out[#out + 1] = v
  if v and v ~= 'wrongtype' then
    out[#out + 1] = false
  else
    local h = redis.pcall('LRANGE', historyHead .. card .. '}', historyFrom, '-1')
    if h.err then out[#out + 1] = 'wrongtype' else out[#out + 1] = h end
  end
end
for t = 1, u32() do
  local device, card
  device, card, o = struct.unpack('>I4c0I4c0', b, o)
  local current, previous = deviceHead .. device .. currentTail, deviceHead .. device .. previousTail
  if redis.call('PFADD', current, card) == 1 then redis.call('PEXPIRE', current, bucketTtl) end
  out[#out + 1] = redis.call('PFCOUNT', current, previous)
end
return out
`;

// ARGV: ttl ms, -historyLength, historyTrimAbove, state key head, history key head, packed: write
// count, per write its card id, value (position first, as stored), entry count, entries. One
// reply per write: 1 applied, 0 stale.
// The state is written with one SET … PX … GET, which hands back the value it replaced; a write
// whose stored position is not older (stale: a replay after a rebalance, rare) puts that value
// back, so it is as if it had not been written, but for the refreshed TTL. A stored value too
// short to hold a position (tampered) does not block the write; a key of the wrong type (also
// tampered) is replaced rather than failing the card's writes until it expires, detected by the
// command failing (pcall), not by a TYPE per key: most writes never meet one.
// The history is trimmed only once it has grown past historyTrimAbove, not on every write, and
// each card's fields are read with one struct.unpack, not one unpack and string.sub per field:
// together 16.3 µs of Redis CPU per card against 20.4 (a batch of 256 cards of 1 entry, medians
// of 10 alternating rounds; the HASH layout then); a script that only parsed cost about 1.5–2 µs
// less per card.
// Where Redis's CPU goes on these two scripts (perf on redis-server over the bench's in-process
// drain, 2026-12-05): key lookups about 18 % of its samples, Lua's string interning 17 % (this
// Redis hashes every byte of every string a script makes: the packed ARGV, each value unpacked
// from it, the old value SET … GET hands back), the rest of the interpreter 12 %, the kernel 11 %.
// Sending each value as an argument of its own and reading the old position with GETRANGE, so a
// value is hashed once, cost Redis no less (12.2 against 12.5 µs per card written, medians of 24
// alternating rounds of 50,000 cards): the extra command took what the hashing saved.
// What a card's write costs Redis, by part (256 cards a call, one history entry each, the lists
// full; medians of 8 alternating rounds, 2026-12-05): 9.6 µs in all; 8.5 without the history's
// PEXPIRE, 6.3 without its RPUSH and PEXPIRE, 2.7 for a script that only parses its arguments. The
// history is a third of it; its expiry cannot be refreshed less often without letting a list
// expire before its card's state.
const CAS_WRITE_BATCH_LUA = `#!lua flags=allow-cross-slot-keys
local ttl, historyFrom, trimAbove, stateHead, historyHead, b =
  ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5], ARGV[6]
${PACKED_ARGS_LUA}
local out = {}
for w = 1, u32() do
  local card, value, count
  card, value, count, o = struct.unpack('>I4c0I4c0I4', b, o)
  local sk, hk = stateHead .. card .. '}', historyHead .. card .. '}'
  local entries = {}
  for e = 1, count do entries[e], o = struct.unpack('>I4c0', b, o) end
  local old = redis.pcall('SET', sk, value, 'PX', ttl, 'GET')
  if type(old) == 'table' then
    redis.call('DEL', sk)
    redis.call('SET', sk, value, 'PX', ttl)
    old = false
  end
  if old and #old >= 8 and struct.unpack('>I8', old) >= struct.unpack('>I8', value) then
    redis.call('SET', sk, old, 'PX', ttl)
    out[w] = 0
  else
    if #entries > 0 then
      local pushed = redis.pcall('RPUSH', hk, unpack(entries))
      if type(pushed) == 'table' and pushed.err then
        redis.call('DEL', hk)
        pushed = redis.call('RPUSH', hk, unpack(entries))
      end
      if pushed > trimAbove then redis.call('LTRIM', hk, historyFrom, '-1') end
    elseif redis.call('TYPE', hk).ok ~= 'list' then
      redis.call('DEL', hk)
    end
    redis.call('PEXPIRE', hk, ttl)
    out[w] = 1
  end
end
return out
`;
const READ_COMMAND = "fraudScorerReadCardStates";
/** ioredis adds a …Buffer variant of each defined command that keeps replies binary. */
const READ_COMMAND_BUFFER = "fraudScorerReadCardStatesBuffer";
const WRITE_COMMAND = "fraudScorerCasCardStates";
/** A pipeline or a client with the scripts defined: a pipeline queues, a client sends (a promise). */
type ScriptCommander = {
  [READ_COMMAND_BUFFER](
    routingKey: string,
    bucketTtlMs: string,
    stateHead: string,
    historyHead: string,
    deviceHead: string,
    currentTail: string,
    previousTail: string,
    historyFrom: string,
    packed: Buffer,
  ): unknown;
  [WRITE_COMMAND](
    routingKey: string,
    ttlMs: string,
    historyFrom: string,
    historyTrimAbove: string,
    stateHead: string,
    historyHead: string,
    packed: Buffer,
  ): unknown;
};

const scriptsDefined = new WeakSet<RedisClient>();
function defineScripts(client: RedisClient): void {
  if (scriptsDefined.has(client)) return;
  scriptsDefined.add(client);
  client.defineCommand(READ_COMMAND, { numberOfKeys: 1, lua: READ_BATCH_LUA });
  client.defineCommand(WRITE_COMMAND, { numberOfKeys: 1, lua: CAS_WRITE_BATCH_LUA });
}

export class RedisCardStateStore implements CardStateStore {
  readonly #redis: RedisClient;
  /** Keys are head | hash tag | tail (see the key layout); the heads end with the tag's `{`. */
  readonly #stateHead: string;
  readonly #historyHead: string;
  readonly #deviceHead: string;
  /** The heads as UTF-8, for the MACs, which cover whole keys. */
  readonly #stateHeadBytes: Buffer;
  readonly #historyHeadBytes: Buffer;
  /** One-shot-hash HMAC with the key's pads precomputed (hmacSha256.ts): no key import per MAC. */
  readonly #hmac: HmacSha256;
  readonly #ttlMs: number;
  /** LRANGE and LTRIM start of a card's newest historyLength entries (-historyLength). */
  readonly #newestHistoryFrom: string;
  /** A history list is trimmed back to historyLength once longer than this. */
  readonly #historyTrimAbove: string;
  readonly #deviceWindowMs: number;
  readonly #stats: CardStateStoreStats = {
    reads: 0,
    hits: 0,
    misses: 0,
    tampered: 0,
    staleWrites: 0,
    appliedWrites: 0,
  };

  constructor(options: RedisCardStateStoreOptions) {
    const { redis, namespace, modelVersion, featureSchemaVersion, hmacKey, ttlMs = DEFAULT_TTL_MS } = options;
    const { historyLength, deviceWindowMs } = cardHistoryOptions(options);
    for (const [name, part] of Object.entries({ namespace, modelVersion, featureSchemaVersion })) {
      if (!isKeySafe(part))
        throw new RangeError(`${name} ${JSON.stringify(part)} must match [A-Za-z0-9._-]+`);
    }
    if (hmacKey.length < MIN_HMAC_KEY_BYTES) {
      throw new RangeError(`hmacKey must be at least ${MIN_HMAC_KEY_BYTES} bytes, got ${hmacKey.length}`);
    }
    if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) throw new RangeError(`ttlMs must be a positive integer`);
    this.#redis = redis;
    this.#stateHead = `${namespace}:cardstate:${featureSchemaVersion}:${modelVersion}:{`;
    this.#historyHead = `${namespace}:hist:${featureSchemaVersion}:{`;
    this.#deviceHead = `${namespace}:dev:{`;
    this.#stateHeadBytes = Buffer.from(this.#stateHead, "utf8");
    this.#historyHeadBytes = Buffer.from(this.#historyHead, "utf8");
    this.#hmac = new HmacSha256(hmacKey);
    this.#ttlMs = ttlMs;
    this.#newestHistoryFrom = String(-historyLength);
    this.#historyTrimAbove = String(historyLength + Math.max(1, Math.floor(historyLength / 8)));
    this.#deviceWindowMs = deviceWindowMs;
    // defineCommand sends EVALSHA and falls back to EVAL on NOSCRIPT (e.g. after a failover).
    defineScripts(redis);
  }

  get stats(): Readonly<CardStateStoreStats> {
    return this.#stats;
  }

  stateKey(cardId: string): string {
    return `${this.#stateHead}${cardId}}`;
  }

  historyKey(cardId: string): string {
    return `${this.#historyHead}${cardId}}`;
  }

  deviceBucketKey(deviceKey: string, bucket: number): string {
    return `${this.#deviceHead}${deviceKey}${this.#deviceBucketTail(bucket)}`;
  }

  #deviceBucketTail(bucket: number): string {
    return `}:${this.#deviceWindowMs}:${bucket}`;
  }

  async readBatch({ cardIds, deviceTouches, nowMs }: StateReadRequest): Promise<StateReadResult> {
    const n = cardIds.length;
    const bucket = deviceWindowBucket(nowMs, this.#deviceWindowMs);
    // Alive through the end of the next bucket, the last one that counts it; relative to Redis's
    // clock, so a batch of old records cannot set an expiry in the past and delete the key.
    const bucketTtlMs = (bucket + 2) * this.#deviceWindowMs - nowMs + DEVICE_BUCKET_SLACK_MS;
    // One script call per node: units 0…n-1 are the cards, n… the touches, grouped by the node of
    // their keys (cards before touches within a group, as the script reads and answers them).
    const units = Array.from({ length: n + deviceTouches.length }, (_, u) => u);
    const keyOf = (u: number) =>
      u < n ? this.stateKey(cardIds[u]!) : this.deviceBucketKey(deviceTouches[u - n]!.deviceKey, bucket);
    const groups = groupByNode(this.#redis, units, keyOf);
    const ttlArg = String(bucketTtlMs);
    const currentTail = this.#deviceBucketTail(bucket);
    const previousTail = this.#deviceBucketTail(bucket - 1);
    const commands = groups.map((group): QueuedCommand => {
      // Sized up front (see writeBatch): at most 3 UTF-8 bytes per UTF-16 unit.
      let estimate = 8;
      let cardCount = 0;
      for (const u of group) {
        if (u < n) {
          cardCount++;
          estimate += 4 + 3 * cardIds[u]!.length;
        } else {
          const { deviceKey, cardId } = deviceTouches[u - n]!;
          estimate += 8 + 3 * (deviceKey.length + cardId.length);
        }
      }
      const packed = new PackedScriptArgs(estimate).u32(cardCount);
      for (const u of group) if (u < n) packed.field(cardIds[u]!);
      packed.u32(group.length - cardCount);
      for (const u of group) {
        if (u < n) continue;
        const { deviceKey, cardId } = deviceTouches[u - n]!;
        packed.field(deviceKey).field(cardId);
      }
      const args = packed.bytes();
      const routingKey = keyOf(group[0]!);
      return {
        key: routingKey,
        enqueue: (p) =>
          (p as unknown as ScriptCommander)[READ_COMMAND_BUFFER](
            routingKey,
            ttlArg,
            this.#stateHead,
            this.#historyHead,
            this.#deviceHead,
            currentTail,
            previousTail,
            this.#newestHistoryFrom,
            args,
          ),
      };
    });
    const replies = await nodeRoundTrip(this.#redis, commands, defineScripts);
    this.#throwIfWholeStoreFailed(replies, commands);

    const states = new Array<StoredCardState | undefined>(n);
    const histories = new Array<HistoryEntry[] | undefined>(n);
    const deviceCardCounts = new Array<number>(deviceTouches.length);
    const unavailable: number[] = [];
    let tampered = 0;
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g]!;
      const [error, value] = replies[g]!;
      if (error !== null) {
        for (const u of group) if (u < n) unavailable.push(u);
        continue;
      }
      const reply = value as Array<Buffer | null | number | Buffer[]>;
      let r = 0;
      for (const u of group) {
        if (u >= n) {
          deviceCardCounts[u - n] = Number(reply[r++]);
          continue;
        }
        const cardId = cardIds[u]!;
        const value = reply[r++] as Buffer | null;
        const history = reply[r++] as Buffer[] | Buffer | null;
        const outcome = this.#verify(cardId, value);
        this.#stats.reads++;
        if (outcome === "tampered") {
          tampered++;
          this.#stats.tampered++;
        } else if (outcome === undefined) this.#stats.misses++;
        else this.#stats.hits++;
        states[u] = outcome === "tampered" ? undefined : outcome;
        if (history !== null) histories[u] = this.#historyFrom(cardId, history);
      }
    }
    return {
      states,
      deviceCardCounts,
      tampered,
      histories,
      ...(unavailable.length > 0 ? { unavailable } : {}),
    };
  }

  async readHistories(cardIds: readonly string[]): Promise<HistoryEntry[][]> {
    const keys = cardIds.map((cardId) => this.historyKey(cardId));
    const replies = await roundTrip(
      this.#redis,
      keys.map((key) => ({ key, enqueue: (p) => p.lrangeBuffer(key, this.#newestHistoryFrom, -1) })),
    );
    return keys.map((key, i) => {
      const [error, reply] = replies[i]!;
      if (error) {
        throwUnlessWrongType(error, key);
        this.#stats.tampered++;
        return [];
      }
      return this.#historyFrom(cardIds[i]!, reply as Buffer[]);
    });
  }

  /** A card's history list as read: verified entries, a forged or wrong-type one counted as tampering. */
  #historyFrom(cardId: string, reply: Buffer[] | Buffer): HistoryEntry[] {
    if (!Array.isArray(reply)) {
      this.#stats.tampered++;
      return [];
    }
    let forged = false;
    const entries: HistoryEntry[] = [];
    for (const stored of reply) {
      const entry = this.#verifyHistoryEntry(cardId, stored);
      if (entry === undefined) forged = true;
      else entries.push(entry);
    }
    if (forged) this.#stats.tampered++;
    return entries;
  }

  async writeBatch(writes: readonly CardStateWrite[]): Promise<WriteOutcome[]> {
    for (const { position } of writes) {
      if (!isStoredPosition(position)) {
        throw new RangeError(`position ${position} is not a non-negative safe integer`);
      }
    }
    const keyOf = (w: number) => this.stateKey(writes[w]!.cardId);
    const groups = groupByNode(
      this.#redis,
      writes.map((_, w) => w),
      keyOf,
    );
    const ttlArg = String(this.#ttlMs);
    const commands = groups.map((group): QueuedCommand => {
      // Sized up front: growing from the default doubled (reallocated and copied) about four
      // times for a batch of 64 cards.
      let estimate = 4;
      for (const w of group) {
        const { cardId, bytes, history } = writes[w]!;
        estimate += 3 * cardId.length + 12 + POSITION_BYTES + bytes.length + MAC_BYTES;
        for (const entry of history) estimate += 8 + entry.payload.length + HISTORY_MAC_BYTES;
      }
      const packed = new PackedScriptArgs(estimate).u32(group.length);
      for (const w of group) {
        const { cardId, bytes, position, history } = writes[w]!;
        packed.field(cardId).u32(POSITION_BYTES + bytes.length + MAC_BYTES);
        packed
          .u64(position)
          .raw(bytes)
          .raw(this.#mac(cardId, position, bytes));
        packed.u32(history.length);
        for (const entry of history) {
          const encoded = encodeHistoryEntry(entry);
          packed.u32(encoded.length + HISTORY_MAC_BYTES);
          packed.raw(encoded).raw(this.#historyMac(cardId, encoded));
        }
      }
      const args = packed.bytes();
      const routingKey = keyOf(group[0]!);
      return {
        key: routingKey,
        enqueue: (p) =>
          (p as unknown as ScriptCommander)[WRITE_COMMAND](
            routingKey,
            ttlArg,
            this.#newestHistoryFrom,
            this.#historyTrimAbove,
            this.#stateHead,
            this.#historyHead,
            args,
          ),
      };
    });
    const replies = await nodeRoundTrip(this.#redis, commands, defineScripts);
    this.#throwIfWholeStoreFailed(replies, commands);
    const outcomes = new Array<WriteOutcome>(writes.length);
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g]!;
      const [error, value] = replies[g]!;
      if (error !== null) {
        for (const w of group) outcomes[w] = "unavailable";
        continue;
      }
      const reply = value as number[];
      for (let k = 0; k < group.length; k++) {
        if (reply[k] === 1) {
          this.#stats.appliedWrites++;
          outcomes[group[k]!] = "applied";
        } else {
          this.#stats.staleWrites++;
          outcomes[group[k]!] = "stale";
        }
      }
    }
    return outcomes;
  }

  /** Every node the batch needed failed: the store is down, and the batch fails as one. */
  #throwIfWholeStoreFailed(replies: readonly CommandReply[], commands: readonly QueuedCommand[]): void {
    if (isWholeStoreFailure(this.#redis, replies)) throw replyError(replies[0]![0]!, commands[0]!.key);
  }

  /** A stored value (position | state bytes | MAC) verified, or absent, or tampered. */
  #verify(cardId: string, value: Buffer | null): StoredCardState | undefined | "tampered" {
    if (value === null) return undefined;
    if (value.length < POSITION_BYTES + MAC_BYTES) return "tampered";
    const position = readU64(value, 0);
    if (!isStoredPosition(position)) return "tampered";
    const bytes = value.subarray(POSITION_BYTES, value.length - MAC_BYTES);
    const expected = this.#mac(cardId, position, bytes);
    if (!timingSafeEqual(expected, value.subarray(value.length - MAC_BYTES))) return "tampered";
    return { bytes, position };
  }

  /**
   * History entries are signed too (entry | a truncated HMAC over key and entry): a rebuild steps
   * the model over them, so a forged entry would otherwise reach a decision. A forged or mangled
   * entry is dropped from the rebuild and counted as tampering.
   */
  #verifyHistoryEntry(cardId: string, stored: Buffer): HistoryEntry | undefined {
    if (stored.length < HISTORY_MAC_BYTES) return undefined;
    const entry = stored.subarray(0, stored.length - HISTORY_MAC_BYTES);
    const mac = stored.subarray(stored.length - HISTORY_MAC_BYTES);
    if (!timingSafeEqual(this.#historyMac(cardId, entry), mac)) return undefined;
    return decodeHistoryEntry(entry);
  }

  /**
   * The MAC (truncated) over the card's history key and the entry, in a scratch buffer valid
   * until the next #historyMac or #mac.
   */
  #historyMac(cardId: string, entry: Buffer): Buffer {
    return this.#beginMacOfKey(this.#historyHeadBytes, cardId)
      .bytes(entry)
      .digest()
      .subarray(0, HISTORY_MAC_BYTES);
  }

  /**
   * HMAC-SHA256 over u32 key length | key | u64 position | state bytes (unambiguous framing), key
   * being the card's state key, in a scratch buffer valid until the next #mac or #historyMac.
   */
  #mac(cardId: string, position: StreamPosition, bytes: Uint8Array): Buffer {
    return this.#beginMacOfKey(this.#stateHeadBytes, cardId).u64(position).bytes(bytes).digest();
  }

  /** A MAC begun with u32 key length | key, the key written from its head and the card id. */
  #beginMacOfKey(headBytes: Buffer, cardId: string): HmacSha256 {
    return this.#hmac.begin().framed(headBytes, cardId, KEY_TAIL);
  }
}

/** The `}` closing a card key's hash tag. */
const KEY_TAIL = Buffer.from("}", "utf8");

/** 128 bits: ample against forgery for an entry that lives at most the state TTL. */
const HISTORY_MAC_BYTES = 16;

function throwUnlessWrongType(error: Error, key: string): "tampered" {
  if (!isWrongType(error)) throw replyError(error, key);
  return "tampered";
}

/**
 * A key as it may appear in logs and errors: the hash tag (a raw card id or device hash) is
 * replaced by a short digest of it, enough to correlate lines, not to recover the card.
 */
export const redactedKey = (key: string): string =>
  key.replace(
    /\{([^}]*)\}/,
    (_, tag: string) => `{#${createHash("sha256").update(tag).digest("hex").slice(0, 12)}}`,
  );

const replyError = (error: Error, key: string) => {
  const shown = redactedKey(key);
  return new CardStateStoreError(
    "redis_reply",
    `Redis command on ${shown} failed: ${error.message}`,
    shown,
    error,
  );
};
