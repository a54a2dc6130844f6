// The Kafka port on Confluent's librdkafka client (@confluentinc/kafka-javascript, its KafkaJS-
// compatible API), for the bench's client comparison only, and only when one has been built
// outside the repository: it is a native build (minutes) and never one of the project's
// dependencies. Point BENCH_CONFLUENT_KAFKA_DIR at the folder it was installed into, e.g.
//   mkdir /tmp/rdk && cd /tmp/rdk && npm install --ignore-scripts @confluentinc/kafka-javascript
//   cd node_modules/@confluentinc/kafka-javascript && CKJS_LINKING=dynamic \
//     node-gyp rebuild --nodedir=<Node 22 with include/> -j 1
// (-j 1: the generated makefile races its own configure step with parallel jobs).
// Configured as the other candidates: idempotent acks=all producer, batches of up to 1,000 records
// handed over per partition (the API's default is 32), manual commits.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { GroupSourceOptions, KafkaPort, RecordSink, RecordSource } from "../../src/stream/kafkaPort.js";
import {
  kafkajsApiSink,
  kafkajsApiSource,
  unofferedPortParts,
  type KafkajsApiConsumer,
  type KafkajsApiProducer,
} from "./kafkajsApiPort.js";

export const CONFLUENT_DIR_VARIABLE = "BENCH_CONFLUENT_KAFKA_DIR";
const PACKAGE = "@confluentinc/kafka-javascript";

// The few shapes used here, so the bench compiles without the package installed.
interface ConfluentKafka {
  consumer(config: Record<string, unknown>): KafkajsApiConsumer;
  producer(config: Record<string, unknown>): KafkajsApiProducer;
}
interface ConfluentModule {
  KafkaJS: { Kafka: new (config: Record<string, unknown>) => ConfluentKafka; logLevel: { NOTHING: number } };
  librdkafkaVersion?: string;
}

/**
 * The package as built in `dir` (BENCH_CONFLUENT_KAFKA_DIR unless told), with its version, or why
 * there is none. Its exports are typed by the caller: each uses a different API of it.
 */
export function requireConfluentKafka<T>(
  dir = process.env[CONFLUENT_DIR_VARIABLE],
): { module: T; version: string } | string {
  if (dir === undefined || dir === "")
    return `${CONFLUENT_DIR_VARIABLE} not set (see bench/support/confluentPort.ts)`;
  if (!existsSync(join(dir, "node_modules", PACKAGE))) return `${PACKAGE} not installed in ${dir}`;
  const require = createRequire(join(dir, "package.json"));
  try {
    const module = require(PACKAGE) as T;
    return { module, version: (require(`${PACKAGE}/package.json`) as { version: string }).version };
  } catch (error) {
    return `${PACKAGE} in ${dir} does not load: ${(error as Error).message}`;
  }
}

/** The candidate, or why there is none. */
export async function loadConfluentPort(
  brokers: readonly string[],
  dir = process.env[CONFLUENT_DIR_VARIABLE],
): Promise<{ label: string; port: () => KafkaPort } | string> {
  const loaded = requireConfluentKafka<ConfluentModule>(dir);
  if (typeof loaded === "string") return loaded;
  const { module, version } = loaded;
  const label = `${PACKAGE} ${version} (librdkafka ${module.librdkafkaVersion ?? "?"}, KafkaJS API)`;
  return { label, port: () => confluentPort(module, brokers) };
}

function confluentPort(module: ConfluentModule, brokers: readonly string[]): KafkaPort {
  const kafka = new module.KafkaJS.Kafka({
    kafkaJS: {
      brokers: [...brokers],
      clientId: "bench-confluent",
      logLevel: module.KafkaJS.logLevel.NOTHING,
    },
  });
  return {
    groupSource: (options) => confluentSource(kafka, options),
    sink: () => confluentSink(kafka),
    ...unofferedPortParts("Confluent"),
  };
}

function confluentSource(kafka: ConfluentKafka, options: GroupSourceOptions): RecordSource {
  const consumer = kafka.consumer({
    kafkaJS: {
      groupId: options.groupId,
      fromBeginning: true,
      autoCommit: false,
      maxWaitTimeInMs: options.maxWaitMs ?? 250,
    },
    "js.consumer.max.batch.size": 1_000,
  });
  return kafkajsApiSource(consumer, options, { joinedOnFirstBatch: true });
}

function confluentSink(kafka: ConfluentKafka): RecordSink {
  return kafkajsApiSink(
    kafka.producer({ kafkaJS: { idempotent: true, acks: -1, allowAutoTopicCreation: false } }),
    {},
  );
}
