// Follows the decisions topic with a topic reader (it never commits: watching must not move
// anyone's offsets) and hands each decoded Decision on. Records that are not Confluent-framed
// Decisions are reported, not fatal: a tail shows what is there.
import { decodeDecisionRecord } from "../codec/decisionRecord.js";
import type { DecodeError } from "../codec/decodeError.js";
import type { Decision } from "../codec/messages.js";
import type { IsolationLevel, KafkaPort } from "../stream/kafkaPort.js";

export interface FollowOptions {
  readonly kafka: KafkaPort;
  readonly topic: string;
  readonly fromBeginning: boolean;
  /** read_committed shows only decisions of committed transactions (exactly-once scorers). */
  readonly isolation?: IsolationLevel;
  readonly onDecision: (
    decision: Decision,
    meta: { partition: number; offset: number; arrivedAtMs: number },
  ) => void;
  readonly onUndecodable?: (meta: { partition: number; offset: number; error: DecodeError }) => void;
}

export interface Following {
  stop(): Promise<void>;
}

export async function followDecisions({
  kafka,
  topic,
  fromBeginning,
  isolation,
  onDecision,
  onUndecodable,
}: FollowOptions): Promise<Following> {
  const reader = kafka.topicReader({
    topic,
    from: fromBeginning ? "earliest" : "latest",
    isolation,
    maxWaitMs: 100,
  });
  await reader.start((batches) => {
    const arrivedAtMs = performance.timeOrigin + performance.now();
    for (const batch of batches)
      for (const r of batch.records) {
        const decoded = decodeDecisionRecord(r.value);
        const meta = { partition: r.partition, offset: r.offset };
        if (decoded.ok) onDecision(decoded.value, { ...meta, arrivedAtMs });
        else onUndecodable?.({ ...meta, error: decoded.error });
      }
  });
  return { stop: () => reader.close() };
}
