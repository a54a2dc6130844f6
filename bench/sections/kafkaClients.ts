// 8. Kafka clients: kafkajs (the client before the port) vs @platformatic/kafka (the one the
// product uses), both through the port, side by side in one run: idempotent acks=all produce,
// consume, and consume→produce passthrough with commits after acknowledgements, as records/s
// and CPU µs per record (process.cpuUsage of this process, which runs one client at a time);
// then the restart stall: a member SIGKILLed and restarted at once, with and without static
// membership. The librdkafka clients are not built: a native build costs minutes on a 2-core
// shared machine, and the probe had them behind on passthrough.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { createKafkaPort } from "../../src/stream/kafka/index.js";
import type { KafkaPort, OutgoingRecord, RecordBatch, RecordSource } from "../../src/stream/kafkaPort.js";
import { median } from "../support/alternatingRounds.js";
import type { BenchContext } from "../support/benchContext.js";
import { createKafkajsPort } from "../support/kafkajsPort.js";

export interface ClientFigure {
  readonly recordsPerSecond: number;
  readonly cpuUsPerRecord: number;
}

export interface ClientFigures {
  readonly produce: ClientFigure;
  readonly consume: ClientFigure;
  readonly passthrough: ClientFigure;
}

export interface RestartStall {
  /** SIGKILL → the restarted member's first batch (its process start included). */
  readonly stallMs: number;
  /** The restarted process's start → its first batch (joining and fetching). */
  readonly rejoinMs: number;
}

export interface KafkaClientsResult {
  readonly records: number;
  readonly recordBytes: number;
  readonly partitions: number;
  readonly rounds: number;
  readonly kafkajs: ClientFigures;
  readonly platformatic: ClientFigures;
  readonly restart: { readonly staticMembership: RestartStall; readonly dynamicMembership: RestartStall };
}

const CLIENTS = {
  kafkajs: (brokers: string[]) => createKafkajsPort(brokers),
  platformatic: (brokers: string[]) => createKafkaPort({ brokers, clientId: "bench-platformatic" }),
} as const;
type ClientName = keyof typeof CLIENTS;

const RECORD_BYTES = 120;
const CHUNK = 1_000;
const CONCURRENT_CHUNKS = 4;

export async function kafkaClients(ctx: BenchContext): Promise<KafkaClientsResult> {
  const { records, partitions, rounds } = ctx.plan.kafkaClients;
  const brokers = ctx.endpoints.kafkaBrokers.split(",");
  ctx.log(
    `kafka clients: kafkajs vs @platformatic/kafka through the port, ${records} records × ${rounds} rounds`,
  );
  const samples: Record<ClientName, Record<keyof ClientFigures, ClientFigure[]>> = {
    kafkajs: { produce: [], consume: [], passthrough: [] },
    platformatic: { produce: [], consume: [], passthrough: [] },
  };
  for (let round = 0; round < rounds; round++) {
    const order: ClientName[] = round % 2 === 0 ? ["kafkajs", "platformatic"] : ["platformatic", "kafkajs"];
    for (const name of order) {
      const port = CLIENTS[name](brokers);
      const input = await ctx.topics.topic(`clients-in-${name}`, partitions);
      const output = await ctx.topics.topic(`clients-out-${name}`, partitions);
      const produce = await measure(records, () => produceAll(port, input, records));
      const consume = await consumeAll(port, input, records);
      const passthrough = await passthroughAll(port, input, output, records);
      for (const [k, v] of Object.entries({ produce, consume, passthrough }))
        samples[name][k as keyof ClientFigures].push(v);
      ctx.log(
        `kafka clients: ${name} round ${round + 1}: produce ${fmt(produce)}, consume ${fmt(consume)}, passthrough ${fmt(passthrough)}`,
      );
    }
  }
  const figures = (name: ClientName): ClientFigures => ({
    produce: medianFigure(samples[name].produce),
    consume: medianFigure(samples[name].consume),
    passthrough: medianFigure(samples[name].passthrough),
  });
  const restart = {
    staticMembership: await restartStall(ctx, true),
    dynamicMembership: await restartStall(ctx, false),
  };
  ctx.log(
    `kafka clients: restart stall static ${restart.staticMembership.stallMs} ms, dynamic ${restart.dynamicMembership.stallMs} ms`,
  );
  return {
    records,
    recordBytes: RECORD_BYTES,
    partitions,
    rounds,
    kafkajs: figures("kafkajs"),
    platformatic: figures("platformatic"),
    restart,
  };
}

const fmt = (f: ClientFigure) => `${Math.round(f.recordsPerSecond)} rec/s ${f.cpuUsPerRecord.toFixed(1)} µs`;

const medianFigure = (figures: readonly ClientFigure[]): ClientFigure => ({
  recordsPerSecond: median(figures.map((f) => f.recordsPerSecond)),
  cpuUsPerRecord: median(figures.map((f) => f.cpuUsPerRecord)),
});

