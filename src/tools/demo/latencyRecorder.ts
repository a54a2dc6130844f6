// The demo's end-to-end latencies: one histogram for the whole run and one per second of
// scheduled send time (for the chart and the live progress), plus the share within budget.
// The histograms are the bench's (src/tools/latencyHistogram.ts), so a p99 means the same here.
import { LatencyHistogram, type LatencySummary } from "../latencyHistogram.js";

export interface RunLatencySummary extends Omit<LatencySummary, "meanMs"> {
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

export class LatencyRecorder {
  readonly #all = new LatencyHistogram();
  readonly #perSecond = new Map<number, LatencyHistogram>();
  readonly #budgetUs: number;
  #withinBudget = 0;

  constructor({ budgetMs }: { budgetMs: number }) {
    this.#budgetUs = budgetMs * 1000;
  }

  /** One latency, attributed to the second (since measurement start) its send was due in. */
  record(latencyUs: number, second: number): void {
    this.#all.recordUs(latencyUs);
    if (latencyUs <= this.#budgetUs) this.#withinBudget++;
    let h = this.#perSecond.get(second);
    if (!h) {
      h = new LatencyHistogram();
      this.#perSecond.set(second, h);
    }
    h.recordUs(latencyUs);
  }

  get count(): number {
    return this.#all.count;
  }

  /** p99 of one second so far (for live progress); undefined before anything arrived. */
  p99OfSecond(second: number): number | undefined {
    const h = this.#perSecond.get(second);
    return h && h.count > 0 ? h.percentileMs(99) : undefined;
  }

  summary(): RunLatencySummary {
    const { meanMs: _mean, ...summary } = this.#all.summary();
    return { ...summary, withinBudget: summary.count === 0 ? 0 : this.#withinBudget / summary.count };
  }

  perSecond(): SecondPoint[] {
    return [...this.#perSecond.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([second, h]) => {
        const { count, p50Ms, p99Ms, maxMs } = h.summary();
        return { second, count, p50Ms, p99Ms, maxMs };
      });
  }

  /** Frees the histograms (hdr-histogram-js may hold WebAssembly memory). */
  close(): void {
    this.#all.close();
    for (const h of this.#perSecond.values()) h.close();
  }
}
