// The `fraud-scorer` command: one subcommand per entry point, each wired in its own module.
import { Command } from "commander";
import { registerModelCommands } from "./modelCommands.js";
import { registerServeCommand } from "./serveCommand.js";

const program = new Command()
  .name("fraud-scorer")
  .description("Real-time card-payment fraud scoring on Kafka")
  .showHelpAfterError();

registerServeCommand(program);
registerModelCommands(program);

await program.parseAsync(process.argv);
