// 6. Ceiling: how close the scorer comes to what its Kafka client can do at all. A backlog of
// transactions is drained by the scorer (`serve`), by a passthrough process on the same client
// through the same port with serve's settings and no scoring (ceilingPassthrough.ts), by the
// same passthrough on kafkajs (the client before the port, a second reference), and by Kafka's
// own perf tools, which show the broker's limit on this machine. Throughput is read off the
// output topic's offsets.
//
// Each drain runs once per round, the order reversed every other round (A B C, C B A): on this
// machine later drains of the same backlog ran faster (2026-12-05: `--exactly-once`, drained
// last, came out at 112 and 123 % of at-least-once), so a fixed order leant every ratio towards
// whatever ran last. Each figure is the mean of its rounds, every round kept in the result.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { CompressionTypes, Partitioners, type Message } from "kafkajs";
import { joinDelimitedFrames } from "../../src/codec/delimited.js";
import { encodeTransactionPayload } from "../../src/codec/messages.js";
import type { BenchContext } from "../support/benchContext.js";
import { alternatingOrder, mean, meanOfEvery, round3 } from "../support/alternatingRounds.js";
import {
  consumerPerformance,
  findKafkaTools,
  producerPerformance,
  type ConsumerPerfResult,
  type ProducerPerfResult,
} from "../support/kafkaPerfTools.js";
import { ScorerChild } from "../../src/tools/scorerChild.js";
import type { PassthroughClient } from "./ceilingPassthrough.js";
import { scorerEnv } from "../support/benchScorer.js";
import {
  brokerPid,
  drainCpuSplit,
  markDrainCpu,
  meanCpuSplit,
  type DrainCpuMark,
  type DrainCpuSplit,
} from "../support/drainCpu.js";

export interface DrainThroughput {
  readonly records: number;
  readonly seconds: number;
  readonly recordsPerSecond: number;
  /**
   * The draining process's CPU (every thread, its Kafka client included) from its group join to
   * the last output record, ÷ records. Absent in results from before it was measured.
   */
  readonly cpuUsPerRecord?: number;
  /**
   * A scorer's drains only: its CPU from the poll that first found half the records out to the
   * last, ÷ the records output meanwhile. What a record costs a process already warm: V8 has
   * compiled the hot code, and the state cache holds the cards seen so far. The whole drain's
   * figure also holds a fresh process's first seconds. Absent in results from before it was measured.
   */
  readonly secondHalfCpuUsPerRecord?: number;
  /**
   * That CPU by thread (the process's main thread, its other threads; from /proc, so a drain's
   * two parts add up to about cpuUsPerRecord) and what Redis and the broker spent beside it, µs per
   * record (bench/support/drainCpu.ts). Absent in results from before it was measured.
   */
  readonly cpuSplit?: DrainCpuSplit;
  /** Each round's drain, in round order, when there were several (the figures above: their mean). */
  readonly rounds?: readonly DrainRound[];
}

export type DrainRound = Pick<
  DrainThroughput,
  "seconds" | "recordsPerSecond" | "cpuUsPerRecord" | "secondHalfCpuUsPerRecord"
>;

const cpuUsPerRecord = (cpuUs: number, records: number) => Math.round((10 * cpuUs) / records) / 10;

/** The scorer's card-state work when its last decision was out (fraud_card_state_total). */
export interface DrainStateWork {
  /**
   * Transactions whose state work went to the deferred lane (a backlog is decided by the rules);
   * this and `dropped` are summed over the rounds.
   */
  readonly deferred: number;
  /** State updates given up (the lane full, or failing): lost to the cards' state. */
  readonly dropped: number;
}

