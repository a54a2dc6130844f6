// `npm run export:csv`: the simulator's history written the way a payment company's CSV export
// looks (major-unit amounts, channel names, timestamp text, decimal-degree locations, time-zone
// column, label) — the input of the import → train → evaluate loop when no real export is at
// hand. examples/import/simulated-export-mapping.yaml maps it back with `fraud-scorer import csv`.
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { Command } from "commander";
import { fraud } from "../src/codec/generated/fraud.js";
import { minorDigitsOf } from "../src/tools/import/amountMinor.js";
import { DEFAULT_SIMULATION } from "../src/tools/simulate/defaults.js";
import { simulatePayments } from "../src/tools/simulate/simulatePayments.js";

const CHANNEL_NAMES: Readonly<Record<number, string>> = {
  [fraud.v1.Channel.CHANNEL_CARD_PRESENT]: "card_present",
  [fraud.v1.Channel.CHANNEL_CONTACTLESS]: "contactless",
  [fraud.v1.Channel.CHANNEL_ECOMMERCE]: "ecommerce",
  [fraud.v1.Channel.CHANNEL_ATM]: "atm",
  [fraud.v1.Channel.CHANNEL_MOTO]: "moto",
  [fraud.v1.Channel.CHANNEL_RECURRING]: "recurring",
};

export const EXPORT_HEADER = [
  "txn_id",
  "card_token",
  "amount",
  "currency",
  "merchant",
  "mcc",
  "merchant_country",
  "card_country",
  "channel",
  "device",
  "ip",
  "timestamp_utc",
  "merchant_lat",
  "merchant_lon",
  "home_lat",
  "home_lon",
  "card_timezone",
  "is_fraud",
];

const majorUnits = (minor: number, currency: string): string => {
  const digits = minorDigitsOf(currency);
  return digits === 0 ? String(minor) : (minor / 10 ** digits).toFixed(digits);
};
const degrees = (e1: number | null | undefined): string =>
  e1 === null || e1 === undefined ? "" : (e1 / 10).toFixed(1);
/** "2025-01-06 14:03:22": the text form most exports use. */
const timestampText = (ms: number): string => new Date(ms).toISOString().slice(0, 19).replace("T", " ");
/** ±HH:MM, as an export states a card's zone when it has no IANA name. */
const zoneText = (minutes: number | null | undefined): string => {
  if (minutes === null || minutes === undefined) return "";
  const a = Math.abs(minutes);
  return `${minutes < 0 ? "-" : "+"}${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`;
};

const program = new Command()
  .name("export:csv")
  .description("Write a simulated labelled history as a payment company's CSV export")
  .option("--out <file>", "CSV file to write", "data/export/payments.csv")
  .option("--seed <n>", "random seed", String(DEFAULT_SIMULATION.seed))
  .option("--cards <n>", "number of cards", String(DEFAULT_SIMULATION.cards))
  .option("--days <n>", "days of history", String(DEFAULT_SIMULATION.days))
  .option("--bad-rows <n>", "append this many malformed rows, as real exports have", "3")
  .action(async (o: Record<string, string>) => {
    const started = Date.now();
    const sim = simulatePayments({ seed: Number(o.seed), cards: Number(o.cards), days: Number(o.days) });
    await mkdir(dirname(o.out!), { recursive: true });
    const out = createWriteStream(o.out!);
    const write = async (line: string) => {
      if (!out.write(line + "\n")) await once(out, "drain");
    };
    await write(EXPORT_HEADER.join(","));
    let fraudRows = 0;
    for (const { tx, isFraud } of sim) {
      if (isFraud) fraudRows++;
      await write(
        [
          tx.transactionId,
          tx.cardId,
          majorUnits(Number(tx.amountMinor), tx.currency!),
          tx.currency,
          tx.merchantId,
          tx.mcc,
          tx.merchantCountry,
          tx.cardCountry,
          CHANNEL_NAMES[tx.channel!],
          tx.deviceId,
          tx.ip,
          timestampText(Number(tx.eventTimeMs)),
          degrees(tx.merchantLocation?.latE1),
          degrees(tx.merchantLocation?.lonE1),
          degrees(tx.cardHomeLocation?.latE1),
          degrees(tx.cardHomeLocation?.lonE1),
          zoneText(tx.cardUtcOffsetMinutes),
          isFraud ? 1 : 0,
        ].join(","),
      );
    }
    // What real exports carry too: a latitude in whole degrees×10, a zone typo, a half-filled location.
    const bad = [
      "bad-1,card-x,12.50,EUR,m-1,5411,DE,DE,card_present,,,2025-02-01 10:00:00,515.0,10.0,51.0,10.0,+01:00,0",
      "bad-2,card-x,12.50,EUR,m-1,5411,DE,DE,card_present,,,2025-02-01 10:01:00,51.0,10.0,51.0,10.0,Europe/Berlín,0",
      "bad-3,card-x,12.50,EUR,m-1,5411,DE,DE,card_present,,,2025-02-01 10:02:00,51.0,,51.0,10.0,+01:00,0",
    ];
    for (const line of bad.slice(0, Number(o.badRows))) await write(line);
    out.end();
    await once(out, "finish");
    console.log(
      `wrote ${o.out}: ${sim.length} rows (${fraudRows} labelled fraud) + ${Math.min(bad.length, Number(o.badRows))} malformed, in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });

await program.parseAsync(process.argv);
