// A Prometheus histogram for the per-decision observations: an observation is a bucket search and
// three additions into typed arrays. prom-client's Histogram builds a closure, a label object and
// a label-hash string for every observation and keys its buckets by the bound as a property name:
// about 0.5 µs each, two per decision (bench section 8's metrics row). This one is registered in
// the same prom-client Registry and hands it the same series (prom-client's own get() shape), so
// the exposition text is unchanged; counters and gauges stay prom-client's.
import type { Registry } from "prom-client";

export interface BucketObserver {
  observe(value: number): void;
}

/** One label set's buckets (non-cumulative counts), sum and count. */
class Series implements BucketObserver {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly upperBounds: Float64Array,
  ) {
    this.counts = new Float64Array(upperBounds.length);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.upperBounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    // Above the last bound it counts in +Inf only, which is the series' count.
    if (i < bounds.length) this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

export interface BucketHistogramOptions<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly buckets: readonly number[];
  readonly labelNames?: readonly L[];
  readonly registers?: readonly Registry[];
}

interface ExportedValue {
  readonly labels: Record<string, string | number>;
  readonly sharedLabels: Readonly<Record<string, string>>;
  readonly value: number;
  readonly metricName: string;
}

export class BucketHistogram<L extends string = never> {
  readonly name: string;
  readonly help: string;
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly #upperBounds: Float64Array;
  readonly #labelNames: readonly L[];
  /** By label values joined with NUL. */
  readonly #series = new Map<string, Series>();
  /** The one series of a histogram without labels, observed without a look-up. */
  #unlabelled: BucketObserver | undefined;

  constructor({ name, help, buckets, labelNames = [], registers = [] }: BucketHistogramOptions<L>) {
    const sorted = [...buckets].sort((a, b) => a - b);
    if (sorted.some((b, i) => !Number.isFinite(b) || (i > 0 && b === sorted[i - 1])))
      throw new RangeError(`${name}: buckets must be distinct finite numbers`);
    this.name = name;
    this.help = help;
    this.#upperBounds = Float64Array.from(sorted);
    this.#labelNames = labelNames;
    this.reset();
    for (const registry of registers)
      registry.registerMetric(this as unknown as Parameters<Registry["registerMetric"]>[0]);
  }

  /**
   * The series of these label values (in labelNames order), created at zero on first use: it is
   * exported from then on, observed or not (what prom-client's zero() is for).
   */
  labels(...values: string[]): BucketObserver {
    if (values.length !== this.#labelNames.length)
      throw new RangeError(
        `${this.name} takes ${this.#labelNames.length} label values, got ${values.length}`,
      );
    const key = values.join("\u0000");
    let series = this.#series.get(key);
    if (series === undefined) {
      const labels = Object.fromEntries(this.#labelNames.map((n, i) => [n, values[i]!]));
      series = new Series(labels, this.#upperBounds);
      this.#series.set(key, series);
    }
    return series;
  }

  /** An observation of the histogram without labels. */
  observe(value: number): void {
    if (this.#unlabelled === undefined) throw new TypeError(`${this.name} takes label values: use labels()`);
    this.#unlabelled.observe(value);
  }

  reset(): void {
    this.#series.clear();
    // Like prom-client's, a histogram without labels exports zeros before its first observation.
    this.#unlabelled = this.#labelNames.length === 0 ? this.labels() : undefined;
  }

  /** What prom-client's Registry reads: cumulative buckets, +Inf, sum and count per series. */
  get(): Promise<{ name: string; help: string; type: string; values: ExportedValue[]; aggregator: string }> {
    const values: ExportedValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.#series.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.#upperBounds.length; i++) {
        cumulative += series.counts[i]!;
        values.push({
          labels: { le: this.#upperBounds[i]! },
          sharedLabels: series.labels,
          value: cumulative,
          metricName: bucket,
        });
      }
      const shared = series.labels;
      values.push(
        { labels: { le: "+Inf" }, sharedLabels: shared, value: series.count, metricName: bucket },
        { labels: {}, sharedLabels: shared, value: series.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: shared, value: series.count, metricName: `${this.name}_count` },
      );
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: this.aggregator,
    });
  }
}
