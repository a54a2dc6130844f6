// `fraud-scorer rules …`: check a rule set before it is used anywhere. The scorer, replay and
// the demo load rule files through the same parser, so what passes here loads there.
import type { Command } from "commander";
import { promoteRules } from "../control/promotionRecords.js";
import { loadRuleSet, RuleSetError } from "../rules/ruleSet.js";
import {
  addControlChannelOptions,
  issuedBy,
  openControlChannel,
  type ControlChannelFlags,
} from "./controlChannelOptions.js";

export function registerRulesCommands(program: Command): void {
  const rules = program.command("rules").description("rule sets (validate, promote)");
  rules
    .command("validate")
    .description("parse and compile a rule file; print every problem with its line, exit 1 if there is one")
    .argument("<file>", "rule file, e.g. rules/default.yaml")
    .action(async (file: string) => {
      try {
        const ruleSet = await loadRuleSet(file);
        console.log(
          `OK ${file}: version ${ruleSet.version}, ${ruleSet.rules.length} rules over ${ruleSet.factsUsed.size} facts`,
        );
      } catch (err) {
        if (!(err instanceof RuleSetError)) throw err;
        console.error(`REFUSED ${file}:`);
        for (const issue of err.issues) console.error(`  ${issue}`);
        process.exitCode = 1;
      }
    });

  addControlChannelOptions(
    rules
      .command("promote")
      .description("validate a rule file, then switch every running scorer to it through the control topic")
      .argument("<file>", "rule file"),
  ).action(async (file: string, o: ControlChannelFlags) => {
    const channel = await openControlChannel("rules promote", o);
    try {
      const record = await promoteRules(file, { channel, issuedBy: issuedBy() });
      console.log(`PUBLISHED rules ${record.rulesVersion} (${file}) to ${channel.topic}`);
    } catch (err) {
      if (!(err instanceof RuleSetError)) throw err;
      console.error(`REFUSED ${file}: ${err.issues.join("; ")}`);
      process.exitCode = 1;
    }
  });
}
