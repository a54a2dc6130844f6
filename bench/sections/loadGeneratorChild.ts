// The load generator measured in a process of its own, so process.cpuUsage is its cost alone:
// one simulation, then each rate in turn through produceTraffic (the code `fraud-scorer produce`
// runs), to a discarding sink or to Kafka, one JSON line per rate on stdout.
//   node --import tsx bench/sections/loadGeneratorChild.ts '<json LoadGeneratorChildPlan>'
import { openKafkaTrafficSink } from "../../src/tools/traffic/kafkaTrafficSink.js";
import { produceTraffic } from "../../src/tools/traffic/produceTraffic.js";
import { discardingTrafficSink, type TrafficSink } from "../../src/tools/traffic/trafficSink.js";
import { simulatedTraffic, sliceOf } from "../../src/tools/traffic/trafficSource.js";
import { benchPort } from "../support/benchKafka.js";

export interface LoadGeneratorChildPlan {
  readonly sink: "discard" | "kafka";
  readonly brokers: string;
  readonly topic: string;
  readonly partitions: number;
  readonly perRecord: number;
  readonly lingerMs: number;
  readonly rates: readonly number[];
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly distinctTransactions: number;
}

const plan = JSON.parse(process.argv[2] ?? "{}") as LoadGeneratorChildPlan;
const source = simulatedTraffic({ seed: 7, transactions: plan.distinctTransactions, idPrefix: "loadgen-" });
const sink: TrafficSink =
  plan.sink === "discard"
    ? discardingTrafficSink(plan.partitions)
    : await openKafkaTrafficSink({ kafka: benchPort(plan.brokers, "bench-loadgen"), topic: plan.topic });
let offset = 0;
const run = async (rate: number, seconds: number) => {
  const count = Math.round(rate * seconds);
  const summary = await produceTraffic({
    sink,
    topic: plan.topic,
    source: sliceOf(source, offset, count),
    ratePerSecond: rate,
    count,
    perRecord: plan.perRecord,
    lingerMs: plan.lingerMs,
  });
  offset += count;
  return summary;
};
try {
  // Each distinct transaction's body is encoded once, ahead of time (transactionFrames.ts):
  // one pass over them at the highest rate, so that every step measures the steady state, not
  // whichever step happens to meet a body first. Then JIT and connections warm at the lowest rate.
  const highest = Math.max(...plan.rates);
  await run(highest, plan.distinctTransactions / highest);
  await run(Math.min(...plan.rates), plan.warmupSeconds);
  for (const rate of plan.rates) {
    const s = await run(rate, plan.seconds);
    process.stdout.write(`${JSON.stringify({ rate, summary: s })}\n`);
  }
} finally {
  await sink.close();
}
