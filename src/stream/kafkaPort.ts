// What the product needs from Kafka, in our own words. Everything outside src/stream/kafka/
// sees only these interfaces; the adapter there is the one place that knows the client library,
// so replacing the client (or benchmarking another one) touches that folder alone.

/** One record as consumed, offsets and timestamps as numbers (Kafka's stay below 2^53). */
export interface ConsumedRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /**
   * The record's timestamp as its writer's producer set it (CreateTime), ms since the epoch — even
   * on a LogAppendTime topic: @platformatic/kafka 2.12 reads batch.firstTimestamp + the record's
   * delta and ignores the batch's LogAppendTime flag, whose append time is in the batch's
   * maxTimestamp. The bench's and the fault suite's audits, which need the append time, read with
   * a client that applies it (bench/support/appendTimeReader.ts).
   */
  readonly timestampMs: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, Buffer>>;
}

/** Consecutive records of one partition, in offset order. */
export interface RecordBatch {
  readonly topic: string;
  readonly partition: number;
  readonly records: readonly ConsumedRecord[];
}

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/** The next offset to read of a partition: a commit stores this. */
export interface PartitionOffset extends TopicPartition {
  readonly offset: number;
}

export type SourceEvent =
  | { readonly type: "joined"; readonly memberId: string; readonly assigned: readonly TopicPartition[] }
  | { readonly type: "revoked" }
  /** The source cannot go on (fetch, group or connection failure after retries). */
  | { readonly type: "crashed"; readonly error: unknown };

/**
 * Receives what has arrived. The source hands over nothing more until the returned promise
 * settles, so a handler that waits applies backpressure; a handler that rejects crashes the
 * source.
 */
export type BatchHandler = (batches: readonly RecordBatch[]) => Promise<void> | void;

export interface RecordSource {
  /** Joins the group (when there is one) and starts handing batches to `handler`. */
  start(handler: BatchHandler): Promise<void>;
  /** Stores each partition's next offset for the group; no-op for a source without a group. */
  commit(offsets: readonly PartitionOffset[]): Promise<void>;
  /** Stops handing over batches (fetching stops when the client's buffer is full). */
  pause(): void;
  resume(): void;
  /** Leaves the group (a static member keeps its assignment for the session timeout). */
  close(): Promise<void>;
}

export type GroupProtocol = "classic" | "consumer";
export type IsolationLevel = "read_committed" | "read_uncommitted";

export interface GroupSourceOptions {
  readonly topics: readonly string[];
  readonly groupId: string;
  /** Static membership (KIP-345): a restarted member with the same id gets its partitions back. */
  readonly groupInstanceId?: string | undefined;
  readonly groupProtocol?: GroupProtocol | undefined;
  /** Classic protocol only; with "consumer" the broker's group.consumer.session.timeout.ms rules. */
  readonly sessionTimeoutMs?: number | undefined;
  /** Where a partition without a committed offset starts. */
  readonly startWithoutCommit?: "earliest" | "latest" | undefined;
  readonly isolation?: IsolationLevel | undefined;
  /** How long the broker may hold a fetch while no data is there. */
  readonly maxWaitMs?: number | undefined;
  /** Records buffered by the client before it stops fetching; also the most handed over at once. */
  readonly bufferedRecords?: number | undefined;
  readonly onEvent?: ((event: SourceEvent) => void) | undefined;
  /**
   * Called every `lagIntervalMs` with each owned partition's lag (high watermark − committed
   * offset): one ListOffsets request per interval, nothing per record.
   */
  readonly onLag?: ((lags: readonly PartitionLag[]) => void) | undefined;
  readonly lagIntervalMs?: number | undefined;
}

export interface PartitionLag extends TopicPartition {
  readonly lag: number;
}

/** Reads partitions from given offsets without a group's committed position (tail, replay, tests). */
export interface TopicReadOptions {
  readonly topic: string;
  /** Next offset per partition; "earliest"/"latest" applies to every partition of the topic. */
  readonly from: "earliest" | "latest" | ReadonlyMap<number, number>;
  readonly isolation?: IsolationLevel | undefined;
  readonly maxWaitMs?: number | undefined;
  readonly onEvent?: ((event: SourceEvent) => void) | undefined;
}

export interface OutgoingRecord {
  readonly topic: string;
  readonly key: Buffer | string | null;
  readonly value: Buffer | null;
  readonly headers?: Readonly<Record<string, Buffer | string>> | undefined;
  readonly partition?: number | undefined;
  readonly timestampMs?: number | undefined;
}

/**
 * How long the scorer's decision publishes wait out a broker that is away before the process
 * stops (to be restarted). A single broker's restart takes 5–20 s on a loaded machine; with the
 * client's own second or so, every restart failed a publish, and a failed publish stops the
 * process: a crash, a restart and a replay (the broker-restart scenario). The consumer keeps the
 * client's short retries: its calls nest (a fetch's retry refreshes metadata, which retries
 * too), so a longer count multiplies, and a broker gone for good must still stop the process.
 * Its fetches are issued again instead, towards the current leaders, until none has got through
 * for this long (kafka/leaderFollowingConsumer.ts).
 */
