// The foil of the state benchmark, in bench/ only: the card state fetched and stored the way
// per-transaction code does it, one GET and one SET per transaction, each awaited. It does less
// than RedisCardStateStore (no HMAC, no compare-and-set script, no history, no device
// HyperLogLog), so the comparison flatters the foil.
import type { Redis } from "ioredis";

export interface StateAccess {
  readonly cardId: string;
  readonly value: Buffer;
}

export class PerTransactionStateAccess {
  constructor(
    private readonly redis: Redis,
    private readonly namespace: string,
    private readonly ttlMs: number,
  ) {}

  key(cardId: string): string {
    return `${this.namespace}:naive:{${cardId}}`;
  }

  /** One transaction after the other: GET, (score), SET. */
  async sequential(accesses: readonly StateAccess[]): Promise<number> {
    let found = 0;
    for (const { cardId, value } of accesses) {
      if ((await this.redis.getBuffer(this.key(cardId))) !== null) found++;
      await this.redis.set(this.key(cardId), value, "PX", this.ttlMs);
    }
    return found;
  }

  /**
   * All transactions of the batch at once, each its own GET-then-SET. ioredis writes commands to
   * the socket as they are issued, so this is pipelining in all but name (and a card seen twice
   * in the batch races with itself).
   */
  async concurrent(accesses: readonly StateAccess[]): Promise<number> {
    const found = await Promise.all(
      accesses.map(async ({ cardId, value }) => {
        const hit = (await this.redis.getBuffer(this.key(cardId))) !== null;
        await this.redis.set(this.key(cardId), value, "PX", this.ttlMs);
        return hit ? 1 : 0;
      }),
    );
    return found.reduce<number>((a, b) => a + b, 0);
  }
}
