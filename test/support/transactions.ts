// Small builders for valid transactions in tests.
import { fraud } from "../../src/codec/generated/fraud.js";
import { Channel, Transaction, type TransactionInit } from "../../src/codec/messages.js";

export function sampleTransaction(overrides: Partial<TransactionInit> = {}): Transaction {
  return Transaction.create({
    transactionId: "tx-0001",
    cardId: "card-tok-42",
    amountMinor: 12_345,
    currency: "EUR",
    merchantId: "m-coffee-7",
    mcc: 5814,
    merchantCountry: "DE",
    cardCountry: "DE",
    channel: Channel.CHANNEL_CONTACTLESS,
    deviceId: "",
    ip: "",
    eventTimeMs: 1_795_000_000_000,
    ...overrides,
  });
}

/** Monday 2025-01-06 12:00 UTC: the feature tests' clock. */
export const FEATURE_T0 = Date.UTC(2025, 0, 6, 12, 0, 0);

/** A card-present grocery payment at FEATURE_T0, as the feature tests' plain message. */
export const featureTransaction = (over: Partial<fraud.v1.ITransaction> = {}): fraud.v1.ITransaction => ({
  transactionId: "t1",
  cardId: "card-1",
  amountMinor: 2500,
  currency: "EUR",
  merchantId: "m-1",
  mcc: 5411,
  merchantCountry: "DE",
  cardCountry: "DE",
  channel: fraud.v1.Channel.CHANNEL_CARD_PRESENT,
  deviceId: "",
  ip: "",
  eventTimeMs: FEATURE_T0,
  ...over,
});
