// Payload ↔ message through the generated static code. protobufjs throws on malformed wire
// data; this is the one place that turns those throws into DecodeError values.
import protobuf from "protobufjs/minimal.js";
import { fraud } from "./generated/fraud.js";
import { decodeFailure, decoded, type Decoded } from "./decodeError.js";
import { decisionPayloadView } from "./decisionWire.js";

export type Transaction = fraud.v1.Transaction;
export type TransactionInit = fraud.v1.ITransaction;
export type Decision = fraud.v1.Decision;
export type DecisionInit = fraud.v1.IDecision;
export const { Transaction, Decision, Channel, Action, FallbackCause } = fraud.v1;

/**
 * protobufjs decodes Node Buffers with its BufferReader (native UTF-8: the fast path), but that
 * reader silently truncates a string field that runs past the end of the message, where every
 * other field type throws. Make it throw too, once, here: a truncated payload must be a
 * malformed message, not a transaction with a clipped id.
 */
const bufferReader = protobuf.BufferReader.prototype as unknown as {
  string(this: { buf: Buffer; pos: number; len: number; uint32(): number }): string;
};
bufferReader.string = function strictString() {
  const length = this.uint32();
  const start = this.pos;
  const end = start + length;
  if (end > this.len) throw new RangeError(`index out of range: ${start} + ${length} > ${this.len}`);
  this.pos = end;
  return length > 0 && length <= 3
    ? shortString(this.buf, start, length)
    : this.buf.toString("utf8", start, end);
};

/**
 * Currency and country codes (three and two ASCII letters, three fields in every transaction)
 * come from a small set: each is one string, made once, where Buffer#toString made a new one per
 * field (a call into C++ and an allocation each). Bench section 2, the ingestion path (framing,
 * decode, validation), two runs of each, one after the other (Intel Xeon, 2 vCPUs, 2026-12-06):
 * 889 and 892 ns per transaction against 999 and 1,030 before. Bounded: past SHORT_STRINGS_KEPT
 * distinct values, a new string is made each time, as before; bytes that are not ASCII are
 * decoded as UTF-8.
 */
const SHORT_STRINGS_KEPT = 16_384;
const shortStrings = new Map<number, string>();

function shortString(buf: Buffer, start: number, length: number): string {
  const b0 = buf[start]!;
  const b1 = length > 1 ? buf[start + 1]! : 0;
  const b2 = length > 2 ? buf[start + 2]! : 0;
  if (((b0 | b1 | b2) & 0x80) !== 0) return buf.toString("utf8", start, start + length);
  const key = (length << 21) | (b2 << 14) | (b1 << 7) | b0;
  let value = shortStrings.get(key);
  if (value === undefined) {
    value = buf.toString("latin1", start, start + length);
    if (shortStrings.size < SHORT_STRINGS_KEPT) shortStrings.set(key, value);
  }
  return value;
}

export function decodeTransactionPayload(payload: Uint8Array): Decoded<Transaction> {
  try {
    return decoded(fraud.v1.Transaction.decode(payload));
  } catch (err) {
    return decodeFailure(
      "malformed_message",
      `Transaction payload does not parse: ${(err as Error).message}`,
    );
  }
}

export function decodeDecisionPayload(payload: Uint8Array): Decoded<Decision> {
  try {
    return decoded(fraud.v1.Decision.decode(payload));
  } catch (err) {
    return decodeFailure("malformed_message", `Decision payload does not parse: ${(err as Error).message}`);
  }
}

export const encodeTransactionPayload = (tx: TransactionInit): Uint8Array =>
  fraud.v1.Transaction.encode(tx).finish();

/** A Decision's payload of its own (decisionWire.ts writes it; decisionRecord.ts frames it). */
export const encodeDecisionPayload = (decision: DecisionInit): Uint8Array =>
  decisionPayloadView(decision).slice();
