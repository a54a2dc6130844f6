// Where the time went, from the per-stage timings every decision carries: the scorer's own
// view (record timestamp → decision produced) next to what the demo measured end to end, so
// the gap — acknowledgement and delivery of the decision — is visible too.
import type { DecisionInit } from "../../codec/messages.js";

export interface StageLine {
  readonly stage: string;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

const STAGES = [
  ["queue (record timestamp → picked for scoring)", "queueUs"],
  ["card-state read", "stateReadUs"],
  ["features", "featuresUs"],
  ["model", "modelUs"],
  ["policy", "policyUs"],
  ["card-state write", "stateWriteUs"],
  ["scorer total (record timestamp → decision produced)", "totalUs"],
] as const;

export class StageBreakdown {
  readonly #values = new Map<string, number[]>(STAGES.map(([name]) => [name, []]));
  readonly #afterScorer: number[] = [];

  /** endToEndUs: what the demo measured for the same transaction. */
  add(d: DecisionInit, endToEndUs: number): void {
    const t = d.timings ?? {};
    for (const [name, key] of STAGES) this.#values.get(name)!.push(t[key] ?? 0);
    this.#afterScorer.push(Math.max(0, endToEndUs - (t.totalUs ?? 0)));
  }

  summary(): StageLine[] {
    const line = (stage: string, values: number[]): StageLine => {
      const sorted = Float64Array.from(values).sort();
      const at = (q: number) =>
        sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! / 1000;
      return { stage, p50Ms: at(0.5), p99Ms: at(0.99) };
    };
    return [
      ...STAGES.map(([name]) => line(name, this.#values.get(name)!)),
      line("after the scorer (acknowledgement, delivery to the reader)", this.#afterScorer),
    ];
  }
}
