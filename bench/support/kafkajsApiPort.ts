// What the bench's two KafkaJS-API candidates (kafkajs itself, and Confluent's librdkafka client
// through its KafkaJS-compatible API) share: the record source over `eachBatch`, the sink over
// `sendBatch`, and the port parts the bench never uses. Each candidate's own file keeps only what
// differs: how its client is configured and where each setting goes.
import type {
  BatchHandler,
  GroupSourceOptions,
  KafkaPort,
  OutgoingRecord,
  PartitionOffset,
  RecordSink,
  RecordSource,
} from "../../src/stream/kafkaPort.js";

/** The few shapes of the KafkaJS API used here, met by both clients. */
interface ApiMessage {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
}
interface ApiBatch {
  batch: { topic: string; partition: number; messages: ApiMessage[] };
}
export interface KafkajsApiConsumer {
  connect(): Promise<void>;
  subscribe(s: { topics: string[]; fromBeginning?: boolean }): Promise<void>;
  run(r: {
    partitionsConsumedConcurrently: number;
    autoCommit?: boolean;
    eachBatch: (p: ApiBatch) => Promise<void>;
  }): Promise<void>;
  commitOffsets(o: { topic: string; partition: number; offset: string }[]): Promise<void>;
  pause(t: { topic: string }[]): void;
  resume(t: { topic: string }[]): void;
  disconnect(): Promise<void>;
}
type ApiTopicMessages = { topic: string; messages: { key: Buffer | string | null; value: Buffer | null }[] };
export interface KafkajsApiProducer<Extra extends object = object> {
  connect(): Promise<void>;
  sendBatch(b: Extra & { topicMessages: ApiTopicMessages[] }): Promise<unknown>;
  disconnect(): Promise<void>;
}

/** The port parts no bench section asks for; calling one says which adapter lacks it. */
export function unofferedPortParts(
  adapter: string,
): Pick<KafkaPort, "topicReader" | "transactionalSink" | "admin"> {
  const unoffered = (what: string) => () => {
    throw new Error(`${what} is not offered by the bench's ${adapter} adapter`);
  };
  return {
    topicReader: unoffered("topicReader"),
    transactionalSink: unoffered("transactionalSink"),
    admin: unoffered("admin"),
  };
}

export interface KafkajsApiSourceSettings {
  /** Given to subscribe() (kafkajs takes fromBeginning there; Confluent's API refuses it). */
  readonly subscribe?: { fromBeginning?: boolean };
  /** Given to run() (kafkajs takes autoCommit there; Confluent's API refuses it). */
  readonly run?: { autoCommit?: boolean };
  /** For a client with no join event worth the name: the first batch stands in for it. */
  readonly joinedOnFirstBatch?: boolean;
}

/** Every partition's batches handed over concurrently, as the scorer ran kafkajs before the port. */
export function kafkajsApiSource(
  consumer: KafkajsApiConsumer,
  options: GroupSourceOptions,
  settings: KafkajsApiSourceSettings = {},
): RecordSource {
  let joined = !settings.joinedOnFirstBatch;
  const eachBatch =
    (handler: BatchHandler) =>
    async ({ batch }: ApiBatch) => {
      if (batch.messages.length === 0) return;
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
    };
  return {
    async start(handler) {
      await consumer.connect();
      await consumer.subscribe({ topics: [...options.topics], ...settings.subscribe });
      await consumer.run({
        partitionsConsumedConcurrently: 12,
        ...settings.run,
        eachBatch: eachBatch(handler),
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

/** One sendBatch a publish, the records grouped by topic; `extra` is the client's own settings. */
export function kafkajsApiSink<Extra extends object>(
  producer: KafkajsApiProducer<Extra>,
  extra: Extra,
): RecordSink {
  const connected = producer.connect();
  return {
    async publish(records: readonly OutgoingRecord[]) {
      if (records.length === 0) return;
      await connected;
      await producer.sendBatch({ ...extra, topicMessages: byTopic(records) });
    },
    async warm() {
      await connected;
    },
    async close() {
      await connected.catch(() => undefined);
      await producer.disconnect();
    },
  };
}

function byTopic(records: readonly OutgoingRecord[]): ApiTopicMessages[] {
  const out = new Map<string, ApiTopicMessages["messages"]>();
  for (const r of records) {
    let list = out.get(r.topic);
    if (list === undefined) out.set(r.topic, (list = []));
    list.push({ key: r.key, value: r.value });
  }
  return [...out].map(([topic, messages]) => ({ topic, messages }));
}