export interface CeilingResult {
  readonly records: number;
  readonly recordBytes: number;
  readonly partitions: number;
  /** Drains of each kind, in alternating order (absent in results from before: one, in a fixed order). */
  readonly rounds?: number;
  readonly scorer: DrainThroughput & { readonly stateWork?: DrainStateWork };
  /** The scorer with --exactly-once: consume → score → produce in Kafka transactions. */
  readonly scorerExactlyOnce?: DrainThroughput & { readonly stateWork?: DrainStateWork };
  /** exactly-once ÷ at-least-once scorer: what the transactions cost in throughput. */
  readonly exactlyOnceOverScorer?: number;
  /**
   * The scorer started with V8's default young generation (16 MB semi-spaces) instead of the 64
   * MB bin/nodeFlags.js gives it: what that flag buys. Absent in results from before it.
   */
  readonly scorerDefaultYoungGeneration?: DrainThroughput & { readonly stateWork?: DrainStateWork };
  /**
   * Another checkout's scorer draining the same backlog in the same rounds (--compare-with):
   * its path, its commit ("+changes" when its tracked files differ from it) and its drain.
   */
  readonly compared?: {
    readonly root: string;
    readonly commit: string;
    readonly scorer: DrainThroughput & { readonly stateWork?: DrainStateWork };
  };
  /** The same client as the scorer's, through the port (absent in results before the port: kafkajs). */
  readonly passthroughClient?: string;
  readonly passthrough: DrainThroughput;
  /** kafkajs 2.2.4 doing the same passthrough: the client before the port. */
  readonly kafkajsPassthrough?: DrainThroughput;
  readonly kafkaProducerPerf: ProducerPerfResult | { readonly unavailable: string };
  readonly kafkaConsumerPerf: ConsumerPerfResult | { readonly unavailable: string };
  readonly kafkaToolsVersion?: string;
  /** scorer ÷ passthrough: the share of the client's own throughput the scorer keeps. */
  readonly scorerOverPassthrough: number;
  /** passthrough ÷ Kafka's ConsumerPerformance, and scorer ÷ it. */
  readonly passthroughOverKafkaConsumer?: number;
  readonly scorerOverKafkaConsumer?: number;
}

const POLL_MS = 50;
/** V8's own young-generation size on 64-bit, which bin/nodeFlags.js raises for the scoring commands. */
const V8_DEFAULT_YOUNG_GENERATION = "--max-semi-space-size=16";
export const PORT_CLIENT = "@platformatic/kafka through the port";

export async function ceiling(ctx: BenchContext): Promise<CeilingResult> {
  const { records, perfRecords, partitions, rounds } = ctx.plan.ceiling;
  ctx.log(
    `ceiling: draining a backlog of ${records} transactions: scorer vs the port's passthrough (and kafkajs's) vs Kafka perf tools, ${rounds} round(s)`,
  );
  const input = await ctx.topics.topic("ceiling-in", partitions);
  const recordBytes = await fillBacklog(ctx, input, records);

  type Drained = DrainThroughput & { readonly stateWork?: DrainStateWork };
  const drains: { readonly name: string; readonly drain: (round: number) => Promise<Drained> }[] = [
    {
      name: "passthrough (the port, @platformatic/kafka)",
      drain: async (round) =>
        drainThroughPassthrough(ctx, "port", input, await outputTopic(ctx, "passthrough", round), records),
    },
    {
      name: "passthrough (kafkajs)",
      drain: async (round) =>
        drainThroughPassthrough(ctx, "kafkajs", input, await outputTopic(ctx, "kafkajs", round), records),
    },
    { name: "scorer", drain: (round) => drainThroughScorer(ctx, input, records, { round }) },
    {
      name: "scorer with V8's default young generation",
      drain: (round) =>
        drainThroughScorer(ctx, input, records, { round, nodeOptions: V8_DEFAULT_YOUNG_GENERATION }),
    },
    {
      name: "scorer --exactly-once",
      drain: (round) => drainThroughScorer(ctx, input, records, { round, exactlyOnce: true }),
    },
  ];
  const { compared } = ctx;
  if (compared !== undefined)
    drains.push({
      name: `scorer of ${compared.commit} (--compare-with)`,
      drain: (round) => drainThroughScorer(ctx, input, records, { round, root: compared.root }),
    });
  const runs = drains.map(() => [] as Drained[]);
  for (let round = 0; round < rounds; round++) {
    for (const i of alternatingOrder(drains.length, round)) {
      const drained = await drains[i]!.drain(round);
      runs[i]!.push(drained);
      ctx.log(`  round ${round + 1}, ${drains[i]!.name}: ${drained.recordsPerSecond} records/s`);
    }
  }
  const [
    passthrough,
    kafkajsPassthrough,
    scorer,
    scorerDefaultYoungGeneration,
    scorerExactlyOnce,
    scorerCompared,
  ] = runs.map(meanOfRounds) as [Drained, Drained, Drained, Drained, Drained, Drained | undefined];

  const tools = findKafkaTools(ctx.root);
  let kafkaProducerPerf: CeilingResult["kafkaProducerPerf"];
  let kafkaConsumerPerf: CeilingResult["kafkaConsumerPerf"];
  if (tools === undefined) {
    const unavailable = "no cached Kafka jars with kafka-tools (run bash stack/stack.sh up once)";
    kafkaProducerPerf = kafkaConsumerPerf = { unavailable };
  } else {
    const perfTopic = await ctx.topics.topic("ceiling-perf", partitions);
    kafkaProducerPerf = await producerPerformance(tools, {
      brokers: ctx.endpoints.kafkaBrokers,
      topic: perfTopic,
      records: perfRecords,
      recordSize: Math.round(recordBytes),
    });
    kafkaConsumerPerf = await consumerPerformance(tools, {
      brokers: ctx.endpoints.kafkaBrokers,
      topic: perfTopic,
      records: perfRecords,
      group: `bench-perf-${perfTopic}`,
    });
    ctx.log(
      `  Kafka perf tools: produce ${kafkaProducerPerf.recordsPerSecond} records/s, consume ${kafkaConsumerPerf.recordsPerSecond} records/s`,
    );
  }
  const consumerRate =
    "recordsPerSecond" in kafkaConsumerPerf ? kafkaConsumerPerf.recordsPerSecond : undefined;
  return {
    records,
    recordBytes: Math.round(recordBytes * 10) / 10,
    partitions,
    rounds,
    scorer,
    scorerExactlyOnce,
    scorerDefaultYoungGeneration,
    exactlyOnceOverScorer: round3(scorerExactlyOnce.recordsPerSecond / scorer.recordsPerSecond),
    passthroughClient: PORT_CLIENT,
    passthrough,
    kafkajsPassthrough,
    kafkaProducerPerf,
    kafkaConsumerPerf,
    ...(tools ? { kafkaToolsVersion: tools.version } : {}),
    ...(compared !== undefined && scorerCompared !== undefined
      ? { compared: { root: compared.root, commit: compared.commit, scorer: scorerCompared } }
      : {}),
    scorerOverPassthrough: round3(scorer.recordsPerSecond / passthrough.recordsPerSecond),
    ...(consumerRate
      ? {
          passthroughOverKafkaConsumer: round3(passthrough.recordsPerSecond / consumerRate),
          scorerOverKafkaConsumer: round3(scorer.recordsPerSecond / consumerRate),
        }
      : {}),
  };
}

