// How late the generator hands transactions to the sink, against their schedule: per
// transaction, in an HDR histogram (microsecond resolution, 2 significant digits). A load
// generator that falls behind delays records without the scorer being at fault; this says by
// how much, so a run can be told apart from one where the generator was the bottleneck.
import * as hdr from "hdr-histogram-js";

const HOUR_US = 3_600_000_000;

export interface SendLagSummary {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export class SendLag {
  readonly #histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HOUR_US,
    numberOfSignificantValueDigits: 2,
    autoResize: true,
  });
  #maxMs = 0;

  /** `transactions` were handed over `lagMs` after they were due (0 when on time). */
  record(lagMs: number, transactions: number): void {
    if (lagMs > this.#maxMs) this.#maxMs = lagMs;
    const us = Math.min(HOUR_US, Math.max(1, Math.round(lagMs * 1000)));
    this.#histogram.recordValueWithCount(us, transactions);
  }

  get maxMs(): number {
    return this.#maxMs;
  }

  summary(): SendLagSummary {
    const ms = (q: number) =>
      this.#histogram.totalCount === 0 ? 0 : Math.round(this.#histogram.getValueAtPercentile(q)) / 1000;
    return { p50Ms: ms(50), p99Ms: ms(99), maxMs: Math.round(this.#maxMs * 1000) / 1000 };
  }
}
