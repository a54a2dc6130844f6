// The topic reader of the bench's and the fault suite's audits, on kafkajs (a devDependency),
// because the audits measure latency to a decision's broker append time and the port's own
// reader cannot see it: @platformatic/kafka 2.12 stamps every record with the batch's
// firstTimestamp + the record's delta and ignores the batch's LogAppendTime flag, so on a
// LogAppendTime topic it reports the CreateTime the writer's producer set, one produce leg
// before the append. kafkajs applies Kafka's rule (every record of a LogAppendTime batch carries
// the batch's maxTimestamp, the broker's append time); on a CreateTime topic both agree.
// Only the port's topicReader is offered: that is all followDecisions and readWholeTopic ask for.
import { randomUUID } from "node:crypto";
import { Kafka, logLevel, type IHeaders, type KafkaMessage } from "kafkajs";
import type {
  BatchHandler,
  ConsumedRecord,
  KafkaPort,
  RecordSource,
  TopicReadOptions,
} from "../../src/stream/kafkaPort.js";
import { reportGroupEvents } from "./kafkajsPort.js";

export function appendTimeReaderPort(brokers: string, label = "audit"): KafkaPort {
  const kafka = new Kafka({
    clientId: `${label}-${randomUUID().slice(0, 8)}`,
    brokers: brokers.split(","),
    logLevel: logLevel.NOTHING,
  });
  const unoffered = (what: string) => () => {
    throw new Error(`${what} is not offered by the audits' append-time reader (it only reads topics)`);
  };
  return {
    groupSource: unoffered("groupSource"),
    sink: unoffered("sink"),
    transactionalSink: unoffered("transactionalSink"),
    admin: unoffered("admin"),
    topicReader: (options) => topicReader(kafka, options),
  };
}

function topicReader(kafka: Kafka, options: TopicReadOptions): RecordSource {
  if (typeof options.from !== "string")
    throw new Error("the append-time reader starts at the earliest or latest offset only");
  // kafkajs reads through a group only; a fresh group of its own that never commits leaves no
  // one's offsets moved, as the port's group-less reader would.
  const consumer = kafka.consumer({
    groupId: `audit-reader-${randomUUID()}`,
    allowAutoTopicCreation: false,
    maxWaitTimeInMs: options.maxWaitMs ?? 100,
    readUncommitted: options.isolation === "read_uncommitted",
  });
  reportGroupEvents(consumer, options.onEvent);
  return {
    async start(handler: BatchHandler) {
      await consumer.connect();
      await consumer.subscribe({ topics: [options.topic], fromBeginning: options.from === "earliest" });
      await consumer.run({
        autoCommit: false,
        // One batch at a time, as the port's reader hands them over: audits keep offset order.
        partitionsConsumedConcurrently: 1,
        eachBatch: async ({ batch }) => {
          if (batch.messages.length === 0) return;
          await handler([
            {
              topic: batch.topic,
              partition: batch.partition,
              records: batch.messages.map((m) => consumedRecord(batch.topic, batch.partition, m)),
            },
          ]);
        },
      });
    },
    commit: async () => {},
    pause: () => consumer.pause([{ topic: options.topic }]),
    resume: () => consumer.resume([{ topic: options.topic }]),
    close: () => consumer.disconnect(),
  };
}

function consumedRecord(topic: string, partition: number, m: KafkaMessage): ConsumedRecord {
  return {
    topic,
    partition,
    offset: Number(m.offset),
    timestampMs: Number(m.timestamp),
    key: m.key,
    value: m.value,
    headers: bufferHeaders(m.headers),
  };
}

/** A header sent twice keeps its last value, as the port's reader does. */
function bufferHeaders(headers: IHeaders | undefined): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const [key, value] of Object.entries(headers ?? {})) {
    const last = Array.isArray(value) ? value.at(-1) : value;
    if (last !== undefined) out[key] = Buffer.isBuffer(last) ? last : Buffer.from(last);
  }
  return out;
}
