// The load generator: transactions from a TrafficSource, planned into records ahead of time
// (routed by card_id, encoded, packed per partition), sent open-loop at a fixed rate to a sink,
// each record timestamped with its first transaction's scheduled time. `fraud-scorer produce`,
// the demo and the benchmarks drive it. It knows no Kafka client: the sink does.
import { CardRouter } from "./cardRouting.js";
import type { KafkaPort } from "../../stream/kafkaPort.js";
import { openKafkaTrafficSink } from "./kafkaTrafficSink.js";
import {
  OpenLoopSchedule,
  pacingTickMs,
  realLoopClock,
  runOpenLoop,
  type LoopClock,
} from "./openLoopSchedule.js";
import {
  RecordPlanner,
  type PlannedRecord,
  type ScheduledSend,
  type TrafficFraming,
} from "./recordPlanner.js";
import { SendLag, type SendLagSummary } from "./sendLag.js";
import type { TrafficSink } from "./trafficSink.js";
import type { TrafficSource } from "./trafficSource.js";

export type { ScheduledSend, TrafficFraming } from "./recordPlanner.js";

export interface ProduceProgress {
  /** Counts are of transactions, however many a record holds. */
  readonly planned: number;
  readonly issued: number;
  readonly acked: number;
  readonly failed: number;
  readonly elapsedMs: number;
}

interface ProduceCommonOptions {
  readonly topic: string;
  readonly source: TrafficSource;
  readonly ratePerSecond: number;
  readonly count?: number;
  readonly durationMs?: number;
  readonly framing?: TrafficFraming;
  /** Required for Confluent framing: the registered fraud.v1.Transaction schema id. */
  readonly transactionSchemaId?: number;
  /** Most transactions of one partition packed into one record (delimited framing); default 1. */
  readonly perRecord?: number;
  /** How long a record that is not full may wait for more transactions, ms; default 5. */
  readonly lingerMs?: number;
  /** Called as each transaction is planned, before it is sent (the demo keeps its send time and label). */
  readonly onScheduled?: (send: ScheduledSend) => void;
  readonly onProgress?: (progress: ProduceProgress) => void;
  readonly progressIntervalMs?: number;
  readonly signal?: AbortSignal;
  readonly clock?: LoopClock;
  /** The pacing tick, ms (see runOpenLoop); pacingTickMs(rate) when absent. */
  readonly tickMs?: number;
  /** Epoch ms of the first send; a moment from now when absent. */
  readonly startMs?: number;
}

/** Either a sink the caller opened (and closes), or the Kafka port to open one on `topic`. */
export type ProduceOptions = ProduceCommonOptions &
  (
    | { readonly sink: TrafficSink; readonly kafka?: never }
    | { readonly kafka: KafkaPort; readonly sink?: never }
  );

export interface ProduceSummary extends ProduceProgress {
  readonly achievedRatePerSecond: number;
  readonly records: number;
  readonly transactionsPerRecord: number;
  readonly maxIssueLagMs: number;
  /** How late transactions were handed to the sink against their schedule. */
  readonly sendLag: SendLagSummary;
  readonly stalls: number;
  /** CPU of this whole process (every thread) from the first send to the last acknowledgement, per transaction. */
  readonly cpuMicrosPerTransaction: number;
  readonly firstError?: string;
  readonly source: string;
  readonly sink: string;
}

/** A short lead so connecting and the first tick do not make send 0 late. */
const START_LEAD_MS = 50;

export async function produceTraffic(options: ProduceOptions): Promise<ProduceSummary> {
  const { source, clock = realLoopClock } = options;
  const sink = options.sink ?? (await openKafkaTrafficSink({ kafka: options.kafka, topic: options.topic }));
  try {
    return await sendOpenLoop(options, sink, source, clock);
  } finally {
    if (!options.sink) await sink.close();
  }
}

async function sendOpenLoop(
  options: ProduceOptions,
  sink: TrafficSink,
  source: TrafficSource,
  clock: LoopClock,
): Promise<ProduceSummary> {
  const schedule = new OpenLoopSchedule({
    startMs: options.startMs ?? clock.nowMs() + START_LEAD_MS,
    ratePerSecond: options.ratePerSecond,
    ...(options.count !== undefined ? { count: options.count } : {}),
    ...(options.durationMs !== undefined ? { durationMs: options.durationMs } : {}),
  });
  const plan = new RecordPlanner({
    schedule,
    source,
    router: new CardRouter(sink.partitions),
    ...(options.framing !== undefined ? { framing: options.framing } : {}),
    ...(options.transactionSchemaId !== undefined
      ? { transactionSchemaId: options.transactionSchemaId }
      : {}),
    ...(options.perRecord !== undefined ? { perRecord: options.perRecord } : {}),
    ...(options.lingerMs !== undefined ? { lingerMs: options.lingerMs } : {}),
    ...(options.onScheduled ? { onScheduled: options.onScheduled } : {}),
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
  const lag = new SendLag();
  const cpuAtStart = process.cpuUsage();
  try {
    const result = await runOpenLoop<PlannedRecord>({
      plan,
      clock,
      lag,
      tickMs: options.tickMs ?? pacingTickMs(options.ratePerSecond),
      ...(options.signal ? { signal: options.signal } : {}),
      send: async (records) => {
        let count = 0;
        for (const r of records) count += r.transactions;
        issued += count;
        try {
          await sink.send(records);
          acked += count;
        } catch (err) {
          failed += count;
          throw err;
        }
      },
    });
    const cpu = process.cpuUsage(cpuAtStart);
    const summary = progress();
    const seconds = Math.max(summary.elapsedMs, 1) / 1000;
    return {
      ...summary,
      achievedRatePerSecond: summary.acked / seconds,
      records: result.records,
      transactionsPerRecord: result.records === 0 ? 0 : result.transactions / result.records,
      maxIssueLagMs: result.maxIssueLagMs,
      sendLag: lag.summary(),
      stalls: result.stalls,
      cpuMicrosPerTransaction: result.transactions === 0 ? 0 : (cpu.user + cpu.system) / result.transactions,
      source: source.description,
      sink: sink.description,
      ...(result.firstError ? { firstError: result.firstError.message } : {}),
    };
  } finally {
    if (ticker) clearInterval(ticker);
    options.onProgress?.(progress());
  }
}
