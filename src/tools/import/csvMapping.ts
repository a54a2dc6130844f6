// The mapping from a company's CSV export to the Transaction contract, as a YAML file a risk
// analyst writes once per export format. Every Transaction field names its source explicitly
// (a column, a column through a value map, or a fixed value); nothing is inferred from column
// names, so a row the mapping does not cover is rejected rather than guessed.
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { formatYamlProblem, validateYaml } from "../../ops/validatedYaml.js";
import { isKnownTimeZone } from "./eventTime.js";

const scalar = z.union([z.string(), z.number()]);

/** A column name, a column whose values go through `map`, or a fixed value for every row. */
const fieldSource = z.union([
  z.string().min(1),
  z.strictObject({
    column: z.string().min(1),
    map: z.record(z.string(), scalar).optional(),
    /** Used for a value `map` does not list (without it such a row is rejected). */
    default: scalar.optional(),
  }),
  z.strictObject({ fixed: scalar }),
]);
export type FieldSource = z.infer<typeof fieldSource>;

export const CHANNEL_NAMES = [
  "card_present",
  "contactless",
  "ecommerce",
  "atm",
  "moto",
  "recurring",
] as const;

const timeFormat = z.union([
  z.enum(["iso8601", "epoch_s", "epoch_ms"]),
  z
    .string()
    .regex(/yyyy/, "a pattern needs yyyy")
    .regex(/MM/, "a pattern needs MM")
    .regex(/dd/, "a pattern needs dd"),
]);

export const csvMappingSchema = z.strictObject({
  /** CSV dialect. */
  delimiter: z.string().length(1).default(","),
  fields: z.strictObject({
    transaction_id: fieldSource,
    card_id: fieldSource,
    merchant_id: fieldSource,
    mcc: fieldSource.optional(),
    merchant_country: fieldSource.optional(),
    card_country: fieldSource.optional(),
    /** Values (after `map`): card_present, contactless, ecommerce, atm, moto, recurring. */
    channel: fieldSource,
    device_id: fieldSource.optional(),
    ip: fieldSource.optional(),
    bin: fieldSource.optional(),
    /**
     * Optional locations in decimal degrees (rounded to the contract's 0.1°); an empty cell is
     * "unknown". Latitude and longitude of one place go together.
     */
    merchant_lat: fieldSource.optional(),
    merchant_lon: fieldSource.optional(),
    card_home_lat: fieldSource.optional(),
    card_home_lon: fieldSource.optional(),
    /** The card's time zone: IANA name, UTC or ±HH:MM per row → its UTC offset at the event time. */
    card_time_zone: fieldSource.optional(),
  }),
  event_time: z.strictObject({
    column: z.string().min(1),
    /** iso8601 (offset or Z required), epoch_s, epoch_ms, or a pattern of yyyy MM dd HH mm ss SSS. */
    format: timeFormat,
    /** For patterns: the zone the times are written in (IANA name such as Europe/Paris, UTC, or ±HH:MM). */
    time_zone: z
      .string()
      .min(1)
      .default("UTC")
      .refine(isKnownTimeZone, "not a time zone (IANA name, UTC or ±HH:MM)"),
  }),
  amount: z.strictObject({
    column: z.string().min(1),
    /** major: 12.34 in the currency's unit; minor: 1234 in cents (or the currency's minor unit). */
    units: z.enum(["major", "minor"]),
    decimal_separator: z.enum([".", ","]).default("."),
  }),
  currency: fieldSource,
  /** Omit for an unlabelled export (then no labels file is written). */
  label: z
    .strictObject({
      column: z.string().min(1),
      fraud: z.array(z.string()).min(1).default(["1", "true", "yes"]),
      legit: z.array(z.string()).min(1).default(["0", "false", "no"]),
    })
    .optional(),
});

export type CsvMapping = z.infer<typeof csvMappingSchema>;

export class CsvMappingError extends Error {
  override readonly name = "CsvMappingError";
  readonly kind = "invalid_mapping";
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(`invalid mapping ${source}:\n  ${problems.join("\n  ")}`);
  }
}

export function parseCsvMapping(text: string, source: string): CsvMapping {
  const result = validateYaml(text, csvMappingSchema);
  if (!result.ok)
    throw new CsvMappingError(
      source,
      result.problems.map((p) => formatYamlProblem(source, p)),
    );
  return result.value;
}

export async function loadCsvMapping(path: string): Promise<CsvMapping> {
  return parseCsvMapping(await readFile(path, "utf8"), path);
}

/** Every column the mapping reads: each must be in the CSV's header. */
export function columnsRead(mapping: CsvMapping): string[] {
  const columns = new Set<string>([mapping.event_time.column, mapping.amount.column]);
  const sources: (FieldSource | undefined)[] = [...Object.values(mapping.fields), mapping.currency];
  for (const s of sources) {
    if (typeof s === "string") columns.add(s);
    else if (s !== undefined && "column" in s) columns.add(s.column);
  }
  if (mapping.label) columns.add(mapping.label.column);
  return [...columns];
}
