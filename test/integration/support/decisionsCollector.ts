// Collects what the scorer wrote in an integration test: raw records of any topic, or the
// decisions of a decisions topic through the product's follower and decoder.
import { setTimeout as sleep } from "node:timers/promises";
import type { IsolationLevel, RecordSource } from "../../../src/stream/kafkaPort.js";
import {
  followDecisions,
  type DecisionRecordMeta,
  type Following,
} from "../../../src/decisions/followDecisions.js";
import type { Decision } from "../../../src/codec/messages.js";
import { testKafka } from "./kafkaTestTopics.js";

export interface CollectedRecord {
  readonly key: string;
  readonly value: Buffer;
  readonly headers: Record<string, string>;
  readonly partition: number;
  readonly offset: number;
  /** The record's timestamp: when the scorer produced it (ms since the epoch). */
  readonly timestampMs: number;
  /** When the collector received it (ms since the epoch). */
  readonly receivedAtMs: number;
}

async function waitUntil(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** Every record of a topic, raw (transactions, dead letters). */
export class TopicCollector {
  readonly records: CollectedRecord[] = [];
  readonly #reader: RecordSource;

  constructor(brokers: string, topic: string, isolation: IsolationLevel = "read_uncommitted") {
    this.#reader = testKafka(brokers).topicReader({ topic, from: "earliest", isolation, maxWaitMs: 100 });
  }

  async start(): Promise<void> {
    await this.#reader.start((batches) => {
      const receivedAtMs = Date.now();
      for (const batch of batches)
        for (const record of batch.records) {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(record.headers)) headers[k] = v.toString();
          this.records.push({
            key: record.key?.toString() ?? "",
            value: record.value ?? Buffer.alloc(0),
            headers,
            partition: record.partition,
            offset: record.offset,
            timestampMs: record.timestampMs,
            receivedAtMs,
          });
        }
    });
  }

  waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return waitUntil(predicate, timeoutMs, what);
  }

  stop(): Promise<void> {
    return this.#reader.close();
  }
}

export interface CollectedDecision extends DecisionRecordMeta {
  readonly decision: Decision;
}

/** Follows a decisions topic from the beginning through the product's one follower. */
export class DecisionsCollector {
  /** Every decision record, redeliveries included, in arrival order. */
  readonly records: CollectedDecision[] = [];
  /** Latest decision per transaction id (consumers deduplicate on the key). */
  readonly byTransaction = new Map<string, Decision>();
  #undecodable: string | undefined;
  #following: Following | undefined;

  constructor(
    readonly brokers: string,
    readonly topic: string,
    readonly isolation: IsolationLevel = "read_uncommitted",
  ) {}

  async start(): Promise<void> {
    this.#following = await followDecisions({
      kafka: testKafka(this.brokers),
      topic: this.topic,
      fromBeginning: true,
      isolation: this.isolation,
      onDecision: (decision, meta) => {
        this.records.push({ ...meta, decision });
        this.byTransaction.set(decision.transactionId, decision);
      },
      onUndecodable: ({ partition, offset, error }) =>
        (this.#undecodable ??= `decision at ${partition}:${offset}: ${error.kind}: ${error.message}`),
    });
  }

  /** The distinct decisions so far; a record that is not a decision fails the test here. */
  decisions(): Decision[] {
    if (this.#undecodable !== undefined) throw new Error(this.#undecodable);
    return [...this.byTransaction.values()];
  }

  waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return waitUntil(predicate, timeoutMs, what);
  }

  async waitForDistinct(count: number, timeoutMs: number): Promise<Decision[]> {
    await this.waitFor(() => this.decisions().length >= count, timeoutMs, `${count} distinct decisions`);
    return this.decisions();
  }

  async stop(): Promise<void> {
    await this.#following?.stop();
  }
}
