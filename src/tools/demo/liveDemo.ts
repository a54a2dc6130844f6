// The live demo, end to end through Kafka:
//   simulator ─► produceTraffic (open loop, record timestamp = scheduled send) ─► demo topic
//   ─► `fraud-scorer serve` (child process) ─► demo decisions topic ─► followDecisions
//   ─► latency = arrival − scheduled send, in HDR histograms; decision mix; fraud caught/missed.
// Its topics, consumer group and state namespace are its own and are removed afterwards.
import { setTimeout as sleep } from "node:timers/promises";
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { followDecisions } from "../../decisions/followDecisions.js";
import { ensureTopics, scorerTopicSpecs } from "../../../stack/topics.js";
import { createKafkaPort } from "../../stream/kafka/index.js";
import { deleteNamespaceAt } from "../../state/namespaceKeys.js";
import type { KafkaPort } from "../../stream/kafkaPort.js";
import { produceTraffic } from "../traffic/produceTraffic.js";
import { simulatedTraffic } from "../traffic/trafficSource.js";
import type { DemoEndpoints } from "./demoEnvironment.js";
import type { DemoReport } from "./demoReport.js";
import { DecisionTally } from "./decisionTally.js";
import { LatencyRecorder } from "./latencyRecorder.js";
import { ScorerChild, scorerEnvironment } from "../scorerChild.js";
import { StageBreakdown } from "./stageBreakdown.js";

export interface LiveDemoOptions {
  readonly root: string;
  readonly endpoints: DemoEndpoints;
  readonly endpointsFrom: string;
  readonly modelDir: string;
  readonly rulesFile: string;
  /** "default-2025.1 (rules/default.yaml)", for the report. */
  readonly rulesDescription: string;
  readonly ratePerSecond: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly seed: number;
  readonly partitions: number;
  readonly budgetMs: number;
  readonly reportDir: string;
  readonly keep: boolean;
  readonly logger: Logger;
  readonly say: (line: string) => void;
  readonly onProgress?: (p: LiveProgress) => void;
}

export interface LiveProgress {
  readonly planned: number;
  readonly sent: number;
  readonly decided: number;
  /** p99 of the last full second, ms. */
  readonly p99Ms?: number;
  readonly fallbacks: number;
  readonly phase: "warm-up" | "measuring" | "draining";
}

interface SendRecord {
  readonly scheduledMs: number;
  readonly isFraud: boolean | undefined;
  readonly measured: boolean;
  decided: boolean;
}

/** How long to wait for the last decisions once sending has stopped. */
const DRAIN_IDLE_MS = 10_000;
const DRAIN_MAX_MS = 60_000;

