// Decisions recorded earlier, to compare a replay against: from a file (NDJSON as replay and
// `decisions tail --json` write it, or a delimited Protobuf stream of Decisions) or from the
// decisions topic (Confluent-framed). Keyed by transaction id; the last record of an id wins,
// as a consumer deduplicating on the key would keep it.
import { readFile } from "node:fs/promises";
import { decodeDecisionRecord } from "../codec/decisionRecord.js";
import { splitDelimitedFrames } from "../codec/delimited.js";
import { decodeDecisionPayload, type DecisionInit } from "../codec/messages.js";
import { decisionFromJson, type DecisionJson } from "../decisions/decisionJson.js";
import type { KafkaPort } from "../stream/kafkaPort.js";
import { readPartitionRanges } from "./readPartitionRanges.js";
import { resolvePartitionRanges } from "./topicRange.js";
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
  readonly kafka: KafkaPort;
  readonly topic: string;
  /** Only these transactions are kept; every one when absent. */
  readonly transactionIds?: ReadonlySet<string>;
  /** Start reading at the first record at or after this time; the beginning when absent. */
  readonly sinceMs?: number;
  /** Stop before the first record at or after this time; the end as of now when absent. */
  readonly untilMs?: number;
  readonly idleTimeoutMs?: number;
}

/** Reads a decisions topic (live or shadow) over a time range, up to its end as of now. */
export async function readRecordedDecisionsTopic({
  kafka,
  topic,
  transactionIds,
  sinceMs,
  untilMs,
  idleTimeoutMs = 30_000,
}: RecordedTopicOptions): Promise<RecordedDecisions> {
  const admin = kafka.admin();
  let resolved;
  try {
    resolved = await resolvePartitionRanges(admin, {
      topic,
      ...(sinceMs === undefined ? {} : { from: { timeMs: sinceMs } }),
      ...(untilMs === undefined ? {} : { to: { timeMs: untilMs } }),
    });
  } finally {
    await admin.close();
  }
  const out: RecordedDecisions = new Map();
  await readPartitionRanges({
    kafka,
    topic,
    ...resolved,
    idleTimeoutMs,
    onRecord: (r) => {
      const d = decodeDecisionRecord(r.value);
      if (d.ok && (transactionIds?.has(d.value.transactionId) ?? true))
        out.set(d.value.transactionId, d.value);
    },
  });
  return out;
}
