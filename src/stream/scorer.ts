// The composition root of `fraud-scorer serve`: it reads like the data-flow diagram.
//   transactions ─► TransactionConsumer (decode, hash, DLQ) ─► ScoringQueue ─► decideBatch
//   (state read, model step, policy, state write sent) ─► DecisionProducer ─► decisions,
//   offsets committed after the decisions are acknowledged and the state writes answered (or,
//   exactly-once, inside the Kafka transaction that writes them). Dead letters go out through a
//   producer of their own (in exactly-once mode, the one transaction).
//   A shadow candidate, when there is one, scores each batch after its decisions are handed to
//   the producer (ShadowScoring) and writes to the shadow topic through a producer of its own.
// The model is verified and warmed, and the schemas registered (by the caller), before the
// consumer joins.
import type { Logger } from "pino";
import { TRANSACTION_TYPE, type ContractSchemaIds, type SchemaRegistry } from "../codec/schemaRegistry.js";
import type { BatchPorts } from "../control/promotedPorts.js";
import { systemClock } from "../scoring/ports.js";
import { DeferredStateLane, LANE_HIGH_WATER } from "../scoring/deferredStateLane.js";
import { GuardedCall, type BreakerState } from "../scoring/guardedCall.js";
import type { PolicyThresholds } from "../scoring/policy.js";
import { ShadowScoring, type ShadowCandidate } from "../scoring/shadowScoring.js";
import {
  applyStateOnly,
  decideBatch,
  type ScoringContext,
  type ScoringEvents,
} from "../scoring/scoreBatch.js";
import { StateWritesInFlight } from "../scoring/stateWritesInFlight.js";
import { DeadLetterPublisher } from "./deadLetter.js";
import { DecisionProducer } from "./decisionProducer.js";
import { createKafkaPort, type KafkaConnectionSettings } from "./kafka/index.js";
import {
  BROKER_AWAY_MS,
  KafkaPortError,
  type KafkaPort,
  type OutgoingRecord,
  type RecordSink,
  type SourceEvent,
} from "./kafkaPort.js";
import { ScoringQueue } from "./scoringQueue.js";
import { TransactionConsumer } from "./transactionConsumer.js";
import { TransactionScope } from "./transactionScope.js";
import { LogThrottle } from "../ops/logThrottle.js";
import type { ScorerMetrics } from "../ops/metrics.js";
import { ShadowMetrics } from "../ops/shadowMetrics.js";
import type { Readiness } from "../ops/readiness.js";

export interface ScorerSettings {
  readonly kafka: KafkaConnectionSettings & {
    readonly groupId: string;
    readonly groupInstanceId?: string | undefined;
    readonly groupProtocol: "classic" | "consumer";
    readonly sessionTimeoutMs: number;
    readonly commitIntervalMs: number;
    readonly exactlyOnce: boolean;
    readonly transactionsTopic: string;
    readonly decisionsTopic: string;
    readonly dlqTopic: string;
    readonly shadowDecisionsTopic: string;
    readonly maxFrameBytes: number;
  };
  readonly scoring: {
    readonly budgetMs: number;
    readonly maxBatch: number;
    readonly lingerMs: number;
    readonly thresholds: PolicyThresholds;
    readonly minBudgetForModelMs: number;
    readonly stateTimeoutMs: number;
    readonly modelTimeoutMs: number;
    readonly breaker: {
      readonly errorThresholdPercentage: number;
      readonly resetTimeoutMs: number;
      readonly volumeThreshold: number;
    };
    readonly explainTopFeatures: number;
  };
}

