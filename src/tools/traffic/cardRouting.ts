// Which partition a card's transactions go to. The load generator picks partitions itself, so
// that it can pack several transactions of one partition into one record; it must pick the one
// card_id keying would pick anyway: Kafka's default partitioner for keyed records (Java's, and
// kafkajs's DefaultPartitioner), murmur2 of the key bytes, made positive, modulo the count,
// as the scorer's sink partitions (src/stream/keyPartition.ts).
import { partitionForKey } from "../../stream/keyPartition.js";

export interface CardRoute {
  readonly partition: number;
  /** The record key: the card id's UTF-8 bytes, made once per card. */
  readonly key: Buffer;
}

/** Routes per card, computed on a card's first transaction and kept (cards repeat, often). */
export class CardRouter {
  readonly #routes = new Map<string, CardRoute>();

  constructor(readonly partitions: number) {
    if (!Number.isSafeInteger(partitions) || partitions < 1)
      throw new RangeError(`a topic has at least one partition, got ${partitions}`);
  }

  route(cardId: string): CardRoute {
    let route = this.#routes.get(cardId);
    if (route === undefined) {
      const key = Buffer.from(cardId, "utf8");
      route = { partition: partitionForKey(key, this.partitions), key };
      this.#routes.set(cardId, route);
    }
    return route;
  }
}
