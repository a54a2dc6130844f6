// Facts that depend on the transaction alone: available even when card state is not (the
// rules fallback runs on these when Redis is down). Shared by the feature vector and card state.
import { fraud } from "../codec/generated/fraud.js";

const Channel = fraud.v1.Channel;

/** ISO 4217 minor-unit exponents that are not 2. */
const MINOR_UNIT_EXPONENT: Readonly<Record<string, number>> = {
  JPY: 0,
  KRW: 0,
  ISK: 0,
  CLP: 0,
  VND: 0,
  HUF: 2,
  BHD: 3,
  KWD: 3,
  OMR: 3,
  JOD: 3,
  TND: 3,
};

/**
 * Coarse, fixed euro rates. Features only need amounts on one scale (a 10 % FX move changes
 * log-amount features by 0.1); a model must not depend on a live rate feed for its inputs.
 */
const EUR_PER_UNIT: Readonly<Record<string, number>> = {
  EUR: 1,
  USD: 0.92,
  GBP: 1.17,
  CHF: 1.04,
  SEK: 0.088,
  NOK: 0.086,
  DKK: 0.134,
  PLN: 0.23,
  CZK: 0.04,
  HUF: 0.0025,
  JPY: 0.0062,
  CAD: 0.68,
  AUD: 0.61,
  BRL: 0.18,
  MXN: 0.054,
  INR: 0.011,
  CNY: 0.13,
  TRY: 0.028,
  RUB: 0.01,
  NGN: 0.0006,
  ZAR: 0.05,
  AED: 0.25,
};

export function amountEur(tx: fraud.v1.ITransaction): number {
  const currency = tx.currency ?? "";
  const exponent = MINOR_UNIT_EXPONENT[currency] ?? 2;
  const rate = EUR_PER_UNIT[currency] ?? 1;
  return (Number(tx.amountMinor ?? 0) / 10 ** exponent) * rate;
}

/** Below this a charge is the kind fraudsters use to test a stolen card. */
export const SMALL_AMOUNT_EUR = 5;

export const isInPerson = (channel: number): boolean =>
  channel === Channel.CHANNEL_CARD_PRESENT ||
  channel === Channel.CHANNEL_CONTACTLESS ||
  channel === Channel.CHANNEL_ATM;

export type MccGroup = "risky" | "resale" | "travel" | "everyday" | "other";

// Risky: gambling, quasi-cash / crypto, money transfer, digital goods, direct marketing.
const RISKY_MCC = new Set([4829, 5816, 5967, 6051, 6540, 7995, 7801, 7802]);
// Goods that resell easily: electronics, jewellery, gift cards / stored value, department stores.
const RESALE_MCC = new Set([5045, 5732, 5734, 5944, 5945, 5999, 5311, 5691, 5661, 5948]);
const EVERYDAY_MCC = new Set([
  5411, 5412, 5499, 5541, 5542, 5812, 5813, 5814, 5912, 4111, 4121, 5331, 7832, 4900, 4814, 4899, 5977,
]);

/** Every group, in the order per-group card state keeps them. */
export const MCC_GROUPS: readonly MccGroup[] = ["risky", "resale", "travel", "everyday", "other"];
export const mccGroupIndex = (group: MccGroup): number => MCC_GROUPS.indexOf(group);

export function mccGroup(mcc: number): MccGroup {
  if (RISKY_MCC.has(mcc)) return "risky";
  if (RESALE_MCC.has(mcc)) return "resale";
  if (
    (mcc >= 3000 && mcc <= 3999) ||
    mcc === 4511 ||
    mcc === 4722 ||
    mcc === 7011 ||
    mcc === 4411 ||
    mcc === 7512
  )
    return "travel";
  if (EVERYDAY_MCC.has(mcc)) return "everyday";
  return "other";
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Hour of day (UTC, fractional) of the event. */
export const hourOfDay = (timeMs: number): number => (((timeMs % DAY_MS) + DAY_MS) % DAY_MS) / HOUR_MS;

/** Day of week, 0 = Monday, fractional. */
export const dayOfWeek = (timeMs: number): number => {
  const days = Math.floor(timeMs / DAY_MS);
  return ((((days + 3) % 7) + 7) % 7) + hourOfDay(timeMs) / 24;
};

/** Hour of day (fractional) on the card's local clock; NaN when the card's UTC offset is unknown. */
export function localHourOfDay(tx: fraud.v1.ITransaction): number {
  const offset = tx.cardUtcOffsetMinutes;
  if (offset === null || offset === undefined) return NaN;
  return hourOfDay(Number(tx.eventTimeMs ?? 0) + offset * 60_000);
}

const EARTH_RADIUS_KM = 6371;
const RAD_PER_TENTH_DEGREE = Math.PI / 1800;

/** Great-circle distance in km between two points given in tenths of a degree (haversine). */
export function haversineKm(latE1a: number, lonE1a: number, latE1b: number, lonE1b: number): number {
  const la = latE1a * RAD_PER_TENTH_DEGREE;
  const lb = latE1b * RAD_PER_TENTH_DEGREE;
  const sinDLat = Math.sin((lb - la) / 2);
  const sinDLon = Math.sin(((lonE1b - lonE1a) * RAD_PER_TENTH_DEGREE) / 2);
  const a = sinDLat * sinDLat + Math.cos(la) * Math.cos(lb) * sinDLon * sinDLon;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** Distance from the card's home area to the merchant; NaN when either location is unknown. */
export function homeDistanceKm(tx: fraud.v1.ITransaction): number {
  const home = tx.cardHomeLocation;
  const merchant = tx.merchantLocation;
  if (!home || !merchant) return NaN;
  return haversineKm(home.latE1 ?? 0, home.lonE1 ?? 0, merchant.latE1 ?? 0, merchant.lonE1 ?? 0);
}
