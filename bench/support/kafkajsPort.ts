// The Kafka port on kafkajs 2.2.4 (a devDependency), for the bench's client comparison only:
// the record source and the sink, configured as the scorer configured kafkajs before the port
// (eachBatch per partition, all partitions concurrently, idempotent producer with one request
// in flight). Admin, readers and transactions are not needed by the bench and not offered.
import { randomUUID } from "node:crypto";
import { CompressionTypes, Kafka, logLevel, Partitioners } from "kafkajs";
import type {
  GroupSourceOptions,
  KafkaPort,
  OutgoingRecord,
  PartitionOffset,
  RecordSink,
  RecordSource,
} from "../../src/stream/kafkaPort.js";

export function createKafkajsPort(brokers: readonly string[]): KafkaPort {
  const kafka = new Kafka({
    clientId: `bench-kafkajs-${randomUUID().slice(0, 8)}`,
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  });
  const unsupported = (what: string) => () => {
    throw new Error(`${what} is not offered by the bench's kafkajs adapter`);
  };
  return {
    groupSource: (options) => kafkajsSource(kafka, options),
    sink: () => kafkajsSink(kafka),
    topicReader: unsupported("topicReader"),
    transactionalSink: unsupported("transactionalSink"),
    admin: unsupported("admin"),
  };
}

function kafkajsSource(kafka: Kafka, options: GroupSourceOptions): RecordSource {
  const consumer = kafka.consumer({
    groupId: options.groupId,
    allowAutoTopicCreation: false,
    maxWaitTimeInMs: options.maxWaitMs ?? 250,
    sessionTimeout: options.sessionTimeoutMs ?? 30_000,
    heartbeatInterval: 3_000,
  });
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) =>
    options.onEvent?.({
      type: "joined",
      memberId: payload.memberId,
      assigned: Object.entries(payload.memberAssignment).flatMap(([topic, partitions]) =>
        partitions.map((partition) => ({ topic, partition })),
      ),
    }),
  );
  consumer.on(consumer.events.CRASH, ({ payload }) =>
    options.onEvent?.({ type: "crashed", error: payload.error }),
  );
  return {
    async start(handler) {
      await consumer.connect();
      await consumer.subscribe({ topics: [...options.topics], fromBeginning: true });
      await consumer.run({
        partitionsConsumedConcurrently: 12,
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          if (batch.messages.length === 0) return;
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

function kafkajsSink(kafka: Kafka): RecordSink {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  const connected = producer.connect();
  return {
    async publish(records: readonly OutgoingRecord[]) {
      if (records.length === 0) return;
      await connected;
      await producer.sendBatch({
        acks: -1,
        compression: CompressionTypes.None,
        topicMessages: [...groupByTopic(records)].map(([topic, rs]) => ({
          topic,
          messages: rs.map((r) => ({ key: r.key, value: r.value })),
        })),
      });
    },
    async close() {
      await connected.catch(() => undefined);
      await producer.disconnect();
    },
  };
}

function groupByTopic(records: readonly OutgoingRecord[]): Map<string, OutgoingRecord[]> {
  const out = new Map<string, OutgoingRecord[]>();
  for (const r of records) {
    let list = out.get(r.topic);
    if (list === undefined) out.set(r.topic, (list = []));
    list.push(r);
  }
  return out;
}
