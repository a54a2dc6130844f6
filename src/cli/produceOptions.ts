// `fraud-scorer produce` options, described once: flag, environment variable, default, help.
// Flags win over the environment, the environment over defaults; the merged text is validated
// once by a zod schema into a complete ProduceOptions, or every problem is reported at once.
// Pure (flags and environment in, value out) so the refusals are unit-tested.
import type { Command } from "commander";
import { z } from "zod";
import {
  addCommandOptions,
  commandOptionValues,
  type CommandOption,
  type ParsedOptions,
} from "../ops/commandOptions.js";
import { brokerListSchema } from "./brokerListSchema.js";
import { parseDuration } from "./cliArguments.js";

export interface ProduceCommandOptions {
  readonly sink: "kafka" | "discard";
  readonly topic: string;
  readonly kafkaBrokers?: readonly string[];
  readonly schemaRegistryUrl?: string;
  /** Partitions the discarding sink pretends to have. */
  readonly partitions: number;
  readonly ratePerSecond: number;
  /** Exactly one of count and durationMs. */
  readonly count?: number;
  readonly durationMs?: number;
  readonly framing: "delimited" | "confluent";
  readonly perRecord: number;
  readonly lingerMs: number;
  /** The pacing tick; chosen by rate when absent (pacingTickMs). */
  readonly tickMs?: number;
  readonly file?: string;
  readonly labels?: string;
  readonly seed: number;
  readonly cards?: number;
  readonly idPrefix?: string;
  readonly progress: boolean;
  readonly json: boolean;
}

export const PRODUCE_SETTINGS: readonly CommandOption<keyof ProduceCommandOptions | "duration">[] = [
  {
    flag: "sink",
    flagValue: "kind",
    env: "PRODUCE_SINK",
    fallback: "kafka",
    help: "kafka, or discard: plan, encode and pace without sending (the generator's own cost)",
  },
  {
    flag: "topic",
    flagValue: "name",
    env: "KAFKA_TRANSACTIONS_TOPIC",
    fallback: "transactions",
    help: "topic to write",
  },
  {
    flag: "kafka-brokers",
    flagValue: "list",
    env: "KAFKA_BROKERS",
    help: "Kafka bootstrap brokers, comma-separated host:port",
  },
  {
    flag: "schema-registry-url",
    flagValue: "url",
    env: "SCHEMA_REGISTRY_URL",
    help: "registry for --framing confluent",
  },
  {
    flag: "partitions",
    flagValue: "n",
    env: "PRODUCE_PARTITIONS",
    fallback: "12",
    help: "partitions of the discarding sink (Kafka's come from the topic)",
  },
  {
    key: "ratePerSecond",
    flag: "rate",
    flagValue: "tx/s",
    env: "PRODUCE_RATE",
    fallback: "500",
    help: "transactions per second",
  },
  { flag: "count", flagValue: "n", env: "PRODUCE_COUNT", help: "send this many transactions" },
  {
    flag: "duration",
    flagValue: "time",
    env: "PRODUCE_DURATION",
    help: "or send for this long, e.g. 30s, 2m (default 10s)",
  },
  {
    flag: "framing",
    flagValue: "framing",
    env: "PRODUCE_FRAMING",
    fallback: "delimited",
    help: "delimited or confluent",
  },
  {
    flag: "per-record",
    flagValue: "n",
    env: "PRODUCE_PER_RECORD",
    fallback: "1",
    help: "pack up to n transactions of one partition into one record (delimited only)",
  },
  {
    flag: "linger-ms",
    flagValue: "ms",
    env: "PRODUCE_LINGER_MS",
    fallback: "5",
    help: "longest a record that is not full waits for more transactions",
  },
  {
    flag: "tick-ms",
    flagValue: "ms",
    env: "PRODUCE_TICK_MS",
    help: "send what is due once per tick: longer costs less CPU, adds up to a tick of send lag (default: 5-10 ms by rate)",
  },
  {
    flag: "file",
    flagValue: "path",
    help: "send transactions from a .pbd file instead of the simulator",
  },
  { flag: "labels", flagValue: "csv", help: "labels for --file (transaction_id,is_fraud)" },
  { flag: "seed", flagValue: "n", env: "PRODUCE_SEED", fallback: "42", help: "simulator seed" },
  { flag: "cards", flagValue: "n", help: "simulated cards (default: sized to the run)" },
  { flag: "id-prefix", flagValue: "text", help: "prefix for simulated transaction ids" },
  { flag: "json", help: "print the summary as one JSON line on stdout" },
  { flag: "no-progress", help: "no progress display" },
];

