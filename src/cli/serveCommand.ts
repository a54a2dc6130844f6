// `fraud-scorer serve`: validate config, verify and warm the model, then join the group.
// Readiness turns true only after model verification, warm-up, the contract schemas and the
// group join; SIGTERM drains the batch in hand, commits and leaves the group before the process
// exits.
// Start-up order is for time to a warm model and then to ready: the model first, before the
// Kafka and Redis clients are even imported (loading them is most of a start's CPU); then the
// steps that wait on the network run side by side (schemas, Redis, the control topic).
import type { Command } from "commander";
import type { Logger } from "pino";
import { SchemaRegistry, type ContractSchemaIds } from "../codec/schemaRegistry.js";
import { CachedCardStateStore, withWrittenStatesCached } from "../features/cachedCardStateStore.js";
import type { CardStateStore } from "../features/cardStatePort.js";
import { FEATURE_SCHEMA_VERSION } from "../features/featureVector.js";
import { loadModelRunner, type ModelRunner } from "../model/loadModelRunner.js";
import { addConfigOptions, ConfigError, loadConfig, redactConfig, type ScorerConfig } from "../ops/config.js";
import { driftMonitorFor } from "../model/driftMonitor.js";
import { DriftMetrics } from "../ops/driftMetrics.js";
import { startHealthServer } from "../ops/healthServer.js";
import { createLogger } from "../ops/logger.js";
import { ScorerMetrics } from "../ops/metrics.js";
import { Readiness, SCORER_READINESS_CONDITIONS } from "../ops/readiness.js";
import { loadRuleSet } from "../rules/ruleSet.js";
import { followPromotions } from "../control/promotedPorts.js";
import { PromotionMetrics } from "../ops/promotionMetrics.js";
import { KafkaPortError } from "../stream/kafkaPort.js";

export function registerServeCommand(program: Command): void {
  const serve = program
    .command("serve")
    .description("consume transactions, score them, and write one decision for each");
  addConfigOptions(serve);
  serve.action(async (flags: Record<string, unknown>) => {
    const config = loadConfigOrExit(flags);
    await runScorer(config);
  });
}

