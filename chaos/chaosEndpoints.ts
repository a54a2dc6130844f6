// Where the fault suite finds the shared stack: KAFKA_BROKERS, SCHEMA_REGISTRY_URL and REDIS_URL
// when all three are set, otherwise the local stack (`stack/stack.sh up`, idempotent).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface ChaosEndpoints {
  readonly kafkaBrokers: string;
  readonly schemaRegistryUrl: string;
  readonly redisUrl: string;
}

const VARS = ["KAFKA_BROKERS", "SCHEMA_REGISTRY_URL", "REDIS_URL"] as const;

export function chaosEndpoints(root: string, env: NodeJS.ProcessEnv): ChaosEndpoints {
  const given = VARS.filter((name) => (env[name] ?? "") !== "");
  let values: Map<string, string>;
  if (given.length === VARS.length) {
    values = new Map(VARS.map((name) => [name, env[name]!]));
  } else {
    if (given.length > 0) throw new Error(`chaos: set all of ${VARS.join(", ")} or none of them`);
    const up = spawnSync("bash", ["stack/stack.sh", "up"], { cwd: root, stdio: "inherit" });
    if (up.status !== 0) throw new Error("chaos: bash stack/stack.sh up failed; logs in .stack/logs/");
    values = new Map(
      readFileSync(join(root, ".stack/endpoints.env"), "utf8")
        .split("\n")
        .filter((line) => line.includes("="))
        .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1).trim()]),
    );
  }
  return {
    kafkaBrokers: values.get("KAFKA_BROKERS") ?? "",
    schemaRegistryUrl: values.get("SCHEMA_REGISTRY_URL") ?? "",
    redisUrl: values.get("REDIS_URL") ?? "",
  };
}
