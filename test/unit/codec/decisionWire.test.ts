// The decision's writer (pbf, generated) against its reader (protobufjs, generated): every field
// of the .proto written, read back as written, whatever the values and whatever was encoded before.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseConfluentFrame } from "../../../src/codec/confluent.js";
import { decodeDecisionRecord, encodeDecisionRecord } from "../../../src/codec/decisionRecord.js";
import {
  Action,
  Decision,
  decodeDecisionPayload,
  encodeDecisionPayload,
  FallbackCause,
  type DecisionInit,
} from "../../../src/codec/messages.js";

/** Every field set, none to its default. */
const full: DecisionInit = {
  transactionId: "tx-0001-é",
  cardId: "card-🂡-42",
  action: Action.ACTION_DECLINE,
  score: 0.8125,
  reasonCodes: ["R_VELOCITY_1H", "amount_z", "new_merchant"],
  modelVersion: "1.1.0",
  rulesVersion: "2026-11-01",
  fallback: true,
  fallbackCause: FallbackCause.FALLBACK_CAUSE_TIMEOUT,
  eventTimeMs: 4_102_444_800_123,
  decidedAtMs: 4_102_444_800_456,
  timings: {
    queueUs: 12_345,
    decodeUs: 3,
    stateReadUs: 900,
    featuresUs: 60,
    modelUs: 300,
    policyUs: 50,
    stateWriteUs: 250,
    totalUs: 4_294_967_295,
  },
  featureSchemaVersion: "fs-3",
};

const asRead = (d: DecisionInit) => Decision.toObject(Decision.fromObject(d), { defaults: true });
const readBack = (payload: Uint8Array) => {
  const decoded = decodeDecisionPayload(payload);
  if (!decoded.ok) throw new Error(decoded.error.message);
  return Decision.toObject(decoded.value, { defaults: true });
};

describe("a decision's payload", () => {
  it("writes every field of the .proto, and each reads back as written", () => {
    const fields = Object.keys(Decision.toObject(Decision.create(), { defaults: true }));
    expect(Object.keys(full).sort()).toEqual(fields.sort());
    expect(readBack(encodeDecisionPayload(full))).toEqual(asRead(full));
  });

  it("reads back as protobufjs's own encoding does, for any decision", () => {
    const us = fc.integer({ min: 0, max: 0xffff_ffff });
    const text = fc.string({ unit: "grapheme", maxLength: 40 });
    const decision = fc.record(
      {
        transactionId: text,
        cardId: text,
        action: fc.constantFrom(...Object.values(Action).filter((v) => typeof v === "number")),
        // -0 reads back as 0: proto3 leaves a zero out, and pbf takes -0 for one (a score is a
        // probability, never -0).
        score: fc.float({ noNaN: true }).map((x) => (Object.is(x, -0) ? 0 : x)),
        reasonCodes: fc.array(text, { maxLength: 6 }),
        modelVersion: text,
        rulesVersion: text,
        fallback: fc.boolean(),
        fallbackCause: fc.constantFrom(...Object.values(FallbackCause).filter((v) => typeof v === "number")),
        eventTimeMs: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        decidedAtMs: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        timings: fc.record({
          queueUs: us,
          decodeUs: us,
          stateReadUs: us,
          featuresUs: us,
          modelUs: us,
          policyUs: us,
          stateWriteUs: us,
          totalUs: us,
        }),
        featureSchemaVersion: text,
      },
      { requiredKeys: ["transactionId"] },
    );
    fc.assert(
      fc.property(decision, (d) => {
        expect(readBack(encodeDecisionPayload(d))).toEqual(readBack(Decision.encode(d).finish()));
      }),
      { numRuns: 500 },
    );
  });

  it("is its own copy: a later, shorter decision leaves an earlier payload as it was", () => {
    const long = encodeDecisionPayload(full);
    const kept = Buffer.from(long);
    const short = encodeDecisionPayload({ transactionId: "t" });
    expect(Buffer.from(long)).toEqual(kept);
    expect(readBack(short)).toEqual(asRead({ transactionId: "t" }));
  });
});

describe("a decision record", () => {
  it("is the Confluent frame (schema id, message index [0]) around the payload, and reads back", () => {
    const record = encodeDecisionRecord(full, 77);
    const frame = parseConfluentFrame(record);
    expect(frame).toMatchObject({ ok: true, value: { schemaId: 77, messageIndexes: [0] } });
    expect(Buffer.from(frame.ok ? frame.value.payload : [])).toEqual(
      Buffer.from(encodeDecisionPayload(full)),
    );
    const decoded = decodeDecisionRecord(record);
    expect(decoded.ok && Decision.toObject(decoded.value, { defaults: true })).toEqual(asRead(full));
  });
});
