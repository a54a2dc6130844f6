// One scenario's run, start to verdict: its own topics, its scorers, open-loop load from
// `fraud-scorer produce`, the fault (the scenario's body, run while the load runs), a wait until
// the group has committed everything, then the independent audits over topics, Redis and logs.
import { mkdirSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { auditCardState, type CardStateAudit } from "./cardStateAudit.js";
import { DecisionAuditor, type DecisionAudit } from "./decisionAudit.js";
import { auditLogs, type LogAudit } from "./logAudit.js";
import { startLoad } from "./loadGenerator.js";
import { chaosPort, createRunTopics, deleteRunTopics, type RunTopics } from "./runTopics.js";
import type { ScenarioContext } from "./scenario.js";
import { ScorerFleet } from "./scorerFleet.js";
import { streamWholeTopic } from "./topicReader.js";

export interface FaultRunOptions {
  readonly label: string;
  readonly ratePerSecond: number;
  readonly durationS: number;
  /** Instances started before the load, named i1, i2, … */
  readonly instances?: number;
  readonly kafkaBrokers?: string;
  /**
   * Where the suite's own clients (topics, drain wait, audit) connect, when not where the scorers
   * and the load do: a slowed link is the scorer's fault to ride out, not the audit's.
   */
  readonly suiteBrokers?: string;
  readonly redisUrl?: string;
  readonly replicationFactor?: number;
  readonly scorerEnv?: Record<string, string>;
  /** Check each card's txCount (not when the scenario destroys the state on purpose). */
  readonly checkCardState?: boolean;
  /** Secrets handed to the scorers besides the fleet's HMAC key, for the log audit. */
  readonly secrets?: readonly string[];
  /** Give up waiting for the group after this long without progress (default 90 s). */
  readonly drainStuckS?: number;
}

export interface FaultRunContext {
  readonly fleet: ScorerFleet;
  readonly topics: RunTopics;
  readonly brokers: string;
  /** Milliseconds since the load started. */
  readonly elapsedMs: () => number;
  /** Sleeps until `ms` after the load started. */
  readonly at: (ms: number) => Promise<void>;
}

export interface FaultRunResult {
  readonly decisions: DecisionAudit;
  readonly cardState?: CardStateAudit;
  readonly logs: LogAudit;
  readonly drained: boolean;
  /** Scorers the suite restarted because they had exited or hung on their own. */
  readonly unplannedRestarts: number;
  /** The load generator gave up before sending everything (what was sent is still audited). */
  readonly loadFailure?: string;
  /** The load generator's closing line (sent, behind schedule p99 and max, its CPU). */
  readonly loadSummary?: string;
}

export async function faultRun(
  ctx: ScenarioContext,
  o: FaultRunOptions,
  fault: (run: FaultRunContext) => Promise<void>,
): Promise<FaultRunResult> {
  const brokers = o.kafkaBrokers ?? ctx.endpoints.kafkaBrokers;
  const suiteBrokers = o.suiteBrokers ?? brokers;
  const redisUrl = o.redisUrl ?? ctx.endpoints.redisUrl;
  const topics = await createRunTopics(suiteBrokers, o.label, {
    replicationFactor: o.replicationFactor ?? 1,
  });
  mkdirSync(ctx.logDir, { recursive: true });
  const fleet = new ScorerFleet({
    root: ctx.root,
    logDir: ctx.logDir,
    kafkaBrokers: brokers,
    schemaRegistryUrl: ctx.endpoints.schemaRegistryUrl,
    redisUrl,
    topics,
    modelDir: ctx.modelDir,
    ...(o.scorerEnv !== undefined ? { overrides: o.scorerEnv } : {}),
  });
  let endSupervision = async () => {};
  try {
    for (let i = 1; i <= (o.instances ?? 1); i++) await fleet.start(`i${i}`);
    ctx.log(
      `${o.label}: ${fleet.running().length} scorer(s) ready; load ${o.ratePerSecond} tx/s for ${o.durationS} s`,
    );
    const load = startLoad({
      root: ctx.root,
      brokers,
      topic: topics.transactions,
      ratePerSecond: o.ratePerSecond,
      durationS: o.durationS,
      idPrefix: `${o.label}-`,
    });
    const elapsedMs = () => Date.now() - load.startedAtMs;
    const at = async (ms: number) => {
      const wait = ms - elapsedMs();
      if (wait > 0) await sleep(wait);
    };
    endSupervision = fleet.supervise();
    await fault({ fleet, topics, brokers, elapsedMs, at });
    const loadFailure = await load.done;
    const loadSummary = load.summary();
    if (loadFailure !== undefined) ctx.log(`${o.label}: ${loadFailure}`);
    const drained = await waitForDrain(
      suiteBrokers,
      fleet.env.KAFKA_GROUP_ID!,
      topics.transactions,
      o.drainStuckS === undefined ? {} : { stuckS: o.drainStuckS },
    );
    await endSupervision();
    ctx.log(`${o.label}: load done, ${drained ? "group caught up" : "group did NOT catch up"}; auditing`);
    await fleet.stopAll();

    // Streamed through the auditor, not held: a soak writes millions of records to each topic.
    // What was sent is read first, since each decision is checked against it.
    const auditor = new DecisionAuditor();
    const read = { timeoutMs: 1_800_000 };
    await streamWholeTopic(suiteBrokers, topics.transactions, (r) => auditor.addTransactionRecord(r), read);
    await Promise.all([
      streamWholeTopic(suiteBrokers, topics.decisions, (r) => auditor.addDecisionRecord(r), read),
      streamWholeTopic(suiteBrokers, topics.dlq, (r) => auditor.addDlqRecord(r), read),
    ]);
    const decisions = auditor.finish();
    const cardState =
      o.checkCardState === false
        ? undefined
        : await auditCardState({
            redisUrl,
            namespace: fleet.namespace,
            modelVersion: ctx.modelVersion,
            hmacKeyHex: fleet.hmacKeyHex,
            perCard: decisions.perCard,
          });
    const logs = auditLogs(
      fleet.logFiles,
      [fleet.hmacKeyHex, ...(o.secrets ?? [])],
      new Set(decisions.perCard.keys()),
    );
    return {
      decisions,
      ...(cardState !== undefined ? { cardState } : {}),
      logs,
      drained,
      unplannedRestarts: fleet.unplannedRestarts,
      ...(loadFailure !== undefined ? { loadFailure } : {}),
      ...(loadSummary !== undefined ? { loadSummary } : {}),
    };
  } finally {
    await endSupervision();
    await fleet.stopAll();
    await deleteRunTopics(suiteBrokers, topics);
  }
}

/**
 * Until the group's committed offsets reach every partition's end (offsets follow decisions).
 * A backlog is waited out as long as it shrinks: the wait ends after `stuckS` without progress,
 * or at the hard cap, so "not caught up" means stuck, not merely slow.
 */
async function waitForDrain(
  brokers: string,
  groupId: string,
  topic: string,
  { stuckS = 90, capS = 900 } = {},
): Promise<boolean> {
  const admin = chaosPort(brokers).admin();
  try {
    const cap = Date.now() + capS * 1000;
    let lastCommitted = -1;
    let lastProgress = Date.now();
    while (Date.now() < cap && Date.now() - lastProgress < stuckS * 1000) {
      const ends = await admin.watermarks(topic);
      const byPartition = await admin.committedOffsets(groupId, topic);
      if (ends.every((e) => e.high === 0 || (byPartition.get(e.partition) ?? -1) >= e.high)) return true;
      const total = [...byPartition.values()].reduce((sum, offset) => sum + Math.max(0, offset), 0);
      if (total > lastCommitted) {
        lastCommitted = total;
        lastProgress = Date.now();
      }
      await sleep(1_000);
    }
    return false;
  } catch {
    return false;
  } finally {
    await admin.close().catch(() => {});
  }
}