export interface ScorerParts {
  /**
   * Read once per batch and kept for the whole batch, so a promotion switches between two
   * batches and every decision carries the versions it was scored with.
   */
  readonly ports: () => BatchPorts;
  /** The shadow candidate for the next batch, if one is being shadowed. */
  readonly shadow?: () => ShadowCandidate | undefined;
  /** The contract schemas, registered before the scorer starts; the registry resolves other ids. */
  readonly contracts: ContractSchemaIds & { readonly registry: SchemaRegistry };
  readonly metrics: ScorerMetrics;
  readonly readiness: Readiness;
  readonly logger: Logger;
  /** Sees each decision-making model step's features and scores (the drift monitor). */
  readonly observeModelStep?: (x: Float32Array, score: Float32Array, rows: number) => void;
  /**
   * The group is rebalancing, or has joined with a new assignment: another instance may have
   * written the cards of any partition meanwhile (serve forgets the card states it keeps).
   */
  readonly onRebalance?: () => void;
  /**
   * The one fatal path: decisions that could not be published, or a consumer that crashed.
   * Readiness has dropped when it is called; the caller stops the process uncommitted.
   */
  readonly onFatal: (err: unknown, what: string) => void;
}

export interface RunningScorer {
  /** Drains the in-flight batch, commits, leaves the group, closes connections. */
  stop(): Promise<void>;
  /**
   * The state store's client has reconnected: its breakers close at once (see
   * GuardedCall.dependencyBack), so the model decides again without waiting out a reset timer.
   */
  stateStoreBack(): void;
}

