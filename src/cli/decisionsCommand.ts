// `fraud-scorer decisions tail`: follow the decisions topic and print each decision readably
// (coloured on a terminal) or as NDJSON (--json, for pipes), filtered by action and fallback.
import type { Command } from "commander";
import { parseActions, matchesFilter, type DecisionFilter } from "../decisions/decisionFilter.js";
import { followDecisions } from "../decisions/followDecisions.js";
import { formatDecisionJson, formatDecisionLine } from "../decisions/formatDecision.js";
import { createKafkaPort } from "../stream/kafka/index.js";
import { brokerList, parsePositiveInteger, refuseArguments } from "./cliArguments.js";

interface TailFlags {
  topic?: string;
  kafkaBrokers?: string;
  fromBeginning?: boolean;
  readCommitted?: boolean;
  action?: string;
  fallback?: boolean;
  json?: boolean;
  colour?: boolean;
  limit?: string;
}

/** Colour only for a terminal, and never when NO_COLOR is set (no-color.org). */
export const wantsColour = (flag: boolean | undefined, isTTY: boolean, env: NodeJS.ProcessEnv): boolean =>
  flag ?? (isTTY && (env.NO_COLOR ?? "") === "");

export function registerDecisionsCommand(program: Command): void {
  const decisions = program.command("decisions").description("read the decisions topic");
  decisions
    .command("tail")
    .description("follow the decisions topic and print decisions as they arrive")
    .option("--topic <name>", "decisions topic (default: $KAFKA_DECISIONS_TOPIC or decisions)")
    .option("--kafka-brokers <list>", "Kafka brokers (default: $KAFKA_BROKERS)")
    .option("--from-beginning", "start at the oldest decision instead of new ones")
    .option("--action <list>", "only these actions, e.g. decline,review")
    .option("--fallback", "only decisions the rules made alone (fallbacks)")
    .option("--no-fallback", "only decisions the model made")
    .option("--json", "one JSON object per line (for pipes)")
    .option("--colour", "colour even when stdout is not a terminal")
    .option("--no-colour", "never colour")
    .option("--read-committed", "only decisions of committed transactions (scorers run with --exactly-once)")
    .option("--limit <n>", "stop after printing this many")
    .action(async (flags: TailFlags) => {
      const problems: string[] = [];
      const brokers = brokerList(flags.kafkaBrokers ?? process.env.KAFKA_BROKERS);
      if (!brokers) problems.push("no brokers: give --kafka-brokers or set KAFKA_BROKERS");
      const actions = flags.action === undefined ? undefined : parseActions(flags.action);
      if (typeof actions === "string") problems.push(actions);
      const limit = flags.limit === undefined ? undefined : parsePositiveInteger(flags.limit, "--limit");
      if (typeof limit === "string") problems.push(limit);
      if (problems.length > 0 || !brokers || typeof actions === "string" || typeof limit === "string")
        refuseArguments("decisions tail", problems);

      const filter: DecisionFilter = {
        ...(actions ? { actions } : {}),
        ...(flags.fallback !== undefined ? { fallback: flags.fallback } : {}),
      };
      const colour = wantsColour(flags.colour, process.stdout.isTTY === true, process.env);
      const kafka = createKafkaPort({ brokers, clientId: "fraud-scorer-tail" });
      const topic = flags.topic ?? process.env.KAFKA_DECISIONS_TOPIC ?? "decisions";
      let printed = 0;
      let stopping = false;
      const following = await followDecisions({
        kafka,
        topic,
        fromBeginning: flags.fromBeginning === true,
        isolation: flags.readCommitted ? "read_committed" : "read_uncommitted",
        onDecision: (d, { offset, ...meta }) => {
          if (stopping || !matchesFilter(d, filter)) return;
          process.stdout.write(
            `${flags.json ? formatDecisionJson(d, { ...meta, offset: String(offset) }) : formatDecisionLine(d, { colour })}\n`,
          );
          if (limit !== undefined && ++printed >= limit) void stop();
        },
        onUndecodable: ({ partition, offset, error }) =>
          process.stderr.write(
            `partition ${partition} offset ${offset}: not a decision (${error.kind}: ${error.message})\n`,
          ),
      });
      if (!flags.json)
        process.stderr.write(
          `following ${topic}${flags.fromBeginning ? " from the beginning" : ""}; Ctrl-C to stop\n`,
        );
      async function stop() {
        if (stopping) return;
        stopping = true;
        await following.stop();
        process.exit(0);
      }
      process.once("SIGINT", () => void stop());
      process.once("SIGTERM", () => void stop());
    });
}