/** Wall time and this process's CPU time of `work` over `records` records. */
async function measure(records: number, work: () => Promise<void>): Promise<ClientFigure> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { recordsPerSecond: records / seconds, cpuUsPerRecord: (cpu.user + cpu.system) / records };
}

async function produceAll(port: KafkaPort, topic: string, records: number): Promise<void> {
  const sink = port.sink();
  const value = Buffer.alloc(RECORD_BYTES, 7);
  let next = 0;
  const worker = async () => {
    while (next < records) {
      const start = next;
      next = Math.min(records, next + CHUNK);
      const chunk: OutgoingRecord[] = [];
      for (let i = start; i < next; i++) chunk.push({ topic, key: `card-${i % 5_000}`, value });
      await sink.publish(chunk);
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENT_CHUNKS }, worker));
  } finally {
    await sink.close();
  }
}

/**
 * Reads `records` records through a fresh group; timed from the moment the group is joined,
 * so the broker's initial rebalance delay is not counted.
 */
async function drain(
  port: KafkaPort,
  topic: string,
  records: number,
  onBatches: (batches: readonly RecordBatch[], source: RecordSource) => Promise<void> | void,
): Promise<ClientFigure> {
  let seen = 0;
  let cpu0: NodeJS.CpuUsage | undefined;
  let t0 = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => (done = resolve));
  const startClock = () => {
    if (cpu0 !== undefined) return;
    cpu0 = process.cpuUsage();
    t0 = performance.now();
  };
  const source = port.groupSource({
    topics: [topic],
    groupId: `bench-clients-${randomUUID()}`,
    onEvent: (event) => {
      if (event.type === "joined") startClock();
    },
  });
  await source.start(async (batches) => {
    startClock();
    await onBatches(batches, source);
    for (const b of batches) seen += b.records.length;
    if (seen >= records) done();
  });
  await finished;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await source.close();
  return { recordsPerSecond: seen / seconds, cpuUsPerRecord: (cpu.user + cpu.system) / seen };
}

const consumeAll = (port: KafkaPort, topic: string, records: number) => drain(port, topic, records, () => {});

async function passthroughAll(port: KafkaPort, input: string, output: string, records: number) {
  const sink = port.sink();
  try {
    // As `serve` does: the outputs acknowledged first, then the inputs' offsets committed.
    return await drain(port, input, records, async (batches, source) => {
      const out: OutgoingRecord[] = [];
      for (const b of batches)
        for (const r of b.records) out.push({ topic: output, key: r.key, value: r.value });
      await sink.publish(out);
      await source.commit(
        batches.map((b) => ({
          topic: b.topic,
          partition: b.partition,
          offset: b.records.at(-1)!.offset + 1,
        })),
      );
    });
  } finally {
    await sink.close();
  }
}

async function restartStall(ctx: BenchContext, staticMembership: boolean): Promise<RestartStall> {
  const topic = await ctx.topics.topic(`restart-${staticMembership ? "static" : "dynamic"}`, 4);
  const seed = createKafkaPort({
    brokers: ctx.endpoints.kafkaBrokers.split(","),
    clientId: "bench-seed",
  }).sink();
  await seed.publish(
    Array.from({ length: 100 }, (_, i) => ({ topic, key: `k${i}`, value: Buffer.from("x") })),
  );
  await seed.close();
  const group = `bench-restart-${randomUUID()}`;
  const instance = staticMembership ? "probe-0" : "-";
  const first = startProbe(ctx, topic, group, instance);
  await first.event("batch");
  const killedAt = Date.now();
  first.child.kill("SIGKILL");
  const second = startProbe(ctx, topic, group, instance);
  try {
    const started = await second.event("started");
    const batch = await second.event("batch");
    return { stallMs: batch - killedAt, rejoinMs: batch - started };
  } finally {
    second.child.kill("SIGKILL");
  }
}

function startProbe(ctx: BenchContext, topic: string, group: string, instance: string) {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "bench/sections/kafkaRestartProbe.ts",
      ctx.endpoints.kafkaBrokers,
      topic,
      group,
      instance,
    ],
    { cwd: ctx.root, stdio: ["ignore", "pipe", "inherit"] },
  );
  const seen = new Map<string, number>();
  const waiters = new Map<string, (atMs: number) => void>();
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const { event, atMs } = JSON.parse(line) as { event: string; atMs: number };
    if (!seen.has(event)) seen.set(event, atMs);
    waiters.get(event)?.(atMs);
  });
  const event = (name: string) =>
    new Promise<number>((resolve, reject) => {
      const at = seen.get(name);
      if (at !== undefined) return resolve(at);
      const timer = setTimeout(() => reject(new Error(`restart probe: no "${name}" within 90 s`)), 90_000);
      waiters.set(name, (atMs) => {
        clearTimeout(timer);
        resolve(atMs);
      });
    });
  return { child, event };
}