export async function startScorer(settings: ScorerSettings, parts: ScorerParts): Promise<RunningScorer> {
  const { metrics, readiness, logger } = parts;
  const { scoring } = settings;

  const { registry, transactionSchemaId, decisionSchemaId } = parts.contracts;

  const { kafka: k } = settings;
  let fatal = false;
  const stopFatally = (err: unknown, what: string) => {
    if (fatal) return;
    fatal = true;
    readiness.set("groupJoined", false, what);
    parts.onFatal(err, what);
  };
  const onSourceEvent = (event: SourceEvent) => {
    if (event.type === "joined") {
      parts.onRebalance?.();
      readiness.set("groupJoined", true);
      logger.info(
        { groupId: k.groupId, memberId: event.memberId, partitions: event.assigned.length },
        "joined the consumer group",
      );
    } else if (event.type === "revoked") {
      parts.onRebalance?.();
      logger.info({ groupId: k.groupId }, "group rebalancing");
    } else stopFatally(event.error, consumerFailure(event.error));
  };
  const port = createKafkaPort(k);
  const source = port.groupSource({
    topics: [k.transactionsTopic],
    groupId: k.groupId,
    groupInstanceId: k.groupInstanceId,
    groupProtocol: k.groupProtocol,
    sessionTimeoutMs: k.sessionTimeoutMs,
    // Exactly-once: only what committed transactions wrote upstream counts as input.
    isolation: k.exactlyOnce ? "read_committed" : "read_uncommitted",
    onEvent: onSourceEvent,
    onLag: (lags) => {
      for (const { partition, lag } of lags) metrics.setConsumerLag(partition, lag);
    },
  });
  // Idempotent producers with acks=all, or one transactional producer for both decisions and
  // dead letters (a delivery's decisions, dead letters and offsets are one Kafka transaction).
  // Apart, dead letters never wait in the decisions' produce requests nor they in theirs: a
  // sink sends one request at a time, and a burst of dead letters (or one near the broker's
  // size limit) in it held every decision behind it (malformed: good traffic p99 2 s).
  const transactions = k.exactlyOnce
    ? new TransactionScope(
        port.transactionalSink({ source, transactionalId: transactionalIdOf(k.groupId, k.groupInstanceId) }),
      )
    : undefined;
  const sink: RecordSink | undefined = transactions ? undefined : port.sink({ retryForMs: BROKER_AWAY_MS });
  const deadLetterSink: RecordSink | undefined = transactions
    ? undefined
    : port.sink({ retryForMs: BROKER_AWAY_MS, maxRequestBytes: DEAD_LETTER_REQUEST_BYTES });
  const publish = (records: readonly OutgoingRecord[]) => (transactions ?? sink!).publish(records);
  const decisions = new DecisionProducer({ publish, topic: k.decisionsTopic, decisionSchemaId });
  const deadLetters = new DeadLetterPublisher({
    publish: (records) => (transactions ?? deadLetterSink!).publish(records),
    topic: k.dlqTopic,
    maxRecordBytes: await deadLetterLimit(port, k.dlqTopic, logger),
    onTruncated: (letter) => {
      metrics.countTruncatedDeadLetter();
      logger.warn(
        {
          topic: letter.topic,
          partition: letter.partition,
          offset: letter.offset,
          bytes: letter.value?.length,
        },
        "dead letter cut to fit the DLQ's size limit; the whole record stays in the input topic",
      );
    },
  });

  const onStateChange = (name: string, state: BreakerState) => {
    metrics.setBreakerState(name, state);
    logger.warn({ breaker: name, state }, "circuit breaker changed state");
  };
  const guard = (name: string, timeoutMs: number) =>
    new GuardedCall({ name, timeoutMs, ...breakerOptions(scoring.breaker), onStateChange });
  const guards = {
    stateRead: guard("state_read", scoring.stateTimeoutMs),
    model: guard("model", scoring.modelTimeoutMs),
    stateWrite: guard("state_write", scoring.stateTimeoutMs),
  };
  for (const g of Object.values(guards)) metrics.setBreakerState(g.name, g.state);

  // One warning per kind of failure per second, with how many it stands for (logThrottle.ts):
  // the state lane's, the dependencies', the shadow's.
  const warnings = new LogThrottle();
  const stateLane: DeferredStateLane = new DeferredStateLane({
    apply: (items, laneGuards) => applyStateOnly(items, { ...context, ...parts.ports(), guards: laneGuards }),
    // Exactly-once: a lane call the store leaves unanswered as long as a live state call may
    // wait is stalled (commits stop waiting for the lane; live reads stop while it lasts).
    ...(transactions ? { stallMs: scoring.stateTimeoutMs } : {}),
    onDeferred: (items) => metrics.countCardState("deferred", items),
    onBehind: (event, items) => {
      if (event === "caught_up") {
        logger.info("the card-state store answers again: exactly-once commits wait for state work again");
        return;
      }
      metrics.countCardState("committed_ahead", items);
      if (event === "behind")
        logger.warn(
          { items, stallMs: scoring.stateTimeoutMs },
          "the card-state store does not answer: exactly-once commits no longer wait for deferred state work",
        );
    },
    onDropped: (items, reason) => {
      metrics.countCardState("dropped", items);
      const line = warnings.admit(`dropped:${reason}`, items);
      if (line === undefined) return;
      logger.warn(
        {
          items,
          reason,
          suppressedSinceLast: line.suppressedSinceLast,
          transactionsSuppressedSinceLast: line.suppressedWeight,
        },
        "card-state updates could not be applied",
      );
    },
  });
  const events: ScoringEvents = {
    modelStepped: parts.observeModelStep,
    stateOutcome: (outcome, count) => metrics.countCardState(outcome, count),
    dependencyFailure: (dependency, failure, error) => {
      const line = warnings.admit(`${dependency}:${failure}`);
      if (line === undefined) return;
      logger.warn(
        { dependency, failure, err: error, suppressedSinceLast: line.suppressedSinceLast },
        "dependency call failed; rules decide",
      );
    },
  };

  const context: Omit<ScoringContext, keyof BatchPorts> = {
    thresholds: scoring.thresholds,
    budgetMs: scoring.budgetMs,
    minBudgetForModelMs: scoring.minBudgetForModelMs,
    guards,
    clock: systemClock,
    explainTopFeatures: scoring.explainTopFeatures,
    events,
    stateLane,
    backlog: () => queue.depth,
    // Measured (npm run bench, end to end): sending every wholly late batch to the lane kept
    // 5000 tx/s at p99 0.4 s where waiting for a backlog of 8 batches let it reach 7 s.
    backlogForLane: 0,
    writesInFlight: new StateWritesInFlight(),
  };

  // Guards of its own: a candidate that fails or times out must not open the live breakers.
  const shadowGuards = {
    stateRead: guard("shadow_state_read", scoring.stateTimeoutMs),
    model: guard("shadow_model", scoring.modelTimeoutMs),
    stateWrite: guard("shadow_state_write", scoring.stateTimeoutMs),
  };
  const shadow =
    parts.shadow &&
    startShadowScoring(parts, parts.shadow, {
      sink: port.sink(),
      topic: k.shadowDecisionsTopic,
      decisionSchemaId,
      // A few live batches' worth: more means a shadow so far behind its budgets are spent.
      maxPending: scoring.maxBatch * 4,
      // A candidate failing on every batch (its store down, say) logs once a second, not per batch.
      warnings,
      context: () => ({
        thresholds: context.thresholds,
        budgetMs: context.budgetMs,
        minBudgetForModelMs: context.minBudgetForModelMs,
        clock: context.clock,
        rules: parts.ports().rules,
        guards: shadowGuards,
        explainTopFeatures: 0,
      }),
    });

  const queue = new ScoringQueue({
    maxBatch: scoring.maxBatch,
    // Exactly-once takes the next delivery only once this one is committed: nothing can join
    // a lingering batch, so the linger would only add latency.
    lingerMs: transactions ? 0 : scoring.lingerMs,
    // Publishes in flight leave together in the sink's next produce request, so more of them
    // cost no more requests: the bound is memory. At 4, a 1 s round trip (slow-kafka-500ms)
    // capped decisions at 4 batches a second.
    maxInFlightPublishes: 32,
    onBatch: (size) => metrics.observeBatchSize(size),
    score: (items) => decideBatch(items, { ...context, ...parts.ports() }),
    publish: async (batch) => {
      const t0 = performance.now();
      await decisions.publish(batch);
      const ackedAt = Date.now();
      metrics.observeStage("produce", (performance.now() - t0) / 1000);
      metrics.observeDecisions(batch, ackedAt);
    },
    handedOff: (items) => shadow?.scoring.offer(items),
  });

  const consumer = new TransactionConsumer({
    source,
    maxFrameBytes: k.maxFrameBytes,
    queue,
    deadLetters,
    transactions,
    transactionSchemaIds: new Set([transactionSchemaId]),
    isTransactionSchema: async (id) => (await registry.firstMessageType(id)) === TRANSACTION_TYPE,
    logger,
    onDeadLetter: (reason) => metrics.countDeadLetter(reason),
    onDecoded: (decodeUs) => metrics.observeStage("decode", decodeUs / 1e6),
    stateSettled: () => stateLane.drained(),
    // A delivery whose decisions are all past their budget (a backlog after a restart) waits for
    // its state work, unless the lane is already behind: its decisions lose nothing by waiting.
    // One with decisions still inside their budget waits only while the store answers the lane:
    // a stopped Redis held every decision behind the commit (redis-frozen-exactly-once: p100
    // 10-13 s). Committed ahead of its state work, a delivery's updates are lost if the process
    // dies before they are applied (counted as committed_ahead).
    deliveryStateSettled: (newestRecordMs) =>
      newestRecordMs + scoring.budgetMs > context.clock.nowMs() || stateLane.behind
        ? stateLane.drainedUnlessStalled()
        : stateLane.drained(),
    // While the live state calls succeed, a lane applying a backlog's work bounds what waits on
    // it (room() counts nothing else); in an outage (breaker open) nothing holds the consumer.
    stateRoom: () =>
      guards.stateRead.state === "closed" ? stateLane.room(LANE_HIGH_WATER) : Promise.resolve(),
    commitIntervalMs: k.commitIntervalMs,
    maxQueuedItems: scoring.maxBatch * 16,
    onFatal: (err) => stopFatally(err, "decisions could not be published"),
  });
  // Before the group is joined, so the first decisions do not pay for it (RecordSink.warm).
  // Best effort: a publish opens whatever this could not.
  await sink?.warm([k.decisionsTopic]).catch((err: unknown) => {
    logger.warn({ err }, "the decision producer could not be prepared; the first decisions will do it");
  });
  await consumer.start().catch((err: unknown) => {
    stopFatally(err, consumerFailure(err));
    throw err;
  });

  return {
    async stop() {
      readiness.set("groupJoined", false);
      // Stop fetching, finish the batches in hand and their deferred state work, commit, leave.
      await consumer.stop(async () => {
        await queue.idle();
        await stateLane.drained();
      });
      stateLane.shutdown();
      await shadow?.scoring.idle();
      await shadow?.sink.close();
      await (transactions ?? sink!).close();
      await deadLetterSink?.close();
      for (const g of [...Object.values(guards), ...Object.values(shadowGuards)]) g.shutdown();
    },
    stateStoreBack() {
      for (const g of [guards.stateRead, guards.stateWrite, shadowGuards.stateRead, shadowGuards.stateWrite])
        g.dependencyBack();
    },
  };
}

