// The `fraud-scorer` command: one subcommand per entry point, each wired in its own module.
import { Command } from "commander";
import { registerModelCommands } from "./modelCommands.js";

const program = new Command()
  .name("fraud-scorer")
  .description("Real-time card-payment fraud scoring on Kafka")
  .showHelpAfterError();

registerModelCommands(program);

await program.parseAsync(process.argv);
