// Which partition a card's transactions go to. The load generator picks partitions itself, so
// that it can pack several transactions of one partition into one record; it must pick the one
// card_id keying would pick anyway: Kafka's default partitioner for keyed records (Java's, and
// kafkajs's DefaultPartitioner), murmur2 of the key bytes, made positive, modulo the count.

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2), as a signed 32-bit int. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const rest = length & 3;
  if (rest > 0) {
    if (rest === 3) h ^= data[whole + 2]! << 16;
    if (rest >= 2) h ^= data[whole + 1]! << 8;
    h ^= data[whole]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

export const partitionForKey = (key: Uint8Array, partitions: number): number =>
  (murmur2(key) & 0x7fffffff) % partitions;

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
