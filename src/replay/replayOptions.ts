// `fraud-scorer replay` arguments → a complete, checked ReplayOptions, or every problem at
// once. Pure (flags and environment in, value out) so the refusals are unit-tested.
import { configKeyDefault } from "../ops/configSchema.js";
import type { DecisionFormat } from "./decisionOutput.js";
import type { RangeBound, TopicRangeRequest } from "./topicRange.js";
import type { ReplaySettings } from "./replayTransactions.js";

export type ReplaySourceOption =
  { readonly kind: "file"; readonly path: string } | ({ readonly kind: "topic" } & TopicRangeRequest);

export type CompareOption =
  | { readonly kind: "file"; readonly path: string }
  | { readonly kind: "topic"; readonly topic: string; readonly sinceMs?: number };

export interface ReplayOptions {
  readonly source: ReplaySourceOption;
  readonly kafkaBrokers?: readonly string[];
  readonly schemaRegistryUrl?: string;
  readonly modelDir: string;
  readonly trustedKeysDir: string;
  readonly provider: "cpu" | "cuda" | "auto";
  readonly rulesFile: string;
  readonly out: string;
  readonly format: DecisionFormat;
  readonly timings: boolean;
  readonly settings: ReplaySettings;
  readonly compare?: CompareOption;
  readonly diffOut?: string;
  readonly examples: number;
  readonly progress: boolean;
}

export type ParsedReplayOptions =
  | { readonly ok: true; readonly options: ReplayOptions }
  | { readonly ok: false; readonly problems: readonly string[] };

type Flags = Record<string, unknown>;

const str = (v: unknown): string | undefined =>
  typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;

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

const nonNegativeInt = (text: string) => (/^\d+$/.test(text) ? Number(text) : undefined);

