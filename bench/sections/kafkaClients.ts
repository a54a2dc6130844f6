// 8. Kafka clients: kafkajs (the client before the port), @platformatic/kafka (the one the
// product uses) and, when one has been built outside the repository, Confluent's librdkafka
// client, all through the port, side by side in one run: idempotent acks=all produce, consume,
// and consume→produce passthrough with commits after acknowledgements, as records/s and CPU µs
// per record (process.cpuUsage of this process, native threads included, one client at a
// time); then the restart stall: a member SIGKILLed and restarted at once, with and without
// static membership. Every wait is bounded: a client that stops acknowledging or a consumer
// that never reaches the end fails the section with what it was waiting for.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import { createInterface } from "node:readline";
import { createKafkaPort } from "../../src/stream/kafka/index.js";
import { forwardBatches } from "../../src/tools/forwardBatches.js";
import type { KafkaPort, OutgoingRecord, RecordBatch, RecordSource } from "../../src/stream/kafkaPort.js";
import { median } from "../support/alternatingRounds.js";
import type { BenchContext } from "../support/benchContext.js";
import { loadConfluentPort } from "../support/confluentPort.js";
import { within } from "../support/deadline.js";
import { processCpuUs } from "../support/drainCpu.js";
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

export interface ClientRow {
  readonly name: string;
  /** Library and version as measured. */
  readonly label: string;
  readonly figures: ClientFigures;
  /** Records the topic held beyond those published, over all rounds (an idempotent producer's duplicates). */
  readonly extraRecords: number;
}

export interface KafkaClientsResult {
  readonly records: number;
  readonly recordBytes: number;
  readonly partitions: number;
  readonly rounds: number;
  /** kafkajs, platformatic, and confluent when one was built (see bench/support/confluentPort.ts). */
  readonly clients: readonly ClientRow[];
  /** 1-minute load average at the section's start and end: these figures are from a shared machine. */
  readonly loadAverage?: { readonly start: number; readonly end: number } | undefined;
  /** Why Confluent's client is not measured, when it is not. */
  readonly confluentAbsent?: string | undefined;
  readonly restart: { readonly staticMembership: RestartStall; readonly dynamicMembership: RestartStall };
}

interface Candidate {
  readonly name: string;
  readonly label: string;
  readonly port: () => KafkaPort;
}

async function candidates(brokers: string[]): Promise<{ list: Candidate[]; confluentAbsent?: string }> {
  const list: Candidate[] = [
    { name: "kafkajs", label: "kafkajs 2.2.4", port: () => createKafkajsPort(brokers) },
    {
      name: "platformatic",
      label: "@platformatic/kafka",
      port: () => createKafkaPort({ brokers, clientId: "bench-platformatic" }),
    },
  ];
  const confluent = await loadConfluentPort(brokers);
  if (typeof confluent === "string") return { list, confluentAbsent: confluent };
  list.push({ name: "confluent", label: confluent.label, port: confluent.port });
  return { list };
}

const RECORD_BYTES = 120;
const CHUNK = 1_000;
const CONCURRENT_CHUNKS = 4;

