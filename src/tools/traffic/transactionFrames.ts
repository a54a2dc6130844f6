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

  /** Characters below 128, one byte each. */
  ascii(s: string): void {
    this.#reserve(s.length);
    this.#length += this.#buf.write(s, this.#length, "latin1");
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
  readonly cardId: string;
  readonly isFraud?: boolean;
  /**
   * Where a caller may keep what it derives from the card (the planner its route): the same
   * object for every transaction of one distinct transaction, in every round.
   */
  memo?: unknown;
}

/**
 * What each distinct transaction's frames share: the body (everything but transaction id and
 * event time) and the id's bytes, encoded once, kept with the transaction object itself: a
 * source's items are immutable and outlive one run, so every writer over the same items (each
 * `produce` run, each bench step, slices of one source) encodes them once, and they are freed
 * with their transaction. At 1,000 tx/s a 4 s run meets each of 20,000 distinct transactions
 * at most once, so anything cached per run would never be hit.
 */
interface DistinctFrame extends FrameFacts {
  readonly body: Buffer;
  readonly id: Buffer;
}

const distinctFrames = new WeakMap<TransactionInit, DistinctFrame>();

const distinctFrameOf = (tx: TransactionInit, isFraud: boolean | undefined): DistinctFrame => {
  let frame = distinctFrames.get(tx);
  if (frame === undefined) {
    frame = {
      body: bodyOf(tx),
      id: Buffer.from(tx.transactionId ?? "", "utf8"),
      cardId: tx.cardId ?? "",
      ...(isFraud !== undefined ? { isFraud } : {}),
      memo: undefined,
    };
    distinctFrames.set(tx, frame);
  }
  return frame;
};

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
    const frame = distinctFrameOf(tx, isFraud);
    // The suffix is "~<round>": ASCII, one byte per character.
    const idBytes = frame.id.length + variant.idSuffix.length;
    const timeField = eventTimeMs === 0 ? 0 : 1 + varintLength(eventTimeMs);
    out.varint(1 + varintLength(idBytes) + idBytes + timeField + frame.body.length);
    out.varint(TRANSACTION_ID_TAG);
    out.varint(idBytes);
    out.bytes(frame.id);
    if (variant.idSuffix.length > 0) out.ascii(variant.idSuffix);
    if (eventTimeMs !== 0) {
      out.varint(EVENT_TIME_TAG);
      out.varint(eventTimeMs);
    }
    out.bytes(frame.body);
    return frame;
  }

  /** Transaction i's id, as write(i) wrote it. */
  transactionId(i: number): string {
    const variant = this.#source.variantAt?.(i);
    if (variant === undefined) return this.#source.at(i).tx.transactionId ?? "";
    return `${variant.item.tx.transactionId ?? ""}${variant.idSuffix}`;
  }

  #writeWhole({ tx, isFraud }: { tx: TransactionInit; isFraud?: boolean }, out: RecordBytes): FrameFacts {
    const payload = Transaction.encode(tx).finish();
    out.varint(payload.length);
    out.bytes(payload);
    return { cardId: tx.cardId ?? "", ...(isFraud !== undefined ? { isFraud } : {}) };
  }
}

/** The transaction without id and event time (absent, not empty: the encoder writes any field present). */
const bodyOf = (tx: TransactionInit): Buffer => {
  const { transactionId: _id, eventTimeMs: _time, ...body } = tx;
  const bytes = Transaction.encode(body).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
};
