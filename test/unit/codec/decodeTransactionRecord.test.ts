import { describe, expect, it } from "vitest";
import { encodeConfluentFrame } from "../../../src/codec/confluent.js";
import { joinDelimitedFrames } from "../../../src/codec/delimited.js";
import { encodeTransactionPayload, type TransactionInit } from "../../../src/codec/messages.js";
import { decodeTransactionRecord } from "../../../src/ingest/decodeTransactionRecord.js";
import { sampleTransaction } from "../../support/transactions.js";

const options = { transactionSchemaIds: new Set([11]) };
const delimited = (...txs: TransactionInit[]) =>
  joinDelimitedFrames(txs.map((t) => encodeTransactionPayload(t)));
const decodeOne = (overrides: Partial<TransactionInit>) =>
  decodeTransactionRecord(delimited(sampleTransaction(overrides)), options);

describe("a Kafka record value becomes validated transactions", () => {
  it("accepts one or many delimited transactions in a record", () => {
    const result = decodeTransactionRecord(
      delimited(sampleTransaction(), sampleTransaction({ transactionId: "tx-b", amountMinor: 99 })),
      options,
    );
    expect(result.ok && result.value.map(({ tx }) => [tx.transactionId, tx.amountMinor])).toEqual([
      ["tx-0001", 12_345],
      ["tx-b", 99],
    ]);
  });

  it("accepts a Confluent-framed transaction under a registered schema id", () => {
    const framed = encodeConfluentFrame({
      schemaId: 11,
      messageIndexes: [0],
      payload: encodeTransactionPayload(sampleTransaction()),
    });
    const result = decodeTransactionRecord(framed, options);
    expect(result.ok && result.value[0]!.tx.cardId).toBe("card-tok-42");
  });

  it("refuses a Confluent frame whose schema id is not a registered Transaction schema", () => {
    const framed = encodeConfluentFrame({
      schemaId: 12,
      messageIndexes: [0],
      payload: encodeTransactionPayload(sampleTransaction()),
    });
    expect(decodeTransactionRecord(framed, options)).toMatchObject({
      ok: false,
      error: { kind: "unknown_schema_id" },
    });
  });

  it.each([
    ["transaction_id", { transactionId: "" }],
    ["card_id", { cardId: "" }],
    ["merchant_id", { merchantId: "" }],
    ["currency", { currency: "" }],
    ["event_time_ms", { eventTimeMs: 0 }],
  ] as const)("names the missing required field %s", (field, overrides) => {
    expect(decodeOne(overrides)).toMatchObject({
      ok: false,
      error: { kind: "missing_required_field", field, frameIndex: 0 },
    });
  });

  it.each([
    ["amount_minor", { amountMinor: 0 }],
    ["amount_minor", { amountMinor: -5 }],
    ["currency", { currency: "euro" }],
    ["event_time_ms", { eventTimeMs: 1_795_000_000 }], // seconds, not milliseconds
    ["mcc", { mcc: 10_000 }],
    ["channel", { channel: 0 }],
    ["merchant_country", { merchantCountry: "Germany" }],
  ] as const)("names the out-of-range field %s", (field, overrides) => {
    expect(decodeOne(overrides)).toMatchObject({ ok: false, error: { kind: "value_out_of_range", field } });
  });

  it("points at the bad frame when one transaction of several is invalid", () => {
    const result = decodeTransactionRecord(
      delimited(sampleTransaction(), sampleTransaction({ cardId: "" })),
      options,
    );
    expect(result).toMatchObject({ ok: false, error: { frameIndex: 1, field: "card_id" } });
  });

  it("reports a payload that is not Protobuf as malformed", () => {
    const garbage = joinDelimitedFrames([Buffer.from([0x0a, 0x7f, 0x01])]);
    expect(decodeTransactionRecord(garbage, options)).toMatchObject({
      ok: false,
      error: { kind: "malformed_message" },
    });
  });
});

describe("protobufjs Buffer-reader leniency", () => {
  it("a string field running past the end of its frame is malformed, not silently truncated", () => {
    const payload = encodeTransactionPayload(sampleTransaction());
    const cut = Buffer.from(payload.subarray(0, 5)); // inside transaction_id
    const result = decodeTransactionRecord(joinDelimitedFrames([cut]), options);
    expect(result).toMatchObject({ ok: false, error: { kind: "malformed_message" } });
  });
});