export async function runLiveDemo(o: LiveDemoOptions): Promise<DemoReport> {
  const runId = `demo-${new Date().toISOString().replace(/[-:T]/g, "").slice(0, 14)}-${randomBytes(2).toString("hex")}`;
  const topics = {
    transactions: `${runId}.transactions`,
    decisions: `${runId}.decisions`,
    dlq: `${runId}.dlq`,
  };
  const port = createKafkaPort({ brokers: o.endpoints.kafkaBrokers, clientId: "fraud-scorer-demo" });
  await createTopics(port, topics, o.partitions);
  const startedAt = new Date().toISOString();
  const loadAtStart = loadavg()[0]!;
  let scorer: ScorerChild | undefined;
  let following: { stop(): Promise<void> } | undefined;
  try {
    o.say(`starting the scorer (model ${o.modelDir}; log ${join(o.reportDir, "scorer.log")})`);
    scorer = await ScorerChild.start({
      root: o.root,
      logFile: join(o.reportDir, "scorer.log"),
      env: scorerEnvironment({
        kafkaBrokers: o.endpoints.kafkaBrokers.join(","),
        schemaRegistryUrl: o.endpoints.schemaRegistryUrl,
        redisUrl: o.endpoints.redisUrl,
        topics,
        groupId: runId,
        namespace: runId,
        modelDir: o.modelDir,
        // Ephemeral: the demo's card state is signed with a key that dies with the run.
        hmacKeyHex: randomBytes(32).toString("hex"),
        overrides: {
          STATE_TTL_MS: String(3_600_000),
          RULES_FILE: o.rulesFile,
          BUDGET_MS: String(o.budgetMs),
          LOG_LEVEL: "info",
          MODEL_PROVIDER: "auto",
        },
      }),
    });
    o.say("scorer ready (model verified and warm, consumer group joined)");

    const sends = new Map<string, SendRecord>();
    const latency = new LatencyRecorder({ budgetMs: o.budgetMs });
    const tally = new DecisionTally();
    const stages = new StageBreakdown();
    let measureStartMs = Infinity;
    let lastArrivalMs = 0;
    let decided = 0;
    let lastDecisionAt = Date.now();
    following = await followDecisions({
      kafka: port,
      topic: topics.decisions,
      fromBeginning: true,
      onDecision: (d, { arrivedAtMs }) => {
        const send = sends.get(d.transactionId);
        if (!send || send.decided) return; // not ours, or a redelivery (consumers dedupe on the key)
        send.decided = true;
        decided++;
        lastDecisionAt = Date.now();
        if (!send.measured) return;
        lastArrivalMs = Math.max(lastArrivalMs, arrivedAtMs);
        const endToEndUs = (arrivedAtMs - send.scheduledMs) * 1000;
        latency.record(endToEndUs, Math.floor((send.scheduledMs - measureStartMs) / 1000));
        stages.add(d, endToEndUs);
        tally.add(d, send.isFraud);
      },
    });

    const totalMs = o.warmupMs + o.durationMs;
    const planned = Math.floor((totalMs * o.ratePerSecond) / 1000);
    const source = simulatedTraffic({ seed: o.seed, transactions: planned, idPrefix: `${runId}-` });
    o.say(
      `sending ${planned} transactions open-loop at ${o.ratePerSecond} tx/s from the ${source.description}`,
    );
    const startMs = performance.timeOrigin + performance.now() + 100;
    measureStartMs = startMs + o.warmupMs;
    let sent = 0;
    const progress = (phase: LiveProgress["phase"]) => {
      const nowSecond = Math.floor((performance.timeOrigin + performance.now() - measureStartMs) / 1000) - 1;
      const p99 = nowSecond >= 0 ? latency.p99OfSecond(nowSecond) : undefined;
      o.onProgress?.({
        planned,
        sent,
        decided,
        fallbacks: tally.fallbacks,
        phase,
        ...(p99 !== undefined ? { p99Ms: p99 } : {}),
      });
    };
    const produced = await produceTraffic({
      kafka: port,
      topic: topics.transactions,
      source,
      ratePerSecond: o.ratePerSecond,
      count: planned,
      startMs,
      onScheduled: (s) =>
        sends.set(s.transactionId, {
          scheduledMs: s.scheduledMs,
          isFraud: s.isFraud,
          measured: s.scheduledMs >= measureStartMs,
          decided: false,
        }),
      onProgress: (p) => {
        sent = p.acked;
        progress(performance.timeOrigin + performance.now() < measureStartMs ? "warm-up" : "measuring");
      },
    });
    sent = produced.acked;

    const drainStart = Date.now();
    while (
      decided < sent &&
      Date.now() - lastDecisionAt < DRAIN_IDLE_MS &&
      Date.now() - drainStart < DRAIN_MAX_MS
    ) {
      progress("draining");
      await sleep(250);
    }
    progress("draining");

    const measuredSent = [...sends.values()].filter((s) => s.measured).length;
    const measuredDecided = tally.decisions;
    const windowSeconds = Math.max(1e-3, (lastArrivalMs - measureStartMs) / 1000);
    const notes = [
      `end-to-end latency: from each transaction's scheduled send time (its Kafka record timestamp; open loop, so a slow broker or scorer cannot hide it) to the moment its decision was read from the decisions topic, on the same machine clock`,
      `everything ran on this machine: Kafka, the schema registry, Redis, the scorer, the load generator and the decision reader share its ${cpus().length} cores`,
      `topics ${topics.transactions} / ${topics.decisions} (${o.partitions} partitions each), consumer group and Redis namespace ${runId}; card state signed with an ephemeral HMAC key`,
    ];
    notes.push(
      `1-minute load average ${loadAtStart.toFixed(1)} when the demo started and ${loadavg()[0]!.toFixed(1)} when it ended, on ${cpus().length} cores: anything else running on the machine shows up in these numbers`,
    );
    if (produced.failed > 0)
      notes.push(`${produced.failed} sends failed: ${produced.firstError ?? "unknown error"}`);
    if (produced.maxIssueLagMs > 50)
      notes.push(
        `the load generator fell up to ${produced.maxIssueLagMs.toFixed(0)} ms behind its schedule; those records still carry their scheduled time`,
      );
    const report: DemoReport = {
      mode: "live",
      startedAt,
      model: await describeModel(o.modelDir),
      rules: o.rulesDescription,
      traffic: {
        source: source.description,
        ratePerSecond: o.ratePerSecond,
        durationSeconds: o.durationMs / 1000,
        warmupSeconds: o.warmupMs / 1000,
        planned: measuredSent,
        sent: Math.max(0, measuredSent - produced.failed),
      },
      where: `Kafka ${o.endpoints.kafkaBrokers.join(",")}, registry ${o.endpoints.schemaRegistryUrl}, Redis ${o.endpoints.redisUrl} (from ${o.endpointsFrom})`,
      throughput: {
        decided: measuredDecided,
        missing: Math.max(0, measuredSent - produced.failed - measuredDecided),
        decisionsPerSecond: measuredDecided / windowSeconds,
      },
      latency: latency.summary(),
      latencyPerSecond: latency.perSecond(),
      latencyMeaning: "end to end: scheduled send → decision read from Kafka",
      stages: stages.summary(),
      budgetMs: o.budgetMs,
      tally: tally.summary(),
      notes,
    };
    latency.close();
    return report;
  } finally {
    await following?.stop().catch(() => {});
    const code = await scorer?.stop();
    if (code !== undefined && code !== 0 && code !== null)
      o.say(`the scorer exited with ${code}; see ${join(o.reportDir, "scorer.log")}`);
    if (!o.keep) await cleanUp(port, topics, o.endpoints.redisUrl, runId, o.say);
  }
}