export async function kafkaClients(ctx: BenchContext): Promise<KafkaClientsResult> {
  const { records, partitions, rounds } = ctx.plan.kafkaClients;
  const loadAtStart = loadavg()[0]!;
  const brokers = ctx.endpoints.kafkaBrokers.split(",");
  const { list, confluentAbsent } = await candidates(brokers);
  ctx.log(
    `kafka clients: ${list.map((c) => c.label).join(" vs ")} through the port, ${records} records × ${rounds} rounds`,
  );
  if (confluentAbsent !== undefined)
    ctx.log(`kafka clients: Confluent's client not measured: ${confluentAbsent}`);
  // Generous for a loaded 2-core machine (the slowest client drains ~10k records/s there).
  const deadlineMs = 60_000 + records;
  const samples = new Map(
    list.map((c) => [
      c.name,
      {
        produce: [] as ClientFigure[],
        consume: [] as ClientFigure[],
        passthrough: [] as ClientFigure[],
        extra: 0,
      },
    ]),
  );
  for (let round = 0; round < rounds; round++) {
    // Alternating order, so drift over the run hits every client alike.
    const order = round % 2 === 0 ? list : [...list].reverse();
    for (const { name, port: makePort } of order) {
      const port = makePort();
      const input = await ctx.topics.topic(`clients-in-${name}`, partitions);
      const output = await ctx.topics.topic(`clients-out-${name}`, partitions);
      const produce = await measure(records, () =>
        within(deadlineMs, `${name}: produce ${records} records`, produceAll(port, input, records)),
      );
      const written = await ctx.topics.recordCount(input);
      if (written !== records)
        ctx.log(`kafka clients: ${name} published ${records} records, the topic holds ${written}`);
      const consume = await drain(port, input, written, deadlineMs, `${name}: consume`, () => {});
      const passthrough = await passthroughAll(port, input, output, written, deadlineMs, name);
      const sample = samples.get(name)!;
      sample.produce.push(produce);
      sample.consume.push(consume);
      sample.passthrough.push(passthrough);
      sample.extra += written - records;
      ctx.log(
        `kafka clients: ${name} round ${round + 1}: produce ${fmt(produce)}, consume ${fmt(consume)}, passthrough ${fmt(passthrough)}`,
      );
    }
  }
  const clients: ClientRow[] = list.map(({ name, label }) => {
    const sample = samples.get(name)!;
    return {
      name,
      label,
      figures: {
        produce: medianFigure(sample.produce),
        consume: medianFigure(sample.consume),
        passthrough: medianFigure(sample.passthrough),
      },
      extraRecords: sample.extra,
    };
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
    clients,
    loadAverage: { start: loadAtStart, end: loadavg()[0]! },
    confluentAbsent,
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
  const cpu0 = processCpuUs();
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  return { recordsPerSecond: records / seconds, cpuUsPerRecord: (processCpuUs() - cpu0) / records };
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
    await within(30_000, "closing the producer", sink.close());
  }
}

/**
 * Reads `records` records through a fresh group; timed from the moment the group is joined,
 * so the broker's initial rebalance delay is not counted. A crashed source or a handler that
 * throws fails the drain at once; a drain that stalls fails at the deadline.
 */
async function drain(
  port: KafkaPort,
  topic: string,
  records: number,
  deadlineMs: number,
  what: string,
  onBatches: (batches: readonly RecordBatch[], source: RecordSource) => Promise<void> | void,
): Promise<ClientFigure> {
  let seen = 0;
  let cpu0: number | undefined;
  let t0 = 0;
  let done: () => void = () => {};
  let fail: (error: unknown) => void = () => {};
  const finished = new Promise<void>((resolve, reject) => {
    done = resolve;
    fail = reject;
  });
  const startClock = () => {
    if (cpu0 !== undefined) return;
    cpu0 = processCpuUs();
    t0 = performance.now();
  };
  const source = port.groupSource({
    topics: [topic],
    groupId: `bench-clients-${randomUUID()}`,
    onEvent: (event) => {
      if (event.type === "joined") startClock();
      if (event.type === "crashed") fail(new Error(`${what}: the source crashed`, { cause: event.error }));
    },
  });
  try {
    await within(
      deadlineMs,
      `${what}: ${records} records`,
      (async () => {
        await source.start(async (batches) => {
          startClock();
          try {
            await onBatches(batches, source);
          } catch (error) {
            fail(error);
            throw error;
          }
          for (const b of batches) seen += b.records.length;
          if (seen >= records) done();
        });
        await finished;
      })(),
    ).catch((error: unknown) => {
      throw new Error(`${String((error as Error).message ?? error)} (${seen} seen)`, { cause: error });
    });
    const seconds = (performance.now() - t0) / 1000;
    return { recordsPerSecond: seen / seconds, cpuUsPerRecord: (processCpuUs() - cpu0!) / seen };
  } finally {
    await within(30_000, `${what}: closing the source`, source.close());
  }
}

async function passthroughAll(
  port: KafkaPort,
  input: string,
  output: string,
  records: number,
  deadlineMs: number,
  name: string,
) {
  const sink = port.sink();
  try {
    // As `serve` does: the outputs acknowledged first, then the inputs' offsets committed.
    return await drain(port, input, records, deadlineMs, `${name}: passthrough`, async (batches, source) => {
      await forwardBatches(batches, output, sink, (offsets) => source.commit(offsets));
    });
  } finally {
    await within(30_000, `${name}: closing the passthrough's sink`, sink.close());
  }
}

async function restartStall(ctx: BenchContext, staticMembership: boolean): Promise<RestartStall> {
  const topic = await ctx.topics.topic(`restart-${staticMembership ? "static" : "dynamic"}`, 4);
  const seed = createKafkaPort({
    brokers: ctx.endpoints.kafkaBrokers.split(","),
    clientId: "bench-seed",
  }).sink();
  await within(
    30_000,
    "restart stall: seeding",
    seed.publish(Array.from({ length: 100 }, (_, i) => ({ topic, key: `k${i}`, value: Buffer.from("x") }))),
  );
  await within(30_000, "restart stall: closing the seed producer", seed.close());
  const group = `bench-restart-${randomUUID()}`;
  const instance = staticMembership ? "probe-0" : "-";
  const first = startProbe(ctx, topic, group, instance);
  await first.event("batch").catch((error: unknown) => {
    first.child.kill("SIGKILL");
    throw error;
  });
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
  const waiters = new Map<string, { resolve: (atMs: number) => void; reject: (error: Error) => void }>();
  let exited: Error | undefined;
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const { event, atMs } = JSON.parse(line) as { event: string; atMs: number };
    if (!seen.has(event)) seen.set(event, atMs);
    waiters.get(event)?.resolve(atMs);
  });
  child.on("exit", (code, signal) => {
    exited = new Error(`restart probe exited (${signal ?? `code ${code}`})`);
    for (const waiter of waiters.values()) waiter.reject(exited);
  });
  const event = (name: string) =>
    within(
      90_000,
      `restart probe: "${name}"`,
      new Promise<number>((resolve, reject) => {
        const at = seen.get(name);
        if (at !== undefined) return resolve(at);
        if (exited !== undefined) return reject(exited);
        waiters.set(name, { resolve, reject });
      }),
    );
  return { child, event };
}
