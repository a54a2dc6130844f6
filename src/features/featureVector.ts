// The model's input: one fixed-length vector per transaction, computed from the transaction,
// its ingestion hashes, the card's state *before* the transaction and shared cross-card
// signals. Training and serving call the same `computeFeatures`; the model needs no further
// normalisation because every feature is scaled here into roughly [-1, 1] / [0, 1.5].
//
// Each feature has a raw value a fraud analyst can read ("transactions in the last hour") and
// a fixed scaling for the model. The rules engine reads the raw values by name
// (`computeFeatureFacts`), so rules and model share one definition of every signal.
import { fraud } from "../codec/generated/fraud.js";
import type { FeatureHashes } from "../ingest/featureHashes.js";
import {
  countVelocity,
  elapsedMs,
  emptyCardState,
  emptyVelocity,
  HOUR_MS,
  isKnown,
  type CardState,
} from "./cardState.js";
import {
  amountEur,
  dayOfWeek,
  homeDistanceKm,
  hourOfDay,
  isInPerson,
  localHourOfDay,
  mccGroup,
  mccGroupIndex,
} from "./transactionFacts.js";

/**
 * Bump on any change to names, order, raw definitions or scalings. A new schema only appends
 * features, so each earlier schema's vector is a prefix of this one (FEATURE_SCHEMAS).
 */
export const FEATURE_SCHEMA_VERSION = "card-features-2";

export interface SharedSignals {
  /** Distinct cards seen on this transaction's device in the trailing 24 h, this one included; 0 without a device. */
  deviceCardCount24h: number;
}

/** Which inputs a feature needs: transaction-only facts survive a card-state outage. */
type Source = "tx" | "state" | "shared";

interface FeatureDef {
  readonly name: string;
  readonly source: Source;
  readonly scale: (raw: number) => number;
}

const clamp = (v: number, lo: number, hi: number): number => (v < lo ? lo : v > hi ? hi : v);
/** Heavy-tailed counts and amounts: log scale, capped so an outlier cannot saturate the LSTM. */
const log1pOver = (d: number) => (raw: number) => Math.min(1.5, Math.log1p(Math.max(0, raw)) / d);
const identity = (raw: number): number => raw;
const clampOver = (lim: number) => (raw: number) => clamp(raw, -lim, lim) / lim;

/** Card with no history: hours since last transaction reads as 30 days. */
const NO_HISTORY_HOURS = 720;
/** Two in-person transactions in different countries closer than this cannot be one traveller. */
const IMPOSSIBLE_TRAVEL_MS = 4 * HOUR_MS;

/** Half the Earth's circumference: no two places are further apart. */
const MAX_DISTANCE_KM = 20_000;

const DEFS = [
  { name: "amount_eur", source: "tx", scale: log1pOver(8) },
  { name: "amount_z", source: "state", scale: clampOver(4) },
  { name: "amount_vs_card_max", source: "state", scale: clampOver(3) },
  { name: "card_tx_count", source: "state", scale: log1pOver(6) },
  { name: "hours_since_last", source: "state", scale: log1pOver(Math.log1p(NO_HISTORY_HOURS)) },
  { name: "tx_count_1h", source: "state", scale: log1pOver(3) },
  { name: "tx_count_24h", source: "state", scale: log1pOver(4) },
  { name: "amount_eur_24h", source: "state", scale: log1pOver(10) },
  { name: "small_tx_count_1h", source: "state", scale: log1pOver(3) },
  { name: "new_merchant_count_1h", source: "state", scale: log1pOver(3) },
  { name: "merchant_new", source: "state", scale: identity },
  { name: "device_new", source: "state", scale: identity },
  { name: "ip_prefix_new", source: "state", scale: identity },
  { name: "country_changed", source: "state", scale: identity },
  { name: "impossible_travel", source: "state", scale: identity },
  { name: "hour_unusual", source: "state", scale: identity },
  { name: "device_missing", source: "tx", scale: identity },
  { name: "foreign_merchant", source: "tx", scale: identity },
  { name: "hour_sin", source: "tx", scale: identity },
  { name: "hour_cos", source: "tx", scale: identity },
  { name: "dow_sin", source: "tx", scale: identity },
  { name: "dow_cos", source: "tx", scale: identity },
  { name: "channel_card_present", source: "tx", scale: identity },
  { name: "channel_contactless", source: "tx", scale: identity },
  { name: "channel_ecommerce", source: "tx", scale: identity },
  { name: "channel_atm", source: "tx", scale: identity },
  { name: "channel_moto", source: "tx", scale: identity },
  { name: "channel_recurring", source: "tx", scale: identity },
  { name: "mcc_risky", source: "tx", scale: identity },
  { name: "mcc_resale", source: "tx", scale: identity },
  { name: "mcc_travel", source: "tx", scale: identity },
  { name: "mcc_everyday", source: "tx", scale: identity },
  { name: "device_card_count_24h", source: "shared", scale: log1pOver(3) },
  // card-features-2 (appended: the first 33 are card-features-1, unchanged).
  { name: "local_hour_sin", source: "tx", scale: identity },
  { name: "local_hour_cos", source: "tx", scale: identity },
  { name: "local_time_unknown", source: "tx", scale: identity },
  { name: "amount_vs_mcc_usual", source: "state", scale: clampOver(3) },
  { name: "mcc_group_new", source: "state", scale: identity },
  { name: "home_distance_km", source: "tx", scale: log1pOver(Math.log1p(MAX_DISTANCE_KM)) },
  { name: "location_unknown", source: "tx", scale: identity },
] as const satisfies readonly FeatureDef[];

