// Latencies in an HDR histogram (hdr-histogram-js): microsecond resolution, three significant
// digits, any value up to an hour. Every latency the benchmarks and the demo report goes
// through this one type, so "p99" means the same thing in every table.
import * as hdr from "hdr-histogram-js";

export interface LatencySummary {
  readonly count: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly maxMs: number;
  readonly meanMs: number;
}

const HOUR_US = 3_600_000_000;
const round3 = (n: number) => Math.round(n * 1000) / 1000;

export class LatencyHistogram {
  readonly #histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HOUR_US,
    numberOfSignificantValueDigits: 3,
    autoResize: true,
  });

  get count(): number {
    return this.#histogram.totalCount;
  }

  recordUs(us: number): void {
    // A value the clock cannot tell from zero is recorded as the smallest one it can.
    this.#histogram.recordValue(Math.min(HOUR_US, Math.max(1, Math.round(us))));
  }

  recordMs(ms: number): void {
    this.recordUs(ms * 1000);
  }

  reset(): void {
    this.#histogram.reset();
  }

  add(other: LatencyHistogram): void {
    this.#histogram.add(other.#histogram);
  }

  /** Frees the histogram (hdr-histogram-js may hold WebAssembly memory). */
  close(): void {
    this.#histogram.destroy();
  }

  percentileMs(p: number): number {
    return round3(this.#histogram.getValueAtPercentile(p) / 1000);
  }

  summary(): LatencySummary {
    const h = this.#histogram;
    return {
      count: h.totalCount,
      p50Ms: this.percentileMs(50),
      p95Ms: this.percentileMs(95),
      p99Ms: this.percentileMs(99),
      p999Ms: this.percentileMs(99.9),
      maxMs: round3(h.maxValue / 1000),
      meanMs: round3(h.mean / 1000),
    };
  }
}
