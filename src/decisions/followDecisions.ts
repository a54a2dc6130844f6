// Follows the decisions topic with a topic reader (it never commits: watching must not move
// anyone's offsets) and hands each decoded Decision on. Records that are not Confluent-framed
// Decisions are reported, not fatal: a tail shows what is there.
import { parseConfluentFrame } from "../codec/confluent.js";
import { decodeDecisionPayload, type Decision } from "../codec/messages.js";
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
  readonly onUndecodable?: (meta: { partition: number; offset: number; reason: string }) => void;
}

export interface Following {
  stop(): Promise<void>;
}

export function decodeDecisionRecord(value: Buffer | null): Decision | string {
  if (!value) return "empty record";
  const frame = parseConfluentFrame(value);
  if (!frame.ok) return frame.error.message;
  const d = decodeDecisionPayload(frame.value.payload);
  return d.ok ? d.value : d.error.message;
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
        if (typeof decoded === "string") onUndecodable?.({ ...meta, reason: decoded });
        else onDecision(decoded, { ...meta, arrivedAtMs });
      }
  });
  return { stop: () => reader.close() };
}
