// The load generator's only Kafka calls. Swapping the client means changing this module alone.
// A load generator wants throughput and an open loop, not delivery guarantees: no idempotence
// (it would allow one request in flight per partition and turn the sends into a closed loop
// behind the slowest request), acks=1 (the leader's append; on a single-node stack the same as
// all), no compression, partitions chosen by the generator (see cardRouting.ts), many sends in
// flight at once.
import { CompressionTypes, type Kafka, type Message } from "kafkajs";
import type { Logger } from "pino";
import { createKafka } from "../stream/kafkaClient.js";
import { TrafficSinkError, type TrafficRecord, type TrafficSink } from "./trafficSink.js";

/** The client the Kafka sink is built from (kafkajs today). */
export type TrafficKafkaClient = Kafka;

export interface KafkaTrafficSinkOptions {
  readonly kafka: TrafficKafkaClient;
  readonly topic: string;
}

const ACKS_LEADER = 1;

export async function openKafkaTrafficSink({ kafka, topic }: KafkaTrafficSinkOptions): Promise<TrafficSink> {
  const partitions = await partitionCount(kafka, topic);
  const producer = kafka.producer({
    allowAutoTopicCreation: false,
    idempotent: false,
    // Every record names its partition; kafkajs's default partitioner would still filter the
    // partition list once per record before looking.
    createPartitioner:
      () =>
      ({ message }) =>
        message.partition ?? 0,
  });
  try {
    await producer.connect();
  } catch (err) {
    throw new TrafficSinkError("unreachable", `cannot reach Kafka: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return {
    description: `Kafka topic ${topic} (${partitions} partitions, kafkajs, acks=1)`,
    partitions,
    send: async (records: readonly TrafficRecord[]) => {
      const messages: Message[] = new Array(records.length);
      for (let i = 0; i < records.length; i++) {
        const r = records[i]!;
        messages[i] = {
          partition: r.partition,
          key: r.key,
          value: r.value,
          timestamp: String(r.timestampMs),
        };
      }
      await producer.send({ topic, acks: ACKS_LEADER, compression: CompressionTypes.None, messages });
    },
    close: () => producer.disconnect(),
  };
}

/** Sending to a missing topic would only retry until every send failed: it is refused up front. */
async function partitionCount(kafka: TrafficKafkaClient, topic: string): Promise<number> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    if (!(await admin.listTopics()).includes(topic))
      throw new TrafficSinkError(
        "topic_missing",
        `topic "${topic}" does not exist; create it or pick another (the stack has "transactions")`,
      );
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    return topics[0]!.partitions.length;
  } catch (err) {
    if (err instanceof TrafficSinkError) throw err;
    throw new TrafficSinkError("unreachable", `cannot reach Kafka: ${(err as Error).message}`, {
      cause: err,
    });
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/** The client `fraud-scorer produce` opens its sink with. */
export const trafficKafkaClient = (brokers: readonly string[], logger: Logger): TrafficKafkaClient =>
  createKafka({ brokers, clientId: "fraud-scorer-produce", logger });
