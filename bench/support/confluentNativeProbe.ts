// Confluent's librdkafka client through its own (node-rdkafka) API rather than its KafkaJS one:
// bench section 10 measures the KafkaJS API through the port, and this asks whether the lower
// API, batches of 1,000 from consume(n) and produce() without promises, is what would make
// librdkafka worth a port adapter. Not part of `npm run bench`: it needs the same out-of-repo
// build as bench/support/confluentPort.ts (see there), and it has no port adapter to go through.
//   BENCH_CONFLUENT_KAFKA_DIR=/tmp/rdk KAFKA_BROKERS=127.0.0.1:9092 \
//     npx tsx bench/support/confluentNativeProbe.ts [records] [rounds]
// Fills a new 12-partition topic with 120 B records (idempotent producer), then in each round a
// new group consumes it all, and another consumes and produces each record to a new topic,
// committing after every consume(n). CPU is process.cpuUsage (librdkafka's threads included)
// from the first record to the last record consumed (consume) or acknowledged (passthrough).
import { median } from "./alternatingRounds.js";
import { requireConfluentKafka } from "./confluentPort.js";
import { processCpuUs } from "./drainCpu.js";

interface Message {
  value: Buffer;
  key?: Buffer;
  partition: number;
  offset: number;
}
interface Client {
  connect(): void;
  disconnect(cb?: () => void): void;
  on(event: string, listener: (...args: never[]) => void): void;
}
interface Producer extends Client {
  setPollInterval(ms: number): void;
  poll(): void;
  produce(topic: string, partition: number, value: Buffer, key: Buffer): void;
}
interface Consumer extends Client {
  setDefaultConsumeTimeout(ms: number): void;
  subscribe(topics: string[]): void;
  consume(n: number, cb: (err: Error | null, messages: Message[]) => void): void;
  commit(offsets: Array<{ topic: string; partition: number; offset: number }>): void;
}
interface Native {
  Producer: new (config: Record<string, unknown>) => Producer;
  KafkaConsumer: new (config: Record<string, unknown>, topicConfig: Record<string, unknown>) => Consumer;
  AdminClient: {
    create(config: Record<string, unknown>): {
      createTopic(t: object, cb: (err: Error | null) => void): void;
      deleteTopic(topic: string, cb: (err: Error | null) => void): void;
      disconnect(): void;
    };
  };
}

const loaded = requireConfluentKafka<Native>();
if (typeof loaded === "string") throw new Error(loaded);
const kafka = loaded.module;
const brokers = process.env.KAFKA_BROKERS ?? "127.0.0.1:9092";
const records = Number(process.argv[2] ?? 200_000);
const rounds = Number(process.argv[3] ?? 3);
const PARTITIONS = 12;
const NO_KEY = Buffer.alloc(0);
const run = `probe-${Date.now()}`;