export const BROKER_AWAY_MS = 30_000;

export interface SinkOptions {
  /**
   * How long a publish keeps retrying while its broker is away (down, restarting, leader moving)
   * before it fails; the client's few-second default when absent. A load generator standing in
   * for a payment gateway sets it long: a gateway buffers and retries rather than drop payments.
   */
  readonly retryForMs?: number | undefined;
  /**
   * Most bytes (by estimate) in one produce request; a single larger record goes alone. Each
   * request is encoded in one go on the event loop, so a sink that may carry bursts of records
   * nobody waits for (dead letters) keeps them small; the default is the broker-safe maximum.
   */
  readonly maxRequestBytes?: number | undefined;
}

/**
 * Idempotent, acks=all. `publish` resolves when the broker has acknowledged every record;
 * several requests are in flight at once, publishes made while they are out leave together in
 * the next, records of one key in the order published, and a large publish is split over
 * several requests (none over half a megabyte unless one record is).
 */
export interface RecordSink {
  publish(records: readonly OutgoingRecord[]): Promise<void>;
  /**
   * Does now what the first publishes to these topics would otherwise do on their way: connect
   * every producer, take its producer id, learn the partitions' leaders and connect to them.
   * Publishing does not need it; a caller that knows its topics calls it before it takes traffic,
   * so its first records do not pay those round trips (measured: the first decisions of a run
   * 77–122 ms from decided to appended, later ones a few ms). Fails when a topic is missing.
   */
  warm(topics: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

export interface SinkTransaction {
  /** Resolves when the records are written (visible to read_committed readers on commit). */
  publish(records: readonly OutgoingRecord[]): Promise<void>;
  /** Commits the transaction with the consumed offsets (each batch's last record) inside it. */
  commit(consumed: readonly RecordBatch[]): Promise<void>;
  abort(): Promise<void>;
}

/**
 * Kafka transactions bound to one group source: the consumed offsets are committed in the
 * transaction on the group's behalf. One transaction at a time.
 */
export interface TransactionalSink {
  begin(): Promise<SinkTransaction>;
  close(): Promise<void>;
}

export interface TransactionalSinkOptions {
  /** Stable per instance: a restarted instance with the same id fences its predecessor. */
  readonly transactionalId: string;
  readonly source: RecordSource;
}

export interface PartitionWatermarks {
  readonly partition: number;
  /** First offset still in the log. */
  readonly low: number;
  /** Offset the next record will get. */
  readonly high: number;
}

export interface TopicSpec {
  readonly topic: string;
  readonly numPartitions: number;
  /** Copies of each partition; the broker's default when absent. */
  readonly replicationFactor?: number | undefined;
  /** Topic-level configs, e.g. { "message.timestamp.type": "LogAppendTime" }. */
  readonly configs?: Readonly<Record<string, string>> | undefined;
}

export interface TopicAdmin {
  listTopics(): Promise<string[]>;
  /** Creates the topics that do not exist yet; one created meanwhile by someone else is fine. */
  createTopics(topics: readonly TopicSpec[]): Promise<void>;
  deleteTopics(topics: readonly string[]): Promise<void>;
  /** Partition count of each topic that exists. */
  partitionCounts(topics: readonly string[]): Promise<Map<string, number>>;
  watermarks(topic: string): Promise<PartitionWatermarks[]>;
  /** Per partition, the first offset whose timestamp is at or after `timeMs` (high watermark if none). */
  offsetsForTime(topic: string, timeMs: number): Promise<Map<number, number>>;
  /** A group's committed next offsets of a topic's partitions (partitions never committed are absent). */
  committedOffsets(groupId: string, topic: string): Promise<Map<number, number>>;
  /** The largest record batch the broker accepts for the topic (its max.message.bytes). */
  maxMessageBytes(topic: string): Promise<number>;
  close(): Promise<void>;
}

/** The client, configured once; each call makes an independent client of one kind. */
export interface KafkaPort {
  groupSource(options: GroupSourceOptions): RecordSource;
  topicReader(options: TopicReadOptions): RecordSource;
  sink(options?: SinkOptions): RecordSink;
  transactionalSink(options: TransactionalSinkOptions): TransactionalSink;
  admin(): TopicAdmin;
}

/**
 * Errors from the adapter carry a kind, as everywhere else. The first four are settings or
 * group state that no retry cures: the process stops at once and says what to check.
 */
export type KafkaPortErrorKind =
  | "auth_failed"
  | "tls_untrusted"
  | "instance_id_in_use"
  | "fenced"
  | "crashed"
  | "not_found"
  | "commit_failed"
  | "publish_failed"
  | "closed";

export class KafkaPortError extends Error {
  readonly kind: KafkaPortErrorKind;
  constructor(kind: KafkaPortError["kind"], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "KafkaPortError";
    this.kind = kind;
  }
}
