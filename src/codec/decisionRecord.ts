// A decision record as the scorer writes it to the decisions topic: a Confluent frame around a
// Protobuf Decision; its one encoder and its one decoder. Decode failures are DecodeError values
// like every other decoder's here; each reader (tail, replay comparison, tests, bench, chaos)
// decides whether a bad record is skipped, counted or fatal.
import { encodeConfluentFrame, parseConfluentFrame } from "./confluent.js";
import { decodeFailure, type Decoded } from "./decodeError.js";
import { decisionPayloadView } from "./decisionWire.js";
import { decodeDecisionPayload, type Decision, type DecisionInit } from "./messages.js";

/** Decision is the first message of its file: message-index array [0]. */
const DECISION_MESSAGE_INDEXES = [0];

/** The record's value: the Decision written once, straight into the frame (no payload copy kept). */
export const encodeDecisionRecord = (decision: DecisionInit, schemaId: number): Buffer =>
  encodeConfluentFrame({
    schemaId,
    messageIndexes: DECISION_MESSAGE_INDEXES,
    payload: decisionPayloadView(decision),
  });

export function decodeDecisionRecord(value: Uint8Array | null | undefined): Decoded<Decision> {
  if (!value || value.length === 0) return decodeFailure("empty_record", "decision record holds no bytes");
  const frame = parseConfluentFrame(value);
  if (!frame.ok) return { ok: false, error: frame.error };
  return decodeDecisionPayload(frame.value.payload);
}
