// Length-delimited Transaction frames written straight into a record's bytes, each distinct
// transaction's body encoded once. A cycling source's later rounds differ from the first only
// in transaction id and event time (trafficSource.ts), so a frame is those two fields followed
// by the body encoded without them: Protobuf parsers accept fields in any order (the spec
// requires it), and the scorer decodes the same Transaction. This is what keeps the generator's
// cost per transaction to a copy and two small writes instead of a full encode.
import { Transaction, type TransactionInit } from "../../codec/messages.js";
import type { TrafficSource } from "./trafficSource.js";

/** field 1 (transaction_id), wire type 2; field 12 (event_time_ms), wire type 0. */
const TRANSACTION_ID_TAG = (1 << 3) | 2;
const EVENT_TIME_TAG = (12 << 3) | 0;

const varintLength = (n: number): number => {
  let length = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    length++;
  }
  return length;
};

/** A growing byte buffer one record's frames are appended to. */
export class RecordBytes {
  #buf = Buffer.allocUnsafe(4096);
  #length = 0;

  get length(): number {
    return this.#length;
  }

  #reserve(n: number): void {
    if (this.#length + n <= this.#buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#length + n));
    this.#buf.copy(bigger, 0, 0, this.#length);
    this.#buf = bigger;
  }

  /** A non-negative integer below 2^53 as a varint (uint32 and positive int64 alike). */
  varint(n: number): void {
    this.#reserve(10);
    const buf = this.#buf;
    let pos = this.#length;
    while (n >= 128) {
      buf[pos++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    buf[pos++] = n;
    this.#length = pos;
  }

  string(s: string, byteLength: number): void {
    this.varint(byteLength);
    this.#reserve(byteLength);
    this.#length += this.#buf.write(s, this.#length, "utf8");
  }

  bytes(b: Uint8Array): void {
    this.#reserve(b.length);
    this.#buf.set(b, this.#length);
    this.#length += b.length;
  }

  /** The bytes so far, valid until the next write. */
  view(): Buffer {
    return this.#buf.subarray(0, this.#length);
  }

  clear(): void {
    this.#length = 0;
  }

  /** The bytes so far, as a buffer of their own; this one starts over. */
  take(): Buffer {
    const out = Buffer.allocUnsafe(this.#length);
    this.#buf.copy(out, 0, 0, this.#length);
    this.#length = 0;
    return out;
  }
}

export interface FrameFacts {
  readonly transactionId: string;
  readonly cardId: string;
  readonly isFraud?: boolean;
}

/**
 * Body (everything but transaction id and event time) of each distinct transaction, kept with
 * the transaction object itself: a source's items are immutable and outlive one run, so every
 * writer over the same items (each `produce` run, each bench step, slices of one source) encodes
 * a body once, and it is freed with its transaction.
 */
const bodies = new WeakMap<TransactionInit, Buffer>();

/** Writes the i-th transaction of a source as one delimited frame. */
export class TransactionFrameWriter {
  readonly #source: TrafficSource;

  constructor(source: TrafficSource) {
    this.#source = source;
  }

  /** Appends transaction i's frame to `out` and says what it was. */
  write(i: number, out: RecordBytes): FrameFacts {
    const variant = this.#source.variantAt?.(i);
    if (variant === undefined) return this.#writeWhole(this.#source.at(i), out);
    const { tx, isFraud } = variant.item;
    const eventTimeMs = Number(tx.eventTimeMs ?? 0) + variant.eventTimeShiftMs;
    if (!Number.isSafeInteger(eventTimeMs) || eventTimeMs < 0)
      return this.#writeWhole(this.#source.at(i), out);
    let body = bodies.get(tx);
    if (body === undefined) bodies.set(tx, (body = bodyOf(tx)));
    const transactionId = `${tx.transactionId ?? ""}${variant.idSuffix}`;
    const idBytes = Buffer.byteLength(transactionId, "utf8");
    const timeField = eventTimeMs === 0 ? 0 : 1 + varintLength(eventTimeMs);
    out.varint(1 + varintLength(idBytes) + idBytes + timeField + body.length);
    out.varint(TRANSACTION_ID_TAG);
    out.string(transactionId, idBytes);
    if (eventTimeMs !== 0) {
      out.varint(EVENT_TIME_TAG);
      out.varint(eventTimeMs);
    }
    out.bytes(body);
    return { transactionId, cardId: tx.cardId ?? "", ...(isFraud !== undefined ? { isFraud } : {}) };
  }

  #writeWhole({ tx, isFraud }: { tx: TransactionInit; isFraud?: boolean }, out: RecordBytes): FrameFacts {
    const payload = Transaction.encode(tx).finish();
    out.varint(payload.length);
    out.bytes(payload);
    return {
      transactionId: tx.transactionId ?? "",
      cardId: tx.cardId ?? "",
      ...(isFraud !== undefined ? { isFraud } : {}),
    };
  }
}

/** The transaction without id and event time (absent, not empty: the encoder writes any field present). */
const bodyOf = (tx: TransactionInit): Buffer => {
  const { transactionId: _id, eventTimeMs: _time, ...body } = tx;
  const bytes = Transaction.encode(body).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
};
