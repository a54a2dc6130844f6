// Global setup of the `integration` project: find the broker, the registry and Redis, prove
// each answers, make sure the scorer's topics exist, and hand the endpoints to the tests.
// Endpoints come from KAFKA_BROKERS, SCHEMA_REGISTRY_URL and REDIS_URL when all three are set
// (a CI service, a compose stack); otherwise the local stack is started (stack/stack.sh).
// Nothing here skips: a service that does not answer fails the run.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import type { TestProject } from "vitest/node";
import { ensureTopics } from "../../stack/topics.js";
import type { StackEndpoints } from "./endpoints.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ENDPOINTS_ENV = `${ROOT}.stack/endpoints.env`;
const ENDPOINTS_JSON = `${ROOT}.stack/endpoints.json`;
const ENDPOINT_VARS = ["KAFKA_BROKERS", "SCHEMA_REGISTRY_URL", "REDIS_URL"] as const;
type EndpointVar = (typeof ENDPOINT_VARS)[number];
type EndpointEnv = Record<EndpointVar, string>;

const stackScript = (command: "up" | "down" | "status", stdio: "inherit" | "ignore") =>
  spawnSync("bash", ["stack/stack.sh", command], { cwd: ROOT, stdio });

export default async function setup(project: TestProject): Promise<() => void> {
  const given = ENDPOINT_VARS.filter((name) => (process.env[name] ?? "") !== "");
  let startedHere = false;
  let env: EndpointEnv;
  if (given.length === ENDPOINT_VARS.length) {
    env = Object.fromEntries(ENDPOINT_VARS.map((name) => [name, process.env[name] ?? ""])) as EndpointEnv;
  } else if (given.length > 0) {
    throw new Error(
      `integration tests: set all of ${ENDPOINT_VARS.join(", ")} or none of them ` +
        `(only ${given.join(", ")} set); with none, the local stack is started`,
    );
  } else {
    const wasRunning = stackScript("status", "ignore").status === 0;
    const up = stackScript("up", "inherit");
    if (up.status !== 0) {
      throw new Error(`bash stack/stack.sh up failed (exit ${up.status ?? up.signal}); logs in .stack/logs/`);
    }
    startedHere = !wasRunning;
    env = readEndpointsEnv();
  }

  const endpoints = await checkEndpoints(env);
  // Child processes the tests spawn (the CLI, kcat) find the same services.
  for (const name of ENDPOINT_VARS) process.env[name] = env[name];
  project.provide("stackEndpoints", endpoints);
  const { versions } = endpoints;
  console.log(
    `integration stack: Kafka ${versions.kafka} at ${env.KAFKA_BROKERS}; ${versions.registry} at ` +
      `${env.SCHEMA_REGISTRY_URL}; Redis ${versions.redis} at ${env.REDIS_URL}`,
  );

  // The stack stays up for the next run (a warm `up` takes ~2 s instead of ~15 s). Stopping
  // it here would also pull it from under another run sharing the machine; a run that started
  // it may still stop it when asked to.
  const stop = startedHere && process.env.FRAUD_SCORER_STOP_STACK === "1";
  return () => {
    if (stop) stackScript("down", "inherit");
  };
}

function readEndpointsEnv(): EndpointEnv {
  if (!existsSync(ENDPOINTS_ENV)) throw new Error(`stack/stack.sh up did not write ${ENDPOINTS_ENV}`);
  const pairs = readFileSync(ENDPOINTS_ENV, "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)] as const);
  const values = new Map(pairs);
  const missing = ENDPOINT_VARS.filter((name) => !values.get(name));
  if (missing.length > 0) throw new Error(`${ENDPOINTS_ENV} lacks ${missing.join(", ")}`);
  return Object.fromEntries(ENDPOINT_VARS.map((name) => [name, values.get(name) ?? ""])) as EndpointEnv;
}

async function checkEndpoints(env: EndpointEnv): Promise<StackEndpoints> {
  const brokers = env.KAFKA_BROKERS.split(",").map((broker) => broker.trim());
  const [kafka, registry, redis] = await Promise.all([
    ensureTopics({ brokers, clientId: "fraud-scorer-integration-setup" })
      .then(() => kafkaVersion(env.KAFKA_BROKERS))
      .catch((error: unknown) => unreachable("Kafka", env.KAFKA_BROKERS, error)),
    registryVersion(env.SCHEMA_REGISTRY_URL).catch((error: unknown) =>
      unreachable("the schema registry", env.SCHEMA_REGISTRY_URL, error),
    ),
    redisVersion(env.REDIS_URL).catch((error: unknown) => unreachable("Redis", env.REDIS_URL, error)),
  ]);
  return {
    kafkaBrokers: env.KAFKA_BROKERS,
    schemaRegistryUrl: env.SCHEMA_REGISTRY_URL,
    redisUrl: env.REDIS_URL,
    versions: { kafka, registry, redis },
  };
}

function unreachable(what: string, where: string, error: unknown): never {
  throw new Error(`integration tests: ${what} at ${where} is not usable: ${(error as Error).message}`);
}

// The Kafka protocol does not tell a broker's release; the stack records the one it ran.
function kafkaVersion(brokers: string): string {
  if (existsSync(ENDPOINTS_JSON)) {
    const recorded = JSON.parse(readFileSync(ENDPOINTS_JSON, "utf8")) as {
      KAFKA_BROKERS?: string;
      versions?: { kafka?: string };
    };
    if (recorded.KAFKA_BROKERS === brokers && recorded.versions?.kafka) return recorded.versions.kafka;
  }
  return "(version unknown: not started by stack/stack.sh)";
}

async function registryVersion(url: string): Promise<string> {
  const subjects = await fetch(`${url}/subjects`, { signal: AbortSignal.timeout(10_000) });
  if (!subjects.ok) throw new Error(`GET ${url}/subjects answered ${subjects.status}`);
  // Apicurio serves the Confluent API under /apis/ccompat/v7 and its own system info beside it.
  const apicurioBase = url.includes("/apis/") ? url.slice(0, url.indexOf("/apis/")) : undefined;
  if (apicurioBase !== undefined) {
    const info = await fetch(`${apicurioBase}/apis/registry/v3/system/info`, {
      signal: AbortSignal.timeout(10_000),
    });
    if (info.ok) {
      const { name, version } = (await info.json()) as { name?: string; version?: string };
      return `${name ?? "Apicurio Registry"} ${version ?? "(version unknown)"}`;
    }
  }
  const confluent = await fetch(`${url}/v1/metadata/version`, { signal: AbortSignal.timeout(10_000) });
  if (confluent.ok) {
    const { version } = (await confluent.json()) as { version?: string };
    return `Confluent Schema Registry ${version ?? "(version unknown)"}`;
  }
  return "schema registry (version unknown)";
}

async function redisVersion(url: string): Promise<string> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 5_000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    const info = await redis.info("server");
    const version = /^redis_version:(.+)$/m.exec(info)?.[1]?.trim();
    if (version === undefined) throw new Error("INFO server has no redis_version");
    return version;
  } finally {
    redis.disconnect();
  }
}
