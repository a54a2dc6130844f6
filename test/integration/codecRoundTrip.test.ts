// Both framings through the real broker, with the contract registered in the real registry.
import { describe, expect, it } from "vitest";
import { encodeConfluentFrame } from "../../src/codec/confluent.js";
import { joinDelimitedFrames } from "../../src/codec/delimited.js";
import { encodeTransactionPayload } from "../../src/codec/messages.js";
import { DECISION_TYPE, SchemaRegistry, TRANSACTION_TYPE } from "../../src/codec/schemaRegistry.js";
import { decodeTransactionRecord } from "../../src/ingest/decodeTransactionRecord.js";
import { testEndpoints } from "./endpoints.js";
import { TopicCollector } from "./support/decisionsCollector.js";
import { createTestTopics, testKafka } from "./support/kafkaTestTopics.js";
import { makeTransactions } from "./support/transactionTraffic.js";

const endpoints = testEndpoints();

describe("framings through Kafka and the schema registry", () => {
  it("registers both contract schemas, idempotently, and resolves their ids to the right messages", async () => {
    const registry = new SchemaRegistry({ url: endpoints.schemaRegistryUrl });
    const first = await registry.registerContracts({
      transactionsTopic: "rt-transactions",
      decisionsTopic: "rt-decisions",
    });
    const again = await registry.registerContracts({
      transactionsTopic: "rt-transactions",
      decisionsTopic: "rt-decisions",
    });
    expect(again).toEqual(first);
    expect(first.transactionSchemaId).not.toBe(first.decisionSchemaId);
    expect(await registry.firstMessageType(first.transactionSchemaId)).toBe(TRANSACTION_TYPE);
    expect(await registry.firstMessageType(first.decisionSchemaId)).toBe(DECISION_TYPE);
    expect(await registry.firstMessageType(987_654_321)).toBeUndefined();
  });

  it("answers a burst of lookups, unknown ids among them and the same id many times, every one right", async () => {
    const registry = new SchemaRegistry({ url: endpoints.schemaRegistryUrl });
    const { transactionSchemaId } = await registry.registerContracts({
      transactionsTopic: "rt-transactions",
      decisionsTopic: "rt-decisions",
    });
    // More at once than the registry client sends at a time: the rest wait for a slot.
    const ids = [
      ...Array.from({ length: 40 }, (_, i) => 900_000_000 + i),
      ...Array.from({ length: 20 }, () => transactionSchemaId),
      ...Array.from({ length: 20 }, () => 900_000_000),
    ];
    const names = await Promise.all(ids.map((id) => registry.firstMessageType(id)));
    names.forEach((name, i) =>
      expect(name, `schema id ${ids[i]}`).toBe(ids[i] === transactionSchemaId ? TRANSACTION_TYPE : undefined),
    );
  });

  it("delimited and Confluent-framed records produced through the Kafka port read back as the same transactions", async () => {
    const topics = await createTestTopics(endpoints.kafkaBrokers, "framing", 1);
    const registry = new SchemaRegistry({ url: endpoints.schemaRegistryUrl });
    const { transactionSchemaId } = await registry.registerContracts({
      transactionsTopic: topics.transactions,
    });
    const txs = makeTransactions(4, { cards: 1, prefix: "framing" });
    const delimited = joinDelimitedFrames(txs.slice(0, 3).map((t) => encodeTransactionPayload(t)));
    const confluent = encodeConfluentFrame({
      schemaId: transactionSchemaId,
      messageIndexes: [0],
      payload: encodeTransactionPayload(txs[3]!),
    });
    const producer = testKafka(endpoints.kafkaBrokers).sink();
    await producer.publish([
      { topic: topics.transactions, key: txs[0]!.cardId, value: delimited },
      { topic: topics.transactions, key: txs[3]!.cardId, value: confluent },
    ]);
    await producer.close();

    const collector = new TopicCollector(endpoints.kafkaBrokers, topics.transactions);
    await collector.start();
    try {
      await collector.waitFor(() => collector.records.length >= 2, 30_000, "both records");
    } finally {
      await collector.stop();
    }
    const options = { transactionSchemaIds: new Set([transactionSchemaId]) };
    const decoded = collector.records.flatMap((r) => {
      const result = decodeTransactionRecord(r.value, options);
      return result.ok ? result.value.map(({ tx }) => tx.toJSON()) : [result.error.kind];
    });
    expect(decoded).toEqual(txs.map((t) => t.toJSON()));
  });
});
