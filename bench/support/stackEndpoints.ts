// Where the broker, the registry and Redis are: KAFKA_BROKERS, SCHEMA_REGISTRY_URL and
// REDIS_URL when all three are set, otherwise the local stack (`bash stack/stack.sh up`, which
// is idempotent and leaves a running stack alone). The benchmarks never stop the stack.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface StackEndpoints {
  readonly kafkaBrokers: string;
  readonly schemaRegistryUrl: string;
  readonly redisUrl: string;
}

const VARS = ["KAFKA_BROKERS", "SCHEMA_REGISTRY_URL", "REDIS_URL"] as const;

export function stackEndpoints(root: string, env: NodeJS.ProcessEnv = process.env): StackEndpoints {
  const given = VARS.filter((name) => (env[name] ?? "") !== "");
  if (given.length === VARS.length) return fromValues((name) => env[name]!);
  if (given.length > 0)
    throw new Error(`set all of ${VARS.join(", ")} or none of them (only ${given.join(", ")} set)`);
  const up = spawnSync("bash", ["stack/stack.sh", "up"], { cwd: root, stdio: ["ignore", 2, 2] });
  if (up.status !== 0) throw new Error(`bash stack/stack.sh up failed (exit ${up.status ?? up.signal})`);
  const file = join(root, ".stack/endpoints.env");
  if (!existsSync(file)) throw new Error(`stack/stack.sh up did not write ${file}`);
  const values = new Map(
    readFileSync(file, "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line.includes("=") && !line.startsWith("#"))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)] as const),
  );
  return fromValues((name) => {
    const value = values.get(name);
    if (!value) throw new Error(`${file} lacks ${name}`);
    return value;
  });
}

const fromValues = (value: (name: (typeof VARS)[number]) => string): StackEndpoints => ({
  kafkaBrokers: value("KAFKA_BROKERS"),
  schemaRegistryUrl: value("SCHEMA_REGISTRY_URL"),
  redisUrl: value("REDIS_URL"),
});
