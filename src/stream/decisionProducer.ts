// Decisions to the `decisions` topic: key = transaction_id (consumers deduplicate on it),
// value = Confluent-framed Decision, idempotent producer with acks=all. `publish` resolves
// only when the broker has acknowledged every decision.
import { CompressionTypes, type Kafka, type Producer } from "kafkajs";
import { encodeConfluentFrame } from "../codec/confluent.js";
import { encodeDecisionPayload, type DecisionInit } from "../codec/messages.js";

export interface DecisionProducerOptions {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly decisionSchemaId: number;
}

export class DecisionProducer {
  readonly #producer: Producer;
  readonly #topic: string;
  readonly #schemaId: number;

  constructor({ kafka, topic, decisionSchemaId }: DecisionProducerOptions) {
    // kafkajs' idempotent producer requires one request in flight per connection.
    this.#producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
    });
    this.#topic = topic;
    this.#schemaId = decisionSchemaId;
  }

  connect(): Promise<void> {
    return this.#producer.connect();
  }

  disconnect(): Promise<void> {
    return this.#producer.disconnect();
  }

  encode(decision: DecisionInit): Buffer {
    return encodeConfluentFrame({
      schemaId: this.#schemaId,
      messageIndexes: [0],
      payload: encodeDecisionPayload(decision),
    });
  }

  async publish(decisions: readonly DecisionInit[]): Promise<void> {
    if (decisions.length === 0) return;
    await this.#producer.send({
      topic: this.#topic,
      acks: -1,
      compression: CompressionTypes.None,
      messages: decisions.map((d) => ({ key: d.transactionId ?? "", value: this.encode(d) })),
    });
  }
}