/** A passthrough's output topic, one per round: a drain is timed by its topic's end offsets. */
const outputTopic = (ctx: BenchContext, client: string, round: number) =>
  ctx.topics.topic(`ceiling-${client}-out-r${round + 1}`, ctx.plan.ceiling.partitions);

/** The mean of one drain's rounds (throughput, seconds, CPU; state work summed), the rounds kept. */
function meanOfRounds<T extends DrainThroughput & { readonly stateWork?: DrainStateWork }>(
  runs: readonly T[],
): T {
  if (runs.length === 1) return runs[0]!;
  const cpu = meanOfEvery(runs.map((r) => r.cpuUsPerRecord));
  const secondHalf = meanOfEvery(runs.map((r) => r.secondHalfCpuUsPerRecord));
  const work = runs.map((r) => r.stateWork).filter((w): w is DrainStateWork => w !== undefined);
  const split = meanCpuSplit(runs.map((r) => r.cpuSplit));
  return {
    ...runs[0]!,
    seconds: round3(mean(runs.map((r) => r.seconds))),
    recordsPerSecond: Math.round(mean(runs.map((r) => r.recordsPerSecond))),
    ...(cpu === undefined ? {} : { cpuUsPerRecord: cpu }),
    ...(secondHalf === undefined ? {} : { secondHalfCpuUsPerRecord: secondHalf }),
    ...(split === undefined ? {} : { cpuSplit: split }),
    ...(work.length > 0
      ? {
          stateWork: {
            deferred: work.reduce((a, w) => a + w.deferred, 0),
            dropped: work.reduce((a, w) => a + w.dropped, 0),
          },
        }
      : {}),
    rounds: runs.map(({ seconds, recordsPerSecond, cpuUsPerRecord, secondHalfCpuUsPerRecord }) => ({
      seconds,
      recordsPerSecond,
      ...(cpuUsPerRecord === undefined ? {} : { cpuUsPerRecord }),
      ...(secondHalfCpuUsPerRecord === undefined ? {} : { secondHalfCpuUsPerRecord }),
    })),
  };
}

