// The `fraud-scorer` command: one subcommand per entry point, each wired in its own module.
import { Command } from "commander";
import { registerDecisionsCommand } from "./decisionsCommand.js";
import { registerDemoCommand } from "./demoCommand.js";
import { registerImportCommand } from "./importCommand.js";
import { registerModelCommands } from "./modelCommands.js";
import { registerProduceCommand } from "./produceCommand.js";
import { registerReplayCommand } from "./replayCommand.js";
import { registerRulesCommands } from "./rulesCommands.js";
import { registerServeCommand } from "./serveCommand.js";

const program = new Command()
  .name("fraud-scorer")
  .description("Real-time card-payment fraud scoring on Kafka")
  .showHelpAfterError();

registerServeCommand(program);
registerModelCommands(program);
registerRulesCommands(program);
registerReplayCommand(program);
registerProduceCommand(program);
registerDecisionsCommand(program);
registerDemoCommand(program);
registerImportCommand(program);

await program.parseAsync(process.argv);
