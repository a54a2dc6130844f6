// Decisions recorded earlier, to compare a replay against: from a file (NDJSON as replay and
// `decisions tail --json` write it, or a delimited Protobuf stream of Decisions) or from the
// decisions topic (Confluent-framed). Keyed by transaction id; the last record of an id wins,
// as a consumer deduplicating on the key would keep it.
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Kafka } from "kafkajs";
import { parseConfluentFrame } from "../codec/confluent.js";
import { splitDelimitedFrames } from "../codec/delimited.js";
import { decodeDecisionPayload, type DecisionInit } from "../codec/messages.js";
import { decisionFromJson, type DecisionJson } from "../decisions/decisionJson.js";
import { ReplayInputError } from "./replayRecord.js";

export type RecordedDecisions = Map<string, DecisionInit>;

const looksLikeJson = (bytes: Uint8Array) => {
  for (const b of bytes) {
    if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue;
    return b === 0x7b; // "{"
  }
  return false;
};

export async function readRecordedDecisionsFile(path: string): Promise<RecordedDecisions> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new ReplayInputError(`cannot read recorded decisions ${path}: ${(err as Error).message}`);
  }
  const out: RecordedDecisions = new Map();
  if (looksLikeJson(bytes)) {
    bytes
      .toString("utf8")
      .split("\n")
      .forEach((line, i) => {
        if (line.trim() === "") return;
        let json: DecisionJson;
        try {
          json = JSON.parse(line) as DecisionJson;
        } catch (err) {
          throw new ReplayInputError(`${path}:${i + 1}: not JSON: ${(err as Error).message}`);
        }
        if (typeof json.transaction_id !== "string" || typeof json.action !== "string")
          throw new ReplayInputError(`${path}:${i + 1}: not a decision (needs transaction_id and action)`);
        out.set(json.transaction_id, decisionFromJson(json));
      });
    return out;
  }
  const frames = splitDelimitedFrames(bytes);
  if (!frames.ok)
    throw new ReplayInputError(
      `${path} is neither NDJSON nor delimited Protobuf decisions: ${frames.error.message}`,
    );
  frames.value.forEach((payload, i) => {
    const d = decodeDecisionPayload(payload);
    if (!d.ok) throw new ReplayInputError(`${path}: decision #${i}: ${d.error.message}`);
    out.set(d.value.transactionId, d.value);
  });
  return out;
}

export interface RecordedTopicOptions {
  readonly kafka: Kafka;
  readonly topic: string;
  /** Only these transactions are kept. */
  readonly transactionIds: ReadonlySet<string>;
  /** Start reading at the first record at or after this time; the beginning when absent. */
  readonly sinceMs?: number;
  readonly idleTimeoutMs?: number;
}

/** Reads the decisions topic up to its end as of now. */
export async function readRecordedDecisionsTopic({
  kafka,
  topic,
  transactionIds,
  sinceMs,
  idleTimeoutMs = 30_000,
}: RecordedTopicOptions): Promise<RecordedDecisions> {
  const admin = kafka.admin();
  await admin.connect();
  let ranges: Array<{ partition: number; start: number; end: number }>;
  try {
    if (!(await admin.listTopics()).includes(topic))
      throw new ReplayInputError(`decisions topic "${topic}" does not exist`);
    const high = await admin.fetchTopicOffsets(topic);
    const since =
      sinceMs === undefined ? undefined : await admin.fetchTopicOffsetsByTimestamp(topic, sinceMs);
    ranges = high.map((w) => ({
      partition: w.partition,
      start: Number(since?.find((s) => s.partition === w.partition)?.offset ?? w.low),
      end: Number(w.high),
    }));
  } finally {
    await admin.disconnect();
  }
  const out: RecordedDecisions = new Map();
  const pending = new Map(ranges.filter((r) => r.end > r.start).map((r) => [r.partition, r]));
  if (pending.size === 0) return out;
  const consumer = kafka.consumer({ groupId: `fraud-scorer-compare-${randomUUID()}`, maxWaitTimeInMs: 200 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let lastProgress = Date.now();
    await new Promise<void>((resolve, reject) => {
      const idle = setInterval(() => {
        if (Date.now() - lastProgress < idleTimeoutMs) return;
        clearInterval(idle);
        reject(
          new ReplayInputError(
            `reading recorded decisions from "${topic}" stalled for ${idleTimeoutMs / 1000} s`,
          ),
        );
      }, 500);
      void consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            const range = pending.get(batch.partition);
            if (!range) return;
            for (const m of batch.messages) {
              const offset = Number(m.offset);
              if (offset < range.start || offset >= range.end || !m.value) continue;
              const frame = parseConfluentFrame(m.value);
              if (!frame.ok) continue;
              const d = decodeDecisionPayload(frame.value.payload);
              if (d.ok && transactionIds.has(d.value.transactionId)) out.set(d.value.transactionId, d.value);
            }
            lastProgress = Date.now();
            if (Number(batch.lastOffset()) + 1 >= range.end) {
              pending.delete(batch.partition);
              consumer.pause([{ topic, partitions: [batch.partition] }]);
              if (pending.size === 0) {
                clearInterval(idle);
                resolve();
              }
            }
          },
        })
        .catch(reject);
      for (const r of pending.values())
        consumer.seek({ topic, partition: r.partition, offset: String(r.start) });
      const done = ranges.filter((r) => !pending.has(r.partition)).map((r) => r.partition);
      if (done.length > 0) consumer.pause([{ topic, partitions: done }]);
    });
  } finally {
    await consumer.disconnect();
  }
  return out;
}
