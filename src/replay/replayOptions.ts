// `fraud-scorer replay` arguments. Each option is described once below (a row of
// src/ops/commandOptions.ts: flag, environment variable, help); one zod schema turns the flags
// into ReplayOptions, whose type is the schema's output, and reports every problem at once. Pure (flags and environment in, value
// out) so the refusals are unit-tested; the CLI builds its commander options from the table.
import { z } from "zod";
import { commandOptionValues, type CommandOption, type ParsedOptions } from "../ops/commandOptions.js";
import { configKeyDefault } from "../ops/configSchema.js";
import type { RangeBound } from "./topicRange.js";

export const REPLAY_OPTION_SETTINGS: readonly CommandOption[] = [
  { flag: "file", flagValue: "path", help: "delimited Protobuf transaction file (.pbd)" },
  { flag: "topic", flagValue: "name", help: "replay a range of this Kafka topic instead" },
  { flag: "from-time", flagValue: "time", help: "topic range start, ISO-8601 or epoch ms (inclusive)" },
  { flag: "to-time", flagValue: "time", help: "topic range end, ISO-8601 or epoch ms (exclusive)" },
  { flag: "from-offset", flagValue: "n", help: "topic range start offset (inclusive; one partition)" },
  { flag: "to-offset", flagValue: "n", help: "topic range end offset (exclusive; one partition)" },
  { flag: "partition", flagValue: "list", help: "partitions to read, comma-separated (default: all)" },
  { flag: "kafka-brokers", flagValue: "list", env: "KAFKA_BROKERS", help: "Kafka brokers" },
  {
    flag: "schema-registry-url",
    flagValue: "url",
    env: "SCHEMA_REGISTRY_URL",
    help: "registry for Confluent-framed records",
  },
  {
    flag: "model-dir",
    flagValue: "dir",
    help: "model artifact to replay with, models/<name>/<version> (required)",
  },
  {
    flag: "trusted-keys-dir",
    flagValue: "dir",
    help: "trusted ed25519 public keys (default: models/trusted-keys)",
  },
  { flag: "provider", flagValue: "name", help: "ONNX execution provider: cpu, cuda or auto (default: cpu)" },
  { flag: "rules-file", flagValue: "file", help: "rule set to replay with (required)" },
  { flag: "out", flagValue: "file", help: "where decisions go; - for stdout (default: -)" },
  {
    flag: "format",
    flagValue: "format",
    help: "ndjson or pbd (delimited Decisions); default from --out's extension",
  },
  { flag: "no-timings", help: "leave out per-stage timings, so runs are byte-identical" },
  { flag: "batch-size", flagValue: "n", help: "transactions per scoring batch (part of what is replayed)" },
  { flag: "review-threshold", flagValue: "p", help: "score from which a transaction goes to review" },
  { flag: "decline-threshold", flagValue: "p", help: "score from which a transaction is declined" },
  { flag: "explain-top-features", flagValue: "n", help: "features named in REVIEW/DECLINE reason codes" },
  { flag: "compare-topic", flagValue: "topic", help: "compare with the decisions recorded in this topic" },
  {
    flag: "compare-file",
    flagValue: "file",
    help: "compare with recorded decisions in a file (NDJSON or .pbd)",
  },
  {
    flag: "compare-since",
    flagValue: "time",
    help: "read --compare-topic from this time on (default: the beginning)",
  },
  { flag: "diff-out", flagValue: "file", help: "write the comparison as JSON" },
  {
    flag: "examples",
    flagValue: "n",
    help: "examples per changed transition in the comparison (default: 3)",
  },
  { flag: "no-progress", help: "no progress bar" },
];

const EPOCH_MS_MIN = 100_000_000_000; // 1973: smaller numbers are seconds, a common slip

/** ISO-8601 or epoch milliseconds. */
export function parseTimeArgument(text: string): number | string {
  if (/^\d+$/.test(text)) {
    const ms = Number(text);
    return ms < EPOCH_MS_MIN
      ? `"${text}" looks like seconds; give epoch milliseconds or an ISO-8601 time`
      : ms;
  }
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? `"${text}" is neither an ISO-8601 time nor epoch milliseconds` : ms;
}

// ── field schemas: a flag's text → its value, or an issue saying what was expected ──────────

const text = z.string().optional();
const time = (flag: string) =>
  text.transform((value, ctx) => {
    if (value === undefined) return undefined;
    const ms = parseTimeArgument(value);
    if (typeof ms === "number") return ms;
    ctx.addIssue({ code: "custom", message: `${flag}: ${ms}` });
    return z.NEVER;
  });
