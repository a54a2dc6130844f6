// Reads a decisions topic from the beginning and decodes each Confluent-framed Decision.
import { setTimeout as sleep } from "node:timers/promises";
import type { IsolationLevel, RecordSource } from "../../../src/stream/kafkaPort.js";
import { decodeDecisionRecord } from "../../../src/codec/decisionRecord.js";
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

  async waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await sleep(100);
    }
  }

  stop(): Promise<void> {
    return this.#reader.close();
  }
}

export class DecisionsCollector extends TopicCollector {
  /** Latest decision per transaction id (consumers deduplicate on the key). */
  readonly byTransaction = new Map<string, Decision>();
  #decoded = 0;

  decisions(): Decision[] {
    for (; this.#decoded < this.records.length; this.#decoded++) {
      const { value, partition, offset } = this.records[this.#decoded]!;
      const d = decodeDecisionRecord(value);
      if (!d.ok) throw new Error(`decision at ${partition}:${offset}: ${d.error.kind}: ${d.error.message}`);
      this.byTransaction.set(d.value.transactionId, d.value);
    }
    return [...this.byTransaction.values()];
  }

  async waitForDistinct(count: number, timeoutMs: number): Promise<Decision[]> {
    await this.waitFor(() => this.decisions().length >= count, timeoutMs, `${count} distinct decisions`);
    return this.decisions();
  }
}
