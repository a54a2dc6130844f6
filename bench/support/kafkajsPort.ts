// The Kafka port on kafkajs 2.2.4 (a devDependency), for the bench's client comparison only:
// the record source and the sink, configured as the scorer configured kafkajs before the port
// (eachBatch per partition, all partitions concurrently, idempotent producer with one request
// in flight). Admin, readers and transactions are not needed by the bench and not offered.
import { randomUUID } from "node:crypto";
import { CompressionTypes, Kafka, logLevel, Partitioners, type Consumer } from "kafkajs";
import type { GroupSourceOptions, KafkaPort, RecordSink, RecordSource } from "../../src/stream/kafkaPort.js";
import { kafkajsApiSink, kafkajsApiSource, unofferedPortParts } from "./kafkajsApiPort.js";

export function createKafkajsPort(brokers: readonly string[]): KafkaPort {
  const kafka = new Kafka({
    clientId: `bench-kafkajs-${randomUUID().slice(0, 8)}`,
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  });
  return {
    groupSource: (options) => kafkajsSource(kafka, options),
    sink: () => kafkajsSink(kafka),
    ...unofferedPortParts("kafkajs"),
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
  reportGroupEvents(consumer, options.onEvent);
  return kafkajsApiSource(consumer, options, {
    subscribe: { fromBeginning: true },
    run: { autoCommit: false },
  });
}

/** A kafkajs consumer's joins and crashes as the port's group events. */
export function reportGroupEvents(consumer: Consumer, onEvent: GroupSourceOptions["onEvent"]): void {
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) =>
    onEvent?.({
      type: "joined",
      memberId: payload.memberId,
      assigned: Object.entries(payload.memberAssignment).flatMap(([topic, partitions]) =>
        partitions.map((partition) => ({ topic, partition })),
      ),
    }),
  );
  consumer.on(consumer.events.CRASH, ({ payload }) => onEvent?.({ type: "crashed", error: payload.error }));
}

function kafkajsSink(kafka: Kafka): RecordSink {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  return kafkajsApiSink(producer, { acks: -1, compression: CompressionTypes.None });
}