export type FeatureName = (typeof DEFS)[number]["name"];
export const FEATURE_NAMES: readonly FeatureName[] = DEFS.map((d) => d.name);
export const FEATURE_COUNT = DEFS.length;

/**
 * Every schema this build computes, and its width: a model trained on an earlier schema is fed
 * the first `width` features of the vector, exactly the list it was trained on.
 */
export const FEATURE_SCHEMAS: Readonly<Record<string, number>> = {
  "card-features-1": 33,
  [FEATURE_SCHEMA_VERSION]: FEATURE_COUNT,
};

/**
 * How many leading features a model declaring `schemaVersion` and `featureNames` takes, or why
 * this build cannot feed it (an unknown schema, or names that are not that schema's list).
 */
export function featureWidthFor(
  schemaVersion: string,
  featureNames: readonly string[],
): { ok: true; width: number } | { ok: false; reason: string } {
  const width = FEATURE_SCHEMAS[schemaVersion];
  if (width === undefined)
    return {
      ok: false,
      reason: `feature schema "${schemaVersion}" is unknown to this build (it computes ${Object.keys(FEATURE_SCHEMAS).join(", ")})`,
    };
  const expected = FEATURE_NAMES.slice(0, width);
  const differs = featureNames.length !== width || featureNames.some((n, i) => n !== expected[i]);
  if (differs) {
    const unknown = featureNames.filter((n) => !(FEATURE_NAMES as readonly string[]).includes(n));
    return {
      ok: false,
      reason:
        `its ${featureNames.length} feature names are not the ${width} of "${schemaVersion}" in order` +
        (unknown.length > 0 ? ` (unknown: ${unknown.slice(0, 5).join(", ")})` : ""),
    };
  }
  return { ok: true, width };
}
export const FEATURE_SOURCES: Readonly<Record<FeatureName, Source>> = Object.fromEntries(
  DEFS.map((d) => [d.name, d.source]),
) as Record<FeatureName, Source>;

const INDEX = Object.fromEntries(DEFS.map((d, i) => [d.name, i])) as Record<FeatureName, number>;
const SCALES: readonly ((raw: number) => number)[] = DEFS.map((d) => d.scale);

/** Raw values (analyst units), named feature → value. Missing when its source was unavailable. */
export type FeatureFacts = Partial<Record<FeatureName, number>>;

const { Channel } = fraud.v1;
const TWO_PI = 2 * Math.PI;

// One scratch buffer: computeFeatures is on the hot path and must not allocate.
const raw = new Float64Array(DEFS.length);
/** The counters the transaction being computed brings its card to (countVelocity's scratch). */
const velocity = emptyVelocity();

