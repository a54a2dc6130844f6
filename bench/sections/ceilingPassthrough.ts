// The ceiling's foil, run as its own process (like `serve`): consumes the transactions topic
// and produces every record to an output topic, with no decoding and no scoring; offsets are
// committed after the records are acknowledged, as in `serve`. Two clients:
// - "port" (the reference): the product's Kafka port, @platformatic/kafka, with serve's default
//   settings — classic group protocol, 10 s session, idempotent acks=all sink, commits after
//   acknowledgements, together at most every commit interval (serve's OffsetCommitter). Issue 10 judges the scorer's drain against this.
// - "kafkajs": kafkajs 2.2.4 as the scorer configured it before the port, a second reference.
//   node --import tsx bench/sections/ceilingPassthrough.ts   (config from the environment)
// Its CPU (process.cpuUsage, every thread: what serve's process_cpu_seconds_total counts) goes
// out with the joined line and on SIGUSR2, so the ceiling can set it beside the scorer's.
import { CompressionTypes, Kafka, logLevel, Partitioners } from "kafkajs";
import { createKafkaPort } from "../../src/stream/kafka/index.js";
import { configKeyDefault } from "../../src/ops/configSchema.js";
import { OffsetCommitter } from "../../src/stream/offsetCommitter.js";
import { forwardBatches } from "../../src/tools/forwardBatches.js";
import { processCpuUs } from "../support/drainCpu.js";

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

export type PassthroughClient = "port" | "kafkajs";

const brokers = env("KAFKA_BROKERS").split(",");
const input = env("PASSTHROUGH_INPUT");
const output = env("PASSTHROUGH_OUTPUT");
const groupId = env("PASSTHROUGH_GROUP");
const client = (process.env.PASSTHROUGH_CLIENT ?? "port") as PassthroughClient;
const joined = () => process.stdout.write(`${JSON.stringify({ joined: true, cpuUs: processCpuUs() })}\n`);
process.on("SIGUSR2", () => process.stdout.write(`${JSON.stringify({ cpuUs: processCpuUs() })}\n`));

const stop = client === "port" ? await throughPort() : await throughKafkajs();
const stopping = () => void stop().then(() => process.exit(0));
process.once("SIGTERM", stopping);
process.once("SIGINT", stopping);

async function throughPort(): Promise<() => Promise<void>> {
  const port = createKafkaPort({ brokers, clientId: "bench-passthrough" });
  const sink = port.sink();
  const source = port.groupSource({
    topics: [input],
    groupId,
    groupProtocol: "classic",
    sessionTimeoutMs: 10_000,
    onEvent: (event) => {
      if (event.type === "joined") joined();
      if (event.type === "crashed") {
        process.stderr.write(`passthrough: the source crashed: ${String(event.error)}\n`);
        process.exit(1);
      }
    },
  });
  // Offsets committed as `serve` commits them: together, at most every commit interval.
  const commits = new OffsetCommitter({
    commit: (offsets) => source.commit(offsets),
    intervalMs: configKeyDefault("kafka.commitIntervalMs") as number,
  });
  await source.start(async (batches) => {
    await forwardBatches(batches, output, sink, (offsets) => {
      for (const o of offsets) commits.track(o.topic, o.partition, o.offset - 1, Promise.resolve());
    });
  });
  return async () => {
    await commits.flush();
    await source.close();
    await sink.close();
  };
}

/** Records per kafkajs send: well under a 1 MiB record batch at the bench's ~130 B records. */
const KAFKAJS_SEND_SLICE = 2_000;

async function throughKafkajs(): Promise<() => Promise<void>> {
  const kafka = new Kafka({ clientId: "bench-passthrough", brokers, logLevel: logLevel.WARN });
  const consumer = kafka.consumer({
    groupId,
    allowAutoTopicCreation: false,
    maxWaitTimeInMs: 250,
    sessionTimeout: 30_000,
    heartbeatInterval: 3_000,
  });
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topics: [input], fromBeginning: true });
  consumer.on(consumer.events.GROUP_JOIN, joined);
  await consumer.run({
    partitionsConsumedConcurrently: 12,
    autoCommit: true,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary, heartbeat }) => {
      if (batch.messages.length === 0) return;
      // A fetched batch can hold a partition's whole 1 MiB fetch: sent as one record batch it
      // is over the topic's max.message.bytes, so it goes out in slices, in order.
      for (let i = 0; i < batch.messages.length; i += KAFKAJS_SEND_SLICE)
        await producer.send({
          topic: output,
          acks: -1,
          compression: CompressionTypes.None,
          messages: batch.messages
            .slice(i, i + KAFKAJS_SEND_SLICE)
            .map((m) => ({ key: m.key, value: m.value })),
        });
      resolveOffset(batch.messages.at(-1)!.offset);
      await commitOffsetsIfNecessary();
      await heartbeat();
    },
  });
  return async () => {
    await consumer.disconnect();
    await producer.disconnect();
  };
}
