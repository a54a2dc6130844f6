// The demo without Kafka: the same scoring path (replay's engine: scoreBatch, the committed
// model, the rules, in-memory card state) over simulated transactions, as fast as it scores.
// What it measures is scoring time per batch — not end-to-end latency — and it says so.
import { decodeTransactionPayload, encodeTransactionPayload } from "../../codec/messages.js";
import { FEATURE_SCHEMA_VERSION } from "../../features/featureVector.js";
import { validateTransaction } from "../../ingest/validateTransaction.js";
import { loadModelRunner } from "../../model/loadModelRunner.js";
import { configKeyDefault } from "../../ops/configSchema.js";
import { ruleEvaluator } from "../../rules/ruleEvaluator.js";
import { loadRuleSet } from "../../rules/ruleSet.js";
import type { ReplayRecord } from "../../replay/replayRecord.js";
import { replayTransactions } from "../../replay/replayTransactions.js";
import { simulatedTraffic } from "../traffic/trafficSource.js";
import type { Logger } from "pino";
import { describeModel } from "./liveDemo.js";
import type { DemoReport } from "./demoReport.js";
import { DecisionTally } from "./decisionTally.js";
import { LatencyRecorder } from "./latencyRecorder.js";

export interface OfflineDemoOptions {
  readonly reason: string;
  readonly modelDir: string;
  readonly rulesFile: string;
  readonly transactions: number;
  readonly seed: number;
  readonly budgetMs: number;
  readonly logger: Logger;
  readonly say: (line: string) => void;
  readonly onProgress?: (done: number, total: number) => void;
}

export async function runOfflineDemo(o: OfflineDemoOptions): Promise<DemoReport> {
  const startedAt = new Date().toISOString();
  const source = simulatedTraffic({ seed: o.seed, transactions: o.transactions });
  const labels = new Map<string, boolean | undefined>();
  const records: ReplayRecord[] = [];
  for (let i = 0; i < o.transactions; i++) {
    const { tx, isFraud } = source.at(i);
    const payload = encodeTransactionPayload(tx);
    const decoded = decodeTransactionPayload(payload);
    const valid = decoded.ok ? validateTransaction(decoded.value) : decoded;
    if (!valid.ok) continue;
    labels.set(valid.value.transactionId, isFraud);
    records.push({
      tx: valid.value,
      payload,
      position: i,
      budgetStartMs: valid.value.eventTimeMs,
      source: { kind: "file", index: i },
    });
  }
  const rules = ruleEvaluator(await loadRuleSet(o.rulesFile));
  const model = await loadModelRunner({
    dir: o.modelDir,
    trustedKeysDir: configKeyDefault("model.trustedKeysDir") as string,
    provider: "cpu",
    expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
    logger: o.logger,
  });
  try {
    await model.warmUp();
    o.say(`scoring ${records.length} simulated transactions offline (${source.description})`);
    const latency = new LatencyRecorder({ budgetMs: o.budgetMs });
    const tally = new DecisionTally();
    const started = performance.now();
    await replayTransactions(
      records,
      {
        batchSize: configKeyDefault("scoring.maxBatch") as number,
        thresholds: {
          review: configKeyDefault("scoring.thresholds.review") as number,
          decline: configKeyDefault("scoring.thresholds.decline") as number,
        },
        budgetMs: o.budgetMs,
        minBudgetForModelMs: configKeyDefault("scoring.minBudgetForModelMs") as number,
        explainTopFeatures: configKeyDefault("scoring.explainTopFeatures") as number,
      },
      { model, rules },
      {
        onBatchTiming: (size, us) => {
          const second = Math.floor((performance.now() - started) / 1000);
          for (let k = 0; k < size; k++) latency.record(us, second);
        },
        onBatch: (batch, done, total) => {
          for (const { decision } of batch) tally.add(decision, labels.get(decision.transactionId ?? ""));
          o.onProgress?.(done, total);
        },
      },
    );
    const seconds = (performance.now() - started) / 1000;
    const report: DemoReport = {
      mode: "offline",
      offlineReason: o.reason,
      startedAt,
      model: await describeModel(o.modelDir),
      rules: `${rules.version} (${o.rulesFile})`,
      traffic: {
        source: source.description,
        durationSeconds: Number(seconds.toFixed(1)),
        warmupSeconds: 0,
        planned: o.transactions,
        sent: records.length,
      },
      throughput: {
        decided: tally.decisions,
        missing: records.length - tally.decisions,
        decisionsPerSecond: tally.decisions / seconds,
      },
      latency: latency.summary(),
      latencyPerSecond: latency.perSecond(),
      latencyMeaning:
        "OFFLINE, scoring only: time to score the batch each transaction was in (no Kafka, no Redis)",
      budgetMs: o.budgetMs,
      tally: tally.summary(),
      notes: [
        "offline: transactions were not sent through Kafka and card state lived in memory; throughput is scoring throughput on one core, as fast as it goes",
        "run `npm run demo` where Java and Maven are installed (or with KAFKA_BROKERS, SCHEMA_REGISTRY_URL and REDIS_URL set) for the end-to-end measurement",
      ],
    };
    latency.close();
    return report;
  } finally {
    await model.close();
  }
}
