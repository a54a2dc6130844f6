// End-to-end latencies in an HDR histogram (hdr-histogram-js): one for the whole run and one
// per second of scheduled send time, for the chart. Values are microseconds.
import * as hdr from "hdr-histogram-js";

export interface LatencySummary {
  readonly count: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly maxMs: number;
  /** Share of values at or below the budget. */
  readonly withinBudget: number;
}

export interface SecondPoint {
  /** Seconds since the start of measurement. */
  readonly second: number;
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

const newHistogram = () =>
  hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000,
    numberOfSignificantValueDigits: 3,
    autoResize: true,
  });

export class LatencyRecorder {
  readonly #all = newHistogram();
  readonly #perSecond = new Map<number, hdr.Histogram>();
  readonly #budgetUs: number;
  #withinBudget = 0;

  constructor({ budgetMs }: { budgetMs: number }) {
    this.#budgetUs = budgetMs * 1000;
  }

  /** One latency, attributed to the second (since measurement start) its send was due in. */
  record(latencyUs: number, second: number): void {
    const value = Math.max(1, Math.round(latencyUs));
    this.#all.recordValue(value);
    if (value <= this.#budgetUs) this.#withinBudget++;
    let h = this.#perSecond.get(second);
    if (!h) {
      h = newHistogram();
      this.#perSecond.set(second, h);
    }
    h.recordValue(value);
  }

  get count(): number {
    return this.#all.totalCount;
  }

  /** p99 of one second so far (for live progress); undefined before anything arrived. */
  p99OfSecond(second: number): number | undefined {
    const h = this.#perSecond.get(second);
    return h && h.totalCount > 0 ? h.getValueAtPercentile(99) / 1000 : undefined;
  }

  summary(): LatencySummary {
    const h = this.#all;
    const at = (p: number) => (h.totalCount === 0 ? 0 : h.getValueAtPercentile(p) / 1000);
    return {
      count: h.totalCount,
      p50Ms: at(50),
      p95Ms: at(95),
      p99Ms: at(99),
      p999Ms: at(99.9),
      maxMs: h.totalCount === 0 ? 0 : h.maxValue / 1000,
      withinBudget: h.totalCount === 0 ? 0 : this.#withinBudget / h.totalCount,
    };
  }

  perSecond(): SecondPoint[] {
    return [...this.#perSecond.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([second, h]) => ({
        second,
        count: h.totalCount,
        p50Ms: h.getValueAtPercentile(50) / 1000,
        p99Ms: h.getValueAtPercentile(99) / 1000,
        maxMs: h.maxValue / 1000,
      }));
  }

  close(): void {
    this.#all.destroy();
    for (const h of this.#perSecond.values()) h.destroy();
  }
}
