// The one decoder of a decision record as the scorer writes it to the decisions topic: a
// Confluent frame around a Protobuf Decision. Failures are DecodeError values like every other
// decoder here; each reader (tail, replay comparison, tests, bench, chaos) decides whether a bad
// record is skipped, counted or fatal.
import { parseConfluentFrame } from "./confluent.js";
import { decodeFailure, type Decoded } from "./decodeError.js";
import { decodeDecisionPayload, type Decision } from "./messages.js";

export function decodeDecisionRecord(value: Uint8Array | null | undefined): Decoded<Decision> {
  if (!value || value.length === 0) return decodeFailure("empty_record", "decision record holds no bytes");
  const frame = parseConfluentFrame(value);
  if (!frame.ok) return { ok: false, error: frame.error };
  return decodeDecisionPayload(frame.value.payload);
}