function computeRaw(
  tx: fraud.v1.ITransaction,
  hashes: FeatureHashes,
  state: CardState,
  shared: SharedSignals,
): void {
  const timeMs = Number(tx.eventTimeMs ?? 0);
  const amount = amountEur(tx);
  const logAmount = Math.log1p(amount);
  const hasHistory = state.txCount > 0;
  const dt = elapsedMs(state, timeMs);
  const merchantNew = !isKnown(state.recentMerchants, hashes.merchant);
  const v = countVelocity(state, dt, amount, merchantNew, velocity);
  const channel = tx.channel ?? 0;
  const merchantCountry = tx.merchantCountry ?? "";
  const hour = hourOfDay(timeMs);
  const hourAngle = (TWO_PI * hour) / 24;
  const dowAngle = (TWO_PI * dayOfWeek(timeMs)) / 7;
  const group = mccGroup(tx.mcc ?? 0);
  const g = mccGroupIndex(group);
  const groupSeen = state.mccAmountCount[g]! > 0;
  const localHour = localHourOfDay(tx);
  const localAngle = (TWO_PI * localHour) / 24;
  const distanceKm = homeDistanceKm(tx);

  raw[INDEX.amount_eur] = amount;
  raw[INDEX.amount_z] = hasHistory
    ? (logAmount - state.amountLogMean) / (Math.sqrt(state.amountLogVar) + 0.25)
    : 0;
  raw[INDEX.amount_vs_card_max] = hasHistory ? logAmount - state.amountLogMax : 0;
  raw[INDEX.card_tx_count] = state.txCount;
  raw[INDEX.hours_since_last] = hasHistory ? Math.min(dt / HOUR_MS, NO_HISTORY_HOURS) : NO_HISTORY_HOURS;
  raw[INDEX.tx_count_1h] = v.txCount1h;
  raw[INDEX.tx_count_24h] = v.txCount24h;
  raw[INDEX.amount_eur_24h] = v.amountEur24h;
  raw[INDEX.small_tx_count_1h] = v.smallTxCount1h;
  raw[INDEX.new_merchant_count_1h] = v.newMerchantCount1h;
  raw[INDEX.merchant_new] = merchantNew ? 1 : 0;
  raw[INDEX.device_new] = hashes.device !== 0 && !isKnown(state.recentDevices, hashes.device) ? 1 : 0;
  raw[INDEX.ip_prefix_new] =
    hashes.ipPrefix !== 0 && !isKnown(state.recentIpPrefixes, hashes.ipPrefix) ? 1 : 0;
  raw[INDEX.country_changed] = hasHistory && merchantCountry !== state.lastMerchantCountry ? 1 : 0;
  raw[INDEX.impossible_travel] =
    isInPerson(channel) &&
    state.lastInPersonCountry !== "" &&
    state.lastInPersonCountry !== merchantCountry &&
    timeMs - state.lastInPersonTimeMs < IMPOSSIBLE_TRAVEL_MS
      ? 1
      : 0;
  // 0 = at the card's usual hour, 1 = opposite side of the clock; 0.5 while the habit is unknown.
  raw[INDEX.hour_unusual] =
    state.hourHabitWeight >= 3
      ? (1 -
          (Math.sin(hourAngle) * state.hourHabitSin + Math.cos(hourAngle) * state.hourHabitCos) /
            Math.max(1e-9, Math.hypot(state.hourHabitSin, state.hourHabitCos))) /
        2
      : 0.5;
  raw[INDEX.device_missing] = hashes.device === 0 ? 1 : 0;
  raw[INDEX.foreign_merchant] = merchantCountry !== "" && merchantCountry !== (tx.cardCountry ?? "") ? 1 : 0;
  raw[INDEX.hour_sin] = Math.sin(hourAngle);
  raw[INDEX.hour_cos] = Math.cos(hourAngle);
  raw[INDEX.dow_sin] = Math.sin(dowAngle);
  raw[INDEX.dow_cos] = Math.cos(dowAngle);
  raw[INDEX.channel_card_present] = channel === Channel.CHANNEL_CARD_PRESENT ? 1 : 0;
  raw[INDEX.channel_contactless] = channel === Channel.CHANNEL_CONTACTLESS ? 1 : 0;
  raw[INDEX.channel_ecommerce] = channel === Channel.CHANNEL_ECOMMERCE ? 1 : 0;
  raw[INDEX.channel_atm] = channel === Channel.CHANNEL_ATM ? 1 : 0;
  raw[INDEX.channel_moto] = channel === Channel.CHANNEL_MOTO ? 1 : 0;
  raw[INDEX.channel_recurring] = channel === Channel.CHANNEL_RECURRING ? 1 : 0;
  raw[INDEX.mcc_risky] = group === "risky" ? 1 : 0;
  raw[INDEX.mcc_resale] = group === "resale" ? 1 : 0;
  raw[INDEX.mcc_travel] = group === "travel" ? 1 : 0;
  raw[INDEX.mcc_everyday] = group === "everyday" ? 1 : 0;
  raw[INDEX.device_card_count_24h] = hashes.device === 0 ? 0 : shared.deviceCardCount24h;
  // Unknown time zone or location: 0 plus a flag, so "unknown" never reads as midnight or "at home".
  const localKnown = !Number.isNaN(localHour);
  raw[INDEX.local_hour_sin] = localKnown ? Math.sin(localAngle) : 0;
  raw[INDEX.local_hour_cos] = localKnown ? Math.cos(localAngle) : 0;
  raw[INDEX.local_time_unknown] = localKnown ? 0 : 1;
  raw[INDEX.amount_vs_mcc_usual] = groupSeen ? logAmount - state.mccAmountLogMean[g]! : 0;
  raw[INDEX.mcc_group_new] = hasHistory && !groupSeen ? 1 : 0;
  const locationKnown = !Number.isNaN(distanceKm);
  raw[INDEX.home_distance_km] = locationKnown ? distanceKm : 0;
  raw[INDEX.location_unknown] = locationKnown ? 0 : 1;
}

