// What a transaction must satisfy before it may be scored. Proto3 has no required fields, so
// the contract's "required" is enforced here, once, at ingestion.
import { decodeFailure, decoded, type Decoded } from "../codec/decodeError.js";
import type { fraud } from "../codec/generated/fraud.js";
import { Channel, type Transaction } from "../codec/messages.js";

/** 10^12 minor units: above any single card payment in any currency we know of. */
export const MAX_AMOUNT_MINOR = 1_000_000_000_000;
/** 2000-01-01 .. 2100-01-01: anything outside is a unit mistake (seconds, microseconds). */
const MIN_EVENT_TIME_MS = 946_684_800_000;
const MAX_EVENT_TIME_MS = 4_102_444_800_000;
const MAX_ID_LENGTH = 128;

/** UTC-12:00 .. UTC+14:00, the offsets in use anywhere. */
export const MIN_UTC_OFFSET_MIN = -720;
export const MAX_UTC_OFFSET_MIN = 840;

function geoPointProblem(p: fraud.v1.IGeoPoint | null | undefined): string | undefined {
  if (p === null || p === undefined) return undefined;
  const lat = p.latE1 ?? 0;
  const lon = p.lonE1 ?? 0;
  if (lat < -900 || lat > 900) return `lat_e1 ${lat} is not in -900..900 (tenths of a degree)`;
  if (lon < -1800 || lon > 1800) return `lon_e1 ${lon} is not in -1800..1800 (tenths of a degree)`;
  return undefined;
}

const isCurrencyCode = (s: string) => /^[A-Z]{3}$/.test(s);
const isCountryCodeOrEmpty = (s: string) => s === "" || /^[A-Z]{2}$/.test(s);
const isKnownChannel = (c: number) => c !== Channel.CHANNEL_UNSPECIFIED && Channel[c] !== undefined;

const missing = (field: string) =>
  decodeFailure<Transaction>("missing_required_field", `${field} is required`, { field });
const outOfRange = (field: string, why: string) =>
  decodeFailure<Transaction>("value_out_of_range", `${field} ${why}`, { field });

export function validateTransaction(tx: Transaction): Decoded<Transaction> {
  if (tx.transactionId === "") return missing("transaction_id");
  if (tx.transactionId.length > MAX_ID_LENGTH)
    return outOfRange("transaction_id", `is longer than ${MAX_ID_LENGTH}`);
  if (tx.cardId === "") return missing("card_id");
  if (tx.cardId.length > MAX_ID_LENGTH) return outOfRange("card_id", `is longer than ${MAX_ID_LENGTH}`);
  if (tx.merchantId === "") return missing("merchant_id");
  if (tx.currency === "") return missing("currency");
  if (!isCurrencyCode(tx.currency)) return outOfRange("currency", `"${tx.currency}" is not an ISO 4217 code`);
  if (tx.amountMinor <= 0 || tx.amountMinor > MAX_AMOUNT_MINOR || !Number.isSafeInteger(tx.amountMinor)) {
    return outOfRange("amount_minor", `${tx.amountMinor} is not in 1..${MAX_AMOUNT_MINOR}`);
  }
  if (tx.eventTimeMs === 0) return missing("event_time_ms");
  if (tx.eventTimeMs < MIN_EVENT_TIME_MS || tx.eventTimeMs > MAX_EVENT_TIME_MS) {
    return outOfRange("event_time_ms", `${tx.eventTimeMs} is not epoch milliseconds between 2000 and 2100`);
  }
  if (tx.mcc > 9999) return outOfRange("mcc", `${tx.mcc} is not in 0..9999`);
  if (!isKnownChannel(tx.channel)) return outOfRange("channel", `${tx.channel} is not a known channel`);
  if (!isCountryCodeOrEmpty(tx.merchantCountry))
    return outOfRange("merchant_country", "is not ISO 3166-1 alpha-2");
  if (!isCountryCodeOrEmpty(tx.cardCountry)) return outOfRange("card_country", "is not ISO 3166-1 alpha-2");
  // The optional geo / time-zone fields: absent means unknown; present but impossible is a
  // producer bug (degrees instead of tenths, seconds instead of minutes), never a guess.
  const badPoint = geoPointProblem(tx.merchantLocation);
  if (badPoint) return outOfRange("merchant_location", badPoint);
  const badHome = geoPointProblem(tx.cardHomeLocation);
  if (badHome) return outOfRange("card_home_location", badHome);
  const offset = tx.cardUtcOffsetMinutes;
  if (offset !== null && offset !== undefined && (offset < MIN_UTC_OFFSET_MIN || offset > MAX_UTC_OFFSET_MIN))
    return outOfRange(
      "card_utc_offset_minutes",
      `${offset} is not a UTC offset in minutes (${MIN_UTC_OFFSET_MIN}..${MAX_UTC_OFFSET_MIN})`,
    );
  return decoded(tx);
}
