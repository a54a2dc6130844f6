// `fraud-scorer replay`: what a pinned model and rule set decide over recorded transactions.
//   input (.pbd file, or a topic range by time or offset) ─► replayTransactions (scoreBatch
//   with in-memory state and the data's clock) ─► NDJSON or delimited Decisions
//   ─► optional diff against recorded decisions ─► summary on stderr.
// Replay never touches live card state: its store lives and dies in this process.
import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import pino from "pino";
import { SchemaRegistry } from "../codec/schemaRegistry.js";
import { FEATURE_SCHEMA_VERSION } from "../features/featureVector.js";
import { loadModelRunner } from "../model/loadModelRunner.js";
import { createLogger } from "../ops/logger.js";
import { ruleEvaluator } from "../rules/ruleEvaluator.js";
import { loadRuleSet } from "../rules/ruleSet.js";
import { compareDecisions, formatDiffReport } from "../replay/compareDecisions.js";
import { DecisionWriter } from "../replay/decisionOutput.js";
import {
  readRecordedDecisionsFile,
  readRecordedDecisionsTopic,
  type RecordedDecisions,
} from "../replay/recordedDecisions.js";
import { parseReplayOptions, REPLAY_OPTION_SETTINGS, type ReplayOptions } from "../replay/replayOptions.js";
import { describeSource, ReplayInputError, type ReplayInput } from "../replay/replayRecord.js";
import { replayTransactions } from "../replay/replayTransactions.js";
import { readTopicRange } from "../replay/topicRange.js";
import { readTransactionFile } from "../replay/transactionFile.js";
import { createKafkaPort } from "../stream/kafka/index.js";
import type { KafkaPort } from "../stream/kafkaPort.js";
import { actionName, ACTION_NAMES } from "../decisions/decisionJson.js";
import { refuseArguments } from "./cliArguments.js";
import { addCommandOptions } from "../ops/commandOptions.js";
import { progressWanted, startProgress } from "./progressBar.js";

export function registerReplayCommand(program: Command): void {
  const replay = program
    .command("replay")
    .description(
      "decide recorded transactions again with a pinned model and rule set (audits); state is in memory only",
    );
  addCommandOptions(replay, REPLAY_OPTION_SETTINGS);
  replay.action(async (flags: Record<string, unknown>) => {
    const parsed = parseReplayOptions(flags, process.env);
    if (!parsed.ok) refuse(parsed.problems);
    try {
      await runReplay(parsed.options);
    } catch (err) {
      if (err instanceof ReplayInputError || isModelArtifactError(err)) refuse([(err as Error).message]);
      throw err;
    }
  });
}

const isModelArtifactError = (err: unknown) => (err as Error | undefined)?.name === "ModelArtifactError";

function refuse(problems: readonly string[]): never {
  return refuseArguments("replay", problems);
}

