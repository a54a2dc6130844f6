// `fraud-scorer produce`: open-loop load onto the transactions topic, from the simulator or a
// file, at a fixed rate, by count or duration, in either framing, one or several transactions
// per record; or, with --sink discard, the same work without sending (the generator's own cost).
import type { Command } from "commander";
import { SchemaRegistry } from "../codec/schemaRegistry.js";
import { openKafkaTrafficSink } from "../tools/traffic/kafkaTrafficSink.js";
import { createKafkaPort } from "../stream/kafka/index.js";
import { produceTraffic, type ProduceSummary } from "../tools/traffic/produceTraffic.js";
import { discardingTrafficSink, TrafficSinkError, type TrafficSink } from "../tools/traffic/trafficSink.js";
import { fileTraffic, simulatedTraffic, type TrafficSource } from "../tools/traffic/trafficSource.js";
import { refuseArguments } from "./cliArguments.js";
import { addProduceOptions, parseProduceOptions, type ProduceCommandOptions } from "./produceOptions.js";
import { progressWanted, startProgress } from "./progressBar.js";

/**
 * Distinct simulated transactions at most: a longer run cycles through them as later copies
 * (new ids, later event times), so start-up does not grow with the run.
 */
const MAX_SIMULATED = 100_000;

export function registerProduceCommand(program: Command): void {
  const command = program
    .command("produce")
    .description(
      "generate open-loop load: transactions at a fixed rate, timestamped with their scheduled send time",
    );
  addProduceOptions(command).action(async (flags: Record<string, unknown>) => {
    const parsed = parseProduceOptions(flags, process.env);
    if (!parsed.ok) refuseArguments("produce", parsed.problems);
    const o = parsed.options;
    const planned = o.count ?? Math.floor((o.durationMs! * o.ratePerSecond) / 1000);
    let source: TrafficSource;
    try {
      source = o.file
        ? await fileTraffic(o.file, o.labels)
        : simulatedTraffic({
            seed: o.seed,
            transactions: Math.min(planned, MAX_SIMULATED),
            ...(o.cards !== undefined ? { cards: o.cards } : {}),
            ...(o.idPrefix ? { idPrefix: o.idPrefix } : {}),
          });
    } catch (err) {
      refuseArguments("produce", [(err as Error).message]);
    }
    const sink = await openSink(o);
    let transactionSchemaId: number | undefined;
    if (o.framing === "confluent") {
      const registry = new SchemaRegistry({ url: o.schemaRegistryUrl! });
      ({ transactionSchemaId } = await registry.registerContracts({ transactionsTopic: o.topic }));
    }
    process.stderr.write(
      `producing ${planned} transactions to ${sink.description} at ${o.ratePerSecond} tx/s ` +
        `(${o.framing}, up to ${o.perRecord} per record) from ${source.description}\n`,
    );
    const bar = startProgress({
      label: "produce",
      total: planned,
      enabled: progressWanted(o.progress),
      extra: "acked {acked} · failed {failed}",
      payload: { acked: 0, failed: 0 },
    });
    let lastLine = 0;
    const abort = new AbortController();
    process.once("SIGINT", () => abort.abort());
    let summary: ProduceSummary;
    try {
      summary = await produceTraffic({
        sink,
        topic: o.topic,
        source,
        ratePerSecond: o.ratePerSecond,
        ...(o.count !== undefined ? { count: o.count } : { durationMs: o.durationMs! }),
        framing: o.framing,
        perRecord: o.perRecord,
        lingerMs: o.lingerMs,
        ...(o.tickMs !== undefined ? { tickMs: o.tickMs } : {}),
        ...(transactionSchemaId !== undefined ? { transactionSchemaId } : {}),
        signal: abort.signal,
        onProgress: (p) => {
          bar.update(p.issued, { acked: p.acked, failed: p.failed });
          if (!progressWanted(o.progress) && o.progress && !o.json && p.elapsedMs - lastLine >= 5000) {
            lastLine = p.elapsedMs;
            process.stderr.write(
              `  ${(p.elapsedMs / 1000).toFixed(0)} s: ${p.acked}/${p.planned} acknowledged, ${p.failed} failed\n`,
            );
          }
        },
      });
    } finally {
      bar.stop();
      await sink.close();
    }
    process.stderr.write(
      `sent ${summary.acked} of ${summary.planned} in ${(summary.elapsedMs / 1000).toFixed(1)} s ` +
        `(${summary.achievedRatePerSecond.toFixed(0)} tx/s, ${summary.records} records, ` +
        `${summary.transactionsPerRecord.toFixed(1)} per record), ${summary.failed} failed; ` +
        `behind schedule p99 ${summary.sendLag.p99Ms} ms, max ${summary.sendLag.maxMs} ms` +
        (summary.stalls > 0 ? `, ${summary.stalls} stalls waiting on the broker` : "") +
        `; generator CPU ${summary.cpuMicrosPerTransaction.toFixed(1)} µs per transaction` +
        (summary.firstError ? `\nfirst error: ${summary.firstError}` : "") +
        "\n",
    );
    if (o.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
    if (summary.failed > 0) process.exitCode = 1;
  });
}

async function openSink(o: ProduceCommandOptions): Promise<TrafficSink> {
  if (o.sink === "discard") return discardingTrafficSink(o.partitions);
  try {
    const kafka = createKafkaPort({ brokers: o.kafkaBrokers!, clientId: "fraud-scorer-produce" });
    return await openKafkaTrafficSink({ kafka, topic: o.topic });
  } catch (err) {
    if (err instanceof TrafficSinkError) refuseArguments("produce", [err.message]);
    throw err;
  }
}
