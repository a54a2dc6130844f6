// `fraud-scorer decisions tail`: follow the decisions topic and print each decision readably
// (coloured on a terminal) or as NDJSON (--json, for pipes), filtered by action and fallback.
import type { Command } from "commander";
import { matchesFilter, type DecisionFilter } from "../decisions/decisionFilter.js";
import { followDecisions } from "../decisions/followDecisions.js";
import { formatDecisionJson, formatDecisionLine } from "../decisions/formatDecision.js";
import { createKafkaPort } from "../stream/kafka/index.js";
import { refuseArguments } from "./cliArguments.js";
import { addDecisionsTailOptions, parseDecisionsTailOptions } from "./decisionsOptions.js";

export function registerDecisionsCommand(program: Command): void {
  const decisions = program.command("decisions").description("read the decisions topic");
  const tail = decisions
    .command("tail")
    .description("follow the decisions topic and print decisions as they arrive");
  addDecisionsTailOptions(tail).action(async (flags: Record<string, unknown>) => {
    const parsed = parseDecisionsTailOptions(flags, process.env, { isTTY: process.stdout.isTTY === true });
    if (!parsed.ok) refuseArguments("decisions tail", parsed.problems);
    const {
      topic,
      kafkaBrokers: brokers,
      actions,
      fallback,
      colour,
      limit,
      json,
      fromBeginning,
    } = parsed.options;
    const filter: DecisionFilter = {
      ...(actions ? { actions } : {}),
      ...(fallback !== undefined ? { fallback } : {}),
    };
    const kafka = createKafkaPort({ brokers, clientId: "fraud-scorer-tail" });
    let printed = 0;
    let stopping = false;
    const following = await followDecisions({
      kafka,
      topic,
      fromBeginning,
      isolation: parsed.options.readCommitted ? "read_committed" : "read_uncommitted",
      onDecision: (d, { offset, ...meta }) => {
        if (stopping || !matchesFilter(d, filter)) return;
        process.stdout.write(
          `${json ? formatDecisionJson(d, { ...meta, offset: String(offset) }) : formatDecisionLine(d, { colour })}\n`,
        );
        if (limit !== undefined && ++printed >= limit) void stop();
      },
      onUndecodable: ({ partition, offset, error }) =>
        process.stderr.write(
          `partition ${partition} offset ${offset}: not a decision (${error.kind}: ${error.message})\n`,
        ),
    });
    if (!json)
      process.stderr.write(
        `following ${topic}${fromBeginning ? " from the beginning" : ""}; Ctrl-C to stop\n`,
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