/**
 * Shadow decisions go out through a producer of their own (idempotent, never transactional):
 * they are advisory, must not join the live decisions' Kafka transaction, and must not queue in
 * front of live decisions in one producer.
 */
function startShadowScoring(
  parts: ScorerParts,
  candidate: () => ShadowCandidate | undefined,
  o: {
    sink: RecordSink;
    topic: string;
    decisionSchemaId: number;
    maxPending: number;
    warnings: LogThrottle;
    context: ConstructorParameters<typeof ShadowScoring>[0]["context"];
  },
): { scoring: ShadowScoring; sink: RecordSink } {
  const metrics = new ShadowMetrics(parts.metrics.registry);
  const producer = new DecisionProducer({
    publish: (records) => o.sink.publish(records),
    topic: o.topic,
    decisionSchemaId: o.decisionSchemaId,
  });
  const scoring = new ShadowScoring({
    candidate,
    context: o.context,
    maxPending: o.maxPending,
    publish: (decisions) => producer.publish(decisions),
    events: {
      scored: (count) => metrics.decided(count),
      skipped: (reason, count) => metrics.skipped(reason, count),
      failed: (err, count) => {
        metrics.skipped("failed", count);
        const line = o.warnings.admit("shadow:failed", count);
        if (line === undefined) return;
        parts.logger.warn(
          {
            err,
            count,
            suppressedSinceLast: line.suppressedSinceLast,
            transactionsSuppressedSinceLast: line.suppressedWeight,
          },
          "shadow batch failed",
        );
      },
    },
  });
  return { scoring, sink: o.sink };
}

