// Comparisons on a shared, noisy machine: both sides run in the same process, in alternating
// rounds (A B, B A, A B, …) after a warm-up round each, and each side's figure is the median of
// its rounds. Drift over the run then hits both sides alike, and the ratio is what to read.

export interface Contender {
  readonly name: string;
  /** Does `units` units of work; returns how many it did (for per-unit costs). */
  readonly round: () => Promise<number> | number;
}

export interface ContenderResult {
  readonly name: string;
  /** Median over rounds, nanoseconds per unit. */
  readonly nsPerUnit: number;
  readonly roundsNsPerUnit: readonly number[];
}

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The contenders' indices in round `round` (from 0): in order, then reversed, and so on. */
export function alternatingOrder(contenders: number, round: number): number[] {
  const order = Array.from({ length: contenders }, (_, i) => i);
  return round % 2 === 1 ? order.reverse() : order;
}

export async function alternatingRounds(
  contenders: readonly Contender[],
  rounds: number,
  { afterWarmUp }: { afterWarmUp?: () => void } = {},
): Promise<ContenderResult[]> {
  const samples = contenders.map(() => [] as number[]);
  for (const c of contenders) await c.round(); // warm-up: JIT, lazy initialisation, caches
  afterWarmUp?.();
  for (let r = 0; r < rounds; r++) {
    for (const i of alternatingOrder(contenders.length, r)) {
      const t0 = process.hrtime.bigint();
      const units = await contenders[i]!.round();
      const ns = Number(process.hrtime.bigint() - t0);
      samples[i]!.push(ns / Math.max(1, units));
    }
  }
  return contenders.map((c, i) => ({
    name: c.name,
    nsPerUnit: median(samples[i]!),
    roundsNsPerUnit: samples[i]!,
  }));
}

export const round1 = (n: number) => Math.round(n * 10) / 10;
export const round3 = (n: number) => Math.round(n * 1000) / 1000;

export const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

/**
 * The rounds' mean of a figure (to 0.1), when every round measured it; undefined when one did
 * not (a figure added since some of the results were written).
 */
export function meanOfEvery(values: readonly (number | undefined)[]): number | undefined {
  const measured = values.filter((v): v is number => v !== undefined);
  return measured.length > 0 && measured.length === values.length ? round1(mean(measured)) : undefined;
}
