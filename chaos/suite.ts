// The fault suite: every scenario in the order docs/RELIABILITY.md lists them, and the one
// function that runs a selection of them and records a row for each. `npm run chaos` (run.ts)
// and the `npm test` subset (test/integration/chaos.test.ts) both call runScenarios.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChaosEndpoints } from "./chaosEndpoints.js";
import { failedRow, rowOf, type ReliabilityRow } from "./reliabilityReport.js";
import type { Scenario, TargetCheck } from "./scenario.js";
import {
  brokerRestartScenario,
  threeBrokersScenario,
  slowKafka50Scenario,
  slowKafka500Scenario,
} from "./scenarios/kafkaBrokers.js";
import {
  rebalanceScenario,
  sigkillLoopExactlyOnceScenario,
  sigkillLoopScenario,
} from "./scenarios/crashes.js";
import { malformedScenario } from "./scenarios/malformed.js";
import {
  redisClusterScenario,
  redisFrozenExactlyOnceScenario,
  redisFrozenScenario,
  redisOutageScenario,
  slowRedis500Scenario,
  slowRedis50Scenario,
} from "./scenarios/redis.js";
import { soakScenario } from "./scenarios/soak.js";

export function allScenarios({ soakRate = 500 } = {}): Scenario[] {
  return [
    sigkillLoopScenario,
    sigkillLoopExactlyOnceScenario,
    rebalanceScenario,
    redisOutageScenario,
    redisFrozenScenario,
    redisFrozenExactlyOnceScenario,
    slowRedis50Scenario,
    slowRedis500Scenario,
    redisClusterScenario,
    malformedScenario,
    brokerRestartScenario,
    threeBrokersScenario,
    slowKafka50Scenario,
    slowKafka500Scenario,
    soakScenario(soakRate),
  ];
}

export interface SuiteOptions {
  readonly root: string;
  readonly endpoints: ChaosEndpoints;
  readonly scenarios: readonly Scenario[];
  readonly scale: number;
  readonly logDir: string;
  readonly log: (line: string) => void;
}

export async function runScenarios(o: SuiteOptions): Promise<ReliabilityRow[]> {
  const modelDir = committedModelDir(o.root);
  const modelVersion = (
    JSON.parse(readFileSync(join(o.root, modelDir, "manifest.json"), "utf8")) as { modelVersion: string }
  ).modelVersion;
  const meta = { date: new Date().toISOString().slice(0, 10), commit: commitOf(o.root), scale: o.scale };
  const rows: ReliabilityRow[] = [];
  for (const scenario of o.scenarios) {
    o.log(`chaos: ${scenario.name}: ${scenario.summary}`);
    const started = Date.now();
    try {
      const result = await scenario.run({
        root: o.root,
        endpoints: o.endpoints,
        modelDir,
        modelVersion,
        logDir: join(o.logDir, scenario.name),
        scale: o.scale,
        log: o.log,
      });
      rows.push(rowOf(scenario.name, scenario.summary, meta, result));
    } catch (error) {
      rows.push(failedRow(scenario.name, scenario.summary, meta, error as Error));
    }
    const row = rows.at(-1)!;
    const missed = row.targets.filter((t) => !t.met);
    const label = (t: TargetCheck) => `${t.required === true ? "REQUIRED " : ""}${t.target} (${t.measured})`;
    o.log(
      `chaos: ${scenario.name}: ${missed.length === 0 ? "all targets met" : `missed ${missed.map(label).join("; ")}`} in ${Math.round((Date.now() - started) / 1000)} s`,
    );
  }
  return rows;
}

/** The newest signed model under models/<name>/<version>/, as a path relative to root. */
function committedModelDir(root: string): string {
  const listing = execFileSync("git", ["ls-files", "models/*/*/manifest.json"], {
    cwd: root,
    encoding: "utf8",
  });
  const dir = listing
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .sort()
    .at(-1);
  if (dir === undefined) throw new Error("chaos: no committed model under models/");
  return dir.slice(0, -"/manifest.json".length);
}

function commitOf(root: string): string {
  const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "bin", "chaos"], {
    cwd: root,
    encoding: "utf8",
  }).trim();
  return dirty === "" ? head : `${head}+changes`;
}
