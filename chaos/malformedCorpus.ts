// Records the scorer must dead-letter, never decide and never crash on: random bytes, truncated
// frames, absurd length prefixes, unknown schema ids, well-formed Protobuf with invalid fields,
// and records near the broker's size limit. Deterministic for a seed; pure, so unit-tested.
import { encodeConfluentFrame } from "../src/codec/confluent.js";
import { joinDelimitedFrames } from "../src/codec/delimited.js";
import { Channel, encodeTransactionPayload, type TransactionInit } from "../src/codec/messages.js";
import { decodeTransactionRecord } from "../src/ingest/decodeTransactionRecord.js";

export const MALFORMED_KINDS = [
  "random_bytes",
  "empty",
  "truncated_frame",
  "absurd_length",
  "unknown_schema_id",
  "invalid_fields",
  "near_size_limit",
] as const;
export type MalformedKind = (typeof MALFORMED_KINDS)[number];

export interface MalformedRecord {
  readonly kind: MalformedKind;
  readonly key: string;
  readonly value: Buffer;
}

/** Under the broker's default max.message.bytes (1 MiB + 12) with room for the record's overhead. */
export const NEAR_LIMIT_BYTES = 1_040_000;

/** A small, fast, seedable generator (mulberry32): the corpus must be the same on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const validTransaction = (i: number): TransactionInit => ({
  transactionId: `bad-${i}`,
  cardId: `bad-card-${i % 97}`,
  amountMinor: 1_000 + i,
  currency: "EUR",
  merchantId: "m-1",
  mcc: 5411,
  merchantCountry: "DE",
  cardCountry: "DE",
  channel: Channel.CHANNEL_ECOMMERCE,
  eventTimeMs: 1_795_000_000_000 + i,
});

const INVALID_FIELD_EDITS: readonly ((tx: TransactionInit) => TransactionInit)[] = [
  (tx) => ({ ...tx, amountMinor: -5 }),
  (tx) => ({ ...tx, amountMinor: 0 }),
  (tx) => ({ ...tx, currency: "euro" }),
  (tx) => ({ ...tx, cardId: "" }),
  (tx) => ({ ...tx, transactionId: "" }),
  (tx) => ({ ...tx, mcc: 123_456 }),
  (tx) => ({ ...tx, eventTimeMs: 0 }),
  (tx) => ({ ...tx, merchantCountry: "Germany" }),
];

function candidate(kind: MalformedKind, i: number, random: () => number): Buffer {
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)));
  switch (kind) {
    case "random_bytes":
      return bytes(1 + Math.floor(random() * 300));
    case "empty":
      return Buffer.alloc(0);
    case "truncated_frame": {
      const whole = joinDelimitedFrames([encodeTransactionPayload(validTransaction(i))]);
      return whole.subarray(0, 1 + Math.floor(random() * (whole.length - 1)));
    }
    case "absurd_length":
      // A varint length prefix of ~2 GiB (or one that never ends), then a few bytes.
      return random() < 0.5
        ? Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0xff, 0x07]), bytes(8)])
        : Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    case "unknown_schema_id":
      return encodeConfluentFrame({
        schemaId: 900_000_000 + i,
        messageIndexes: [0],
        payload: encodeTransactionPayload(validTransaction(i)),
      });
    case "invalid_fields": {
      const edit = INVALID_FIELD_EDITS[i % INVALID_FIELD_EDITS.length]!;
      return joinDelimitedFrames([encodeTransactionPayload(edit(validTransaction(i)))]);
    }
    case "near_size_limit": {
      // A length prefix that matches: one frame of ~1 MB whose content is not a Transaction.
      const payload = Buffer.alloc(NEAR_LIMIT_BYTES - 8, 0xff);
      return joinDelimitedFrames([payload]);
    }
  }
}

/**
 * `count` bad records; `nearLimit` of them ~1 MB (they cost the broker real bytes), the rest
 * spread evenly over the other kinds. Every one is checked against the product's own decoder,
 * so a random buffer that happens to decode is replaced rather than counted as bad.
 */
export function* malformedCorpus(
  count: number,
  { seed = 11, nearLimit = 10 } = {},
): Generator<MalformedRecord> {
  const random = seededRandom(seed);
  const small = MALFORMED_KINDS.filter((k) => k !== "near_size_limit");
  const noSchemas = { transactionSchemaIds: new Set<number>() };
  for (let i = 0; i < count; i++) {
    const kind: MalformedKind = i < nearLimit ? "near_size_limit" : small[i % small.length]!;
    let value = candidate(kind, i, random);
    for (let tries = 0; decodeTransactionRecord(value, noSchemas).ok; tries++) {
      if (tries === 20) throw new Error(`malformed corpus: ${kind} #${i} keeps decoding as a valid record`);
      value = candidate(kind, i, random);
    }
    yield { kind, key: `bad-key-${i % 1000}`, value };
  }
}
