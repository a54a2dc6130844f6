// Payload ↔ message through the generated static code. protobufjs throws on malformed wire
// data; this is the one place that turns those throws into DecodeError values.
import { fraud } from "./generated/fraud.js";
import { decodeFailure, decoded, type Decoded } from "./decodeError.js";

export type Transaction = fraud.v1.Transaction;
export type TransactionInit = fraud.v1.ITransaction;
export type Decision = fraud.v1.Decision;
export type DecisionInit = fraud.v1.IDecision;
export const { Transaction, Decision, Channel, Action, FallbackCause } = fraud.v1;

/**
 * protobufjs picks its Buffer reader for Node Buffers, and that reader silently truncates a
 * string field that runs past the end of the message; its plain Uint8Array reader throws
 * instead. So decode from a plain view of the same bytes (no copy).
 */
const strictView = (bytes: Uint8Array): Uint8Array =>
  Buffer.isBuffer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;

export function decodeTransactionPayload(payload: Uint8Array): Decoded<Transaction> {
  try {
    return decoded(fraud.v1.Transaction.decode(strictView(payload)));
  } catch (err) {
    return decodeFailure(
      "malformed_message",
      `Transaction payload does not parse: ${(err as Error).message}`,
    );
  }
}

export function decodeDecisionPayload(payload: Uint8Array): Decoded<Decision> {
  try {
    return decoded(fraud.v1.Decision.decode(strictView(payload)));
  } catch (err) {
    return decodeFailure("malformed_message", `Decision payload does not parse: ${(err as Error).message}`);
  }
}

export const encodeTransactionPayload = (tx: TransactionInit): Uint8Array =>
  fraud.v1.Transaction.encode(tx).finish();

export const encodeDecisionPayload = (decision: DecisionInit): Uint8Array =>
  fraud.v1.Decision.encode(decision).finish();