async function createTopics(
  kafka: KafkaPort,
  topics: Record<string, string>,
  partitions: number,
): Promise<void> {
  await ensureTopics({
    kafka,
    topics: scorerTopicSpecs(
      { transactions: topics.transactions!, decisions: topics.decisions!, dlq: topics.dlq! },
      { partitions },
    ),
  });
}

/** Best effort: the run's topics, and its own Redis namespace (never anything else). */
async function cleanUp(
  kafka: KafkaPort,
  topics: Record<string, string>,
  redisUrl: string,
  namespace: string,
  say: (line: string) => void,
): Promise<void> {
  const admin = kafka.admin();
  try {
    await admin.deleteTopics(Object.values(topics));
  } catch (err) {
    say(`could not delete the demo topics: ${(err as Error).message}`);
  } finally {
    await admin.close().catch(() => {});
  }
  try {
    await deleteNamespaceAt(redisUrl, namespace);
  } catch (err) {
    say(`could not remove the demo's card state (it expires within the hour): ${(err as Error).message}`);
  }
}

export async function describeModel(dir: string): Promise<string> {
  try {
    const m = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as {
      name?: string;
      modelVersion?: string;
    };
    return `${m.name ?? "?"} ${m.modelVersion ?? "?"} (${dir})`;
  } catch {
    return dir;
  }
}
