// The `fraud-scorer` command. A subcommand's module is imported only when that subcommand runs
// (or its own help is asked for): `serve` loads the scorer and nothing else, so a container
// that ships the product alone can start it, and no command pays for another's imports.
import { Command } from "commander";
import { applyV8Flags } from "../ops/v8Flags.js";

// Before any command's modules load (see v8Flags.ts).
applyV8Flags();

type RegisterCommand = (program: Command) => void;

interface CommandEntry {
  /** The line in `fraud-scorer --help`; the module gives the command its full description. */
  readonly summary: string;
  readonly load: () => Promise<RegisterCommand>;
}

const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  serve: {
    summary: "consume transactions, score them, and write one decision for each",
    load: async () => (await import("./serveCommand.js")).registerServeCommand,
  },
  model: {
    summary: "model artifacts (verify, inspect, promote, roll back, shadow)",
    load: async () => (await import("./modelCommands.js")).registerModelCommands,
  },
  replay: {
    summary: "decide recorded transactions again with a pinned model and rule set (audits)",
    load: async () => (await import("./replayCommand.js")).registerReplayCommand,
  },
  shadow: {
    summary: "compare a shadow candidate's decisions with the live ones over a time range",
    load: async () => (await import("./shadowCommand.js")).registerShadowCommand,
  },
  produce: {
    summary: "generate open-loop load at a fixed rate",
    load: async () => (await import("./produceCommand.js")).registerProduceCommand,
  },
  decisions: {
    summary: "read the decisions topic",
    load: async () => (await import("./decisionsCommand.js")).registerDecisionsCommand,
  },
  rules: {
    summary: "rule sets (validate)",
    load: async () => (await import("./rulesCommands.js")).registerRulesCommands,
  },
  import: {
    summary: "convert a company's CSV export into .pbd transactions + labels for training",
    load: async () => (await import("./importCommand.js")).registerImportCommand,
  },
  demo: {
    summary: "run the scorer under simulated load and report latency, throughput and fraud caught",
    load: async () => (await import("./demoCommand.js")).registerDemoCommand,
  },
};

/** The subcommand named on the command line (`help <name>` included), if any. */
function invokedCommand(args: readonly string[]): string | undefined {
  const words = args.filter((arg) => !arg.startsWith("-"));
  return words[0] === "help" ? words[1] : words[0];
}

const program = new Command()
  .name("fraud-scorer")
  .description("Real-time card-payment fraud scoring on Kafka")
  .showHelpAfterError();

const name = invokedCommand(process.argv.slice(2));
const invoked = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
if (invoked !== undefined) (await invoked.load())(program);
// Otherwise only the names and summaries: enough for the overview help and for commander's
// "unknown command … did you mean" suggestions.
else for (const [command, { summary }] of Object.entries(COMMANDS)) program.command(command).summary(summary);

await program.parseAsync(process.argv);