/** Writes the backlog as fast as the broker takes it; returns the mean record value size. */
async function fillBacklog(ctx: BenchContext, topic: string, count: number): Promise<number> {
  const producer = ctx.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const source = ctx.traffic.take(count);
  let bytes = 0;
  try {
    const CHUNK = 2_000;
    const inFlight = new Set<Promise<unknown>>();
    for (let i = 0; i < count; i += CHUNK) {
      const messages: Message[] = [];
      for (let j = i; j < Math.min(count, i + CHUNK); j++) {
        const { tx } = source.at(j);
        const value = joinDelimitedFrames([encodeTransactionPayload(tx)]);
        bytes += value.length;
        messages.push({ key: tx.cardId ?? "", value });
      }
      const sending = producer.send({ topic, acks: -1, compression: CompressionTypes.None, messages });
      inFlight.add(sending);
      void sending.finally(() => inFlight.delete(sending));
      if (inFlight.size >= 4) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  } finally {
    await producer.disconnect();
  }
  return bytes / count;
}

/**
 * The clock runs from the consumer's group join (its first fetch follows at once; process start
 * is not counted) to the poll that finds every output record on the topic.
 */
async function measureOutput(
  ctx: BenchContext,
  topic: string,
  expected: number,
  joinedAt: Promise<number>,
  timeoutMs: number,
): Promise<DrainThroughput> {
  return measureDrain(() => ctx.topics.recordCount(topic), topic, expected, joinedAt, timeoutMs);
}

/** Polls `count` until it reaches `expected`; the rate runs from the join to that poll. */
async function measureDrain(
  count: () => Promise<number>,
  what: string,
  expected: number,
  joinedAt: Promise<number>,
  timeoutMs: number,
): Promise<DrainThroughput> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = await count();
    const at = performance.now();
    if (n >= expected) {
      const seconds = Math.max(0.001, (at - (await joinedAt)) / 1000);
      return {
        records: n,
        seconds: Math.round(seconds * 1000) / 1000,
        recordsPerSecond: Math.round(n / seconds),
      };
    }
    if (Date.now() > deadline) throw new Error(`${what}: ${n} of ${expected} records after ${timeoutMs} ms`);
    await sleep(POLL_MS);
  }
}

