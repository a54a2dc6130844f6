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
  return this.buf.toString("utf8", start, end);
};

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
