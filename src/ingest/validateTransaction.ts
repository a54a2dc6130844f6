// What a transaction must satisfy before it may be scored. Proto3 has no required fields, so
// the contract's "required" is enforced here, once, at ingestion.
import { decodeFailure, decoded, type Decoded } from "../codec/decodeError.js";
import { Channel, type Transaction } from "../codec/messages.js";

/** 10^12 minor units: above any single card payment in any currency we know of. */
export const MAX_AMOUNT_MINOR = 1_000_000_000_000;
/** 2000-01-01 .. 2100-01-01: anything outside is a unit mistake (seconds, microseconds). */
const MIN_EVENT_TIME_MS = 946_684_800_000;
const MAX_EVENT_TIME_MS = 4_102_444_800_000;
const MAX_ID_LENGTH = 128;

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
  return decoded(tx);
}