/**
 * Writes the first `width` scaled floats (all FEATURE_COUNT by default; a model of an earlier
 * schema takes fewer, see featureWidthFor) for `tx` into out[offset …]. `state` is the card's
 * state before `tx`. With `rawOut`, also all FEATURE_COUNT raw values into rawOut[rawOffset …],
 * so the rules can read them (RawFeatures) instead of computing them a second time.
 */
export function computeFeatures(
  tx: fraud.v1.ITransaction,
  hashes: FeatureHashes,
  state: CardState,
  shared: SharedSignals,
  out: Float32Array,
  offset: number,
  rawOut?: Float64Array,
  width: number = FEATURE_COUNT,
  rawOffset: number = offset,
): void {
  computeRaw(tx, hashes, state, shared);
  for (let i = 0; i < width; i++) out[offset + i] = SCALES[i]!(raw[i]!);
  rawOut?.set(raw, rawOffset);
}

/** Stands in for missing state while computing raw values; state-derived facts are dropped. */
const NO_STATE_PLACEHOLDER: CardState = emptyCardState(0);

/**
 * Raw feature values (FEATURE_COUNT, analyst units) as the rules read them, by index, with which
 * sources were known: without card state (store down) the state-derived values are unknown
 * rather than guessed, likewise the shared ones.
 */
export interface RawFeatures {
  readonly values: Float64Array;
  readonly hasState: boolean;
  readonly hasShared: boolean;
}

/** Reads one raw feature; undefined while its source (card state, shared signals) is unknown. */
export type RawFeatureReader = (features: RawFeatures) => number | undefined;

function readerAt(i: number): RawFeatureReader {
  switch (DEFS[i]!.source) {
    case "state":
      return (f) => (f.hasState ? f.values[i] : undefined);
    case "shared":
      return (f) => (f.hasShared ? f.values[i] : undefined);
    default:
      return (f) => f.values[i];
  }
}

const READERS: readonly RawFeatureReader[] = DEFS.map((_, i) => readerAt(i));

/** The reader of a named feature; undefined for a name that is no feature. */
export const rawFeatureReader = (name: string): RawFeatureReader | undefined =>
  Object.hasOwn(INDEX, name) ? READERS[INDEX[name as FeatureName]] : undefined;

/** RawFeatures of `tx` in a fresh array, the caller's to keep (training, tests; the rules read scratchRawFeatures). */
export function computeRawFeatures(
  tx: fraud.v1.ITransaction,
  hashes: FeatureHashes,
  state: CardState | null,
  shared: SharedSignals | null,
): RawFeatures {
  return { ...scratchRawFeatures(tx, hashes, state, shared), values: raw.slice() };
}

/**
 * RawFeatures of `tx` in this module's scratch buffer, valid until the next feature computation:
 * for a reader done with them before it returns (the rules' evaluation), so the rules-only path,
 * once per transaction of a backlog, copies nothing.
 */
export function scratchRawFeatures(
  tx: fraud.v1.ITransaction,
  hashes: FeatureHashes,
  state: CardState | null,
  shared: SharedSignals | null,
): RawFeatures {
  computeRaw(tx, hashes, state ?? NO_STATE_PLACEHOLDER, shared ?? NO_SHARED_PLACEHOLDER);
  return SCRATCH_VIEWS[(state === null ? 0 : 1) + (shared === null ? 0 : 2)]!;
}

const NO_SHARED_PLACEHOLDER: SharedSignals = { deviceCardCount24h: 0 };
/** The scratch buffer as RawFeatures, by which sources are known: state 1, shared 2. */
const SCRATCH_VIEWS: readonly RawFeatures[] = [0, 1, 2, 3].map((known) => ({
  values: raw,
  hasState: (known & 1) !== 0,
  hasShared: (known & 2) !== 0,
}));

/**
 * Raw, named feature values (for reading and tests; the rules read RawFeatures by index). Without
 * card state (store down) the state-derived facts are absent rather than guessed; likewise the
 * shared ones.
 */
export function computeFeatureFacts(
  tx: fraud.v1.ITransaction,
  hashes: FeatureHashes,
  state: CardState | null,
  shared: SharedSignals | null,
): FeatureFacts {
  const features = computeRawFeatures(tx, hashes, state, shared);
  const facts: FeatureFacts = {};
  DEFS.forEach((def, i) => {
    const value = READERS[i]!(features);
    if (value !== undefined) facts[def.name] = value;
  });
  return facts;
}
