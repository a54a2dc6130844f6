// The ceiling's foil, run as its own process (like `serve`): the same Kafka client (kafkajs),
// configured as TransactionConsumer and DecisionProducer configure it, consuming the
// transactions topic and producing every record to an output topic, with no decoding and no
// scoring. Offsets are committed after the batch's records are acknowledged, as in `serve`.
//   node --import tsx bench/sections/ceilingPassthrough.ts   (config from the environment)
import { CompressionTypes, Kafka, logLevel, Partitioners } from "kafkajs";

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const kafka = new Kafka({
  clientId: "bench-passthrough",
  brokers: env("KAFKA_BROKERS").split(","),
  logLevel: logLevel.WARN,
});
const consumer = kafka.consumer({
  groupId: env("PASSTHROUGH_GROUP"),
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
const output = env("PASSTHROUGH_OUTPUT");

await producer.connect();
await consumer.connect();
await consumer.subscribe({ topics: [env("PASSTHROUGH_INPUT")], fromBeginning: true });
consumer.on(consumer.events.GROUP_JOIN, () => process.stdout.write(`${JSON.stringify({ joined: true })}\n`));
await consumer.run({
  partitionsConsumedConcurrently: Number(process.env.PASSTHROUGH_PARTITIONS_CONCURRENTLY ?? 12),
  autoCommit: true,
  eachBatchAutoResolve: false,
  eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary, heartbeat }) => {
    if (batch.messages.length === 0) return;
    await producer.send({
      topic: output,
      acks: -1,
      compression: CompressionTypes.None,
      messages: batch.messages.map((m) => ({ key: m.key, value: m.value })),
    });
    resolveOffset(batch.messages.at(-1)!.offset);
    await commitOffsetsIfNecessary();
    await heartbeat();
  },
});

const stop = async () => {
  await consumer.disconnect();
  await producer.disconnect();
  process.exit(0);
};
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
