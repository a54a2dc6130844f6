// Kafka's own load tools (org.apache.kafka.tools.ProducerPerformance / ConsumerPerformance), run
// from the jars the local stack cached, as the broker's limit on this machine.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface KafkaTools {
  readonly java: string;
  readonly classpath: string;
  readonly version: string;
}

/** The newest cached Kafka jar directory that holds the tools, and a Java to run them. */
export function findKafkaTools(root: string): KafkaTools | undefined {
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "fraud-scorer");
  if (!existsSync(cache)) return undefined;
  const dirs = readdirSync(cache)
    .filter((name) => name.startsWith("kafka-"))
    .map((name) => join(cache, name))
    .filter((dir) => readdirSync(dir).some((f) => /^kafka-tools-[\d.]+\.jar$/.test(f)))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  const dir = dirs[0];
  if (dir === undefined) return undefined;
  const toolsJar = readdirSync(dir).find((f) => /^kafka-tools-[\d.]+\.jar$/.test(f))!;
  const stackJava = join(root, ".stack/kafka/java");
  const java = existsSync(stackJava) ? readFileSync(stackJava, "utf8").trim() : "java";
  return { java, classpath: `${dir}/*`, version: toolsJar.replace(/^kafka-tools-|\.jar$/g, "") };
}

export interface ProducerPerfResult {
  readonly records: number;
  readonly recordsPerSecond: number;
  readonly mbPerSecond: number;
  readonly avgLatencyMs: number;
  readonly p99LatencyMs: number;
}

export async function producerPerformance(
  tools: KafkaTools,
  {
    brokers,
    topic,
    records,
    recordSize,
  }: { brokers: string; topic: string; records: number; recordSize: number },
): Promise<ProducerPerfResult> {
  const { stdout } = await run(
    tools.java,
    [
      "-Xmx256m",
      "-cp",
      tools.classpath,
      "org.apache.kafka.tools.ProducerPerformance",
      "--bootstrap-server",
      brokers,
      "--topic",
      topic,
      "--num-records",
      String(records),
      "--record-size",
      String(recordSize),
      "--throughput",
      "-1",
      "--command-property",
      "acks=all",
    ],
    { maxBuffer: 16 * 1024 * 1024, timeout: 300_000 },
  );
  // "500000 records sent, 190839.7 records/sec (21.84 MB/sec), 812.3 ms avg latency, 1500.0 ms
  //  max latency, 800 ms 50th, 1400 ms 95th, 1450 ms 99th, 1490 ms 99.9th."
  const line = stdout
    .trim()
    .split("\n")
    .reverse()
    .find((l) => l.includes("records sent"));
  const m =
    line &&
    /([\d.]+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency.*?([\d.]+) ms 99th/.exec(
      line,
    );
  if (!m) throw new Error(`ProducerPerformance printed no summary:\n${stdout.slice(-2000)}`);
  return {
    records: Number(m[1]),
    recordsPerSecond: Math.round(Number(m[2])),
    mbPerSecond: Number(m[3]),
    avgLatencyMs: Number(m[4]),
    p99LatencyMs: Number(m[5]),
  };
}

export interface ConsumerPerfResult {
  readonly records: number;
  /** Over the fetch time alone (the group join excluded). */
  readonly recordsPerSecond: number;
  readonly mbPerSecond: number;
  /** Including the group join. */
  readonly recordsPerSecondWithJoin: number;
}

export async function consumerPerformance(
  tools: KafkaTools,
  { brokers, topic, records, group }: { brokers: string; topic: string; records: number; group: string },
): Promise<ConsumerPerfResult> {
  const { stdout } = await run(
    tools.java,
    [
      "-Xmx256m",
      "-cp",
      tools.classpath,
      "org.apache.kafka.tools.ConsumerPerformance",
      "--bootstrap-server",
      brokers,
      "--topic",
      topic,
      "--num-records",
      String(records),
      "--group",
      group,
      "--timeout",
      "30000",
    ],
    { maxBuffer: 16 * 1024 * 1024, timeout: 300_000 },
  );
  // start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
  // rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
  const lines = stdout.trim().split("\n");
  const header = lines.findIndex((l) => l.includes("nMsg.sec"));
  const fields = lines[header + 1]?.split(",").map((f) => f.trim());
  if (header < 0 || !fields || fields.length < 10)
    throw new Error(`ConsumerPerformance printed no summary:\n${stdout.slice(-2000)}`);
  return {
    records: Number(fields[4]),
    recordsPerSecond: Math.round(Number(fields[9])),
    mbPerSecond: Number(fields[8]),
    recordsPerSecondWithJoin: Math.round(Number(fields[5])),
  };
}
