// Reads a decisions topic from the beginning and decodes each Confluent-framed Decision.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Consumer } from "kafkajs";
import { parseConfluentFrame } from "../../../src/codec/confluent.js";
import { decodeDecisionPayload, type Decision } from "../../../src/codec/messages.js";
import { testKafka } from "./kafkaTestTopics.js";

export interface CollectedRecord {
  readonly key: string;
  readonly value: Buffer;
  readonly headers: Record<string, string>;
  readonly partition: number;
  readonly offset: string;
}

export class TopicCollector {
  readonly records: CollectedRecord[] = [];
  readonly #consumer: Consumer;
  readonly #topic: string;

  constructor(brokers: string, topic: string) {
    this.#topic = topic;
    this.#consumer = testKafka(brokers).consumer({
      groupId: `collector-${randomUUID()}`,
      maxWaitTimeInMs: 100,
    });
  }

  async start(): Promise<void> {
    await this.#consumer.connect();
    await this.#consumer.subscribe({ topic: this.#topic, fromBeginning: true });
    await this.#consumer.run({
      eachMessage: async ({ message, partition }) => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
        this.records.push({
          key: message.key?.toString() ?? "",
          value: message.value ?? Buffer.alloc(0),
          headers,
          partition,
          offset: message.offset,
        });
      },
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
    return this.#consumer.disconnect();
  }
}

export function decodeDecisionRecord(value: Buffer): Decision {
  const frame = parseConfluentFrame(value);
  if (!frame.ok) throw new Error(`decision record is not Confluent-framed: ${frame.error.message}`);
  const decision = decodeDecisionPayload(frame.value.payload);
  if (!decision.ok) throw new Error(decision.error.message);
  return decision.value;
}

export class DecisionsCollector extends TopicCollector {
  /** Latest decision per transaction id (consumers deduplicate on the key). */
  readonly byTransaction = new Map<string, Decision>();
  #decoded = 0;

  decisions(): Decision[] {
    for (; this.#decoded < this.records.length; this.#decoded++) {
      const d = decodeDecisionRecord(this.records[this.#decoded]!.value);
      this.byTransaction.set(d.transactionId, d);
    }
    return [...this.byTransaction.values()];
  }

  async waitForDistinct(count: number, timeoutMs: number): Promise<Decision[]> {
    await this.waitFor(() => this.decisions().length >= count, timeoutMs, `${count} distinct decisions`);
    return this.decisions();
  }
}
