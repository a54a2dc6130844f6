// A slice of a Kafka topic as replay input: per partition an offset range [start, end), found
// from two timestamps or given as two offsets. Records are read with a topic reader that never
// commits, so reading history leaves no trace on the cluster; then ordered by
// (timestamp, partition, offset) so the order, and the decisions, do not depend on fetch timing.
import { TRANSACTION_TYPE } from "../codec/schemaRegistry.js";
import { decodeTransactionRecord } from "../ingest/decodeTransactionRecord.js";
import { MAX_FRAMES_PER_RECORD, streamPosition } from "../scoring/ports.js";
import type { KafkaPort, PartitionWatermarks, TopicAdmin } from "../stream/kafkaPort.js";
import { readPartitionRanges, type PartitionRange } from "./readPartitionRanges.js";
import {
  ReplayInputError,
  type RejectedRecord,
  type ReplayInput,
  type ReplayRecord,
} from "./replayRecord.js";

export type RangeBound = { readonly timeMs: number } | { readonly offset: number };

export interface TopicRangeRequest {
  readonly topic: string;
  /** Partitions to read; all when absent. */
  readonly partitions?: readonly number[];
  /** Inclusive; the start of each partition when absent. */
  readonly from?: RangeBound;
  /** Exclusive; each partition's end (high watermark) when the read starts, when absent. */
  readonly to?: RangeBound;
}

export type { PartitionRange };

export interface ResolvedRanges {
  readonly ranges: readonly PartitionRange[];
  /** Every partition of the topic, wanted or not. */
  readonly watermarks: readonly PartitionWatermarks[];
}

export interface TopicRangeOptions {
  readonly kafka: KafkaPort;
  /** Asks the registry what a schema id holds; without it Confluent-framed records are rejected. */
  readonly firstMessageType?: (schemaId: number) => Promise<string | undefined>;
  readonly maxFrameBytes?: number;
  /** Called as records arrive: (fetched, total). */
  readonly onProgress?: (fetched: number, total: number) => void;
  /** Give up when no record arrives for this long while some are still expected. */
  readonly idleTimeoutMs?: number;
}

const isTimeBound = (b: RangeBound | undefined): b is { timeMs: number } => b !== undefined && "timeMs" in b;

/** Per-partition offset ranges for the request, clamped to what the log still holds. */
export async function resolvePartitionRanges(
  admin: TopicAdmin,
  request: TopicRangeRequest,
): Promise<ResolvedRanges> {
  const { topic } = request;
  const topics = await admin.listTopics();
  if (!topics.includes(topic)) throw new ReplayInputError(`topic "${topic}" does not exist`);
  const watermarks = await admin.watermarks(topic);
  const all = watermarks.map((w) => w.partition).sort((a, b) => a - b);
  const wanted = request.partitions ?? all;
  const unknown = wanted.filter((p) => !all.includes(p));
  if (unknown.length > 0) {
    throw new ReplayInputError(
      `topic "${topic}" has partitions ${all.join(", ")}; there is no partition ${unknown.join(", ")}`,
    );
  }
  const offsetBounds = !isTimeBound(request.from) && request.from !== undefined;
  const offsetEnd = !isTimeBound(request.to) && request.to !== undefined;
  if ((offsetBounds || offsetEnd) && wanted.length > 1) {
    throw new ReplayInputError(
      `offsets are per partition and topic "${topic}" has ${all.length} partitions: choose one with --partition`,
    );
  }
  const byTime = async (bound: RangeBound | undefined) =>
    isTimeBound(bound) ? await admin.offsetsForTime(topic, bound.timeMs) : undefined;
  const [startByTime, endByTime] = await Promise.all([byTime(request.from), byTime(request.to)]);
  const ranges = wanted.map((partition) => {
    const w = watermarks.find((x) => x.partition === partition)!;
    const { low, high } = w;
    const from = request.from;
    const to = request.to;
    const start = startByTime?.get(partition) ?? (from !== undefined && "offset" in from ? from.offset : low);
    const end = endByTime?.get(partition) ?? (to !== undefined && "offset" in to ? to.offset : high);
    // Offsets given by hand name records: when they are gone (retention) or not written yet, an
    // audit must hear so, not get a shorter replay. Time bounds are clamped to what is there.
    for (const [name, bound] of [
      ["--from-offset", from],
      ["--to-offset", to],
    ] as const) {
      if (bound === undefined || !("offset" in bound)) continue;
      if (bound.offset < low || bound.offset > high)
        throw new ReplayInputError(
          `${name} ${bound.offset} is outside partition ${partition} of "${topic}", which holds offsets [${low}, ${high})` +
            (bound.offset < low ? ": the records before it were deleted (retention)" : ""),
        );
    }
    const clampedStart = Math.min(Math.max(start, low), high);
    const clampedEnd = Math.min(Math.max(end, clampedStart), high);
    return { partition, start: clampedStart, end: clampedEnd };
  });
  return { ranges, watermarks };
}

