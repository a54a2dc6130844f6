// `fraud-scorer rules …`: check a rule set before it is used anywhere. The scorer, replay and
// the demo load rule files through the same parser, so what passes here loads there.
import type { Command } from "commander";
import { loadRuleSet, RuleSetError } from "../rules/ruleSet.js";

export function registerRulesCommands(program: Command): void {
  const rules = program.command("rules").description("rule sets (validate)");
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
}
