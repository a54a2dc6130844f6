// Kafka record value → validated transactions. Either framing is accepted on the same topic:
// Confluent (first byte 0, one message) or length-delimited (one or many messages).
// Synchronous and allocation-light: this runs once per record on the hot path.
import { isConfluentFramed, parseConfluentFrame } from "../codec/confluent.js";
import { decodeFailure, decoded, type Decoded } from "../codec/decodeError.js";
import { splitDelimitedFrames } from "../codec/delimited.js";
import { decodeTransactionPayload, type Transaction } from "../codec/messages.js";
import { validateTransaction } from "./validateTransaction.js";

export interface RecordDecodeOptions {
  /** Schema ids known to hold fraud.v1.Transaction at message index [0]. */
  readonly transactionSchemaIds: ReadonlySet<number>;
  readonly maxFrameBytes?: number;
}

export type RecordFraming = "confluent" | "delimited";

/** A decoded transaction and its Protobuf payload (a view into the record, not a copy). */
export interface RecordTransaction {
  readonly tx: Transaction;
  readonly payload: Uint8Array;
}

export function recordFraming(value: Uint8Array): RecordFraming {
  return isConfluentFramed(value) ? "confluent" : "delimited";
}

export function decodeTransactionRecord(
  value: Uint8Array,
  options: RecordDecodeOptions,
): Decoded<RecordTransaction[]> {
  if (isConfluentFramed(value)) {
    const frame = parseConfluentFrame(value);
    if (!frame.ok) return frame;
    const { schemaId, messageIndexes, payload } = frame.value;
    if (!options.transactionSchemaIds.has(schemaId)) {
      return decodeFailure(
        "unknown_schema_id",
        `schema id ${schemaId} is not a registered Transaction schema`,
        {
          byteOffset: 1,
        },
      );
    }
    if (messageIndexes.length !== 1 || messageIndexes[0] !== 0) {
      return decodeFailure(
        "bad_message_indexes",
        `message indexes [${messageIndexes.join(",")}] do not name Transaction`,
        {
          byteOffset: 5,
        },
      );
    }
    const tx = decodeAndValidate(payload, 0);
    return tx.ok ? decoded([{ tx: tx.value, payload }]) : tx;
  }
  const frames = splitDelimitedFrames(
    value,
    options.maxFrameBytes === undefined ? {} : { maxFrameBytes: options.maxFrameBytes },
  );
  if (!frames.ok) return frames;
  const transactions: RecordTransaction[] = new Array(frames.value.length);
  for (let i = 0; i < frames.value.length; i++) {
    const payload = frames.value[i]!;
    const tx = decodeAndValidate(payload, i);
    if (!tx.ok) return tx;
    transactions[i] = { tx: tx.value, payload };
  }
  return decoded(transactions);
}

function decodeAndValidate(payload: Uint8Array, frameIndex: number): Decoded<Transaction> {
  const parsed = decodeTransactionPayload(payload);
  const result = parsed.ok ? validateTransaction(parsed.value) : parsed;
  return result.ok ? result : { ok: false, error: { ...result.error, frameIndex } };
}
