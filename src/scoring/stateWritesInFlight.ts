// State writes that left after their batch's decisions (decideBatch). The next batch's read
// goes out on the same connection behind them, so Redis applies a card's write before it reads
// the card again; what the reader cannot know from Redis's order is whether a write failed, and
// a failed write sends its transactions to the deferred lane. So a batch reads, then waits for
// the writes that were in flight when its read left (answered before its read on a standalone
// Redis: no wait in practice) and only then asks the lane which of its cards are held.
export class StateWritesInFlight {
  readonly #pending = new Set<Promise<unknown>>();

  /** Tracks a write until it settles (it must not reject: failures are the lane's). */
  add(write: Promise<unknown>): void {
    this.#pending.add(write);
    void write.finally(() => this.#pending.delete(write));
  }

  /** Settles once every write in flight now has; undefined when none is. */
  settled(): Promise<unknown> | undefined {
    if (this.#pending.size === 0) return undefined;
    return Promise.allSettled([...this.#pending]);
  }
}
