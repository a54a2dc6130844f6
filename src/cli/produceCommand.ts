// `fraud-scorer produce`: open-loop load onto the transactions topic, from the simulator or a
// file, at a fixed rate, by count or duration, in either framing.
import type { Command } from "commander";
import type { Kafka } from "kafkajs";
import pino from "pino";
import { SchemaRegistry } from "../codec/schemaRegistry.js";
import { createLogger } from "../ops/logger.js";
import { createKafka } from "../stream/kafkaClient.js";
import { produceTraffic, type TrafficFraming } from "../traffic/produceTraffic.js";
import { fileTraffic, simulatedTraffic, type TrafficSource } from "../traffic/trafficSource.js";
import {
  brokerList,
  parseDuration,
  parsePositiveInteger,
  parsePositiveNumber,
  refuseArguments,
} from "./cliArguments.js";
import { progressWanted, startProgress } from "./progressBar.js";

interface ProduceFlags {
  topic?: string;
  kafkaBrokers?: string;
  schemaRegistryUrl?: string;
  rate: string;
  count?: string;
  duration?: string;
  framing: string;
  file?: string;
  labels?: string;
  seed: string;
  cards?: string;
  idPrefix?: string;
  progress: boolean;
}

export function registerProduceCommand(program: Command): void {
  program
    .command("produce")
    .description(
      "generate open-loop load: transactions at a fixed rate, timestamped with their scheduled send time",
    )
    .option("--topic <name>", "topic to write (default: $KAFKA_TRANSACTIONS_TOPIC or transactions)")
    .option("--kafka-brokers <list>", "Kafka brokers (default: $KAFKA_BROKERS)")
    .option("--schema-registry-url <url>", "registry for --framing confluent (default: $SCHEMA_REGISTRY_URL)")
    .option("--rate <tx/s>", "transactions per second", "500")
    .option("--count <n>", "send this many transactions")
    .option("--duration <time>", "or send for this long, e.g. 30s, 2m (default 10s)")
    .option("--framing <framing>", "delimited or confluent", "delimited")
    .option("--file <path>", "send transactions from a .pbd file instead of the simulator")
    .option("--labels <csv>", "labels for --file (transaction_id,is_fraud)")
    .option("--seed <n>", "simulator seed", "42")
    .option("--cards <n>", "simulated cards (default: sized to the run)")
    .option("--id-prefix <text>", "prefix for simulated transaction ids")
    .option("--no-progress", "no progress display")
    .action(async (flags: ProduceFlags) => {
      const problems: string[] = [];
      const check = <T>(v: T | string): T | undefined => {
        if (typeof v === "string") {
          problems.push(v);
          return undefined;
        }
        return v;
      };
      const rate = check(parsePositiveNumber(flags.rate, "--rate"));
      if (flags.count !== undefined && flags.duration !== undefined)
        problems.push("give --count or --duration, not both");
      const count =
        flags.count === undefined ? undefined : check(parsePositiveInteger(flags.count, "--count"));
      const durationMs =
        flags.count === undefined ? check(parseDuration(flags.duration ?? "10s")) : undefined;
      const framing = flags.framing as TrafficFraming;
      if (framing !== "delimited" && framing !== "confluent")
        problems.push(`--framing "${flags.framing}" is not delimited or confluent`);
      const brokers = brokerList(flags.kafkaBrokers ?? process.env.KAFKA_BROKERS);
      if (!brokers) problems.push("no brokers: give --kafka-brokers or set KAFKA_BROKERS");
      const registryUrl = flags.schemaRegistryUrl ?? process.env.SCHEMA_REGISTRY_URL;
      if (framing === "confluent" && !registryUrl)
        problems.push(
          "--framing confluent needs the registry: give --schema-registry-url or set SCHEMA_REGISTRY_URL",
        );
      if (flags.labels !== undefined && flags.file === undefined)
        problems.push("--labels only applies to --file");
      const seed = check(parsePositiveInteger(flags.seed, "--seed"));
      const cards =
        flags.cards === undefined ? undefined : check(parsePositiveInteger(flags.cards, "--cards"));
      if (problems.length > 0 || rate === undefined || !brokers || seed === undefined)
        refuseArguments("produce", problems);

      const topic = flags.topic ?? process.env.KAFKA_TRANSACTIONS_TOPIC ?? "transactions";
      const planned = count ?? Math.floor(((durationMs ?? 0) * rate) / 1000);
      let source: TrafficSource;
      try {
        source = flags.file
          ? await fileTraffic(flags.file, flags.labels)
          : simulatedTraffic({
              seed,
              transactions: planned,
              ...(cards !== undefined ? { cards } : {}),
              ...(flags.idPrefix ? { idPrefix: flags.idPrefix } : {}),
            });
      } catch (err) {
        refuseArguments("produce", [(err as Error).message]);
      }
      // kafkajs logs every retry as an error; failures are counted and the first one is shown.
      const logger = createLogger({
        level: "fatal",
        name: "fraud-scorer-produce",
        destination: pino.destination(2),
      });
      const kafka = createKafka({ brokers, clientId: "fraud-scorer-produce", logger });
      const missing = await topicProblem(kafka, topic);
      if (missing) refuseArguments("produce", [missing]);
      let transactionSchemaId: number | undefined;
      if (framing === "confluent") {
        const registry = new SchemaRegistry({ url: registryUrl! });
        ({ transactionSchemaId } = await registry.registerContracts({ transactionsTopic: topic }));
      }
      process.stderr.write(
        `producing ${planned} transactions to ${topic} at ${rate} tx/s (${framing}) from ${source.description}\n`,
      );
      const bar = startProgress({
        label: "produce",
        total: planned,
        enabled: progressWanted(flags.progress),
        extra: "acked {acked} · failed {failed}",
        payload: { acked: 0, failed: 0 },
      });
      let lastLine = 0;
      const abort = new AbortController();
      process.once("SIGINT", () => abort.abort());
      const summary = await produceTraffic({
        kafka,
        topic,
        source,
        ratePerSecond: rate,
        ...(count !== undefined ? { count } : { durationMs: durationMs! }),
        framing,
        ...(transactionSchemaId !== undefined ? { transactionSchemaId } : {}),
        signal: abort.signal,
        onProgress: (p) => {
          bar.update(p.issued, { acked: p.acked, failed: p.failed });
          if (!progressWanted(flags.progress) && flags.progress && p.elapsedMs - lastLine >= 5000) {
            lastLine = p.elapsedMs;
            process.stderr.write(
              `  ${(p.elapsedMs / 1000).toFixed(0)} s: ${p.acked}/${p.planned} acknowledged, ${p.failed} failed\n`,
            );
          }
        },
      });
      bar.stop();
      process.stderr.write(
        `sent ${summary.acked} of ${summary.planned} in ${(summary.elapsedMs / 1000).toFixed(1)} s ` +
          `(${summary.achievedRatePerSecond.toFixed(0)} tx/s), ${summary.failed} failed; ` +
          `largest lag behind schedule ${summary.maxIssueLagMs.toFixed(1)} ms` +
          (summary.stalls > 0 ? `, ${summary.stalls} stalls waiting on the broker` : "") +
          (summary.firstError ? `\nfirst error: ${summary.firstError}` : "") +
          "\n",
      );
      if (summary.failed > 0) process.exitCode = 1;
    });
}

/** Sending to a missing topic would only retry until every send failed: say so up front. */
async function topicProblem(kafka: Kafka, topic: string): Promise<string | undefined> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    if (!(await admin.listTopics()).includes(topic))
      return `topic "${topic}" does not exist; create it or pick another with --topic (the stack has "transactions")`;
    return undefined;
  } catch (err) {
    return `cannot reach Kafka: ${(err as Error).message}`;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}
