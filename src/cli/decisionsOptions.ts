// `fraud-scorer decisions tail` options, described once: flag, environment variable, default,
// help. Flags win over the environment, the environment over defaults; the merged values are
// validated once by a zod schema whose output type is the command's options, or every problem
// is reported at once. Pure (flags, environment and terminal in, value out) so it is unit-tested.
import type { Command } from "commander";
import { z } from "zod";
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
  kafkaBrokers: brokerListSchema.optional().refine((b) => b !== undefined, {
    error: "no brokers: give --kafka-brokers or set KAFKA_BROKERS",
  }),
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

/** Declares the options; no commander defaults, so an absent flag does not hide the env var. */
export function addDecisionsTailOptions(command: Command): Command {
  return command
    .option("--topic <name>", "decisions topic (default: decisions) [env KAFKA_DECISIONS_TOPIC]")
    .option(
      "--kafka-brokers <list>",
      "Kafka bootstrap brokers, comma-separated host:port [env KAFKA_BROKERS]",
    )
    .option("--from-beginning", "start at the oldest decision instead of new ones")
    .option("--action <list>", "only these actions, e.g. decline,review")
    .option("--fallback", "only decisions the rules made alone (fallbacks)")
    .option("--no-fallback", "only decisions the model made")
    .option("--json", "one JSON object per line (for pipes)")
    .option("--colour", "colour even when stdout is not a terminal")
    .option("--no-colour", "never colour (also when NO_COLOR is set, no-color.org)")
    .option("--read-committed", "only decisions of committed transactions (scorers run with --exactly-once)")
    .option("--limit <n>", "stop after printing this many");
}

/** Colour only for a terminal, and never when NO_COLOR is set (no-color.org). */
export const wantsColour = (
  flag: boolean | undefined,
  isTTY: boolean,
  env: Readonly<Record<string, string | undefined>>,
): boolean => flag ?? (isTTY && (env.NO_COLOR ?? "") === "");

export type ParsedDecisionsTailOptions =
  | { readonly ok: true; readonly options: DecisionsTailOptions }
  | { readonly ok: false; readonly problems: readonly string[] };

const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

export function parseDecisionsTailOptions(
  flags: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
  { isTTY }: { readonly isTTY: boolean },
): ParsedDecisionsTailOptions {
  const raw = {
    topic: text(flags.topic) ?? text(env.KAFKA_DECISIONS_TOPIC) ?? "decisions",
    kafkaBrokers: text(flags.kafkaBrokers) ?? text(env.KAFKA_BROKERS),
    fromBeginning: flags.fromBeginning === true,
    readCommitted: flags.readCommitted === true,
    actions: text(flags.action),
    fallback: typeof flags.fallback === "boolean" ? flags.fallback : undefined,
    json: flags.json === true,
    colour: wantsColour(typeof flags.colour === "boolean" ? flags.colour : undefined, isTTY, env),
    limit: text(flags.limit),
  };
  const parsed = tailSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, problems: parsed.error.issues.map((i) => i.message) };
  // exactOptionalPropertyTypes: absent keys stay absent rather than undefined.
  const present = Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined));
  return { ok: true, options: present as DecisionsTailOptions };
}
