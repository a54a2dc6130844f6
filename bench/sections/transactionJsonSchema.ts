// The foil of the decode benchmark: a Transaction as JSON (camelCase keys, enum names, int64 as
// numbers: what a REST-era payment API sends) and a JSON Schema that demands what
// src/ingest/validateTransaction.ts demands of the Protobuf message. Compiled once by ajv, as a
// careful JSON service would.
import { Channel } from "../../src/codec/messages.js";

const CHANNELS = Object.keys(Channel).filter((name) => name !== "CHANNEL_UNSPECIFIED");
const text = (maxLength: number) => ({ type: "string", maxLength });
const geoPoint = {
  type: "object",
  additionalProperties: false,
  properties: {
    latE1: { type: "integer", minimum: -900, maximum: 900 },
    lonE1: { type: "integer", minimum: -1800, maximum: 1800 },
  },
} as const;

export const TRANSACTION_JSON_SCHEMA = {
  $id: "https://fraud-scorer.example/schemas/transaction.json",
  type: "object",
  additionalProperties: false,
  required: ["transactionId", "cardId", "amountMinor", "currency", "merchantId", "channel", "eventTimeMs"],
  properties: {
    transactionId: { type: "string", minLength: 1, maxLength: 128 },
    cardId: { type: "string", minLength: 1, maxLength: 128 },
    amountMinor: { type: "integer", minimum: 1, maximum: 1_000_000_000_000 },
    currency: { type: "string", pattern: "^[A-Z]{3}$" },
    merchantId: { type: "string", minLength: 1, maxLength: 128 },
    mcc: { type: "integer", minimum: 0, maximum: 9999 },
    merchantCountry: { type: "string", pattern: "^(?:[A-Z]{2})?$" },
    cardCountry: { type: "string", pattern: "^(?:[A-Z]{2})?$" },
    channel: { enum: CHANNELS },
    deviceId: text(128),
    ip: text(64),
    eventTimeMs: { type: "integer", minimum: 946_684_800_000, maximum: 4_102_444_800_000 },
    bin: text(16),
    merchantLocation: geoPoint,
    cardHomeLocation: geoPoint,
    cardUtcOffsetMinutes: { type: "integer", minimum: -720, maximum: 840 },
    hashes: {
      type: "object",
      additionalProperties: false,
      properties: Object.fromEntries(
        ["merchant", "device", "ipPrefix", "bin"].map((k) => [k, { type: "integer", minimum: 0 }]),
      ),
    },
  },
} as const;