export function parseReplayOptions(flags: Flags, env: NodeJS.ProcessEnv): ParsedReplayOptions {
  const problems: string[] = [];
  const file = str(flags.file);
  const topic = str(flags.topic);
  const fromTime = str(flags.fromTime);
  const toTime = str(flags.toTime);
  const fromOffset = str(flags.fromOffset);
  const toOffset = str(flags.toOffset);
  const partitionText = str(flags.partition);

  let source: ReplaySourceOption | undefined;
  if (file !== undefined && topic !== undefined) problems.push("give either --file or --topic, not both");
  else if (file === undefined && topic === undefined)
    problems.push("nothing to replay: give --file <transactions.pbd> or --topic <name>");
  const topicOnly = {
    "--from-time": fromTime,
    "--to-time": toTime,
    "--from-offset": fromOffset,
    "--to-offset": toOffset,
    "--partition": partitionText,
  };
  if (file !== undefined) {
    const misplaced = Object.entries(topicOnly)
      .filter(([, v]) => v !== undefined)
      .map(([k]) => k);
    if (misplaced.length > 0) problems.push(`${misplaced.join(", ")} only apply to --topic, not to --file`);
    source = { kind: "file", path: file };
  }
  if (topic !== undefined) {
    if (
      (fromTime !== undefined || toTime !== undefined) &&
      (fromOffset !== undefined || toOffset !== undefined)
    )
      problems.push(
        "bound the range by time (--from-time/--to-time) or by offset (--from-offset/--to-offset), not both",
      );
    const bound = (
      text: string | undefined,
      flag: string,
      kind: "time" | "offset",
    ): RangeBound | undefined => {
      if (text === undefined) return undefined;
      if (kind === "offset") {
        const offset = nonNegativeInt(text);
        if (offset === undefined) problems.push(`${flag} "${text}" is not a non-negative integer offset`);
        return offset === undefined ? undefined : { offset };
      }
      const ms = parseTimeArgument(text);
      if (typeof ms === "string") problems.push(`${flag}: ${ms}`);
      return typeof ms === "number" ? { timeMs: ms } : undefined;
    };
    const from = bound(fromTime, "--from-time", "time") ?? bound(fromOffset, "--from-offset", "offset");
    const to = bound(toTime, "--to-time", "time") ?? bound(toOffset, "--to-offset", "offset");
    const value = (b: RangeBound | undefined) =>
      b === undefined ? undefined : "timeMs" in b ? b.timeMs : b.offset;
    const [a, b] = [value(from), value(to)];
    if (a !== undefined && b !== undefined && a >= b)
      problems.push(`the range is empty: the start must come before the end (ranges are [from, to))`);
    let partitions: number[] | undefined;
    if (partitionText !== undefined) {
      partitions = partitionText.split(",").map((p) => nonNegativeInt(p.trim()) ?? NaN);
      if (partitions.some(Number.isNaN))
        problems.push(`--partition "${partitionText}" is not a list of partition numbers`);
    }
    source = {
      kind: "topic",
      topic,
      ...(partitions ? { partitions } : {}),
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
    };
  }

  const kafkaBrokers = (str(flags.kafkaBrokers) ?? str(env.KAFKA_BROKERS))
    ?.split(",")
    .map((b) => b.trim())
    .filter((b) => b !== "");
  const schemaRegistryUrl = str(flags.schemaRegistryUrl) ?? str(env.SCHEMA_REGISTRY_URL);
  const compareTopic = str(flags.compareTopic);
  const compareFile = str(flags.compareFile);
  if (
    (topic !== undefined || compareTopic !== undefined) &&
    (kafkaBrokers === undefined || kafkaBrokers.length === 0)
  )
    problems.push("reading a topic needs brokers: give --kafka-brokers or set KAFKA_BROKERS");

  const modelDir = str(flags.modelDir);
  if (modelDir === undefined)
    problems.push("the model must be pinned: give --model-dir models/<name>/<version>");
  const rulesFile = str(flags.rulesFile);
  if (rulesFile === undefined) problems.push("the rule set must be pinned: give --rules-file <rules.yaml>");

  const provider = str(flags.provider) ?? "cpu";
  if (!["cpu", "cuda", "auto"].includes(provider))
    problems.push(`--provider "${provider}" is not cpu, cuda or auto`);

  const out = str(flags.out) ?? "-";
  const formatText = str(flags.format) ?? (out.endsWith(".pbd") ? "pbd" : "ndjson");
  if (formatText !== "ndjson" && formatText !== "pbd")
    problems.push(`--format "${formatText}" is not ndjson or pbd`);

  if (compareTopic !== undefined && compareFile !== undefined)
    problems.push("compare with --compare-topic or --compare-file, not both");
  let compare: CompareOption | undefined;
  if (compareFile !== undefined) compare = { kind: "file", path: compareFile };
  if (compareTopic !== undefined) {
    const since = str(flags.compareSince);
    const sinceMs = since === undefined ? undefined : parseTimeArgument(since);
    if (typeof sinceMs === "string") problems.push(`--compare-since: ${sinceMs}`);
    compare = { kind: "topic", topic: compareTopic, ...(typeof sinceMs === "number" ? { sinceMs } : {}) };
  } else if (str(flags.compareSince) !== undefined)
    problems.push("--compare-since only applies to --compare-topic");
  const diffOut = str(flags.diffOut);
  if (diffOut !== undefined && compare === undefined)
    problems.push("--diff-out needs something to compare with: --compare-topic or --compare-file");

  const intFlag = (name: string, flag: string, fallback: number, min: number, max: number) => {
    const text = str(flags[name]);
    if (text === undefined) return fallback;
    const n = nonNegativeInt(text);
    if (n === undefined || n < min || n > max) {
      problems.push(`--${flag} "${text}" is not an integer from ${min} to ${max}`);
      return fallback;
    }
    return n;
  };
  const probFlag = (name: string, flag: string, fallback: number) => {
    const text = str(flags[name]);
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!(n > 0 && n < 1)) {
      problems.push(`--${flag} "${text}" is not a number strictly between 0 and 1`);
      return fallback;
    }
    return n;
  };
  const review = probFlag(
    "reviewThreshold",
    "review-threshold",
    configKeyDefault("scoring.thresholds.review") as number,
  );
  const decline = probFlag(
    "declineThreshold",
    "decline-threshold",
    configKeyDefault("scoring.thresholds.decline") as number,
  );
  if (review >= decline)
    problems.push(`the review threshold (${review}) must be below the decline threshold (${decline})`);
  const settings: ReplaySettings = {
    batchSize: intFlag("batchSize", "batch-size", configKeyDefault("scoring.maxBatch") as number, 1, 4095),
    thresholds: { review, decline },
    budgetMs: configKeyDefault("scoring.budgetMs") as number,
    minBudgetForModelMs: configKeyDefault("scoring.minBudgetForModelMs") as number,
    explainTopFeatures: intFlag(
      "explainTopFeatures",
      "explain-top-features",
      configKeyDefault("scoring.explainTopFeatures") as number,
      0,
      32,
    ),
  };
  const examples = intFlag("examples", "examples", 3, 0, 1000);

  if (problems.length > 0 || source === undefined || modelDir === undefined || rulesFile === undefined)
    return { ok: false, problems };
  return {
    ok: true,
    options: {
      source,
      ...(kafkaBrokers && kafkaBrokers.length > 0 ? { kafkaBrokers } : {}),
      ...(schemaRegistryUrl !== undefined ? { schemaRegistryUrl } : {}),
      modelDir,
      trustedKeysDir: str(flags.trustedKeysDir) ?? (configKeyDefault("model.trustedKeysDir") as string),
      provider: provider as ReplayOptions["provider"],
      rulesFile,
      out,
      format: formatText as DecisionFormat,
      timings: flags.timings !== false,
      settings,
      ...(compare ? { compare } : {}),
      ...(diffOut !== undefined ? { diffOut } : {}),
      examples,
      progress: flags.progress !== false,
    },
  };
}
