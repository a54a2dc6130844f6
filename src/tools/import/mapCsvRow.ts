// One CSV row → a valid Transaction and its label, or the reason it cannot be one. The mapping
// is compiled once against the header (column names → indexes, time parser, value maps); the
// resulting function only reads cells. The same validation as ingestion (validateTransaction)
// decides what is a transaction, so an imported file replays without a dead letter.
import { fraud } from "../../codec/generated/fraud.js";
import { Channel, Transaction } from "../../codec/messages.js";
import { validateTransaction } from "../../ingest/validateTransaction.js";
import { amountMinor } from "./amountMinor.js";
import {
  CHANNEL_NAMES,
  columnsRead,
  CsvMappingError,
  type CsvMapping,
  type FieldSource,
} from "./csvMapping.js";
import { timeParser, utcOffsetMinutesAt } from "./eventTime.js";

export type MappedRow =
  | { readonly ok: true; readonly transaction: fraud.v1.Transaction; readonly isFraud: boolean | undefined }
  | { readonly ok: false; readonly reason: string };

type Cell = (row: readonly string[]) => string | { readonly error: string };

const CHANNELS: Readonly<Record<string, fraud.v1.Channel>> = {
  card_present: Channel.CHANNEL_CARD_PRESENT,
  contactless: Channel.CHANNEL_CONTACTLESS,
  ecommerce: Channel.CHANNEL_ECOMMERCE,
  atm: Channel.CHANNEL_ATM,
  moto: Channel.CHANNEL_MOTO,
  recurring: Channel.CHANNEL_RECURRING,
};

function compileSource(name: string, source: FieldSource | undefined, index: (c: string) => number): Cell {
  if (source === undefined) return () => "";
  if (typeof source === "string") {
    const i = index(source);
    return (row) => row[i]!.trim();
  }
  if ("fixed" in source) {
    const value = String(source.fixed);
    return () => value;
  }
  const i = index(source.column);
  const { map } = source;
  if (map === undefined) return (row) => row[i]!.trim();
  const fallback = source.default === undefined ? undefined : String(source.default);
  return (row) => {
    const raw = row[i]!.trim();
    const mapped = Object.hasOwn(map, raw) ? String(map[raw]) : fallback;
    return mapped ?? { error: `${name}: "${raw}" (column ${source.column}) is not in the mapping's map` };
  };
}

const DEGREES = /^-?\d{1,3}(\.\d+)?$/;

/** Decimal-degree cells → a 0.1° GeoPoint; both empty = unknown (null); a reason otherwise. */
function geoPoint(name: string, lat: string, lon: string): fraud.v1.IGeoPoint | null | string {
  if (lat === "" && lon === "") return null;
  if (lat === "" || lon === "") return `${name}_lat and ${name}_lon must both be given or both be empty`;
  if (!DEGREES.test(lat)) return `${name}_lat "${lat}" is not decimal degrees`;
  if (!DEGREES.test(lon)) return `${name}_lon "${lon}" is not decimal degrees`;
  // Range checks are validateTransaction's (one definition, the same error as ingestion).
  return { latE1: Math.round(Number(lat) * 10), lonE1: Math.round(Number(lon) * 10) };
}