interface FetchedRecord {
  readonly partition: number;
  readonly offset: number;
  readonly timestampMs: number;
  readonly value: Buffer;
}

export async function readTopicRange(
  request: TopicRangeRequest,
  options: TopicRangeOptions,
): Promise<ReplayInput> {
  const { kafka } = options;
  const admin = kafka.admin();
  let resolved: ResolvedRanges;
  try {
    resolved = await resolvePartitionRanges(admin, request);
  } finally {
    await admin.close();
  }
  const { ranges } = resolved;
  const fetched = await fetchRanges(kafka, request.topic, resolved, options);
  // Offsets found by time are a starting point; a record timestamped outside the window (a
  // producer with a skewed clock) is outside it too.
  const inWindow = fetched.filter(
    (r) =>
      (!isTimeBound(request.from) || r.timestampMs >= request.from.timeMs) &&
      (!isTimeBound(request.to) || r.timestampMs < request.to.timeMs),
  );
  inWindow.sort((a, b) => a.timestampMs - b.timestampMs || a.partition - b.partition || a.offset - b.offset);
  const decoded = await decodeRecords(inWindow, options);
  return { description: describeRanges(request, ranges), ...decoded };
}

function describeRanges(request: TopicRangeRequest, ranges: readonly PartitionRange[]): string {
  const parts = ranges.map((r) => `${r.partition}:[${r.start},${r.end})`).join(" ");
  const window =
    isTimeBound(request.from) || isTimeBound(request.to)
      ? ` time [${isTimeBound(request.from) ? new Date(request.from.timeMs).toISOString() : "start"}, ${
          isTimeBound(request.to) ? new Date(request.to.timeMs).toISOString() : "end"
        })`
      : "";
  return `topic ${request.topic}${window} offsets ${parts}`;
}

async function fetchRanges(
  kafka: KafkaPort,
  topic: string,
  { ranges, watermarks }: ResolvedRanges,
  { onProgress, idleTimeoutMs }: TopicRangeOptions,
): Promise<FetchedRecord[]> {
  const total = ranges.reduce((n, r) => n + (r.end - r.start), 0);
  onProgress?.(0, total);
  const records: FetchedRecord[] = [];
  await readPartitionRanges({
    kafka,
    topic,
    ranges,
    watermarks,
    idleTimeoutMs,
    onRecord: (r) =>
      records.push({
        partition: r.partition,
        offset: r.offset,
        timestampMs: r.timestampMs,
        value: r.value ?? Buffer.alloc(0),
      }),
    onProgress: (read) => onProgress?.(read, total),
  });
  return records;
}

async function decodeRecords(
  fetched: readonly FetchedRecord[],
  { firstMessageType, maxFrameBytes }: TopicRangeOptions,
): Promise<Pick<ReplayInput, "records" | "rejected">> {
  const transactionSchemaIds = new Set<number>();
  const checked = new Set<number>();
  const records: ReplayRecord[] = [];
  const rejected: RejectedRecord[] = [];
  for (const r of fetched) {
    const source = (frame: number) =>
      ({
        kind: "topic",
        partition: r.partition,
        offset: r.offset,
        frame,
        timestampMs: r.timestampMs,
      }) as const;
    const decodeOptions = { transactionSchemaIds, ...(maxFrameBytes !== undefined ? { maxFrameBytes } : {}) };
    let decoded = decodeTransactionRecord(r.value, decodeOptions);
    if (
      !decoded.ok &&
      decoded.error.kind === "unknown_schema_id" &&
      firstMessageType &&
      r.value.length >= 5
    ) {
      const schemaId = r.value.readUInt32BE(1);
      if (!checked.has(schemaId)) {
        checked.add(schemaId);
        if ((await firstMessageType(schemaId)) === TRANSACTION_TYPE) transactionSchemaIds.add(schemaId);
      }
      decoded = decodeTransactionRecord(r.value, decodeOptions);
    }
    if (!decoded.ok) {
      rejected.push({ source: source(decoded.error.frameIndex ?? 0), error: decoded.error });
      continue;
    }
    if (decoded.value.length >= MAX_FRAMES_PER_RECORD) {
      rejected.push({
        source: source(0),
        error: { kind: "value_out_of_range", message: `record holds ${decoded.value.length} transactions` },
      });
      continue;
    }
    decoded.value.forEach(({ tx, payload }, frame) =>
      records.push({
        tx,
        payload,
        position: streamPosition(r.offset, frame),
        budgetStartMs: r.timestampMs,
        source: source(frame),
      }),
    );
  }
  return { records, rejected };
}
