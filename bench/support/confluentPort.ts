// The Kafka port on Confluent's librdkafka client (@confluentinc/kafka-javascript, its KafkaJS-
// compatible API), for the bench's client comparison only, and only when one has been built
// outside the repository: it is a native build (minutes) and never one of the project's
// dependencies. Point BENCH_CONFLUENT_KAFKA_DIR at the folder it was installed into, e.g.
//   mkdir /tmp/rdk && cd /tmp/rdk && npm install --ignore-scripts @confluentinc/kafka-javascript
//   cd node_modules/@confluentinc/kafka-javascript && CKJS_LINKING=dynamic \
//     node-gyp rebuild --nodedir=<Node 22 with include/> -j 1
// (-j 1: the generated makefile races its own configure step with parallel jobs).
// Configured as the other candidates: idempotent acks=all producer, batches of up to 1,000 records
// handed over per partition (the API's default is 32), manual commits.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type {
  GroupSourceOptions,
  KafkaPort,
  OutgoingRecord,
  PartitionOffset,
  RecordSink,
  RecordSource,
} from "../../src/stream/kafkaPort.js";

export const CONFLUENT_DIR_VARIABLE = "BENCH_CONFLUENT_KAFKA_DIR";
const PACKAGE = "@confluentinc/kafka-javascript";

// The few shapes used here, so the bench compiles without the package installed.
interface BatchMessage {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
}
interface ConfluentConsumer {
  connect(): Promise<void>;
  subscribe(s: { topics: string[] }): Promise<void>;
  run(r: {
    partitionsConsumedConcurrently: number;
    eachBatch: (p: {
      batch: { topic: string; partition: number; messages: BatchMessage[] };
    }) => Promise<void>;
  }): Promise<void>;
  commitOffsets(o: { topic: string; partition: number; offset: string }[]): Promise<void>;
  pause(t: { topic: string }[]): void;
  resume(t: { topic: string }[]): void;
  disconnect(): Promise<void>;
}
interface ConfluentProducer {
  connect(): Promise<void>;
  sendBatch(b: {
    topicMessages: { topic: string; messages: { key: Buffer | string | null; value: Buffer | null }[] }[];
  }): Promise<unknown>;
  disconnect(): Promise<void>;
}
interface ConfluentKafka {
  consumer(config: Record<string, unknown>): ConfluentConsumer;
  producer(config: Record<string, unknown>): ConfluentProducer;
}
interface ConfluentModule {
  KafkaJS: { Kafka: new (config: Record<string, unknown>) => ConfluentKafka; logLevel: { NOTHING: number } };
  librdkafkaVersion?: string;
}

/** The candidate, or why there is none. */
export async function loadConfluentPort(
  brokers: readonly string[],
  dir = process.env[CONFLUENT_DIR_VARIABLE],
): Promise<{ label: string; port: () => KafkaPort } | string> {
  if (dir === undefined || dir === "")
    return `${CONFLUENT_DIR_VARIABLE} not set (see bench/support/confluentPort.ts)`;
  if (!existsSync(join(dir, "node_modules", PACKAGE))) return `${PACKAGE} not installed in ${dir}`;
  let module: ConfluentModule;
  try {
    module = createRequire(join(dir, "package.json"))(PACKAGE) as ConfluentModule;
  } catch (error) {
    return `${PACKAGE} in ${dir} does not load: ${(error as Error).message}`;
  }
  const version = (createRequire(join(dir, "package.json"))(`${PACKAGE}/package.json`) as { version: string })
    .version;
  const label = `${PACKAGE} ${version} (librdkafka ${module.librdkafkaVersion ?? "?"}, KafkaJS API)`;
  return { label, port: () => confluentPort(module, brokers) };
}

function confluentPort(module: ConfluentModule, brokers: readonly string[]): KafkaPort {
  const kafka = new module.KafkaJS.Kafka({
    kafkaJS: {
      brokers: [...brokers],
      clientId: "bench-confluent",
      logLevel: module.KafkaJS.logLevel.NOTHING,
    },
  });
  const unsupported = (what: string) => () => {
    throw new Error(`${what} is not offered by the bench's Confluent adapter`);
  };
  return {
    groupSource: (options) => confluentSource(kafka, options),
    sink: () => confluentSink(kafka),
    topicReader: unsupported("topicReader"),
    transactionalSink: unsupported("transactionalSink"),
    admin: unsupported("admin"),
  };
}

function confluentSource(kafka: ConfluentKafka, options: GroupSourceOptions): RecordSource {
  const consumer = kafka.consumer({
    kafkaJS: {
      groupId: options.groupId,
      fromBeginning: true,
      autoCommit: false,
      maxWaitTimeInMs: options.maxWaitMs ?? 250,
    },
    "js.consumer.max.batch.size": 1_000,
  });
  let joined = false;
  return {
    async start(handler) {
      await consumer.connect();
      await consumer.subscribe({ topics: [...options.topics] });
      await consumer.run({
        partitionsConsumedConcurrently: 12,
        eachBatch: async ({ batch }) => {
          if (batch.messages.length === 0) return;
          // The API has no join event worth the name: the first batch stands in for it.
          if (!joined) {
            joined = true;
            options.onEvent?.({ type: "joined", memberId: "", assigned: [] });
          }
          await handler([
            {
              topic: batch.topic,
              partition: batch.partition,
              records: batch.messages.map((m) => ({
                topic: batch.topic,
                partition: batch.partition,
                offset: Number(m.offset),
                timestampMs: Number(m.timestamp),
                key: m.key,
                value: m.value,
                headers: {},
              })),
            },
          ]);
        },
      });
    },
    async commit(offsets: readonly PartitionOffset[]) {
      await consumer.commitOffsets(offsets.map((o) => ({ ...o, offset: String(o.offset) })));
    },
    pause: () => consumer.pause(options.topics.map((topic) => ({ topic }))),
    resume: () => consumer.resume(options.topics.map((topic) => ({ topic }))),
    close: () => consumer.disconnect(),
  };
}

function confluentSink(kafka: ConfluentKafka): RecordSink {
  const producer = kafka.producer({ kafkaJS: { idempotent: true, acks: -1, allowAutoTopicCreation: false } });
  const connected = producer.connect();
  return {
    async publish(records: readonly OutgoingRecord[]) {
      if (records.length === 0) return;
      await connected;
      const byTopic = new Map<string, { key: Buffer | string | null; value: Buffer | null }[]>();
      for (const r of records) {
        let list = byTopic.get(r.topic);
        if (list === undefined) byTopic.set(r.topic, (list = []));
        list.push({ key: r.key, value: r.value });
      }
      await producer.sendBatch({
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      });
    },
    async close() {
      await connected.catch(() => undefined);
      await producer.disconnect();
    },
  };
}
