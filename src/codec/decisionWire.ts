// A Decision's Protobuf bytes, as the scorer writes one per transaction. pbf's writer, generated
// from proto/fraud/v1/decision.proto (scripts/gen-proto.mjs), writes every field into one byte
// array that is kept and reused; protobufjs's allocates an operation object per field and the
// message's buffer on every call. Bench section 8 (`npm run bench -- --only hotPath`), in three
// pairs alternating with the commit before this writer (2026-12-04): the drain's "encode
// decision" stage 1.0–1.3 µs per transaction against 2.9–3.1, and 10.2–10.3 KiB allocated per
// transaction against 12.5–12.6. Decisions are still read with protobufjs (messages.ts), like
// every other message.
import { PbfWriter } from "pbf";
import type { fraud } from "./generated/fraud.js";
import {
  writeDecision,
  type Decision as WireDecision,
  type StageTimings as WireStageTimings,
} from "./generated/decisionWriter.js";

/** Grows to the largest decision written, then stays: encoding is synchronous, never reentered. */
const scratch = new PbfWriter();

/**
 * The decision's bytes in a scratch buffer valid until the next call: copy them before keeping
 * them (encodeDecisionPayload, encodeDecisionRecord).
 */
export function decisionPayloadView(decision: fraud.v1.IDecision): Uint8Array {
  scratch.pos = 0;
  writeDecision(wireDecision(decision), scratch);
  return scratch.buf.subarray(0, scratch.pos);
}

/**
 * The generated writer's shape (the .proto's field names) of protobufjs's. Typed as the whole
 * message, so a field added to the .proto fails the typecheck here until it is mapped; absent
 * fields are the proto3 defaults, which the writer leaves out.
 */
function wireDecision(d: fraud.v1.IDecision): WireDecision {
  const t = d.timings;
  return {
    transaction_id: d.transactionId ?? "",
    card_id: d.cardId ?? "",
    action: (d.action ?? 0) as WireDecision["action"],
    score: d.score ?? 0,
    reason_codes: d.reasonCodes ?? [],
    model_version: d.modelVersion ?? "",
    rules_version: d.rulesVersion ?? "",
    fallback: d.fallback ?? false,
    fallback_cause: (d.fallbackCause ?? 0) as WireDecision["fallback_cause"],
    event_time_ms: Number(d.eventTimeMs ?? 0),
    decided_at_ms: Number(d.decidedAtMs ?? 0),
    timings: t === null || t === undefined ? undefined : wireStageTimings(t),
    feature_schema_version: d.featureSchemaVersion ?? "",
  };
}

/**
 * A decision's stage timings under the .proto's field names, absent ones 0: what the writer takes,
 * and the JSON form of a decision (src/decisions/decisionJson.ts).
 */
export function wireStageTimings(t: fraud.v1.IStageTimings): WireStageTimings {
  return {
    queue_us: t.queueUs ?? 0,
    decode_us: t.decodeUs ?? 0,
    state_read_us: t.stateReadUs ?? 0,
    features_us: t.featuresUs ?? 0,
    model_us: t.modelUs ?? 0,
    policy_us: t.policyUs ?? 0,
    state_write_us: t.stateWriteUs ?? 0,
    total_us: t.totalUs ?? 0,
  };
}
