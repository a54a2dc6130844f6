// Per-card state carried between transactions: the LSTM's h/c plus the running summaries the
// feature vector reads. Serving keeps it in Redis; training keeps it in a Map. The same update
// runs in both, so the features a model saw in training are the ones it sees in production.
import type { fraud } from "../codec/generated/fraud.js";
import type { FeatureHash, FeatureHashes } from "../ingest/featureHashes.js";
import {
  amountEur,
  hourOfDay,
  isInPerson,
  MCC_GROUPS,
  mccGroup,
  mccGroupIndex,
  SMALL_AMOUNT_EUR,
} from "./transactionFacts.js";

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** Capacity of the recent-entity sets (most recent first). */
export const RECENT_MERCHANTS = 16;
export const RECENT_DEVICES = 4;
export const RECENT_IP_PREFIXES = 4;

/** After this many transactions the amount statistics become an exponential moving average. */
const AMOUNT_STATS_WINDOW = 50;
/**
 * Per merchant-category group, the usual amount becomes an exponential moving average after this
 * many transactions of the group: a card's grocery bill drifts slowly, and its first few set it.
 */
const MCC_AMOUNT_WINDOW = 20;
/** Time constant of the habitual-hour vector: habits older than a few months fade. */
const HOUR_HABIT_TAU_MS = 30 * DAY_MS;

export interface VelocityCounters {
  /** Exponentially decayed counts/sums, valid as of `lastEventTimeMs`. */
  txCount1h: number;
  txCount24h: number;
  amountEur24h: number;
  smallTxCount1h: number;
  newMerchantCount1h: number;
}

export interface CardState {
  h: Float32Array;
  c: Float32Array;
  txCount: number;
  /** Event time of the last transaction applied; 0 when none. */
  lastEventTimeMs: number;
  /** Running mean / variance / max of log1p(amount in EUR). */
  amountLogMean: number;
  amountLogVar: number;
  amountLogMax: number;
  velocity: VelocityCounters;
  /** Decayed sum of the hour-of-day unit vectors of past transactions (the card's rhythm). */
  hourHabitSin: number;
  hourHabitCos: number;
  hourHabitWeight: number;
  lastMerchantCountry: string;
  lastInPersonCountry: string;
  lastInPersonTimeMs: number;
  recentMerchants: readonly FeatureHash[];
  recentDevices: readonly FeatureHash[];
  recentIpPrefixes: readonly FeatureHash[];
  /**
   * Per MCC group (MCC_GROUPS order): running mean of log1p(amount in EUR) and how many of the
   * card's transactions it summarises (capped at MCC_AMOUNT_WINDOW; 0 = group never used).
   */
  mccAmountLogMean: number[];
  mccAmountCount: number[];
}

export function emptyCardState(hidden: number): CardState {
  return {
    h: new Float32Array(hidden),
    c: new Float32Array(hidden),
    txCount: 0,
    lastEventTimeMs: 0,
    amountLogMean: 0,
    amountLogVar: 0,
    amountLogMax: 0,
    velocity: emptyVelocity(),
    hourHabitSin: 0,
    hourHabitCos: 0,
    hourHabitWeight: 0,
    lastMerchantCountry: "",
    lastInPersonCountry: "",
    lastInPersonTimeMs: 0,
    recentMerchants: [],
    recentDevices: [],
    recentIpPrefixes: [],
    mccAmountLogMean: MCC_GROUPS.map(() => 0),
    mccAmountCount: MCC_GROUPS.map(() => 0),
  };
}

/** Milliseconds since the card's last transaction; out-of-order events count as simultaneous. */
export const elapsedMs = (state: CardState, timeMs: number): number =>
  state.txCount === 0 ? Infinity : Math.max(0, timeMs - state.lastEventTimeMs);

const decay = (elapsed: number, tauMs: number): number =>
  elapsed === Infinity ? 0 : Math.exp(-elapsed / tauMs);

/**
 * The velocity counters once the transaction at `elapsed` ms after the card's last one
 * (elapsedMs) is counted: each decayed over that time, then the transaction added. The one
 * implementation the features (which read the counters a transaction brings them to) and the state
 * update (which keeps them) share. Written into `out`, which the features reuse: once per
 * transaction in each, a fresh object was allocation a drain paid for.
 */