/** Declares the options; no commander defaults, so an absent flag does not hide the env var. */
export const addProduceOptions = (command: Command): Command => addCommandOptions(command, PRODUCE_SETTINGS);

const POSITIVE_INT = /^\s*\d+\s*$/;
const positiveInteger = (what: string, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .refine((s) => POSITIVE_INT.test(s) && Number(s) >= 1 && Number(s) <= max, {
      error: `${what} must be an integer from 1 to ${max}`,
    })
    .transform(Number);
const positiveNumber = (what: string) =>
  z
    .string()
    .refine((s) => s.trim() !== "" && Number.isFinite(Number(s)) && Number(s) > 0, {
      error: `${what} must be a positive number`,
    })
    .transform(Number);
const oneOf = <const T extends readonly [string, ...string[]]>(what: string, values: T) =>
  z.preprocess(
    (v) => (typeof v === "string" ? v.trim().toLowerCase() : v),
    z.enum(values, { error: `${what} must be one of ${values.join(", ")}` }),
  );
const duration = z.string().transform((s, ctx) => {
  const ms = parseDuration(s);
  if (typeof ms === "string") {
    ctx.addIssue({ code: "custom", message: `--duration: ${ms}` });
    return z.NEVER;
  }
  return ms;
});
const nonEmpty = z.string().transform((s) => s.trim());

const produceSchema = z
  .object({
    sink: oneOf("--sink", ["kafka", "discard"]),
    topic: nonEmpty.pipe(z.string().min(1, { error: "--topic must not be empty" })),
    kafkaBrokers: brokerListSchema.optional(),
    schemaRegistryUrl: nonEmpty.optional(),
    partitions: positiveInteger("--partitions", 10_000),
    ratePerSecond: positiveNumber("--rate"),
    count: positiveInteger("--count").optional(),
    duration: duration.optional(),
    framing: oneOf("--framing", ["delimited", "confluent"]),
    perRecord: positiveInteger("--per-record", 10_000),
    lingerMs: positiveNumber("--linger-ms"),
    tickMs: positiveNumber("--tick-ms").optional(),
    file: nonEmpty.optional(),
    labels: nonEmpty.optional(),
    seed: positiveInteger("--seed"),
    cards: positiveInteger("--cards").optional(),
    idPrefix: z.string().optional(),
    progress: z.boolean(),
    json: z.boolean(),
  })
  .superRefine((o, ctx) => {
    const problem = (message: string) => ctx.addIssue({ code: "custom", message });
    if (o.count !== undefined && o.duration !== undefined) problem("give --count or --duration, not both");
    if (o.sink === "kafka" && o.kafkaBrokers === undefined)
      problem("no brokers: give --kafka-brokers or set KAFKA_BROKERS (or --sink discard)");
    if (o.framing === "confluent" && o.schemaRegistryUrl === undefined)
      problem(
        "--framing confluent needs the registry: give --schema-registry-url or set SCHEMA_REGISTRY_URL",
      );
    if (o.framing === "confluent" && o.perRecord > 1)
      problem("--per-record above 1 needs --framing delimited (a Confluent frame holds one message)");
    if (o.labels !== undefined && o.file === undefined) problem("--labels only applies to --file");
  });

export type ParsedProduceOptions = ParsedOptions<ProduceCommandOptions>;

export function parseProduceOptions(
  flags: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
): ParsedProduceOptions {
  const raw = commandOptionValues(PRODUCE_SETTINGS, flags, env);
  raw.json = raw.json === true;
  raw.progress = raw.progress !== false;
  const parsed = produceSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, problems: parsed.error.issues.map((i) => i.message) };
  const { duration: durationMs, ...rest } = parsed.data;
  // exactOptionalPropertyTypes: absent keys stay absent rather than undefined.
  const present = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  const options = present as unknown as ProduceCommandOptions;
  return {
    ok: true,
    options: rest.count !== undefined ? options : { ...options, durationMs: durationMs ?? 10_000 },
  };
}
