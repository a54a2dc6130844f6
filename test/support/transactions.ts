// Small builders for valid transactions in tests.
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
