// Replay's clock runs on the transactions, not the wall: "now" for a batch is the earliest
// budget start in it (record timestamp or event time), so no transaction looks late, nothing
// is budget-exhausted, device windows see the history's own time, and decided_at_ms is the
// same on every run. Only the stage timings read the real monotonic clock.
import type { Clock } from "../scoring/ports.js";

export class ReplayClock implements Clock {
  #nowMs = 0;

  /** Sets "now" to the earliest budget start of the batch about to be scored. */
  startBatch(budgetStarts: Iterable<number>): void {
    let earliest = Infinity;
    for (const ms of budgetStarts) if (ms < earliest) earliest = ms;
    if (earliest !== Infinity) this.#nowMs = earliest;
  }

  nowMs(): number {
    return this.#nowMs;
  }

  monotonicUs(): number {
    return performance.now() * 1000;
  }
}
