// Where load-generator transactions come from: the seeded payment simulator (labelled, so the
// demo can count fraud caught and missed) or a delimited transaction file, optionally with a
// labels CSV. A source that runs out starts over as a later copy of itself: ids get a "~k"
// suffix and event times move past the original span, so every card's history still runs forward.
import { readLabelsFile, readTransactionsFile } from "../../codec/transactionFiles.js";
import { simulatePayments } from "../simulate/simulatePayments.js";
import type { TransactionInit } from "../../codec/messages.js";

export interface TrafficItem {
  readonly tx: TransactionInit;
  /** The label, when the source has one. */
  readonly isFraud?: boolean;
}

export interface TrafficSource {
  readonly description: string;
  /** Distinct transactions before the source repeats. */
  readonly size: number;
  /** The i-th transaction of the stream (i ≥ 0; wraps past size). */
  at(i: number): TrafficItem;
  /**
   * The i-th transaction as a variant of one of the source's distinct transactions (same as
   * at(i), without building it), for sources that cycle a fixed list: an encoder can then
   * encode each distinct transaction once and only write what differs.
   */
  variantAt?(i: number): TrafficVariant;
}

export interface TrafficVariant {
  /** Which distinct transaction: the same index always means the same item. */
  readonly base: number;
  readonly item: TrafficItem;
  /** Appended to the item's transaction id. */
  readonly idSuffix: string;
  /** Added to the item's event time. */
  readonly eventTimeShiftMs: number;
}

const HOUR_MS = 3_600_000;

export function cyclingSource(description: string, items: readonly TrafficItem[]): TrafficSource {
  if (items.length === 0) throw new RangeError(`${description} holds no transactions`);
  const times = items.map((it) => Number(it.tx.eventTimeMs ?? 0));
  // A loop, not Math.max(...times): spreading 100k+ arguments overflows the call stack.
  let earliest = Infinity;
  let latest = -Infinity;
  for (const t of times) {
    if (t < earliest) earliest = t;
    if (t > latest) latest = t;
  }
  const span = latest - earliest + HOUR_MS;
  const suffixes: string[] = [""];
  return {
    description,
    size: items.length,
    variantAt(i) {
      const base = i % items.length;
      const round = Math.floor(i / items.length);
      return {
        base,
        item: items[base]!,
        idSuffix: (suffixes[round] ??= `~${round}`),
        eventTimeShiftMs: round * span,
      };
    },
    at(i) {
      const item = items[i % items.length]!;
      const round = Math.floor(i / items.length);
      if (round === 0) return item;
      return {
        ...item,
        tx: {
          ...item.tx,
          transactionId: `${item.tx.transactionId}~${round}`,
          eventTimeMs: Number(item.tx.eventTimeMs ?? 0) + round * span,
        },
      };
    },
  };
}

export interface SimulatedTrafficOptions {
  readonly seed: number;
  /** At least this many distinct transactions (the simulation is sized for it). */
  readonly transactions: number;
  readonly cards?: number;
  /** Prefix for transaction ids, so runs against shared topics stay apart. */
  readonly idPrefix?: string;
}

/** Roughly 2.3 payments per card and day come out of the simulator; size with margin. */
const PAYMENTS_PER_CARD_DAY = 2;

export function simulatedTraffic({
  seed,
  transactions,
  cards,
  idPrefix = "",
}: SimulatedTrafficOptions): TrafficSource {
  const cardCount = cards ?? Math.min(5000, Math.max(300, Math.round(transactions / 20)));
  const days = Math.min(120, Math.max(3, Math.ceil(transactions / (cardCount * PAYMENTS_PER_CARD_DAY)) + 1));
  const simulated = simulatePayments({ seed, cards: cardCount, days });
  const items = simulated.map((s) => ({
    tx: idPrefix ? { ...s.tx, transactionId: `${idPrefix}${s.tx.transactionId}` } : s.tx,
    isFraud: s.isFraud,
  }));
  return cyclingSource(`simulator (seed ${seed}, ${cardCount} cards, ${days} days)`, items);
}

export async function fileTraffic(path: string, labelsPath?: string): Promise<TrafficSource> {
  const txs = await readTransactionsFile(path);
  if (txs.length === 0) throw new Error(`${path} is empty: no transactions to send`);
  const labels = labelsPath ? await readLabelsFile(labelsPath) : undefined;
  const items = txs.map((tx) => {
    const isFraud = labels?.get(tx.transactionId);
    return isFraud === undefined ? { tx } : { tx, isFraud };
  });
  return cyclingSource(`file ${path}${labelsPath ? ` with labels ${labelsPath}` : ""}`, items);
}

/** Transactions [offset, offset + n) of a source, as a source of their own. */
export function sliceOf(source: TrafficSource, offset: number, n: number): TrafficSource {
  const variantAt = source.variantAt?.bind(source);
  return {
    description: source.description,
    size: n,
    at: (i) => source.at(offset + i),
    ...(variantAt ? { variantAt: (i: number) => variantAt(offset + i) } : {}),
  };
}
