// Decisions to the `decisions` topic: one record each, key = transaction_id (consumers
// deduplicate on it), value = Confluent-framed Decision. The records go out through the
// scorer's one outbound publisher (idempotent and acks=all, or the open Kafka transaction);
// `publish` resolves only when the broker has acknowledged every decision.
import { encodeDecisionRecord } from "../codec/decisionRecord.js";
import type { DecisionInit } from "../codec/messages.js";
import type { OutgoingRecord } from "./kafkaPort.js";

export type PublishRecords = (records: readonly OutgoingRecord[]) => Promise<void>;

export interface DecisionProducerOptions {
  readonly publish: PublishRecords;
  readonly topic: string;
  readonly decisionSchemaId: number;
}

export class DecisionProducer {
  readonly #publish: PublishRecords;
  readonly #topic: string;
  readonly #schemaId: number;

  constructor({ publish, topic, decisionSchemaId }: DecisionProducerOptions) {
    this.#publish = publish;
    this.#topic = topic;
    this.#schemaId = decisionSchemaId;
  }

  encode(decision: DecisionInit): Buffer {
    return encodeDecisionRecord(decision, this.#schemaId);
  }

  async publish(decisions: readonly DecisionInit[]): Promise<void> {
    if (decisions.length === 0) return;
    await this.#publish(
      decisions.map((d) => ({ topic: this.#topic, key: d.transactionId ?? "", value: this.encode(d) })),
    );
  }
}
