// Where the load generator's records go. The generator plans, encodes, packs and paces records
// knowing nothing of a Kafka client; a sink takes finished records and delivers them. The Kafka
// sink (kafkaTrafficSink.ts) is the only module of the generator that talks to a client; the
// discarding sink lets the bench measure the generator's own cost apart from the client's.

export interface TrafficRecord {
  readonly partition: number;
  readonly key: Buffer;
  readonly value: Buffer;
  /** The Kafka record timestamp, epoch ms: when the record's first transaction was due. */
  readonly timestampMs: number;
}

export interface TrafficSink {
  readonly description: string;
  /** Partitions of the target topic: the generator routes cards to them itself. */
  readonly partitions: number;
  /** Delivers the records (acknowledged when it resolves); several calls may be pending at once. */
  send(records: readonly TrafficRecord[]): Promise<void>;
  close(): Promise<void>;
}

export type TrafficSinkErrorKind = "topic_missing" | "unreachable";

export class TrafficSinkError extends Error {
  override readonly name = "TrafficSinkError";

  constructor(
    readonly kind: TrafficSinkErrorKind,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Accepts and drops every record: the generator's cost without any client's. */
export function discardingTrafficSink(partitions: number): TrafficSink & { readonly received: number } {
  let received = 0;
  return {
    description: `discarding sink (${partitions} partitions)`,
    partitions,
    get received() {
      return received;
    },
    send: (records) => {
      received += records.length;
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
}
