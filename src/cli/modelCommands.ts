// `fraud-scorer model …` — owned by the model pipeline work (issue 3).
import type { Command } from "commander";

export function registerModelCommands(program: Command): void {
  program.command("model").description("model artifacts (verify, inspect)");
}