async function createTopic(topic: string): Promise<void> {
  const admin = kafka.AdminClient.create({ "bootstrap.servers": brokers });
  await new Promise<void>((resolve, reject) =>
    admin.createTopic({ topic, num_partitions: PARTITIONS, replication_factor: 1 }, (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  admin.disconnect();
}

async function producer(): Promise<Producer> {
  const p = new kafka.Producer({
    "bootstrap.servers": brokers,
    "enable.idempotence": true,
    acks: "all",
    "linger.ms": 5,
    "queue.buffering.max.messages": 500_000,
    dr_cb: true,
  });
  await new Promise<void>((resolve) => {
    p.on("ready", () => resolve());
    p.connect();
  });
  p.setPollInterval(10);
  return p;
}

/** produce() throws while librdkafka's queue is full; polling serves delivery reports to make room. */
function produce(p: Producer, topic: string, partition: number, value: Buffer, key: Buffer): void {
  for (;;) {
    try {
      return p.produce(topic, partition, value, key);
    } catch {
      p.poll();
    }
  }
}

async function fill(topic: string): Promise<void> {
  await createTopic(topic);
  const p = await producer();
  let acked = 0;
  const done = new Promise<void>((resolve) =>
    p.on("delivery-report", () => ++acked === records && resolve()),
  );
  const value = Buffer.alloc(120, 7);
  for (let i = 0; i < records; i++) produce(p, topic, i % PARTITIONS, value, Buffer.from(String(i)));
  await done;
  await new Promise<void>((resolve) => p.disconnect(() => resolve()));
}

async function drain(
  input: string,
  group: string,
  output?: string,
): Promise<{ perSecond: number; cpuUs: number }> {
  let p: Producer | undefined;
  if (output !== undefined) {
    await createTopic(output);
    p = await producer();
  }
  const consumer = new kafka.KafkaConsumer(
    { "bootstrap.servers": brokers, "group.id": group, "enable.auto.commit": false },
    { "auto.offset.reset": "earliest" },
  );
  await new Promise<void>((resolve) => {
    consumer.on("ready", () => resolve());
    consumer.connect();
  });
  consumer.setDefaultConsumeTimeout(100);
  consumer.subscribe([input]);
  let consumed = 0;
  let acked = 0;
  let t0 = 0;
  let cpu0 = 0;
  await new Promise<void>((resolve) => {
    p?.on("delivery-report", () => ++acked === records && resolve());
    const next = (): void =>
      consumer.consume(1_000, (err, messages) => {
        if (err === null && messages.length > 0) {
          if (consumed === 0) [t0, cpu0] = [performance.now(), processCpuUs()];
          const last = new Map<number, number>();
          for (const m of messages) {
            if (p !== undefined) produce(p, output!, m.partition, m.value, m.key ?? NO_KEY);
            last.set(m.partition, m.offset);
          }
          consumed += messages.length;
          consumer.commit(
            [...last].map(([partition, offset]) => ({ topic: input, partition, offset: offset + 1 })),
          );
        }
        if (p === undefined && consumed >= records) resolve();
        else if (consumed < records) setImmediate(next);
      });
    next();
  });
  const result = {
    perSecond: records / ((performance.now() - t0) / 1000),
    cpuUs: (processCpuUs() - cpu0) / records,
  };
  consumer.disconnect();
  p?.disconnect();
  return result;
}

async function deleteTopics(topics: string[]): Promise<void> {
  const admin = kafka.AdminClient.create({ "bootstrap.servers": brokers });
  for (const topic of topics) await new Promise<void>((resolve) => admin.deleteTopic(topic, () => resolve()));
  admin.disconnect();
}

const input = `${run}-in`;
await fill(input);
const consume: Array<{ perSecond: number; cpuUs: number }> = [];
const passthrough: Array<{ perSecond: number; cpuUs: number }> = [];
for (let r = 1; r <= rounds; r++) {
  consume.push(await drain(input, `${run}-consume-${r}`));
  passthrough.push(await drain(input, `${run}-passthrough-${r}`, `${run}-out-${r}`));
  const [c, t] = [consume.at(-1)!, passthrough.at(-1)!];
  console.log(
    `round ${r}: consume ${Math.round(c.perSecond)} records/s ${c.cpuUs.toFixed(2)} µs; ` +
      `passthrough ${Math.round(t.perSecond)} records/s ${t.cpuUs.toFixed(2)} µs`,
  );
}
console.log(
  `median of ${rounds}: consume ${Math.round(median(consume.map((x) => x.perSecond)))} records/s, ` +
    `${median(consume.map((x) => x.cpuUs)).toFixed(2)} CPU µs/record; passthrough ` +
    `${Math.round(median(passthrough.map((x) => x.perSecond)))} records/s, ` +
    `${median(passthrough.map((x) => x.cpuUs)).toFixed(2)} CPU µs/record`,
);
await deleteTopics([input, ...passthrough.map((_, r) => `${run}-out-${r + 1}`)]);
setTimeout(() => process.exit(0), 500).unref();
