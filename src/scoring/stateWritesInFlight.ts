// State writes that left after their batch's decisions (decideBatch). The next batch's read
// goes out on the same connection behind them, so Redis applies a card's write before it reads
// the card again; what the reader cannot know from Redis's order is whether a write failed, and
// a failed write sends its transactions to the deferred lane. So a batch reads, then waits for
// the writes that were in flight when its read left (answered before its read on a standalone
// Redis: no wait in practice) and only then asks the lane which of its cards are held.
//
// A write leaves at once. Held back to leave with the next batch's read in one pipeline (one
// socket write and one reply per batch instead of two), it cost more, not less: in the bench's
// steady 1,000 tx/s runs (section 8) the scorer, less the arrival timer, took 13.1 and 11.5 % of
// a core with writes held up to 25 ms, against 8.3 and 7.9 % sent at once (alternating runs,
// 2026-12-05), and Redis's own share did not move (4.0–4.2 against 4.3–4.4 %).
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
