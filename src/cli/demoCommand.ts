// `fraud-scorer demo` (`npm run demo`): bring the local stack up unless endpoints are given,
// run the scorer with the committed model, drive simulated traffic open-loop with live
// progress, then report throughput, end-to-end latency, the decision mix and fraud caught, as
// text here and as markdown + SVG in demo-report/. Without any Kafka it runs offline, and says so.
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import type { Command } from "commander";
import pino from "pino";
import { configKeyDefault } from "../ops/configSchema.js";
import { createLogger } from "../ops/logger.js";
import { loadRuleSet } from "../rules/ruleSet.js";
import {
  DemoSetupError,
  newestCommittedModel,
  resolveDemoEnvironment,
} from "../tools/demo/demoEnvironment.js";
import { reportText, writeDemoReport, type DemoReport } from "../tools/demo/demoReport.js";
import { runLiveDemo, type LiveProgress } from "../tools/demo/liveDemo.js";
import { runOfflineDemo } from "../tools/demo/offlineDemo.js";
import { parseDuration, parsePositiveInteger, parsePositiveNumber, refuseArguments } from "./cliArguments.js";
import { progressWanted, startProgress } from "./progressBar.js";

/**
 * What the 2-core reference box sustains with Kafka, the registry, Redis, the scorer and the
 * load generator all on it: at 400–500 tx/s the model decides nearly everything with p99 under
 * 100 ms; from 750 tx/s state calls start timing out and the rules decide most transactions.
 */
export const DEFAULT_DEMO_RATE = 500;

interface DemoFlags {
  duration: string;
  rate: string;
  warmup: string;
  offline?: boolean;
  out: string;
  seed: string;
  modelDir?: string;
  rulesFile: string;
  partitions: string;
  keep?: boolean;
  progress: boolean;
}

export function registerDemoCommand(program: Command): void {
  program
    .command("demo")
    .description(
      "run the scorer on the local stack under simulated load and report latency, throughput and fraud caught",
    )
    .option("--duration <time>", "how long to measure, e.g. 30s", "30s")
    .option("--rate <tx/s>", "open-loop send rate", String(DEFAULT_DEMO_RATE))
    .option("--warmup <time>", "load before measuring starts (not counted)", "3s")
    .option("--offline", "skip Kafka: score simulated data through the replay engine")
    .option("--out <dir>", "report folder", "demo-report")
    .option("--seed <n>", "simulator seed", "42")
    .option("--model-dir <dir>", "model artifact (default: the newest under models/)")
    .option("--rules-file <file>", "rule set", "rules/default.yaml")
    .option("--partitions <n>", "partitions of the demo's topics", "6")
    .option("--keep", "keep the demo's topics and card state afterwards")
    .option("--no-progress", "no live progress")
    .action(async (flags: DemoFlags) => {
      const problems: string[] = [];
      const take = <T>(v: T | string): T | undefined =>
        typeof v === "string" ? (problems.push(v), undefined) : v;
      const durationMs = take(parseDuration(flags.duration));
      const warmupMs = flags.warmup === "0" ? 0 : take(parseDuration(flags.warmup));
      const rate = take(parsePositiveNumber(flags.rate, "--rate"));
      const seed = take(parsePositiveInteger(flags.seed, "--seed"));
      const partitions = take(parsePositiveInteger(flags.partitions, "--partitions"));
      let modelDir: string | undefined;
      try {
        modelDir = flags.modelDir ?? newestCommittedModel("models");
      } catch (err) {
        problems.push((err as Error).message);
      }
      if (
        problems.length > 0 ||
        durationMs === undefined ||
        warmupMs === undefined ||
        rate === undefined ||
        seed === undefined ||
        partitions === undefined ||
        modelDir === undefined
      )
        refuseArguments("demo", problems);

      const say = (line: string) => process.stderr.write(`demo: ${line}\n`);
      const logger = createLogger({
        level: "warn",
        name: "fraud-scorer-demo",
        destination: pino.destination(2),
      });
      const root = process.cwd();
      const reportDir = resolve(flags.out);
      const budgetMs = configKeyDefault("scoring.budgetMs") as number;
      await mkdir(reportDir, { recursive: true });

      let rulesDescription: string;
      try {
        rulesDescription = `${(await loadRuleSet(flags.rulesFile)).version} (${flags.rulesFile})`;
      } catch (err) {
        refuseArguments("demo", [`rule set ${flags.rulesFile}: ${(err as Error).message}`]);
      }

      let environment;
      try {
        environment = flags.offline
          ? ({ mode: "offline", reason: "--offline was given." } as const)
          : await resolveDemoEnvironment({ env: process.env, root, log: say });
      } catch (err) {
        if (err instanceof DemoSetupError) refuseArguments("demo", [err.message]);
        throw err;
      }

      let report: DemoReport;
      if (environment.mode === "live") {
        say(`using Kafka at ${environment.endpoints.kafkaBrokers.join(",")} (from ${environment.from})`);
        const bar = liveProgressDisplay(flags.progress);
        try {
          report = await runLiveDemo({
            root,
            endpoints: environment.endpoints,
            endpointsFrom: environment.from,
            modelDir,
            rulesFile: flags.rulesFile,
            rulesDescription,
            ratePerSecond: rate,
            durationMs,
            warmupMs,
            seed,
            partitions,
            budgetMs,
            reportDir,
            keep: flags.keep === true,
            logger,
            say: (line) => {
              bar.interrupt();
              say(line);
            },
            onProgress: bar.update,
          });
        } finally {
          bar.stop();
        }
      } else {
        say("=".repeat(78));
        say(`OFFLINE MODE: ${environment.reason}`);
        say("The same scoring runs offline through the replay engine on simulated data.");
        say("Latency below is scoring time only, not end to end through Kafka.");
        say("=".repeat(78));
        const total = Math.floor(((durationMs ?? 0) * rate) / 1000);
        const bar = startProgress({ label: "offline", total, enabled: progressWanted(flags.progress) });
        try {
          report = await runOfflineDemo({
            reason: environment.reason,
            modelDir,
            rulesFile: flags.rulesFile,
            transactions: total,
            seed,
            budgetMs,
            logger,
            say,
            onProgress: (done) => bar.update(done),
          });
        } finally {
          bar.stop();
        }
      }
      const written = await writeDemoReport(reportDir, report);
      process.stdout.write(reportText(report));
      say(`report: ${written.markdown} (chart ${written.chart})`);
    });
}

/** A bar on a terminal; a line every five seconds otherwise. */
function liveProgressDisplay(requested: boolean) {
  const tty = progressWanted(requested);
  let bar: ReturnType<typeof startProgress> | undefined;
  let lastLine = 0;
  const describe = (p: LiveProgress) =>
    `${p.phase} · decided ${p.decided} · p99 last s ${p.p99Ms === undefined ? "–" : `${p.p99Ms.toFixed(1)} ms`} · fallback ${p.fallbacks}`;
  return {
    update: (p: LiveProgress) => {
      if (tty) {
        bar ??= startProgress({
          label: "demo",
          total: p.planned,
          enabled: true,
          extra: "{status}",
          payload: { status: "" },
        });
        bar.update(p.sent, { status: describe(p) });
      } else if (requested && Date.now() - lastLine >= 5000) {
        lastLine = Date.now();
        process.stderr.write(`demo: sent ${p.sent}/${p.planned} · ${describe(p)}\n`);
      }
    },
    interrupt: () => {
      bar?.stop();
      bar = undefined;
    },
    stop: () => bar?.stop(),
  };
}
