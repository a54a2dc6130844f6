// `npm run simulate`: writes a seeded synthetic payment history, split by time, for training.
import { Command } from "commander";
import { DEFAULT_SIMULATION } from "../src/tools/simulate/defaults.js";
import { writeSimulation } from "./simulate/writeSimulation.js";

const program = new Command()
  .name("simulate")
  .description("Write a seeded synthetic card-payment history with labelled fraud typologies")
  .option("--out <dir>", "output directory", "data/sim")
  .option("--seed <n>", "random seed", String(DEFAULT_SIMULATION.seed))
  .option("--cards <n>", "number of cards", String(DEFAULT_SIMULATION.cards))
  .option("--days <n>", "days of history", String(DEFAULT_SIMULATION.days))
  .option(
    "--validation-from-day <n>",
    "first day of the validation split",
    String(DEFAULT_SIMULATION.validationFromDay),
  )
  .option("--test-from-day <n>", "first day of the test split", String(DEFAULT_SIMULATION.testFromDay))
  .action(async (o: Record<string, string>) => {
    const started = Date.now();
    const summary = await writeSimulation(
      o.out!,
      { seed: Number(o.seed), cards: Number(o.cards), days: Number(o.days) },
      { validationFromDay: Number(o.validationFromDay), testFromDay: Number(o.testFromDay) },
    );
    for (const [name, s] of Object.entries(summary.splits)) {
      console.log(
        `${name.padEnd(10)} ${String(s.transactions).padStart(8)} transactions, ${(100 * s.fraudRate).toFixed(2)} % labelled fraud`,
      );
    }
    console.log(
      `typologies: ${JSON.stringify(summary.typologies)}; ring transactions: ${summary.ringTransactions}`,
    );
    console.log(`wrote ${o.out} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

await program.parseAsync(process.argv);
