// JSON logs to stdout via pino. Two things never reach a log line: secrets (censored) and raw
// card ids (replaced by a keyed hash, so one card's lines still correlate within a process).
// Redaction works on fields, not on message text: put card ids in fields, never in messages.
import { createHmac, randomBytes } from "node:crypto";
import pino, { type DestinationStream, type Logger } from "pino";
import { REDACTED } from "./redaction.js";

// Random per process: a hash cannot be reversed by hashing candidate card ids offline.
const CARD_HASH_KEY = randomBytes(32);
const CARD_HASH_HEX_CHARS = 16;

/** A 64-bit keyed SHA-256 prefix of a card id, stable within this process. */
export const hashCardId = (cardId: string): string =>
  createHmac("sha256", CARD_HASH_KEY).update(cardId).digest("hex").slice(0, CARD_HASH_HEX_CHARS);

const SECRET_FIELDS = ["password", "hmacKey", "keyFile", "authorization", "secret", "token"];
const CARD_FIELDS = ["cardId", "card_id", "cardIds", "card_ids"];
const CARD_FIELD_SET = new Set(CARD_FIELDS);

// Wildcards cost time on every line with an object; three levels reach `{ config: { kafka:
// { sasl: { password } } } }`, the deepest place a secret sits in the config.
const atDepths = (field: string, maxDepth: number) =>
  Array.from({ length: maxDepth + 1 }, (_, depth) => `${"*.".repeat(depth)}${field}`);

export const LOG_REDACT_PATHS: readonly string[] = [
  ...SECRET_FIELDS.flatMap((f) => atDepths(f, 3)),
  ...CARD_FIELDS.flatMap((f) => atDepths(f, 3)),
];

const hashCardValue = (value: unknown): unknown =>
  typeof value === "string"
    ? hashCardId(value)
    : Array.isArray(value)
      ? value.map(hashCardValue)
      : typeof value === "number" || typeof value === "bigint"
        ? hashCardId(String(value))
        : REDACTED;

const censor = (value: unknown, path: string[]): unknown =>
  CARD_FIELD_SET.has(path.at(-1) ?? "") ? hashCardValue(value) : REDACTED;

export interface LoggerOptions {
  readonly level: string;
  readonly name: string;
  /** Where lines go; stdout when absent. */
  readonly destination?: DestinationStream;
}

export function createLogger({ level, name, destination }: LoggerOptions): Logger {
  const options: pino.LoggerOptions = {
    level,
    name,
    redact: { paths: [...LOG_REDACT_PATHS], censor },
    formatters: { level: (label) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
