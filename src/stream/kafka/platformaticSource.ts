// RecordSource over @platformatic/kafka's consumer: the message stream is read in pull mode,
// whatever has arrived is grouped per partition and handed over as one call, and nothing more
// is read until the handler settles — the stream's own high-water mark then stops fetching.
//
// Rebalances. The client's stream outlives a rebalance with its buffer intact and, once the
// member has rejoined, fetches every partition it still owns again from the group's committed
// offset. Handed over as they came, a member would re-decide its own uncommitted tail after
// every rebalance and decide the buffered records of partitions the group has given to another
// member (which reads them too): the rebalances scenario counted 24,263 duplicate decisions of
// 30,000. A group source therefore hands over nothing while a classic-protocol rebalance is in
// progress (at most a rebalance timeout: a hold is never forever), drops records of partitions
// it no longer owns, hands over no offset of a partition it kept twice, and does not commit
// partitions it has lost (their new owner commits them).
//
// Dropped records never end a read: the stream announces records again only once it has been
// read empty, so a read that stopped after a hand-over's worth of dropped records, with more
// buffered, left the member holding its partitions and deciding nothing (the chaos rebalances
// scenario: a member idle for 90 s after a rejoin).
import type { Consumer, ConsumeOptions, Message, MessagesStream } from "@platformatic/kafka";
import {
  KafkaPortError,
  type BatchHandler,
  type ConsumedRecord,
  type PartitionLag,
  type PartitionOffset,
  type RecordBatch,
  type RecordSource,
  type SourceEvent,
} from "../kafkaPort.js";
import { nonRetriableClientError, type ClientErrorContext } from "./clientErrorKind.js";

type Stream = MessagesStream<Buffer, Buffer, Buffer, Buffer>;
type KafkaMessage = Message<Buffer, Buffer, Buffer, Buffer>;

/** The last message of each handed-over batch: transactions commit offsets through it. */
export const lastMessageOf = new WeakMap<RecordBatch, KafkaMessage>();

const partitionKey = (topic: string, partition: number) => `${topic}\u0000${partition}`;
const MAX_UNCOMMITTED_BATCHES = 4_096;
const EMPTY_HEADERS: Readonly<Record<string, Buffer>> = Object.freeze({});

export interface PlatformaticSourceOptions {
  readonly consumer: Consumer<Buffer, Buffer, Buffer, Buffer>;
  readonly consume: ConsumeOptions<Buffer, Buffer, Buffer, Buffer>;
  /**
   * Most records handed over in one call: a fetch can bring megabytes at once (a backlog after
   * a restart), and a handler given all of it would publish and hold all of it at once.
   */
  readonly maxRecordsPerHandover: number;
  /** Readers without a group of their own never commit (nor filter by ownership). */
  readonly commits: boolean;
  /**
   * Classic protocol: the client rejoins after announcing a rebalance, and reports the new
   * assignment when it has; hand-overs wait for that, at most this long (the group's rebalance
   * timeout: a rejoin that takes longer has failed, and the client says so). Absent: no hold
   * (KIP-848 revokes without a rejoin: nothing to wait for there).
   */
  readonly rebalanceHoldMs?: number | undefined;
  readonly onEvent?: ((event: SourceEvent) => void) | undefined;
  /** Names failures no retry cures (wrong password, untrusted certificate, instance id held). */
  readonly errorContext: ClientErrorContext;
  readonly lag?:
    { readonly onLag: (lags: readonly PartitionLag[]) => void; readonly intervalMs: number } | undefined;
}

export class PlatformaticSource implements RecordSource {
  readonly #options: PlatformaticSourceOptions;
  #stream: Stream | undefined;
  #handler: BatchHandler | undefined;
  #busy = false;
  #paused = false;
  #closed = false;
  /** The failure that ended the source, reported once. */
  #failure: KafkaPortError | undefined;
  /** Per partition, the last message of each batch handed over and not yet committed. */
  readonly #uncommitted = new Map<string, Map<number, KafkaMessage>>();
  /** Per partition, the offset after the last record handed over. */
  readonly #handedOver = new Map<string, number>();
  /** Between a classic rebalance's announcement and the member's rejoin (or the hold's limit). */
  #rebalancing = false;
  #holdTimer: NodeJS.Timeout | undefined;