const offset = (flag: string) =>
  text.refine((v) => v === undefined || /^\d+$/.test(v), {
    error: (issue) => `${flag} "${String(issue.input)}" is not a non-negative integer offset`,
  });
const integer = (flag: string, fallback: number, min: number, max: number) =>
  text.transform((value, ctx) => {
    if (value === undefined) return fallback;
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if (n >= min && n <= max) return n;
    ctx.addIssue({ code: "custom", message: `${flag} "${value}" is not an integer from ${min} to ${max}` });
    return z.NEVER;
  });
const probability = (flag: string, fallback: number) =>
  text.transform((value, ctx) => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (n > 0 && n < 1) return n;
    ctx.addIssue({ code: "custom", message: `${flag} "${value}" is not a number strictly between 0 and 1` });
    return z.NEVER;
  });
const list = text.transform((value) =>
  value
    ?.split(",")
    .map((item) => item.trim())
    .filter((item) => item !== ""),
);
const oneOf = <const T extends readonly [string, ...string[]]>(flag: string, values: T, what: string) =>
  text.refine((v) => v === undefined || (values as readonly string[]).includes(v), {
    error: (issue) => `${flag} "${String(issue.input)}" is not ${what}`,
  }) as z.ZodType<T[number] | undefined, string | undefined>;

const replayFlagsSchema = z.object({
  file: text,
  topic: text,
  fromTime: time("--from-time"),
  toTime: time("--to-time"),
  fromOffset: offset("--from-offset"),
  toOffset: offset("--to-offset"),
  partition: text.refine((v) => v === undefined || v.split(",").every((p) => /^\s*\d+\s*$/.test(p)), {
    error: (issue) => `--partition "${String(issue.input)}" is not a list of partition numbers`,
  }),
  kafkaBrokers: list,
  schemaRegistryUrl: text,
  modelDir: text,
  trustedKeysDir: text.transform((v) => v ?? (configKeyDefault("model.trustedKeysDir") as string)),
  provider: oneOf("--provider", ["cpu", "cuda", "auto"], "cpu, cuda or auto").transform((v) => v ?? "cpu"),
  rulesFile: text,
  out: text.transform((v) => v ?? "-"),
  format: oneOf("--format", ["ndjson", "pbd"], "ndjson or pbd"),
  timings: z.boolean().default(true),
  batchSize: integer("--batch-size", configKeyDefault("scoring.maxBatch") as number, 1, 4095),
  reviewThreshold: probability("--review-threshold", configKeyDefault("scoring.thresholds.review") as number),
  declineThreshold: probability(
    "--decline-threshold",
    configKeyDefault("scoring.thresholds.decline") as number,
  ),
  explainTopFeatures: integer(
    "--explain-top-features",
    configKeyDefault("scoring.explainTopFeatures") as number,
    0,
    32,
  ),
  compareTopic: text,
  compareFile: text,
  compareSince: time("--compare-since"),
  diffOut: text,
  examples: integer("--examples", 3, 0, 1000),
  progress: z.boolean().default(true),
});
type ReplayFlags = z.output<typeof replayFlagsSchema>;

// ── rules across flags: checked even when some flag failed, so every problem shows at once ───

const given = (value: unknown) => value !== undefined && !isFailed(value);
/** zod hands a cross-field check the failed fields as an "aborted" marker, not a value. */
const isFailed = (value: unknown) => typeof value === "object" && value !== null && "status" in value;

