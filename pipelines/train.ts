// `npm run train`: trains, exports, evaluates and signs a model. By default on the simulator's
// output (generated first when data/sim is missing); or on any delimited Transaction file
// with a labels CSV (`transaction_id,is_fraud`) via --transactions/--labels.
import { existsSync } from "node:fs";
import cliProgress from "cli-progress";
import { Command } from "commander";
import { FEATURE_SCHEMA_VERSION } from "../src/features/featureVector.js";
import { DEFAULT_SIMULATION } from "../src/tools/simulate/defaults.js";
import { writeSimulation } from "./simulate/writeSimulation.js";
import { runTrainingPipeline, type PipelineProgress } from "./train/runTrainingPipeline.js";

const barProgress = (): PipelineProgress => ({
  stage(name, total) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${name.padEnd(16)} [{bar}] {percentage}% | {value}/{total} {loss}`,
        hideCursor: true,
        clearOnComplete: false,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { loss: "" });
    return {
      update: (done, info) =>
        bar.update(
          done,
          info
            ? {
                loss: Object.entries(info)
                  .map(([k, v]) => `${k} ${v}`)
                  .join(" "),
              }
            : {},
        ),
      stop: () => bar.stop(),
    };
  },
  log: (message) => console.log(message),
});

const defaultVersion = (): string =>
  new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);

const program = new Command()
  .name("train")
  .description("Train the fraud LSTM, export ONNX (fp32 + int8), evaluate and sign the artifact")
  .option("--data <dir>", "split directory from `npm run simulate`", "data/sim")
  .option("--transactions <file>", "delimited Transaction file (.pbd) instead of --data")
  .option("--labels <file>", "CSV with header transaction_id,is_fraud (with --transactions)")
  .option("--validation-fraction <f>", "with --transactions: share of history for validation", "0.15")
  .option(
    "--test-fraction <f>",
    "with --transactions: latest share of history held out for the report",
    "0.2",
  )
  .option("--models-dir <dir>", "artifact root", "models")
  .option("--name <name>", "model name", "fraud-lstm")
  .option("--model-version <version>", "artifact version (default: UTC timestamp)")
  .option("--seed <n>", "training seed", "7")
  .option("--epochs <n>", "maximum epochs", "10")
  .option("--hidden <n>", "LSTM hidden size", "32")
  .option(
    "--feature-schema <version>",
    "train on this feature schema's features (an earlier one is a prefix: an ablation)",
    FEATURE_SCHEMA_VERSION,
  )
  .option("--keys-dir <dir>", "private signing key folder (git-ignored)", ".keys")
  .option("--trusted-keys <dir>", "trusted public keys", "models/trusted-keys")
  .action(async (o: Record<string, string | undefined>) => {
    const started = Date.now();
    if (o.transactions !== undefined && o.labels === undefined)
      throw new Error("--transactions needs --labels");
    let source;
    if (o.transactions !== undefined) {
      source = {
        transactions: o.transactions,
        labels: o.labels!,
        validationFraction: Number(o.validationFraction),
        testFraction: Number(o.testFraction),
      };
    } else {
      const dir = o.data!;
      if (!existsSync(`${dir}/train.pbd`)) {
        console.log(
          `${dir} has no simulation yet: simulating (seed ${DEFAULT_SIMULATION.seed}, ${DEFAULT_SIMULATION.cards} cards, ${DEFAULT_SIMULATION.days} days)`,
        );
        await writeSimulation(
          dir,
          { seed: DEFAULT_SIMULATION.seed, cards: DEFAULT_SIMULATION.cards, days: DEFAULT_SIMULATION.days },
          {
            validationFromDay: DEFAULT_SIMULATION.validationFromDay,
            testFromDay: DEFAULT_SIMULATION.testFromDay,
          },
        );
      }
      source = { dir };
    }
    const result = await runTrainingPipeline({
      source,
      modelsDir: o.modelsDir!,
      name: o.name!,
      version: o.modelVersion ?? defaultVersion(),
      keysDir: o.keysDir!,
      trustedKeysDir: o.trustedKeys!,
      train: { seed: Number(o.seed), epochs: Number(o.epochs), hiddenSize: Number(o.hidden) },
      progress: barProgress(),
      featureSchemaVersion: o.featureSchema!,
    });
    const { fp32, int8, rules } = result.report.results;
    const line = (n: string, m: typeof fp32) =>
      `${n.padEnd(6)} ROC-AUC ${m.rocAuc.toFixed(4)}  PR-AUC ${m.prAuc.toFixed(4)}  recall@0.5%FPR ${m.recallAt0_5PctFpr.toFixed(3)}  recall@1%FPR ${m.recallAt1PctFpr.toFixed(3)}`;
    console.log([line("fp32", fp32), line("int8", int8), line("rules", rules)].join("\n"));
    console.log(`signed and verified ${result.dir} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  });

await program.parseAsync(process.argv);
