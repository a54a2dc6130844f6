// The services behind the integration tests are real: a broker that has the scorer's topics and
// keeps a consumer group's offsets (checked through the product's Kafka port), a Confluent-
// compatible registry that stores Protobuf schemas (checked with an independent client,
// @kafkajs/confluent-schema-registry, so the registry is not judged by our own codec), and
// Redis. If one of these fails, every other integration test is suspect.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { SchemaRegistry, SchemaType } from "@kafkajs/confluent-schema-registry";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createKafkaPort } from "../../src/stream/kafka/index.js";
import { STACK_TOPICS } from "../../stack/topics.js";
import { testEndpoints } from "./endpoints.js";

const endpoints = testEndpoints();
// The product's own port: what the stack must serve is what the scorer will ask of it.
const kafka = createKafkaPort({ clientId: "stack-test", brokers: endpoints.kafkaBrokers.split(",") });
const runId = randomUUID();

describe("Kafka", () => {
  const admin = kafka.admin();
  afterAll(() => admin.close());

  it("has the scorer's topics with the partition counts the contract fixes", async () => {
    const counts = await admin.partitionCounts(STACK_TOPICS.map(({ topic }) => topic));

    expect(Object.fromEntries(counts)).toEqual({
      transactions: 12,
      decisions: 12,
      "decisions.shadow": 12,
      "transactions.dlq": 3,
      "fraud-scorer.control": 1,
    });
  });

  it("delivers a produced record to a consumer group, which then commits past it", async () => {
    const topic = `stack-test-${runId}`;
    const groupId = `stack-test-${runId}`;
    await admin.createTopics([{ topic, numPartitions: 1 }]);
    const sink = kafka.sink();
    // A short fetch wait: closing waits for the fetch in flight.
    const source = kafka.groupSource({ topics: [topic], groupId, maxWaitMs: 100 });
    try {
      await sink.publish([{ topic, key: "card-1", value: Buffer.from(runId) }]);

      const received = await new Promise<{ key: string; value: string; offset: number }>(
        (resolve, reject) => {
          const timer = setTimeout(() => reject(new Error("no record within 60 s")), 60_000);
          source
            .start(async ([batch]) => {
              const record = batch!.records[0]!;
              await source.commit([{ topic, partition: record.partition, offset: record.offset + 1 }]);
              clearTimeout(timer);
              resolve({ key: String(record.key), value: String(record.value), offset: record.offset });
            })
            .catch(reject);
        },
      );
      const committed = await admin.committedOffsets(groupId, topic);

      expect(received).toEqual({ key: "card-1", value: runId, offset: 0 });
      expect(Object.fromEntries(committed)).toEqual({ 0: 1 });
    } finally {
      await source.close();
      await sink.close();
      await admin.deleteTopics([topic]);
    }
  });
});

describe("the schema registry", () => {
  const url = endpoints.schemaRegistryUrl;
  const registry = new SchemaRegistry({ host: url });

  it("stores a Protobuf schema and returns it by id through @kafkajs/confluent-schema-registry", async () => {
    // No `package` line: @kafkajs/confluent-schema-registry 3.6.1 looks packaged types up as
    // "pkg..Name" and fails ("no such type"); 3.9.0 fixes it. The registry itself takes either.
    const schema = 'syntax = "proto3";\nmessage StackProbe {\n  string id = 1;\n  int64 at_ms = 2;\n}\n';
    const { id } = await registry.register(
      { type: SchemaType.PROTOBUF, schema },
      { subject: `stack-test-${runId}-value` },
    );

    const fetched = await registry.getSchema(id);
    const stored = (await (await fetch(`${url}/schemas/ids/${id}`)).json()) as {
      schemaType?: string;
      schema?: string;
    };
    const encoded = await registry.encode(id, { id: runId, atMs: 5 });
    const decoded = (await registry.decode(encoded)) as { id?: string };

    expect(id).toBeGreaterThan(0);
    expect(fetched).toBeDefined();
    expect(stored.schemaType).toBe("PROTOBUF");
    expect(stored.schema).toContain("message StackProbe");
    expect(encoded.readUInt8(0)).toBe(0);
    expect(encoded.readInt32BE(1)).toBe(id);
    expect(decoded.id).toBe(runId);
  });

  it("accepts the fraud.v1 Transaction contract as a Protobuf schema", async () => {
    const schema = readFileSync(new URL("../../proto/fraud/v1/transaction.proto", import.meta.url), "utf8");
    const response = await fetch(`${url}/subjects/stack-test-${runId}-transactions-value/versions`, {
      method: "POST",
      headers: { "content-type": "application/vnd.schemaregistry.v1+json" },
      body: JSON.stringify({ schemaType: "PROTOBUF", schema }),
    });
    expect(response.status).toBe(200);
    const { id } = (await response.json()) as { id: number };

    const stored = (await (await fetch(`${url}/schemas/ids/${id}`)).json()) as {
      schemaType?: string;
      schema?: string;
    };

    expect(stored.schemaType).toBe("PROTOBUF");
    expect(stored.schema).toContain("message Transaction");
  });
});

describe("Redis", () => {
  const redis = new Redis(endpoints.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  afterAll(() => redis.quit());

  it("answers PING and keeps a value until it expires", async () => {
    const key = `stack-test:${runId}`;
    await redis.connect();

    expect(await redis.ping()).toBe("PONG");
    await redis.set(key, "kept", "PX", 10_000);
    expect(await redis.get(key)).toBe("kept");
    expect(await redis.pttl(key)).toBeGreaterThan(0);
    await redis.del(key);
  });
});