async function drainThroughPassthrough(
  ctx: BenchContext,
  client: PassthroughClient,
  input: string,
  output: string,
  records: number,
): Promise<DrainThroughput> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/sections/ceilingPassthrough.ts"], {
    cwd: ctx.root,
    env: {
      ...process.env,
      KAFKA_BROKERS: ctx.endpoints.kafkaBrokers,
      PASSTHROUGH_INPUT: input,
      PASSTHROUGH_OUTPUT: output,
      // One group per drain (its output is its own): a group that has drained the backlog once
      // has nothing left to read.
      PASSTHROUGH_GROUP: `bench-passthrough-${client}-${output}`,
      PASSTHROUGH_CLIENT: client,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  // The child's CPU comes with its joined line, and again on SIGUSR2 (ceilingPassthrough.ts).
  let cpuAtJoinUs: number | undefined;
  let marked: Promise<DrainCpuMark> | undefined;
  let cpuReported: ((cpuUs: number) => void) | undefined;
  const joinedAt = new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (!line.startsWith("{")) return; // a client's own log line
      const report = JSON.parse(line) as { joined?: boolean; cpuUs: number };
      if (report.joined === true) {
        cpuAtJoinUs ??= report.cpuUs;
        marked ??= markDrainCpu(child.pid, brokerPid(ctx.endpoints.kafkaBrokers), undefined);
        resolve(performance.now());
      } else cpuReported?.(report.cpuUs);
    });
    child.once("exit", (code) => reject(new Error(`passthrough exited (${code}) before joining`)));
  });
  try {
    const drained = await measureOutput(ctx, output, records, joinedAt, 300_000);
    const cpuAtEndUs = await new Promise<number>((resolve, reject) => {
      cpuReported = resolve;
      child.kill("SIGUSR2");
      setTimeout(() => reject(new Error("the passthrough did not report its CPU")), 5_000).unref();
    });
    const cpuSplit = drainCpuSplit(
      await marked!,
      await markDrainCpu(child.pid, brokerPid(ctx.endpoints.kafkaBrokers), undefined),
      drained.records,
    );
    return {
      ...drained,
      cpuUsPerRecord: cpuUsPerRecord(cpuAtEndUs - cpuAtJoinUs!, drained.records),
      cpuSplit,
    };
  } finally {
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * The scorer draining the backlog in a group of its own. Exactly-once output holds a transaction
 * marker per partition per transaction, so its end offsets overcount: its drain is timed by the
 * group's committed input offsets instead, which commit inside the same transactions.
 */
async function drainThroughScorer(
  ctx: BenchContext,
  input: string,
  records: number,
  {
    round,
    exactlyOnce = false,
    nodeOptions,
    root,
  }: {
    round: number;
    exactlyOnce?: boolean;
    nodeOptions?: string;
    /** Another checkout's scorer (--compare-with); this checkout's by default. */
    root?: string;
  },
): Promise<DrainThroughput & { stateWork: DrainStateWork }> {
  const { partitions } = ctx.plan.ceiling;
  // Its own topics, group and card-state namespace each round: every drain starts from nothing.
  const kind = exactlyOnce
    ? "ceiling-eos"
    : nodeOptions !== undefined
      ? "ceiling-node-options"
      : root !== undefined
        ? "ceiling-compared"
        : "ceiling";
  const label = `${kind}-r${round + 1}`;
  const own = await ctx.topics.scorerTopics(label, partitions);
  const topics = { ...own, transactions: input };
  const groupId = `scorer-${label}-${input}`;
  const scorer = await ScorerChild.start({
    root: root ?? ctx.root,
    env: {
      ...scorerEnv({
        endpoints: ctx.endpoints,
        topics,
        namespace: ctx.namespace(label),
        overrides: {
          KAFKA_GROUP_ID: groupId,
          // Exactly-once derives its transactional ids from the static member's id.
          ...(exactlyOnce ? { KAFKA_EXACTLY_ONCE: "true", KAFKA_GROUP_INSTANCE_ID: `${label}-1` } : {}),
        },
      }),
      // A size given in NODE_OPTIONS wins over the bin's (bin/nodeFlags.js).
      ...(nodeOptions === undefined
        ? {}
        : { NODE_OPTIONS: [process.env.NODE_OPTIONS, nodeOptions].filter(Boolean).join(" ") }),
    },
    logFile: ctx.logFile(`${label}-scorer`),
  });
  // Joining is the last readiness condition; /readyz is polled every 20 ms.
  const joinedAt = Promise.resolve(
    scorer.spawnedAt + (scorer.timeline.conditionsMetMs.groupJoined ?? scorer.timeline.readyMs),
  );
  try {
    // Read once ready, which the join completes (polled every 20 ms): the drain's CPU from here.
    const cpuAtJoinS = await scorer.metric("process_cpu_seconds_total");
    const marked = await markDrainCpu(scorer.pid, brokerPid(ctx.endpoints.kafkaBrokers), ctx.redisCpuSource);
    // The CPU read at the first poll that finds half the records out: the drain's second half from there.
    let half: { records: number; cpuS: number } | undefined;
    const count = async (): Promise<number> => {
      const n = exactlyOnce
        ? await ctx.topics.committedCount(groupId, input)
        : await ctx.topics.recordCount(topics.decisions);
      if (half === undefined && n >= records / 2)
        half = { records: n, cpuS: await scorer.metric("process_cpu_seconds_total") };
      return n;
    };
    const drained = await measureDrain(
      count,
      exactlyOnce ? `${groupId} committed on ${input}` : topics.decisions,
      records,
      joinedAt,
      600_000,
    );
    const cpuAtEndS = await scorer.metric("process_cpu_seconds_total");
    const cpuS = cpuAtEndS - cpuAtJoinS;
    const cpuSplit = drainCpuSplit(
      marked,
      await markDrainCpu(scorer.pid, brokerPid(ctx.endpoints.kafkaBrokers), ctx.redisCpuSource),
      drained.records,
    );
    const stateWork = {
      deferred: await scorer.metric("fraud_card_state_total", { outcome: "deferred" }),
      dropped: await scorer.metric("fraud_card_state_total", { outcome: "dropped" }),
    };
    const secondHalf =
      half !== undefined && drained.records > half.records
        ? {
            secondHalfCpuUsPerRecord: cpuUsPerRecord(
              1e6 * (cpuAtEndS - half.cpuS),
              drained.records - half.records,
            ),
          }
        : {};
    return {
      ...drained,
      cpuUsPerRecord: cpuUsPerRecord(1e6 * cpuS, drained.records),
      ...secondHalf,
      cpuSplit,
      stateWork,
    };
  } finally {
    await scorer.stop();
  }
}
