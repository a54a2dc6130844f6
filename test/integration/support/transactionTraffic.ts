// Deterministic test traffic: `count` transactions over `cards` cards, each card's
// transactions in time order, produced one per record keyed by card id (delimited framing).
import { setTimeout as sleep } from "node:timers/promises";
import { chaosPort } from "../../../chaos/runTopics.js";
import { readWholeTopic } from "../../../chaos/topicReader.js";
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

/**
 * Publishes the transactions, then waits until the decisions topic holds one record per
 * transaction or `timeoutMs` pass (the caller's audit says what is missing). Call it once the
 * scorer is ready: records older than the budget would be decided by the rules.
 */
export async function publishAndAwaitDecisions(
  brokers: string,
  topics: { readonly transactions: string; readonly decisions: string },
  txs: readonly Transaction[],
  { timeoutMs = 60_000, idleMs = 1_000 } = {},
): Promise<void> {
  const sink = chaosPort(brokers).sink();
  try {
    await produceTransactions(sink, topics.transactions, txs);
  } finally {
    await sink.close();
  }
  const deadline = Date.now() + timeoutMs;
  let decided = 0;
  while (decided < txs.length && Date.now() < deadline) {
    await sleep(1_000);
    decided = (await readWholeTopic(brokers, topics.decisions, { idleMs })).length;
  }
}