function crossFlagProblems(f: ReplayFlags): string[] {
  const problems: string[] = [];
  const byTime = given(f.fromTime) || given(f.toTime);
  const byOffset = given(f.fromOffset) || given(f.toOffset);
  if (given(f.file) && given(f.topic)) problems.push("give either --file or --topic, not both");
  else if (!given(f.file) && !given(f.topic))
    problems.push("nothing to replay: give --file <transactions.pbd> or --topic <name>");
  if (given(f.file)) {
    const misplaced = (
      [
        ["--from-time", f.fromTime],
        ["--to-time", f.toTime],
        ["--from-offset", f.fromOffset],
        ["--to-offset", f.toOffset],
        ["--partition", f.partition],
      ] as const
    )
      .filter(([, v]) => v !== undefined)
      .map(([flag]) => flag);
    if (misplaced.length > 0) problems.push(`${misplaced.join(", ")} only apply to --topic, not to --file`);
  }
  if (given(f.topic)) {
    if (byTime && byOffset)
      problems.push(
        "bound the range by time (--from-time/--to-time) or by offset (--from-offset/--to-offset), not both",
      );
    const from = byTime ? f.fromTime : given(f.fromOffset) ? Number(f.fromOffset) : undefined;
    const to = byTime ? f.toTime : given(f.toOffset) ? Number(f.toOffset) : undefined;
    if (typeof from === "number" && typeof to === "number" && from >= to)
      problems.push(`the range is empty: the start must come before the end (ranges are [from, to))`);
  }
  const brokers = isFailed(f.kafkaBrokers) ? undefined : f.kafkaBrokers;
  if ((given(f.topic) || given(f.compareTopic)) && (brokers === undefined || brokers.length === 0))
    problems.push("reading a topic needs brokers: give --kafka-brokers or set KAFKA_BROKERS");
  if (!given(f.modelDir)) problems.push("the model must be pinned: give --model-dir models/<name>/<version>");
  if (!given(f.rulesFile)) problems.push("the rule set must be pinned: give --rules-file <rules.yaml>");
  const [review, decline] = [f.reviewThreshold, f.declineThreshold];
  if (typeof review === "number" && typeof decline === "number" && review >= decline)
    problems.push(`the review threshold (${review}) must be below the decline threshold (${decline})`);
  if (given(f.compareTopic) && given(f.compareFile))
    problems.push("compare with --compare-topic or --compare-file, not both");
  if (f.compareSince !== undefined && !given(f.compareTopic))
    problems.push("--compare-since only applies to --compare-topic");
  if (given(f.diffOut) && !given(f.compareTopic) && !given(f.compareFile))
    problems.push("--diff-out needs something to compare with: --compare-topic or --compare-file");
  return problems;
}

// ── the options replay runs with ──────────────────────────────────────────────────────────

const bound = (timeMs: number | undefined, offsetText: string | undefined): RangeBound | undefined =>
  timeMs !== undefined ? { timeMs } : offsetText !== undefined ? { offset: Number(offsetText) } : undefined;

function toReplayOptions(f: ReplayFlags) {
  const from = bound(f.fromTime, f.fromOffset);
  const to = bound(f.toTime, f.toOffset);
  const partitions = f.partition?.split(",").map((p) => Number(p.trim()));
  const source =
    f.file !== undefined
      ? { kind: "file" as const, path: f.file }
      : {
          kind: "topic" as const,
          topic: f.topic!,
          ...(partitions ? { partitions } : {}),
          ...(from ? { from } : {}),
          ...(to ? { to } : {}),
        };
  const compare =
    f.compareFile !== undefined
      ? { kind: "file" as const, path: f.compareFile }
      : f.compareTopic !== undefined
        ? {
            kind: "topic" as const,
            topic: f.compareTopic,
            ...(f.compareSince !== undefined ? { sinceMs: f.compareSince } : {}),
          }
        : undefined;
  return {
    source,
    ...(f.kafkaBrokers && f.kafkaBrokers.length > 0 ? { kafkaBrokers: f.kafkaBrokers } : {}),
    ...(f.schemaRegistryUrl !== undefined ? { schemaRegistryUrl: f.schemaRegistryUrl } : {}),
    modelDir: f.modelDir!,
    trustedKeysDir: f.trustedKeysDir,
    provider: f.provider,
    rulesFile: f.rulesFile!,
    out: f.out,
    format: f.format ?? (f.out.endsWith(".pbd") ? "pbd" : "ndjson"),
    timings: f.timings,
    settings: {
      batchSize: f.batchSize,
      thresholds: { review: f.reviewThreshold, decline: f.declineThreshold },
      budgetMs: configKeyDefault("scoring.budgetMs") as number,
      minBudgetForModelMs: configKeyDefault("scoring.minBudgetForModelMs") as number,
      explainTopFeatures: f.explainTopFeatures,
    },
    ...(compare ? { compare } : {}),
    ...(f.diffOut !== undefined ? { diffOut: f.diffOut } : {}),
    examples: f.examples,
    progress: f.progress,
  };
}

const replayOptionsSchema = replayFlagsSchema
  .superRefine(
    (flags, ctx) => {
      for (const message of crossFlagProblems(flags)) ctx.addIssue({ code: "custom", message });
    },
    { when: () => true },
  )
  .transform(toReplayOptions);

export type ReplayOptions = z.output<typeof replayOptionsSchema>;
export type ReplaySourceOption = ReplayOptions["source"];
export type CompareOption = NonNullable<ReplayOptions["compare"]>;

export type ParsedReplayOptions = ParsedOptions<ReplayOptions>;

export function parseReplayOptions(
  flags: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): ParsedReplayOptions {
  const parsed = replayOptionsSchema.safeParse(commandOptionValues(REPLAY_OPTION_SETTINGS, flags, env));
  return parsed.success
    ? { ok: true, options: parsed.data }
    : { ok: false, problems: parsed.error.issues.map((issue) => issue.message) };
}