/**
 * Dead letters per produce request, by estimated bytes. The scenario's bursts of 2,500 small
 * letters went out as one 512 KiB request whose encoding held the event loop (so every decision)
 * for tens of milliseconds; at this size each request is a few milliseconds of work, with the
 * event loop free between them, and still carries ~600 KB/s at a 100 ms round trip.
 */
const DEAD_LETTER_REQUEST_BYTES = 64 * 1024;

/** The broker's default max.message.bytes (1 MiB + 12), assumed when the DLQ's cannot be read. */
const BROKER_DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

/** The largest dead letter the DLQ accepts: read once, since a letter over it stops the scorer. */
async function deadLetterLimit(port: KafkaPort, topic: string, logger: Logger): Promise<number> {
  const admin = port.admin();
  try {
    return await admin.maxMessageBytes(topic);
  } catch (err) {
    logger.warn(
      { err, topic, assumed: BROKER_DEFAULT_MAX_MESSAGE_BYTES },
      "the DLQ's max.message.bytes could not be read; dead letters are cut to the broker's default",
    );
    return BROKER_DEFAULT_MAX_MESSAGE_BYTES;
  } finally {
    await admin.close().catch(() => {});
  }
}

/** The adapter names what failed (wrong password, untrusted certificate, lost brokers …). */
const consumerFailure = (err: unknown) =>
  err instanceof KafkaPortError ? `the consumer stopped: ${err.message}` : "the consumer crashed";

/**
 * One transactional id per instance: with static membership the instance id is stable across
 * restarts, so a restarted instance fences its predecessor's open transaction at once.
 */
const transactionalIdOf = (groupId: string, instanceId: string | undefined) =>
  `${groupId}-${instanceId ?? `instance-${process.pid}`}`;

const breakerOptions = (b: ScorerSettings["scoring"]["breaker"]) => ({
  errorThresholdPercentage: b.errorThresholdPercentage,
  resetTimeoutMs: b.resetTimeoutMs,
  volumeThreshold: b.volumeThreshold,
});
