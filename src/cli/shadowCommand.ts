// `fraud-scorer shadow report`: how a shadow candidate would have decided, against the live
// decisions over a time range. Reads both decisions topics (never committing), joins on
// transaction id and prints the comparison (src/replay/shadowComparison.ts).
import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { z } from "zod";
import { readLabelsFile } from "../codec/transactionFiles.js";
import { shadowTopicOf } from "../ops/config.js";
import { readRecordedDecisionsTopic } from "../replay/recordedDecisions.js";
import { parseTimeArgument } from "../replay/replayOptions.js";
import { ReplayInputError } from "../replay/replayRecord.js";
import { compareShadow, formatShadowComparison } from "../replay/shadowComparison.js";
import { createKafkaPort } from "../stream/kafka/index.js";
import { brokerListSchema } from "./brokerListSchema.js";
import { refuseArguments } from "./cliArguments.js";

interface ShadowReportFlags {
  readonly from?: string;
  readonly to?: string;
  readonly labels?: string;
  readonly kafkaBrokers?: string;
  readonly decisionsTopic?: string;
  readonly shadowTopic?: string;
  readonly json?: string;
}

const time = (flag: string) =>
  z.string().transform((value, ctx) => {
    const ms = parseTimeArgument(value);
    if (typeof ms === "number") return ms;
    ctx.addIssue({ code: "custom", message: `${flag}: ${ms}` });
    return z.NEVER;
  });

const optionsSchema = z
  .object({
    from: time("--from"),
    to: time("--to").optional(),
    labels: z.string().min(1).optional(),
    kafkaBrokers: brokerListSchema,
    decisionsTopic: z.string().min(1),
    shadowTopic: z.string().min(1).optional(),
    json: z.string().min(1).optional(),
  })
  .refine((o) => o.to === undefined || o.to > o.from, { error: "--to must be after --from" });

const text = (v: string | undefined) => (v === undefined || v.trim() === "" ? undefined : v.trim());

export function registerShadowCommand(program: Command): void {
  const shadow = program
    .command("shadow")
    .description("shadow scoring (compare a candidate with the live model)");
  shadow
    .command("report")
    .description(
      "join live and shadow decisions over a time range on transaction id: coverage, action agreement, score differences, and recall/precision with labels",
    )
    .requiredOption("--from <time>", "first live decision time (ISO-8601 or epoch ms)")
    .option("--to <time>", "end of the range, exclusive (default: now)")
    .option("--labels <csv>", "labels file (transaction_id,is_fraud) for each model's recall and precision")
    .option("--kafka-brokers <list>", "Kafka bootstrap brokers [env KAFKA_BROKERS]")
    .option(
      "--decisions-topic <topic>",
      "live decisions topic (default: decisions) [env KAFKA_DECISIONS_TOPIC]",
    )
    .option(
      "--shadow-topic <topic>",
      "shadow decisions topic (default: <decisions topic>.shadow) [env KAFKA_SHADOW_DECISIONS_TOPIC]",
    )
    .option("--json <file>", "also write the comparison as JSON")
    .action(async (flags: ShadowReportFlags) => {
      const parsed = optionsSchema.safeParse({
        from: flags.from,
        to: text(flags.to),
        labels: text(flags.labels),
        kafkaBrokers: text(flags.kafkaBrokers) ?? text(process.env.KAFKA_BROKERS),
        decisionsTopic: text(flags.decisionsTopic) ?? text(process.env.KAFKA_DECISIONS_TOPIC) ?? "decisions",
        shadowTopic: text(flags.shadowTopic) ?? text(process.env.KAFKA_SHADOW_DECISIONS_TOPIC),
        json: text(flags.json),
      });
      if (!parsed.success)
        refuseArguments(
          "shadow report",
          parsed.error.issues.map((i) =>
            i.path[0] === "kafkaBrokers" && i.code === "invalid_type"
              ? "no brokers: give --kafka-brokers or set KAFKA_BROKERS"
              : i.message,
          ),
        );
      try {
        await report(parsed.data);
      } catch (err) {
        // A missing topic or an unreadable labels file: one line, exit 1.
        if (!(err instanceof ReplayInputError) && (err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
        process.stderr.write(`fraud-scorer shadow report: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
    });
}

async function report(o: z.output<typeof optionsSchema>): Promise<void> {
  const kafka = createKafkaPort({ brokers: o.kafkaBrokers, clientId: "fraud-scorer-shadow-report" });
  const live = await readRecordedDecisionsTopic({
    kafka,
    topic: o.decisionsTopic,
    sinceMs: o.from,
    ...(o.to === undefined ? {} : { untilMs: o.to }),
  });
  // A shadow decision is written after its live one: read from the range's start to the end.
  const shadowDecisions = await readRecordedDecisionsTopic({
    kafka,
    topic: o.shadowTopic ?? shadowTopicOf(o.decisionsTopic),
    transactionIds: new Set(live.keys()),
    sinceMs: o.from,
  });
  const labels = o.labels === undefined ? undefined : await readLabelsFile(o.labels);
  const comparison = compareShadow(live, shadowDecisions, labels);
  console.log(formatShadowComparison(comparison));
  if (o.json) await writeFile(o.json, `${JSON.stringify(comparison, null, 2)}\n`);
}
