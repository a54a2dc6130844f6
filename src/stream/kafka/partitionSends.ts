// One producer send per partition. @platformatic/kafka 2.12 groups a send's messages by their
// partitions' leaders and, when a request fails, retries the whole group against the current
// leader of its FIRST message's partition (producer.js #performSingleDestinationSend). Once a
// broker dies its partitions get new leaders on different brokers, so the retried group always
// holds partitions the chosen broker does not lead: NOT_LEADER_OR_FOLLOWER until the retries run
// out (three-brokers: 829 decisions refused, a partition stalled 113 s). A send of one partition
// has one leader to follow, and the client's own retries keep its producer id and sequence
// numbers, so the broker drops what an earlier attempt had already written. Resending at this
// level instead would duplicate: a failed send resets the idempotent producer's id.
// The cost: the idempotent producer has one request in flight per broker connection, so a
// publish spanning n partitions of one broker takes up to n round trips instead of one; the sink
// therefore sends this way only after a send failed on a stale leader (platformaticSink.ts).
import type { MessageToProduce, Producer } from "@platformatic/kafka";
import { keyPartitioner } from "./keyPartitioner.js";

type Message = MessageToProduce<Buffer, Buffer, Buffer, Buffer>;

/** Sends `messages` (keyed partitioning as the producer's, keyPartitioner.ts) one partition per request; rejects with the first failure once every request has settled. */
export async function sendByPartition(
  producer: Producer<Buffer, Buffer, Buffer, Buffer>,
  messages: readonly Message[],
): Promise<void> {
  const metadata = await producer.metadata({ topics: [...new Set(messages.map((m) => m.topic))] });
  const byPartition = new Map<string, Message[]>();
  for (const message of messages) {
    const topic = metadata.topics.get(message.topic);
    if (topic === undefined) throw new Error(`no metadata for topic ${message.topic}`);
    const partition = (message.partition ?? keyPartitioner(message, message.key)) % topic.partitionsCount;
    const destination = `${message.topic}:${partition}`;
    let group = byPartition.get(destination);
    if (group === undefined) byPartition.set(destination, (group = []));
    group.push({ ...message, partition });
  }
  // Settled, not raced: the caller's next request must not overtake one still in flight.
  const sent = await Promise.allSettled(
    [...byPartition.values()].map((group) => producer.send({ messages: group })),
  );
  for (const s of sent) if (s.status === "rejected") throw s.reason;
}