async function runReplay(options: ReplayOptions): Promise<void> {
  if (options.out === "-" && options.format === "pbd" && process.stdout.isTTY)
    throw new ReplayInputError(
      "refusing to write binary decisions to a terminal: give --out <file>.pbd or redirect",
    );
  const logger = createLogger({
    level: "warn",
    name: "fraud-scorer-replay",
    destination: pino.destination(2),
  });
  const started = performance.now();

  const rules = ruleEvaluator(
    await loadRuleSet(options.rulesFile).catch(asInputError(`rule set ${options.rulesFile}`)),
  );
  const kafka = options.kafkaBrokers
    ? createKafkaPort({ brokers: options.kafkaBrokers, clientId: "fraud-scorer-replay" })
    : undefined;
  // Input before the model: a bad file or range is reported before seconds of model loading.
  const input = await readInput(options, kafka);
  for (const r of input.rejected.slice(0, 5))
    process.stderr.write(`skipped ${describeSource(r.source)}: ${r.error.kind}: ${r.error.message}\n`);
  const model = await loadModelRunner({
    dir: options.modelDir,
    trustedKeysDir: options.trustedKeysDir,
    provider: options.provider,
    expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
    logger,
  });
  try {
    await model.warmUp();

    const writer = new DecisionWriter(options.out, { format: options.format, timings: options.timings });
    await writer.opened().catch(asInputError(`output ${options.out}`));
    const progress = startProgress({
      label: "replay",
      total: input.records.length,
      enabled: progressWanted(options.progress),
    });
    const scoringStarted = performance.now();
    let dependencyFailures = 0;
    const decided = await replayTransactions(
      input.records,
      options.settings,
      { model, rules },
      {
        onBatch: async (batch, done) => {
          await writer.write(batch);
          progress.update(done);
        },
        onDependencyFailure: () => dependencyFailures++,
      },
    );
    progress.stop();
    await writer.close();
    const scoringSeconds = (performance.now() - scoringStarted) / 1000;

    const summary = [
      `replayed ${input.records.length} transactions from ${input.description} in ${scoringSeconds.toFixed(1)} s` +
        ` (${Math.round(input.records.length / Math.max(scoringSeconds, 1e-3))} tx/s)`,
      `model ${model.modelName} ${model.modelVersion} · rules ${rules.version} · feature schema ${model.featureSchemaVersion} · batch ${options.settings.batchSize}`,
      `decisions: ${mix(decided.map((d) => d.decision))}`,
    ];
    if (input.rejected.length > 0)
      summary.push(`skipped ${input.rejected.length} records the scorer would have dead-lettered`);
    if (dependencyFailures > 0)
      summary.push(
        `warning: ${dependencyFailures} dependency failures made the rules decide; this replay may not repeat`,
      );
    summary.push(
      `output: ${options.out === "-" ? "stdout" : options.out} (${options.format}${options.timings ? "" : ", no timings"})`,
    );

    if (options.compare) {
      const recorded = await readRecorded(
        options,
        kafka,
        input,
        decided.map((d) => d.decision.transactionId ?? ""),
      );
      const report = compareDecisions(
        decided.map((d) => d.decision),
        recorded,
        { examplesPerTransition: options.examples },
      );
      summary.push(formatDiffReport(report));
      if (options.diffOut) await writeFile(options.diffOut, `${JSON.stringify(report, null, 2)}\n`);
    }
    summary.push(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    process.stderr.write(`${summary.join("\n")}\n`);
  } finally {
    await model.close();
  }
}

const asInputError = (what: string) => (err: unknown) => {
  throw new ReplayInputError(`${what}: ${(err as Error).message}`);
};

function mix(decisions: ReadonlyArray<{ action?: number | null; fallback?: boolean | null }>): string {
  const counts = new Map<string, number>();
  for (const d of decisions) counts.set(actionName(d.action), (counts.get(actionName(d.action)) ?? 0) + 1);
  const fallbacks = decisions.filter((d) => d.fallback).length;
  return [...ACTION_NAMES.map((a) => `${a} ${counts.get(a) ?? 0}`), `fallback ${fallbacks}`].join(" · ");
}

async function readInput(options: ReplayOptions, kafka: KafkaPort | undefined): Promise<ReplayInput> {
  const { source } = options;
  if (source.kind === "file") return readTransactionFile(source.path);
  const registry = options.schemaRegistryUrl
    ? new SchemaRegistry({ url: options.schemaRegistryUrl })
    : undefined;
  const progress = startProgress({ label: "fetch", total: 0, enabled: progressWanted(options.progress) });
  try {
    return await readTopicRange(source, {
      kafka: kafka!,
      ...(registry ? { firstMessageType: (id: number) => registry.firstMessageType(id) } : {}),
      onProgress: (fetched, total) => {
        progress.setTotal(total);
        progress.update(fetched);
      },
    });
  } finally {
    progress.stop();
  }
}

async function readRecorded(
  options: ReplayOptions,
  kafka: KafkaPort | undefined,
  input: ReplayInput,
  transactionIds: readonly string[],
): Promise<RecordedDecisions> {
  const compare = options.compare!;
  if (compare.kind === "file") return readRecordedDecisionsFile(compare.path);
  // Decisions are written after their transactions: reading from the first replayed record's
  // time on is enough, unless told otherwise.
  const firstRecordMs = input.records.reduce((min, r) => Math.min(min, r.budgetStartMs), Infinity);
  const sinceMs =
    compare.sinceMs ??
    (options.source.kind === "topic" && Number.isFinite(firstRecordMs) ? firstRecordMs : undefined);
  return readRecordedDecisionsTopic({
    kafka: kafka!,
    topic: compare.topic,
    transactionIds: new Set(transactionIds),
    ...(sinceMs !== undefined ? { sinceMs } : {}),
  });
}