  constructor(options: PlatformaticSourceOptions) {
    this.#options = options;
  }

  get consumer(): Consumer<Buffer, Buffer, Buffer, Buffer> {
    return this.#options.consumer;
  }

  async start(handler: BatchHandler): Promise<void> {
    const { consumer, onEvent } = this.#options;
    this.#handler = handler;
    consumer.on("consumer:group:join", (payload) => {
      const assigned = (payload.assignments ?? []).flatMap(({ topic, partitions }) =>
        partitions.map((partition) => ({ topic, partition })),
      );
      onEvent?.({ type: "joined", memberId: payload.memberId, assigned });
      this.#forgetLostPartitions();
      this.#endHold();
    });
    consumer.on("consumer:group:rebalance", () => {
      this.#startHold();
      onEvent?.({ type: "revoked" });
    });
    consumer.on("error", (error: unknown) => this.#crash(error));
    // The client reports a broker connection's failure only as "cannot connect" after all its
    // retries; each connection's own error says whether any retry can help.
    consumer.on("client:broker:connecting", ({ connection }: { connection: NodeJS.EventEmitter }) => {
      connection.on("error", (error: unknown) => {
        if (nonRetriableClientError(error, this.#options.errorContext) !== undefined) this.#crash(error);
      });
    });
    // A heartbeat refused for good (KIP-848 UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID) ends
    // the member; any other heartbeat error is the client's to retry.
    consumer.on("consumer:heartbeat:error", ({ error }: { error: unknown }) => {
      if (nonRetriableClientError(error, this.#options.errorContext) !== undefined) this.#crash(error);
    });
    let stream: Stream;
    try {
      stream = await consumer.consume(this.#options.consume);
    } catch (error) {
      this.#crash(error);
      throw this.#failure ?? error;
    }
    this.#stream = stream;
    stream.on("error", (error: unknown) => this.#crash(error));
    stream.on("readable", () => this.#deliver());
    this.#monitorLag();
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    this.#deliver();
  }

  async commit(offsets: readonly PartitionOffset[]): Promise<void> {
    if (!this.#options.commits) return;
    await Promise.all(offsets.map((o) => this.#commitOne(o)));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#holdTimer);
    this.#options.consumer.stopLagMonitoring();
    await this.#stream?.close().catch(() => undefined);
    await this.#options.consumer.close(true);
  }

  async #commitOne({ topic, partition, offset }: PartitionOffset): Promise<void> {
    // A partition lost in a rebalance is its new owner's to commit: a late commit from here could
    // move the group's offset back behind what the new owner has already committed.
    if (!this.#ownedPartitions().has(partitionKey(topic, partition))) return;
    const pending = this.#uncommitted.get(partitionKey(topic, partition));
    const message = pending?.get(offset - 1);
    if (pending === undefined || message === undefined)
      throw new KafkaPortError(
        "commit_failed",
        `no consumed record before offset ${offset} of ${topic}[${partition}]`,
      );
    for (const o of pending.keys()) if (o < offset) pending.delete(o);
    // The stream's own commit path coalesces commits per partition and never moves one back.
    await message.commit();
  }

  #deliver(): void {
    const stream = this.#stream;
    const handler = this.#handler;
    if (this.#busy || this.#paused || this.#closed || this.#rebalancing) return;
    if (stream === undefined || handler === undefined) return;
    const owned = this.#options.commits ? this.#ownedPartitions() : undefined;
    const byPartition = new Map<
      string,
      { batch: RecordBatch; records: ConsumedRecord[]; last: KafkaMessage }
    >();
    const max = this.#options.maxRecordsPerHandover;
    let taken = 0;
    let message: KafkaMessage | null;
    // What is left in the stream's buffer is taken once the handler settles. Dropped records
    // don't count: the loop ends with a hand-over to settle or with the stream read empty.
    while (taken < max && (message = stream.read() as KafkaMessage | null) !== null) {
      const key = partitionKey(message.topic, message.partition);
      if (owned !== undefined) {
        const offset = Number(message.offset);
        if (!owned.has(key) || offset < (this.#handedOver.get(key) ?? 0)) continue;
        this.#handedOver.set(key, offset + 1);
      }
      taken++;
      let entry = byPartition.get(key);
      if (entry === undefined) {
        const records: ConsumedRecord[] = [];
        entry = {
          batch: { topic: message.topic, partition: message.partition, records },
          records,
          last: message,
        };
        byPartition.set(key, entry);
      }
      entry.records.push(toRecord(message));
      entry.last = message;
    }
    if (byPartition.size === 0) return;
    const batches: RecordBatch[] = [];
    for (const [key, { batch, last }] of byPartition) {
      lastMessageOf.set(batch, last);
      if (this.#options.commits) {
        let pending = this.#uncommitted.get(key);
        if (pending === undefined) this.#uncommitted.set(key, (pending = new Map()));
        pending.set(Number(last.offset), last);
        // A partition revoked before its commits leaves entries behind: keep the newest only.
        if (pending.size > MAX_UNCOMMITTED_BATCHES) pending.delete(pending.keys().next().value!);
      }
      batches.push(batch);
    }
    this.#busy = true;
    Promise.resolve()
      .then(() => handler(batches))
      .then(
        () => {
          this.#busy = false;
          this.#deliver();
        },
        (error: unknown) => this.#crash(error),
      );
  }

  #startHold(): void {
    const limitMs = this.#options.rebalanceHoldMs;
    if (limitMs === undefined || this.#closed) return;
    this.#rebalancing = true;
    clearTimeout(this.#holdTimer);
    this.#holdTimer = setTimeout(() => this.#endHold(), limitMs);
    this.#holdTimer.unref();
  }

  #endHold(): void {
    clearTimeout(this.#holdTimer);
    this.#holdTimer = undefined;
    this.#rebalancing = false;
    this.#deliver();
  }

  /**
   * A lost partition's records this member handed over are its new owner's to decide, or to
   * leave to the group's committed offset. Got back later, the partition is read from that
   * offset again: skipping up to what was handed over before could skip records nobody decided
   * (a hand-over whose decisions never landed, an aborted transaction).
   */
  #forgetLostPartitions(): void {
    if (!this.#options.commits) return;
    const owned = this.#ownedPartitions();
    for (const key of this.#handedOver.keys()) if (!owned.has(key)) this.#handedOver.delete(key);
  }

  /** "topic\u0000partition" of each partition the group has given this member now. */
  #ownedPartitions(): Set<string> {
    const owned = new Set<string>();
    for (const { topic, partitions } of this.#options.consumer.assignments ?? [])
      for (const partition of partitions) owned.add(partitionKey(topic, partition));
    return owned;
  }

  #monitorLag(): void {
    const { consumer, consume, lag } = this.#options;
    if (lag === undefined) return;
    consumer.on("consumer:lag", (offsets) => {
      const lags: PartitionLag[] = [];
      for (const [topic, partitions] of offsets)
        partitions.forEach((l, partition) => {
          // Negative: a partition this member does not own (or has not committed yet).
          if (l >= 0n) lags.push({ topic, partition, lag: Number(l) });
        });
      lag.onLag(lags);
    });
    // A failed look is only a missing sample; the next interval tries again.
    consumer.on("consumer:lag:error", () => undefined);
    consumer.startLagMonitoring({ topics: [...consume.topics] }, lag.intervalMs);
  }

  #crash(error: unknown): void {
    if (this.#closed || this.#failure !== undefined) return;
    const nonRetriable = nonRetriableClientError(error, this.#options.errorContext);
    this.#failure =
      nonRetriable ?? new KafkaPortError("crashed", "the Kafka consumer failed", { cause: error });
    // Closing stops the client's retries of a failure no retry cures.
    if (nonRetriable !== undefined) void this.#options.consumer.close(true).catch(() => undefined);
    this.#options.onEvent?.({ type: "crashed", error: this.#failure });
  }
}

function toRecord(m: KafkaMessage): ConsumedRecord {
  let headers = EMPTY_HEADERS;
  if (m.headers.size > 0) {
    const h: Record<string, Buffer> = {};
    for (const [k, v] of m.headers) h[k.toString()] = v;
    headers = h;
  }
  return {
    topic: m.topic,
    partition: m.partition,
    offset: Number(m.offset),
    timestampMs: Number(m.timestamp),
    key: m.key ?? null,
    value: m.value ?? null,
    headers,
  };
}