function loadConfigOrExit(flags: Record<string, unknown>): ScorerConfig {
  try {
    return loadConfig({ argvFlags: flags, env: process.env });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

async function runScorer(config: ScorerConfig): Promise<void> {
  const logger = createLogger({ level: config.ops.logLevel, name: "fraud-scorer" });
  for (const warning of config.warnings) logger.warn(warning);
  logger.info({ config: redactConfig(config) }, "starting");

  const metrics = new ScorerMetrics();
  const readiness = new Readiness<string>(SCORER_READINESS_CONDITIONS);
  // Drift follows the model that scores: its monitor is handed over at start and at each switch.
  const drift = new DriftMetrics(metrics.registry, undefined);
  const health = await startHealthServer({
    port: config.ops.httpPort,
    host: config.ops.httpHost,
    metrics,
    readiness: () => readiness.state(),
    drift: () =>
      drift.latest() ?? { monitored: false, reason: "the model's manifest has no training distributions" },
  });
  logger.info({ port: health.port }, "health and metrics server listening");

  const loadModel = (dir: string) =>
    loadModelRunner({
      dir,
      trustedKeysDir: config.model.trustedKeysDir,
      provider: config.model.provider,
      expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
      logger,
    });
  const model = await loadModel(config.model.dir);
  readiness.set("modelVerified", true);
  if (config.model.warmUp === false) logger.warn("model warm-up skipped (MODEL_WARM_UP=false)");
  else await model.warmUp();
  readiness.set("modelWarm", true);
  metrics.setModelInfo(model.modelVersion, model.featureSchemaVersion, model.provider);
  let driftMonitor = driftMonitorFor(model.manifest);
  drift.follow(driftMonitor);
  const onModelSwitched = (to: ModelRunner) => {
    metrics.setModelInfo(to.modelVersion, to.featureSchemaVersion, to.provider);
    driftMonitor = driftMonitorFor(to.manifest);
    drift.follow(driftMonitor);
  };

  // The one fatal path. Exit without committing: a restart decides those transactions again.
  const onFatal = (err: unknown, what: string) => {
    logger.fatal({ err }, `${what}; exiting so its transactions are decided again after a restart`);
    process.exit(1);
  };

  // The registry is asked first, so its answer travels while the clients load.
  const registry = new SchemaRegistry(config.schemaRegistry);
  const [contracts, clients] = await Promise.all([
    registerContracts(registry, config, readiness, logger),
    connectClients(config, { model, loadModel, metrics, logger, onFatal, onModelSwitched }),
  ]);

  const scorer = await clients.startScorer(config, {
    ports: clients.promoted.current,
    shadow: clients.promoted.shadow,
    contracts: { registry, ...contracts },
    metrics,
    readiness,
    logger,
    observeModelStep: (x, score, rows) => driftMonitor?.observe(x, score, rows),
    onRebalance: clients.clearStateCaches,
    onFatal,
  });
  // 'ready' follows every reconnection (after Redis has loaded its data): the model decides again
  // as soon as the store answers, not a breaker reset later.
  clients.redis.on("ready", () => scorer.stateStoreBack());

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "draining and leaving the group");
    try {
      await scorer.stop();
      await clients.promoted.stop();
      drift.stop();
      clients.redis.disconnect();
      await clients.promoted.currentModel().close();
      await health.close();
      logger.info("stopped");
      process.exit(0);
    } catch (err) {
      logger.error({ err }, "unclean shutdown");
      process.exit(1);
    }
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}

async function registerContracts(
  registry: SchemaRegistry,
  config: ScorerConfig,
  readiness: Readiness<string>,
  logger: Logger,
): Promise<ContractSchemaIds> {
  const ids = await registry.registerContracts({
    transactionsTopic: config.kafka.transactionsTopic,
    decisionsTopic: config.kafka.decisionsTopic,
  });
  readiness.set("schemasRegistered", true);
  logger.info(ids, "contract schemas registered");
  return ids;
}

interface ClientParts {
  readonly model: ModelRunner;
  readonly loadModel: (dir: string) => Promise<ModelRunner>;
  readonly metrics: ScorerMetrics;
  readonly logger: Logger;
  readonly onFatal: (err: unknown, what: string) => void;
  readonly onModelSwitched: (to: ModelRunner) => void;
}

/** Loads the Kafka and Redis clients, connects Redis and follows the control topic. */
async function connectClients(
  config: ScorerConfig,
  { model, loadModel, metrics, logger, onFatal, onModelSwitched }: ClientParts,
) {
  const [
    { connectRedis, redisReadyOrWarn },
    { RedisCardStateStore },
    { createKafkaPort },
    { KafkaControlChannel },
    { startScorer },
  ] = await Promise.all([
    import("../state/redisClient.js"),
    import("../state/redisCardStateStore.js"),
    import("../stream/kafka/index.js"),
    import("../stream/kafkaControlChannel.js"),
    import("../stream/scorer.js"),
  ]);

  const redis = connectRedis(config.redis);
  redis.on("error", (err) => logger.debug({ err }, "redis connection error"));
  const redisReady = redisReadyOrWarn(redis, logger);
  // Card state is namespaced by model version: a promoted model gets a store of its own, so its
  // cards rebuild from history instead of reading state another model wrote.
  // Each store keeps the states this process last wrote in memory (cachedCardStateStore.ts),
  // forgotten on every rebalance (another instance may have written them meanwhile) and model
  // switch (the old version's are never read again: their memory is freed).
  const stateCaches = new Map<string, CachedCardStateStore>();
  const storeFor = (modelVersion: string): CardStateStore => {
    const store = new RedisCardStateStore({
      redis,
      namespace: config.redis.namespace,
      modelVersion,
      featureSchemaVersion: FEATURE_SCHEMA_VERSION,
      hmacKey: config.redis.hmacKey,
      ttlMs: config.redis.stateTtlMs,
      historyLength: config.redis.historyLength,
    });
    const cached = withWrittenStatesCached(store, {
      maxCards: config.redis.stateCacheCards,
      stateTtlMs: config.redis.stateTtlMs,
    });
    if (cached instanceof CachedCardStateStore) stateCaches.set(modelVersion, cached);
    return cached;
  };
  const clearStateCaches = () => {
    for (const cache of stateCaches.values()) cache.clear();
  };
  if (config.redis.stateCacheCards > 0)
    metrics.followCardStateCache(() => {
      const sum = { hits: 0, misses: 0, cards: 0 };
      for (const cache of stateCaches.values()) {
        sum.hits += cache.stats.hits;
        sum.misses += cache.stats.misses;
        sum.cards += cache.size;
      }
      return sum;
    });

  // Promotion: every instance follows the control topic (src/control/promotedPorts.ts).
  const promotions = new PromotionMetrics(metrics.registry);
  const controlChannel = new KafkaControlChannel({
    port: createKafkaPort(config.kafka),
    topic: config.kafka.controlTopic,
    onBadRecord: (err, offset) => logger.warn({ err, offset }, "control record ignored"),
    // Scoring goes on with what is current; promotions arrive again once the reader is back.
    onFollowCrashed: (err) =>
      logger.error({ err }, "control topic reader crashed: following again after a backoff"),
  });
  // The first Kafka call: a rejected password or an untrusted certificate stops here, once.
  await controlChannel.ensureTopic().catch((err: unknown) => onFatal(err, startupFailure(err)));
  const promoted = await followPromotions({
    channel: controlChannel,
    model,
    modelDir: config.model.dir,
    rules: await loadRuleSet(config.rules.file),
    loadModel,
    storeFor,
    logger,
    onModelSwitched: (to) => {
      clearStateCaches();
      onModelSwitched(to);
    },
    onOutcome: (record, outcome) => promotions.count(record.key, outcome),
  });
  await redisReady;
  return { redis, promoted, startScorer, clearStateCaches };
}

const startupFailure = (err: unknown) =>
  err instanceof KafkaPortError ? `could not start: ${err.message}` : "could not start";
