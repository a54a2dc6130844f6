// `fraud-scorer decisions tail` options, described once as rows of src/ops/commandOptions.ts
// (flag, environment variable, default, help). Flags win over the environment, the environment
// over defaults; the merged values are validated once by a zod schema whose output type is the
// command's options, or every problem is reported at once. Pure (flags, environment and
// terminal in, value out) so it is unit-tested.
import type { Command } from "commander";
import { z } from "zod";
import {
  addCommandOptions,
  commandOptionValues,
  type CommandOption,
  type ParsedOptions,
} from "../ops/commandOptions.js";
import { brokerListSchema } from "./brokerListSchema.js";
import { parseActions } from "../decisions/decisionFilter.js";

const nonEmpty = z.string().transform((s) => s.trim());
const actions = z.string().transform((s, ctx) => {
  const parsed = parseActions(s);
  if (typeof parsed === "string") {
    ctx.addIssue({ code: "custom", message: parsed });
    return z.NEVER;
  }
  return parsed;
});
const limit = z
  .string()
  .refine((s) => /^\s*\d+\s*$/.test(s) && Number(s) >= 1, { error: "--limit must be an integer from 1" })
  .transform(Number);

const tailSchema = z.object({
  topic: nonEmpty.pipe(z.string().min(1, { error: "--topic must not be empty" })),
  kafkaBrokers: z
    .string({ error: "no brokers: give --kafka-brokers or set KAFKA_BROKERS" })
    .pipe(brokerListSchema),
  fromBeginning: z.boolean(),
  readCommitted: z.boolean(),
  actions: actions.optional(),
  /** true: fallbacks only; false: model decisions only; absent: both. */
  fallback: z.boolean().optional(),
  json: z.boolean(),
  colour: z.boolean(),
  limit: limit.optional(),
});

export type DecisionsTailOptions = z.output<typeof tailSchema> & { readonly kafkaBrokers: string[] };

const TAIL_OPTIONS: readonly CommandOption[] = [
  {
    flag: "topic",
    flagValue: "name",
    env: "KAFKA_DECISIONS_TOPIC",
    fallback: "decisions",
    help: "decisions topic",
  },
  {
    flag: "kafka-brokers",
    flagValue: "list",
    env: "KAFKA_BROKERS",
    help: "Kafka bootstrap brokers, comma-separated host:port",
  },
  { flag: "from-beginning", help: "start at the oldest decision instead of new ones" },
  { key: "actions", flag: "action", flagValue: "list", help: "only these actions, e.g. decline,review" },
  // Both switches, so absent means both kinds (commander then sets no default).
  { flag: "fallback", help: "only decisions the rules made alone (fallbacks)" },
  { flag: "no-fallback", help: "only decisions the model made" },
  { flag: "json", help: "one JSON object per line (for pipes)" },
  { flag: "colour", help: "colour even when stdout is not a terminal" },
  { flag: "no-colour", help: "never colour (also when NO_COLOR is set, no-color.org)" },
  {
    flag: "read-committed",
    help: "only decisions of committed transactions (scorers run with --exactly-once)",
  },
  { flag: "limit", flagValue: "n", help: "stop after printing this many" },
];

export const addDecisionsTailOptions = (command: Command): Command =>
  addCommandOptions(command, TAIL_OPTIONS);

/** Colour only for a terminal, and never when NO_COLOR is set (no-color.org). */
export const wantsColour = (
  flag: boolean | undefined,
  isTTY: boolean,
  env: Readonly<Record<string, string | undefined>>,
): boolean => flag ?? (isTTY && (env.NO_COLOR ?? "") === "");

export type ParsedDecisionsTailOptions = ParsedOptions<DecisionsTailOptions>;

export function parseDecisionsTailOptions(
  flags: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
  { isTTY }: { readonly isTTY: boolean },
): ParsedDecisionsTailOptions {
  const given = commandOptionValues(TAIL_OPTIONS, flags, env);
  const raw = {
    ...given,
    fromBeginning: given.fromBeginning === true,
    readCommitted: given.readCommitted === true,
    json: given.json === true,
    colour: wantsColour(typeof given.colour === "boolean" ? given.colour : undefined, isTTY, env),
  };
  const parsed = tailSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, problems: parsed.error.issues.map((i) => i.message) };
  // exactOptionalPropertyTypes: absent keys stay absent rather than undefined.
  const present = Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined));
  return { ok: true, options: present as DecisionsTailOptions };
}