/** Compiles `mapping` for a file with this header; throws CsvMappingError naming absent columns. */
export function compileRowMapper(mapping: CsvMapping, header: readonly string[], source: string) {
  const positions = new Map(header.map((name, i) => [name.trim(), i]));
  const absent = columnsRead(mapping).filter((c) => !positions.has(c));
  if (absent.length > 0) {
    throw new CsvMappingError(source, [
      `column(s) ${absent.map((c) => `"${c}"`).join(", ")} not in the header (${header.join(", ")})`,
    ]);
  }
  const index = (c: string) => positions.get(c)!;
  const f = mapping.fields;
  const cells = {
    transactionId: compileSource("transaction_id", f.transaction_id, index),
    cardId: compileSource("card_id", f.card_id, index),
    merchantId: compileSource("merchant_id", f.merchant_id, index),
    mcc: compileSource("mcc", f.mcc, index),
    merchantCountry: compileSource("merchant_country", f.merchant_country, index),
    cardCountry: compileSource("card_country", f.card_country, index),
    channel: compileSource("channel", f.channel, index),
    deviceId: compileSource("device_id", f.device_id, index),
    ip: compileSource("ip", f.ip, index),
    bin: compileSource("bin", f.bin, index),
    merchantLat: compileSource("merchant_lat", f.merchant_lat, index),
    merchantLon: compileSource("merchant_lon", f.merchant_lon, index),
    cardHomeLat: compileSource("card_home_lat", f.card_home_lat, index),
    cardHomeLon: compileSource("card_home_lon", f.card_home_lon, index),
    cardTimeZone: compileSource("card_time_zone", f.card_time_zone, index),
    currency: compileSource("currency", mapping.currency, index),
  };
  const timeColumn = index(mapping.event_time.column);
  const parseTime = timeParser(mapping.event_time.format, mapping.event_time.time_zone);
  const amountColumn = index(mapping.amount.column);
  const label = mapping.label && {
    column: index(mapping.label.column),
    fraud: new Set(mapping.label.fraud),
    legit: new Set(mapping.label.legit),
    name: mapping.label.column,
  };

  // One offset function per zone name seen: an export repeats a handful of zones.
  const zones = new Map<string, ((instant: number) => number) | null>();
  const offsetOf = (zone: string, instant: number): number | null | string => {
    if (zone === "") return null;
    let at = zones.get(zone);
    if (at === undefined) {
      try {
        at = utcOffsetMinutesAt(zone);
      } catch {
        at = null;
      }
      zones.set(zone, at);
    }
    return at === null
      ? `card_time_zone "${zone}" is not a time zone (IANA name, UTC or ±HH:MM)`
      : at(instant);
  };

  return (row: readonly string[]): MappedRow => {
    if (row.length !== header.length)
      return { ok: false, reason: `has ${row.length} fields, the header ${header.length}` };
    const text: Record<string, string> = {};
    for (const [field, cell] of Object.entries(cells)) {
      const value = cell(row);
      if (typeof value !== "string") return { ok: false, reason: value.error };
      text[field] = value;
    }
    const channel = CHANNELS[text.channel!.toLowerCase()];
    if (channel === undefined)
      return { ok: false, reason: `channel "${text.channel}" is not one of ${CHANNEL_NAMES.join(", ")}` };
    if (text.mcc !== "" && !/^\d{1,4}$/.test(text.mcc!))
      return { ok: false, reason: `mcc "${text.mcc}" is not a number 0..9999` };
    const currency = text.currency!.toUpperCase();
    const amount = amountMinor(
      row[amountColumn]!,
      currency,
      mapping.amount.units,
      mapping.amount.decimal_separator,
    );
    if (typeof amount === "string") return { ok: false, reason: amount };
    const eventTimeMs = parseTime(row[timeColumn]!.trim());
    if (typeof eventTimeMs === "string") return { ok: false, reason: `event time ${eventTimeMs}` };
    let isFraud: boolean | undefined;
    if (label) {
      const value = row[label.column]!.trim();
      if (label.fraud.has(value)) isFraud = true;
      else if (label.legit.has(value)) isFraud = false;
      else
        return {
          ok: false,
          reason: `label "${value}" (column ${label.name}) is neither a fraud nor a legit value`,
        };
    }
    const merchantLocation = geoPoint("merchant", text.merchantLat!, text.merchantLon!);
    if (typeof merchantLocation === "string") return { ok: false, reason: merchantLocation };
    const cardHomeLocation = geoPoint("card_home", text.cardHomeLat!, text.cardHomeLon!);
    if (typeof cardHomeLocation === "string") return { ok: false, reason: cardHomeLocation };
    const cardUtcOffsetMinutes = offsetOf(text.cardTimeZone!, eventTimeMs);
    if (typeof cardUtcOffsetMinutes === "string") return { ok: false, reason: cardUtcOffsetMinutes };
    const tx = Transaction.create({
      transactionId: text.transactionId!,
      cardId: text.cardId!,
      amountMinor: amount,
      currency,
      merchantId: text.merchantId!,
      mcc: text.mcc === "" ? 0 : Number(text.mcc),
      merchantCountry: text.merchantCountry!.toUpperCase(),
      cardCountry: text.cardCountry!.toUpperCase(),
      channel,
      deviceId: text.deviceId!,
      ip: text.ip!,
      eventTimeMs,
      bin: text.bin!,
      ...(merchantLocation && { merchantLocation }),
      ...(cardHomeLocation && { cardHomeLocation }),
      ...(cardUtcOffsetMinutes !== null && { cardUtcOffsetMinutes }),
    });
    const valid = validateTransaction(tx);
    if (!valid.ok) return { ok: false, reason: valid.error.message };
    return { ok: true, transaction: tx, isFraud };
  };
}