export function countVelocity(
  state: CardState,
  elapsed: number,
  amount: number,
  merchantNew: boolean,
  out: VelocityCounters,
): VelocityCounters {
  const d1h = decay(elapsed, HOUR_MS);
  const d24h = decay(elapsed, DAY_MS);
  const v = state.velocity;
  out.txCount1h = v.txCount1h * d1h + 1;
  out.txCount24h = v.txCount24h * d24h + 1;
  out.amountEur24h = v.amountEur24h * d24h + amount;
  out.smallTxCount1h = v.smallTxCount1h * d1h + (amount < SMALL_AMOUNT_EUR ? 1 : 0);
  out.newMerchantCount1h = v.newMerchantCount1h * d1h + (merchantNew ? 1 : 0);
  return out;
}

/** Counters to count into (countVelocity), all zero. */
export const emptyVelocity = (): VelocityCounters => ({
  txCount1h: 0,
  txCount24h: 0,
  amountEur24h: 0,
  smallTxCount1h: 0,
  newMerchantCount1h: 0,
});

export const isKnown = (set: readonly FeatureHash[], hash: FeatureHash): boolean =>
  hash !== 0 && set.includes(hash);

// Indexed loops, not for-of: here the array iterator was not optimized away, and its result
// objects were the largest single allocation of a scored transaction (bench section 8).
// A set that would come out the same (no entity, or the same one again) is handed on, not copied:
// nothing changes a state's sets once they are built, so states may share them.
const remember = (set: readonly FeatureHash[], hash: FeatureHash, cap: number): readonly FeatureHash[] => {
  if (hash === 0 || (set[0] === hash && set.length <= cap)) return set;
  const next = [hash];
  for (let i = 0; i < set.length && next.length < cap; i++) if (set[i] !== hash) next.push(set[i]!);
  return next;
};

/**
 * The card state after `tx`, except h/c, which the model step produces. Pure: returns a new
 * state and leaves the input untouched (a batch may need to retry with the old one).
 */
export function advanceCardState(
  state: CardState,
  tx: fraud.v1.ITransaction,
  hashes: FeatureHashes,
): CardState {
  const timeMs = Number(tx.eventTimeMs ?? 0);
  const amount = amountEur(tx);
  const logAmount = Math.log1p(amount);
  const merchantNew = !isKnown(state.recentMerchants, hashes.merchant);
  const elapsed = elapsedMs(state, timeMs);

  const n = Math.min(state.txCount, AMOUNT_STATS_WINDOW);
  const alpha = 1 / (n + 1);
  const diff = logAmount - state.amountLogMean;

  const habitDecay = decay(elapsed, HOUR_HABIT_TAU_MS);
  const hourAngle = (2 * Math.PI * hourOfDay(timeMs)) / 24;
  const channel = tx.channel ?? 0;
  const inPerson = isInPerson(channel);
  const g = mccGroupIndex(mccGroup(tx.mcc ?? 0));
  const mccAmountLogMean = state.mccAmountLogMean.slice();
  const mccAmountCount = state.mccAmountCount.slice();
  const groupCount = mccAmountCount[g]!;
  mccAmountLogMean[g] = mccAmountLogMean[g]! + (logAmount - mccAmountLogMean[g]!) / (groupCount + 1);
  mccAmountCount[g] = Math.min(groupCount + 1, MCC_AMOUNT_WINDOW);

  return {
    h: state.h,
    c: state.c,
    txCount: state.txCount + 1,
    lastEventTimeMs: Math.max(state.lastEventTimeMs, timeMs),
    amountLogMean: state.amountLogMean + alpha * diff,
    amountLogVar: (1 - alpha) * (state.amountLogVar + alpha * diff * diff),
    amountLogMax: Math.max(state.amountLogMax, logAmount),
    velocity: countVelocity(state, elapsed, amount, merchantNew, emptyVelocity()),
    hourHabitSin: state.hourHabitSin * habitDecay + Math.sin(hourAngle),
    hourHabitCos: state.hourHabitCos * habitDecay + Math.cos(hourAngle),
    hourHabitWeight: state.hourHabitWeight * habitDecay + 1,
    lastMerchantCountry: tx.merchantCountry ?? "",
    lastInPersonCountry: inPerson ? (tx.merchantCountry ?? "") : state.lastInPersonCountry,
    lastInPersonTimeMs: inPerson ? timeMs : state.lastInPersonTimeMs,
    recentMerchants: remember(state.recentMerchants, hashes.merchant, RECENT_MERCHANTS),
    recentDevices: remember(state.recentDevices, hashes.device, RECENT_DEVICES),
    recentIpPrefixes: remember(state.recentIpPrefixes, hashes.ipPrefix, RECENT_IP_PREFIXES),
    mccAmountLogMean,
    mccAmountCount,
  };
}
