// Follows the decisions topic with a topic reader (it never commits: watching must not move
// anyone's offsets) and hands each decoded Decision on. Records that are not Confluent-framed
// Decisions are reported, not fatal: a tail shows what is there. The one follower: the tail
// command, the live demo, the integration tests' collector and the bench's latency collector
// all wrap it for their own bookkeeping.
import { decodeDecisionRecord } from "../codec/decisionRecord.js";
import type { DecodeError } from "../codec/decodeError.js";
import type { Decision } from "../codec/messages.js";
import type { IsolationLevel, KafkaPort } from "../stream/kafkaPort.js";

export interface DecisionRecordMeta {
  readonly partition: number;
  readonly offset: number;
  /** The record's key: the transaction id, as the scorer writes it. */
  readonly key: string;
  /**
   * The record's timestamp as the given port reads it. The product's Kafka adapter reports the
   * CreateTime the scorer stamped when it sent the decision, even on a LogAppendTime topic (see
   * ConsumedRecord.timestampMs); the bench's audit reader reports the broker's append time there.
   */
  readonly timestampMs: number;
  /** When this follower received the record's batch, ms since the epoch. */
  readonly arrivedAtMs: number;
}

export interface FollowOptions {
  readonly kafka: KafkaPort;
  readonly topic: string;
  readonly fromBeginning: boolean;
  /** read_committed shows only decisions of committed transactions (exactly-once scorers). */
  readonly isolation?: IsolationLevel;
  /** Longest the broker holds a fetch open when there is nothing new (default 100). */
  readonly maxWaitMs?: number;
  readonly onDecision: (decision: Decision, meta: DecisionRecordMeta) => void;
  readonly onUndecodable?: (meta: DecisionRecordMeta & { readonly error: DecodeError }) => void;
}

export interface Following {
  /** Settles once the reader has its partitions: decisions written from then on are seen. */
  readonly joined: Promise<void>;
  stop(): Promise<void>;
}

export async function followDecisions({
  kafka,
  topic,
  fromBeginning,
  isolation,
  maxWaitMs = 100,
  onDecision,
  onUndecodable,
}: FollowOptions): Promise<Following> {
  let onJoined = () => {};
  const joined = new Promise<void>((resolve) => (onJoined = resolve));
  const reader = kafka.topicReader({
    topic,
    from: fromBeginning ? "earliest" : "latest",
    isolation,
    maxWaitMs,
    onEvent: (event) => {
      if (event.type === "joined") onJoined();
    },
  });
  await reader.start((batches) => {
    const arrivedAtMs = Date.now();
    for (const batch of batches)
      for (const r of batch.records) {
        const decoded = decodeDecisionRecord(r.value);
        const meta = {
          partition: r.partition,
          offset: r.offset,
          key: r.key?.toString() ?? "",
          timestampMs: r.timestampMs,
          arrivedAtMs,
        };
        if (decoded.ok) onDecision(decoded.value, meta);
        else onUndecodable?.({ ...meta, error: decoded.error });
      }
  });
  return { joined, stop: () => reader.close() };
}
