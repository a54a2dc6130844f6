// The control channel on Kafka: one compacted single-partition topic keyed by ControlKey, read by
// every instance from the beginning with no consumer group. Compaction keeps the latest record
// of each key, so a new instance reads what is current without any history to replay; one
// partition keeps every key's records in one order.
import { type ControlChannel, type ControlSubscription } from "../control/controlChannel.js";
import {
  decodeControlRecord,
  encodeControlRecord,
  type ControlKey,
  type ControlRecord,
} from "../control/controlRecord.js";
import type { ConsumedRecord, KafkaPort, RecordBatch, RecordSource, TopicSpec } from "./kafkaPort.js";

// A crashed follower reader is replaced after a backoff that grows to this while the broker stays away.
const FOLLOW_RESTART_MIN_MS = 500;
const FOLLOW_RESTART_MAX_MS = 10_000;

export const controlTopicSpec = (topic: string): TopicSpec => ({
  topic,
  numPartitions: 1,
  configs: { "cleanup.policy": "compact" },
});

export interface KafkaControlChannelOptions {
  readonly port: KafkaPort;
  readonly topic: string;
  /** A record that does not decode: logged by the caller, never applied. */
  readonly onBadRecord?: (error: unknown, offset: number) => void;
  /** The follower's reader gave up (after the client's retries); another resumes after a backoff. */
  readonly onFollowCrashed?: (error: unknown) => void;
}

export class KafkaControlChannel implements ControlChannel {
  readonly #port: KafkaPort;
  readonly #topic: string;
  get topic(): string {
    return this.#topic;
  }
  readonly #onBadRecord: (error: unknown, offset: number) => void;
  readonly #onFollowCrashed: (error: unknown) => void;

  constructor({
    port,
    topic,
    onBadRecord = () => {},
    onFollowCrashed = () => {},
  }: KafkaControlChannelOptions) {
    this.#port = port;
    this.#topic = topic;
    this.#onBadRecord = onBadRecord;
    this.#onFollowCrashed = onFollowCrashed;
  }

  /** Creates the compacted topic if it is missing (the scorer and the CLI both call this). */
  async ensureTopic(): Promise<void> {
    const admin = this.#port.admin();
    try {
      if (!(await admin.listTopics()).includes(this.#topic))
        await admin.createTopics([controlTopicSpec(this.#topic)]);
    } finally {
      await admin.close();
    }
  }

  async publish(record: ControlRecord): Promise<void> {
    const sink = this.#port.sink();
    try {
      await sink.publish([
        { topic: this.#topic, key: record.key, value: encodeControlRecord(record), partition: 0 },
      ]);
    } finally {
      await sink.close();
    }
  }

  /**
   * Reads up to the high watermark, applies the latest of each key, then every new record.
   * A reader that gives up (a broker away longer than the client's retries) is replaced after a
   * backoff by one that resumes after the last record read: promotions reach this instance again
   * once the broker is back, and none is applied twice.
   */
  async follow(onRecord: (record: ControlRecord) => Promise<void>): Promise<ControlSubscription> {
    const high = await this.#highWatermark();
    const latest = new Map<ControlKey, ControlRecord>();
    let caughtUp = high === 0;
    let markCaughtUp!: () => void;
    const ready = new Promise<void>((resolve) => (markCaughtUp = resolve));
    if (caughtUp) markCaughtUp();
    let next: number | undefined;
    const handle = async (batches: readonly RecordBatch[]) => {
      for (const { records } of batches)
        for (const consumed of records) {
          if (next !== undefined && consumed.offset < next) continue;
          const record = this.#decode(consumed);
          next = consumed.offset + 1;
          if (caughtUp) {
            if (record) await onRecord(record);
            continue;
          }
          if (record) latest.set(record.key, record);
          if (consumed.offset + 1 >= high) {
            for (const r of latest.values()) await onRecord(r);
            caughtUp = true;
            markCaughtUp();
          }
        }
    };

    let stopped = false;
    let reader: RecordSource | undefined;
    let failures = 0;
    let restartTimer: NodeJS.Timeout | undefined;
    const replace = (crashed: RecordSource, err: unknown) => {
      if (stopped || reader !== crashed) return;
      this.#onFollowCrashed(err);
      reader = undefined;
      void crashed.close().catch(() => {});
      const delayMs = Math.min(FOLLOW_RESTART_MAX_MS, FOLLOW_RESTART_MIN_MS * 2 ** failures++);
      restartTimer = setTimeout(() => void startReader(false), delayMs);
    };
    // The first start's failure is start-up's (a wrong password stops the process once); a
    // replacement's failure is one more crash to back off from.
    const startReader = async (first: boolean): Promise<void> => {
      if (stopped) return;
      const current = this.#port.topicReader({
        topic: this.#topic,
        from: next === undefined ? "earliest" : new Map([[0, next]]),
        maxWaitMs: 500,
        onEvent: (event) => {
          if (event.type === "crashed") replace(current, event.error);
        },
      });
      reader = current;
      try {
        await current.start(async (batches) => {
          await handle(batches);
          failures = 0;
        });
      } catch (err) {
        if (first) throw err;
        replace(current, err);
      }
    };
    await startReader(true);
    await ready;
    return {
      stop: async () => {
        stopped = true;
        clearTimeout(restartTimer);
        await reader?.close();
      },
    };
  }

  async latest(key: ControlKey): Promise<ControlRecord | undefined> {
    const high = await this.#highWatermark();
    if (high === 0) return undefined;
    let found: ControlRecord | undefined;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const reader = this.#port.topicReader({ topic: this.#topic, from: "earliest", maxWaitMs: 500 });
    await reader.start((batches) => {
      for (const { records } of batches)
        for (const consumed of records) {
          const record = this.#decode(consumed);
          if (record?.key === key) found = record;
          if (consumed.offset + 1 >= high) done();
        }
    });
    try {
      await finished;
    } finally {
      await reader.close();
    }
    return found;
  }

  async #highWatermark(): Promise<number> {
    const admin = this.#port.admin();
    try {
      const [partition] = await admin.watermarks(this.#topic);
      return partition?.high ?? 0;
    } finally {
      await admin.close();
    }
  }

  #decode(consumed: ConsumedRecord): ControlRecord | undefined {
    if (consumed.value === null) return undefined;
    try {
      return decodeControlRecord(consumed.value);
    } catch (err) {
      this.#onBadRecord(err, consumed.offset);
      return undefined;
    }
  }
}
