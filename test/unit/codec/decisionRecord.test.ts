import { describe, expect, it } from "vitest";
import { encodeConfluentFrame } from "../../../src/codec/confluent.js";
import { decodeDecisionRecord, encodeDecisionRecord } from "../../../src/codec/decisionRecord.js";
import { Action } from "../../../src/codec/messages.js";

const record = (payload: Uint8Array) => encodeConfluentFrame({ schemaId: 12, messageIndexes: [0], payload });

describe("a decision record", () => {
  it("reads back the Decision the scorer framed (encodeDecisionRecord)", () => {
    const decoded = decodeDecisionRecord(
      encodeDecisionRecord({ transactionId: "tx-1", cardId: "c-1", action: Action.ACTION_DECLINE }, 12),
    );
    expect(decoded).toMatchObject({
      ok: true,
      value: { transactionId: "tx-1", cardId: "c-1", action: Action.ACTION_DECLINE },
    });
  });

  it("is an empty_record error when the record has no value (a tombstone)", () => {
    expect(decodeDecisionRecord(null)).toMatchObject({ ok: false, error: { kind: "empty_record" } });
  });

  it("keeps the framing error's kind when the record is not Confluent-framed", () => {
    expect(decodeDecisionRecord(Buffer.from([7, 0, 0, 0, 1, 0]))).toMatchObject({
      ok: false,
      error: { kind: "bad_magic_byte", byteOffset: 0 },
    });
  });

  it("is malformed_message when the payload is not a Decision", () => {
    expect(decodeDecisionRecord(record(Buffer.from([0x0a, 0x50, 0x01])))).toMatchObject({
      ok: false,
      error: { kind: "malformed_message" },
    });
  });
});
