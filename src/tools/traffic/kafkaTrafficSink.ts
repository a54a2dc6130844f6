// The load generator's only Kafka calls, through the product's Kafka port (the client library
// stays in src/stream/kafka/). The port's sink is the product's one producer: idempotent,
// acks=all, publishes made while one is in flight merged into the next request. A load generator would get by with less, but measuring
// the scorer against the producer it really runs keeps the bench honest, and partitions are
// still chosen by the generator (see cardRouting.ts).
import type { KafkaPort, OutgoingRecord } from "../../stream/kafkaPort.js";
import { TrafficSinkError, type TrafficRecord, type TrafficSink } from "./trafficSink.js";

export interface KafkaTrafficSinkOptions {
  readonly kafka: KafkaPort;
  readonly topic: string;
}

/**
 * A payment gateway buffers and retries while Kafka is away rather than drop payments; so does
 * the generator, for as long as Kafka's own producers do by default (delivery.timeout.ms). Its
 * records are timestamped with their scheduled time, so the wait shows up as latency.
 */
const RETRY_FOR_MS = 120_000;

export async function openKafkaTrafficSink({ kafka, topic }: KafkaTrafficSinkOptions): Promise<TrafficSink> {
  const partitions = await partitionCount(kafka, topic);
  const sink = kafka.sink({ retryForMs: RETRY_FOR_MS });
  // Before the schedule's clock starts: a record is stamped with its scheduled time, so the first
  // ones would otherwise carry the producers' connecting and their ids as latency.
  await sink.warm([topic]).catch(async (err: unknown) => {
    await sink.close().catch(() => {});
    throw new TrafficSinkError(
      "unreachable",
      `cannot prepare to publish to Kafka: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  });
  return {
    description: `Kafka topic ${topic} (${partitions} partitions, idempotent, acks=all)`,
    partitions,
    send: async (records: readonly TrafficRecord[]) => {
      const outgoing: OutgoingRecord[] = new Array(records.length);
      for (let i = 0; i < records.length; i++) {
        const r = records[i]!;
        outgoing[i] = {
          topic,
          partition: r.partition,
          key: r.key,
          value: r.value,
          timestampMs: r.timestampMs,
        };
      }
      try {
        await sink.publish(outgoing);
      } catch (err) {
        throw new TrafficSinkError("unreachable", `cannot publish to Kafka: ${(err as Error).message}`, {
          cause: err,
        });
      }
    },
    close: () => sink.close(),
  };
}

/** Sending to a missing topic would only retry until every send failed: it is refused up front. */
async function partitionCount(kafka: KafkaPort, topic: string): Promise<number> {
  const admin = kafka.admin();
  try {
    if (!(await admin.listTopics()).includes(topic))
      throw new TrafficSinkError(
        "topic_missing",
        `topic "${topic}" does not exist; create it or pick another (the stack has "transactions")`,
      );
    return (await admin.partitionCounts([topic])).get(topic)!;
  } catch (err) {
    if (err instanceof TrafficSinkError) throw err;
    throw new TrafficSinkError("unreachable", `cannot reach Kafka: ${(err as Error).message}`, {
      cause: err,
    });
  } finally {
    await admin.close().catch(() => {});
  }
}
