// Deterministic test traffic: `count` transactions over `cards` cards, each card's
// transactions in time order, produced one per record keyed by card id (delimited framing).
import type { RecordSink } from "../../../src/stream/kafkaPort.js";
import { joinDelimitedFrames } from "../../../src/codec/delimited.js";
import { Channel, encodeTransactionPayload, Transaction } from "../../../src/codec/messages.js";

export function makeTransactions(
  count: number,
  { cards = 200, startMs = Date.now() - 3_600_000, prefix = "t" } = {},
) {
  const txs: Transaction[] = [];
  for (let i = 0; i < count; i++) {
    const card = i % cards;
    txs.push(
      Transaction.create({
        transactionId: `${prefix}-${i}`,
        cardId: `card-${prefix}-${card}`,
        amountMinor: 500 + ((i * 7919) % 25_000),
        currency: "EUR",
        merchantId: `m-${(i * 31) % 97}`,
        mcc: [5411, 5812, 5999, 5732, 4111][i % 5]!,
        merchantCountry: i % 13 === 0 ? "FR" : "DE",
        cardCountry: "DE",
        channel: [Channel.CHANNEL_CONTACTLESS, Channel.CHANNEL_ECOMMERCE, Channel.CHANNEL_CARD_PRESENT][
          i % 3
        ]!,
        deviceId: i % 3 === 1 ? `dev-${prefix}-${card}` : "",
        ip: i % 3 === 1 ? `10.1.${card % 250}.${i % 250}` : "",
        eventTimeMs: startMs + i * 100,
      }),
    );
  }
  return txs;
}

export const delimitedRecord = (tx: Transaction): Buffer =>
  joinDelimitedFrames([encodeTransactionPayload(tx)]);

export async function produceTransactions(
  producer: RecordSink,
  topic: string,
  txs: readonly Transaction[],
  chunk = 500,
) {
  for (let i = 0; i < txs.length; i += chunk) {
    await producer.publish(
      txs.slice(i, i + chunk).map((tx) => ({ topic, key: tx.cardId, value: delimitedRecord(tx) })),
    );
  }
}
