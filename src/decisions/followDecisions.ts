// Follows the decisions topic with a throwaway consumer group (never committed: watching must
// not move anyone's offsets) and hands each decoded Decision on. Records that are not
// Confluent-framed Decisions are reported, not fatal: a tail shows what is there.
import { randomUUID } from "node:crypto";
import type { Kafka } from "kafkajs";
import { parseConfluentFrame } from "../codec/confluent.js";
import { decodeDecisionPayload, type Decision } from "../codec/messages.js";

export interface FollowOptions {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly fromBeginning: boolean;
  readonly onDecision: (
    decision: Decision,
    meta: { partition: number; offset: string; arrivedAtMs: number },
  ) => void;
  readonly onUndecodable?: (meta: { partition: number; offset: string; reason: string }) => void;
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
  onDecision,
  onUndecodable,
}: FollowOptions): Promise<Following> {
  const consumer = kafka.consumer({ groupId: `fraud-scorer-tail-${randomUUID()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning });
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      const arrivedAtMs = performance.timeOrigin + performance.now();
      for (const m of batch.messages) {
        const decoded = decodeDecisionRecord(m.value);
        const meta = { partition: batch.partition, offset: m.offset };
        if (typeof decoded === "string") onUndecodable?.({ ...meta, reason: decoded });
        else onDecision(decoded, { ...meta, arrivedAtMs });
      }
    },
  });
  return { stop: () => consumer.disconnect() };
}
