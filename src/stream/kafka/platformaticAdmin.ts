// TopicAdmin over @platformatic/kafka's admin client.
import { Admin, ConfigResourceTypes, ListOffsetTimestamps } from "@platformatic/kafka";
import { KafkaPortError, type PartitionWatermarks, type TopicAdmin, type TopicSpec } from "../kafkaPort.js";
import { isTopicAlreadyExists } from "./clientErrorKind.js";

/**
 * Instances starting together each see a topic missing and create it; all but the first are
 * told it exists, which is what they wanted (a lost race, not a failure: it stopped start-up).
 */
async function existingIsFine(creating: Promise<unknown>): Promise<void> {
  try {
    await creating;
  } catch (err) {
    if (!isTopicAlreadyExists(err)) throw err;
  }
}

export class PlatformaticAdmin implements TopicAdmin {
  readonly #admin: Admin;

  constructor(admin: Admin) {
    this.#admin = admin;
  }

  listTopics(): Promise<string[]> {
    return this.#admin.listTopics();
  }

  async createTopics(topics: readonly TopicSpec[]): Promise<void> {
    if (topics.length === 0) return;
    const plain = topics.filter((t) => t.configs === undefined);
    if (plain.length > 0)
      await existingIsFine(
        this.#admin.createTopics({
          topics: plain.map(({ topic, numPartitions, replicationFactor }) => ({
            topic,
            partitions: numPartitions,
            replicas: replicationFactor ?? -1,
          })),
        }),
      );
    // The client takes configs per call, not per topic.
    for (const { topic, numPartitions, replicationFactor, configs } of topics.filter(
      (t) => t.configs !== undefined,
    ))
      await existingIsFine(
        this.#admin.createTopics({
          topics: [{ topic, partitions: numPartitions, replicas: replicationFactor ?? -1 }],
          configs: Object.entries(configs!).map(([name, value]) => ({ name, value })),
        }),
      );
  }

  async deleteTopics(topics: readonly string[]): Promise<void> {
    if (topics.length === 0) return;
    await this.#admin.deleteTopics({ topics: [...topics] });
  }

  async partitionCounts(topics: readonly string[]): Promise<Map<string, number>> {
    const present = new Set(await this.#admin.listTopics());
    const wanted = topics.filter((t) => present.has(t));
    const counts = new Map<string, number>();
    if (wanted.length === 0) return counts;
    const metadata = await this.#admin.metadata({ topics: wanted, forceUpdate: true });
    for (const [topic, t] of metadata.topics) counts.set(topic, t.partitionsCount);
    return counts;
  }

  async watermarks(topic: string): Promise<PartitionWatermarks[]> {
    const partitions = await this.#partitions(topic);
    const [low, high] = await Promise.all([
      this.#offsetsAt(topic, partitions, ListOffsetTimestamps.EARLIEST),
      this.#offsetsAt(topic, partitions, ListOffsetTimestamps.LATEST),
    ]);
    return partitions.map((partition) => ({
      partition,
      low: low.get(partition) ?? 0,
      high: high.get(partition) ?? 0,
    }));
  }

  async offsetsForTime(topic: string, timeMs: number): Promise<Map<number, number>> {
    const partitions = await this.#partitions(topic);
    const [atTime, high] = await Promise.all([
      this.#offsetsAt(topic, partitions, BigInt(timeMs)),
      this.#offsetsAt(topic, partitions, ListOffsetTimestamps.LATEST),
    ]);
    // The broker answers -1 when no record is that recent: reading starts at the end then.
    return new Map(
      partitions.map((p) => [p, (atTime.get(p) ?? -1) >= 0 ? atTime.get(p)! : (high.get(p) ?? 0)]),
    );
  }

  async committedOffsets(groupId: string, topic: string): Promise<Map<number, number>> {
    const partitions = await this.#partitions(topic);
    const groups = await this.#admin.listConsumerGroupOffsets({
      groups: [{ groupId, topics: [{ name: topic, partitionIndexes: partitions }] }],
    });
    const out = new Map<number, number>();
    for (const g of groups)
      for (const t of g.topics)
        for (const p of t.partitions)
          if (p.committedOffset >= 0n) out.set(p.partitionIndex, Number(p.committedOffset));
    return out;
  }

  async maxMessageBytes(topic: string): Promise<number> {
    const [described] = await this.#admin.describeConfigs({
      resources: [
        {
          resourceType: ConfigResourceTypes.TOPIC,
          resourceName: topic,
          configurationKeys: ["max.message.bytes"],
        },
      ],
    });
    const value = described?.configs.find((c) => c.name === "max.message.bytes")?.value;
    const bytes = Number(value);
    if (value == null || !Number.isSafeInteger(bytes) || bytes <= 0)
      throw new KafkaPortError("not_found", `topic "${topic}" has no max.message.bytes (${String(value)})`);
    return bytes;
  }

  close(): Promise<void> {
    return this.#admin.close();
  }

  async #partitions(topic: string): Promise<number[]> {
    const counts = await this.partitionCounts([topic]);
    const count = counts.get(topic);
    if (count === undefined) throw new KafkaPortError("not_found", `topic "${topic}" does not exist`);
    return Array.from({ length: count }, (_, i) => i);
  }

  async #offsetsAt(topic: string, partitions: number[], timestamp: bigint): Promise<Map<number, number>> {
    const listed = await this.#admin.listOffsets({
      topics: [
        { name: topic, partitions: partitions.map((partitionIndex) => ({ partitionIndex, timestamp })) },
      ],
    });
    const out = new Map<number, number>();
    for (const t of listed) for (const p of t.partitions) out.set(p.partitionIndex, Number(p.offset));
    return out;
  }
}

/**
 * The admin with every failure no retry can cure (a rejected password, an untrusted broker
 * certificate) turned into its KafkaPortError, so a start-up that begins with an admin call
 * stops with one clear line instead of the client's nested retry errors.
 */
export function translatingAdminErrors(admin: TopicAdmin, translate: (err: unknown) => unknown): TopicAdmin {
  const guarded =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (err) {
        throw translate(err);
      }
    };
  return {
    listTopics: guarded(() => admin.listTopics()),
    createTopics: guarded((topics: readonly TopicSpec[]) => admin.createTopics(topics)),
    deleteTopics: guarded((topics: readonly string[]) => admin.deleteTopics(topics)),
    partitionCounts: guarded((topics: readonly string[]) => admin.partitionCounts(topics)),
    watermarks: guarded((topic: string) => admin.watermarks(topic)),
    offsetsForTime: guarded((topic: string, timeMs: number) => admin.offsetsForTime(topic, timeMs)),
    committedOffsets: guarded((groupId: string, topic: string) => admin.committedOffsets(groupId, topic)),
    maxMessageBytes: guarded((topic: string) => admin.maxMessageBytes(topic)),
    close: () => admin.close(),
  };
}
