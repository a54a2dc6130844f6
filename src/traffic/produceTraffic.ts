// The load generator: transactions from a TrafficSource, sent open-loop at a fixed rate to the
// transactions topic, key = card_id, each record timestamped with its scheduled send time,
// delimited or Confluent-framed. `fraud-scorer produce`, the demo and the benchmarks drive it.
import { CompressionTypes, Partitioners, type Kafka, type Message } from "kafkajs";
import { encodeConfluentFrame } from "../codec/confluent.js";
import { joinDelimitedFrames } from "../codec/delimited.js";
import { encodeTransactionPayload } from "../codec/messages.js";
import { OpenLoopSchedule, realLoopClock, runOpenLoop, type LoopClock } from "./openLoopSchedule.js";
import type { TrafficSource } from "./trafficSource.js";

export type TrafficFraming = "delimited" | "confluent";

export interface ScheduledSend {
  readonly index: number;
  readonly transactionId: string;
  readonly cardId: string;
  /** The record timestamp: when the send was due. */
  readonly scheduledMs: number;
  readonly isFraud?: boolean;
}

export interface ProduceProgress {
  readonly planned: number;
  readonly issued: number;
  readonly acked: number;
  readonly failed: number;
  readonly elapsedMs: number;
}

export interface ProduceOptions {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly source: TrafficSource;
  readonly ratePerSecond: number;
  readonly count?: number;
  readonly durationMs?: number;
  readonly framing?: TrafficFraming;
  /** Required for Confluent framing: the registered fraud.v1.Transaction schema id. */
  readonly transactionSchemaId?: number;
  /** Called as each record is built, before it is sent (the demo keeps its send time and label). */
  readonly onScheduled?: (send: ScheduledSend) => void;
  readonly onProgress?: (progress: ProduceProgress) => void;
  readonly progressIntervalMs?: number;
  readonly signal?: AbortSignal;
  readonly clock?: LoopClock;
  /** Epoch ms of the first send; a moment from now when absent. */
  readonly startMs?: number;
}

export interface ProduceSummary extends ProduceProgress {
  readonly achievedRatePerSecond: number;
  readonly maxIssueLagMs: number;
  readonly stalls: number;
  readonly firstError?: string;
  readonly source: string;
}

/** A short lead so connecting and the first tick do not make send 0 late. */
const START_LEAD_MS = 50;

export async function produceTraffic(options: ProduceOptions): Promise<ProduceSummary> {
  const { kafka, topic, source, framing = "delimited", clock = realLoopClock } = options;
  if (framing === "confluent" && options.transactionSchemaId === undefined)
    throw new Error("Confluent framing needs the registered Transaction schema id");
  const encodeValue =
    framing === "confluent"
      ? (payload: Uint8Array) =>
          encodeConfluentFrame({ schemaId: options.transactionSchemaId!, messageIndexes: [0], payload })
      : (payload: Uint8Array) => joinDelimitedFrames([payload]);

  // Not idempotent: idempotence allows one request in flight, which would make the sends a
  // closed loop behind the slowest request.
  const producer = kafka.producer({
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  const schedule = new OpenLoopSchedule({
    startMs: options.startMs ?? clock.nowMs() + START_LEAD_MS,
    ratePerSecond: options.ratePerSecond,
    ...(options.count !== undefined ? { count: options.count } : {}),
    ...(options.durationMs !== undefined ? { durationMs: options.durationMs } : {}),
  });
  let issued = 0;
  let acked = 0;
  let failed = 0;
  const progress = (): ProduceProgress => ({
    planned: schedule.total,
    issued,
    acked,
    failed,
    elapsedMs: Math.max(0, clock.nowMs() - schedule.startMs),
  });
  const ticker = options.onProgress
    ? setInterval(() => options.onProgress!(progress()), options.progressIntervalMs ?? 250)
    : undefined;

  try {
    const result = await runOpenLoop({
      schedule,
      clock,
      ...(options.signal ? { signal: options.signal } : {}),
      send: async (from, to) => {
        const messages: Message[] = [];
        for (let i = from; i < to; i++) {
          const { tx, isFraud } = source.at(i);
          const timestampMs = schedule.timestampMs(i);
          options.onScheduled?.({
            index: i,
            transactionId: tx.transactionId ?? "",
            cardId: tx.cardId ?? "",
            scheduledMs: timestampMs,
            ...(isFraud !== undefined ? { isFraud } : {}),
          });
          messages.push({
            key: tx.cardId ?? "",
            value: encodeValue(encodeTransactionPayload(tx)),
            timestamp: String(timestampMs),
          });
        }
        issued += to - from;
        try {
          await producer.send({ topic, acks: -1, compression: CompressionTypes.None, messages });
          acked += to - from;
        } catch (err) {
          failed += to - from;
          throw err;
        }
      },
    });
    const summary = progress();
    const seconds = Math.max(summary.elapsedMs, 1) / 1000;
    return {
      ...summary,
      achievedRatePerSecond: summary.acked / seconds,
      maxIssueLagMs: result.maxIssueLagMs,
      stalls: result.stalls,
      source: source.description,
      ...(result.firstError ? { firstError: result.firstError.message } : {}),
    };
  } finally {
    if (ticker) clearInterval(ticker);
    options.onProgress?.(progress());
    await producer.disconnect();
  }
}
