import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import {
  addConfigOptions,
  CONFIG_ENV_PATHS,
  CONFIG_FLAG_PATHS,
  CONFIG_SETTINGS,
  ConfigError,
  loadConfig,
  redactConfig,
  type ScorerConfig,
} from "../../../src/ops/config.js";
import { configSchemaPaths } from "../../../src/ops/configSchema.js";
import { createLogger } from "../../../src/ops/logger.js";

const HMAC_HEX = "a1".repeat(32);

/** The least a production start needs. */
const baseEnv = (): NodeJS.ProcessEnv => ({
  KAFKA_BROKERS: "kafka-1:9092,kafka-2:9092",
  SCHEMA_REGISTRY_URL: "http://registry:8081",
  MODEL_DIR: "models/fraud-lstm/1.0.0",
  STATE_HMAC_KEY: HMAC_HEX,
});

const dir = mkdtempSync(join(tmpdir(), "fraud-scorer-config-"));
let files = 0;
const yamlFile = (text: string) => {
  const file = join(dir, `config-${files++}.yaml`);
  writeFileSync(file, text);
  return file;
};

const load = (env: NodeJS.ProcessEnv, argvFlags: Record<string, unknown> = {}, configFile?: string) =>
  loadConfig({ argvFlags, env, ...(configFile === undefined ? {} : { configFile }) });

/** The ConfigError a load throws (fails the test when it does not throw one). */
function problemsOf(env: NodeJS.ProcessEnv, argvFlags: Record<string, unknown> = {}, configFile?: string) {
  try {
    load(env, argvFlags, configFile);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected the configuration to be refused");
}

describe("configuration sources", () => {
  it("takes a flag over an env var over the file over the default", () => {
    const file = yamlFile("scoring:\n  budgetMs: 300\n");
    expect(load(baseEnv()).scoring.budgetMs).toBe(200);
    expect(load(baseEnv(), {}, file).scoring.budgetMs).toBe(300);
    expect(load({ ...baseEnv(), BUDGET_MS: "400" }, {}, file).scoring.budgetMs).toBe(400);
    expect(load({ ...baseEnv(), BUDGET_MS: "400" }, { budgetMs: "500" }, file).scoring.budgetMs).toBe(500);
  });

  it("finds the file through --config or FRAUD_SCORER_CONFIG", () => {
    const fromFlag = yamlFile("ops:\n  httpPort: 1111\n");
    const fromEnv = yamlFile("ops:\n  httpPort: 2222\n");
    const env = { ...baseEnv(), FRAUD_SCORER_CONFIG: fromEnv };
    expect(load(env).ops.httpPort).toBe(2222);
    expect(load(env, { config: fromFlag }).ops.httpPort).toBe(1111);
    expect(load(env, { config: fromFlag }).configFile).toBe(fromFlag);
  });

  it("accepts flags by commander attribute or by flag name", () => {
    expect(load(baseEnv(), { maxBatch: "7" }).scoring.maxBatch).toBe(7);
    expect(load(baseEnv(), { "max-batch": "8" }).scoring.maxBatch).toBe(8);
  });

  it("reads typed values from the file and text from env vars alike", () => {
    const file = yamlFile(
      [
        "kafka:",
        "  brokers: [a:1, b:2]",
        "  ssl: { enabled: true, rejectUnauthorized: false }",
        "scoring:",
        "  thresholds: { review: 0.4, decline: 0.9 }",
      ].join("\n"),
    );
    const { KAFKA_BROKERS: _, ...env } = baseEnv();
    const config = load(env, {}, file);
    expect(config.kafka.brokers).toEqual(["a:1", "b:2"]);
    expect(config.kafka.ssl).toEqual({ enabled: true, rejectUnauthorized: false });
    expect(config.scoring.thresholds).toEqual({ review: 0.4, decline: 0.9 });

    const fromEnv = load({ ...baseEnv(), KAFKA_SSL: "TRUE", KAFKA_SSL_REJECT_UNAUTHORIZED: "no" });
    expect(fromEnv.kafka.ssl).toEqual({ enabled: true, rejectUnauthorized: false });
  });

  it("treats an empty env var as unset", () => {
    expect(load({ ...baseEnv(), BUDGET_MS: "", KAFKA_SASL_MECHANISM: " " }).scoring.budgetMs).toBe(200);
  });

  it("fills every default the design names", () => {
    const config = load(baseEnv());
    expect(config.kafka).toMatchObject({
      brokers: ["kafka-1:9092", "kafka-2:9092"],
      clientId: "fraud-scorer",
      groupId: "fraud-scorer",
      transactionsTopic: "transactions",
      decisionsTopic: "decisions",
      dlqTopic: "transactions.dlq",
      groupProtocol: "classic",
      sessionTimeoutMs: 10_000,
      exactlyOnce: false,
      maxFrameBytes: 1024 * 1024,
      ssl: { enabled: false, rejectUnauthorized: true },
    });
    expect(config.kafka.sasl).toBeUndefined();
    expect(config.redis).toMatchObject({
      url: "redis://127.0.0.1:6379",
      tls: { enabled: false },
      namespace: "fs",
      stateTtlMs: 30 * 86_400_000,
      historyLength: 32,
      stateCacheCards: 100_000,
    });
    expect(config.redis.hmacKey.equals(Buffer.from(HMAC_HEX, "hex"))).toBe(true);
    expect(config.model).toEqual({
      dir: "models/fraud-lstm/1.0.0",
      trustedKeysDir: "models/trusted-keys",
      provider: "auto",
    });
    expect(config.rules.file).toBe("rules/default.yaml");
    expect(config.scoring).toEqual({
      budgetMs: 200,
      maxBatch: 256,
      lingerMs: 20,
      thresholds: { review: 0.5, decline: 0.85 },
      minBudgetForModelMs: 40,
      stateTimeoutMs: 40,
      modelTimeoutMs: 40,
      breaker: { errorThresholdPercentage: 50, resetTimeoutMs: 1000, volumeThreshold: 5 },
      explainTopFeatures: 3,
    });
    expect(config.ops).toEqual({ httpPort: 9464, httpHost: "0.0.0.0", logLevel: "info" });
    expect(config.dev).toBe(false);
    expect(config.warnings).toEqual([]);
  });

  it("derives call timeouts from the budget unless they are given", () => {
    expect(load({ ...baseEnv(), BUDGET_MS: "500" }).scoring).toMatchObject({
      stateTimeoutMs: 100,
      modelTimeoutMs: 100,
    });
    expect(load({ ...baseEnv(), BUDGET_MS: "500", MODEL_TIMEOUT_MS: "250" }).scoring.modelTimeoutMs).toBe(
      250,
    );
  });

  it("turns TLS on for rediss:// URLs", () => {
    expect(load({ ...baseEnv(), REDIS_URL: "rediss://cache:6380" }).redis.tls).toEqual({ enabled: true });
    expect(load({ ...baseEnv(), REDIS_TLS: "true" }).redis.tls).toEqual({ enabled: true });
  });

  it("reads Redis Cluster seeds, ACL user and the CA file of Redis TLS", () => {
    const config = load({
      ...baseEnv(),
      REDIS_CLUSTER_NODES: "10.0.0.1:7000, 10.0.0.2:7001",
      REDIS_USERNAME: "scorer",
      REDIS_PASSWORD: "pw",
      REDIS_TLS: "on",
      REDIS_TLS_CA_FILE: "/etc/tls/ca.pem",
    }).redis;
    expect(config).toMatchObject({
      clusterNodes: ["10.0.0.1:7000", "10.0.0.2:7001"],
      username: "scorer",
      password: "pw",
      tls: { enabled: true, caFile: "/etc/tls/ca.pem" },
    });
    expect(load(baseEnv(), { redisClusterNodes: "a:1" }).redis.clusterNodes).toEqual(["a:1"]);
  });

  it("refuses cluster seeds that are not host:port", () => {
    const error = problemsOf({ ...baseEnv(), REDIS_CLUSTER_NODES: "cache-1,cache-2:7000" });
    expect(error.problems.map((p) => p.path)).toEqual(["redis.clusterNodes"]);
    expect(error.message).toContain('"cache-1" is not one');
  });

  it("refuses a Redis CA file while Redis TLS is off", () => {
    const error = problemsOf({ ...baseEnv(), REDIS_TLS_CA_FILE: "/etc/tls/ca.pem" });
    expect(error.problems.map((p) => p.path)).toEqual(["redis.tls.caFile"]);
    expect(
      load({ ...baseEnv(), REDIS_URL: "rediss://cache:6380", REDIS_TLS_CA_FILE: "/ca.pem" }).redis.tls,
    ).toEqual({ enabled: true, caFile: "/ca.pem" });
  });

  it("hands out a frozen object", () => {
    const config = load(baseEnv());
    expect(Object.isFrozen(config.scoring.thresholds)).toBe(true);
    expect(() => {
      (config.kafka.brokers as string[]).push("x:1");
    }).toThrow(TypeError);
  });
});

describe("configuration errors", () => {
  // [where the value comes from, its name there, the value, the config path it must name]
  const badValues: ReadonlyArray<readonly [string, string, string]> = [
    ["KAFKA_BROKERS", "kafka-1", "kafka.brokers"],
    ["KAFKA_BROKERS", "kafka-1:99999", "kafka.brokers"],
    ["KAFKA_SESSION_TIMEOUT_MS", "1000", "kafka.sessionTimeoutMs"],
    ["KAFKA_GROUP_INSTANCE_ID", "scorer 1", "kafka.groupInstanceId"],
    ["KAFKA_GROUP_PROTOCOL", "cooperative", "kafka.groupProtocol"],
    ["KAFKA_EXACTLY_ONCE", "maybe", "kafka.exactlyOnce"],
    ["KAFKA_SSL", "maybe", "kafka.ssl.enabled"],
    ["KAFKA_SASL_MECHANISM", "gssapi", "kafka.sasl.mechanism"],
    ["KAFKA_MAX_FRAME_BYTES", "12.5", "kafka.maxFrameBytes"],
    ["SCHEMA_REGISTRY_URL", "registry:8081", "schemaRegistry.url"],
    ["REDIS_URL", "http://cache:6379", "redis.url"],
    ["REDIS_NAMESPACE", "fs:{x}", "redis.namespace"],
    ["STATE_TTL_MS", "1000", "redis.stateTtlMs"],
    ["STATE_HISTORY_LENGTH", "-1", "redis.historyLength"],
    ["STATE_HMAC_KEY", "abcdef", "redis.hmacKey"],
    ["STATE_HMAC_KEY", "not a key!", "redis.hmacKey"],
    ["MODEL_PROVIDER", "tpu", "model.provider"],
    ["BUDGET_MS", "abc", "scoring.budgetMs"],
    ["BUDGET_MS", "5", "scoring.budgetMs"],
    ["BUDGET_MS", "20000", "scoring.budgetMs"],
    ["MAX_BATCH", "0", "scoring.maxBatch"],
    ["MAX_BATCH", "5000", "scoring.maxBatch"],
    ["REVIEW_THRESHOLD", "0", "scoring.thresholds.review"],
    ["DECLINE_THRESHOLD", "1", "scoring.thresholds.decline"],
    ["MIN_BUDGET_FOR_MODEL_MS", "200", "scoring.minBudgetForModelMs"],
    ["STATE_TIMEOUT_MS", "200", "scoring.stateTimeoutMs"],
    ["BREAKER_ERROR_THRESHOLD_PERCENTAGE", "150", "scoring.breaker.errorThresholdPercentage"],
    ["HTTP_PORT", "70000", "ops.httpPort"],
    ["LOG_LEVEL", "loud", "ops.logLevel"],
    ["FRAUD_SCORER_DEV", "perhaps", "dev"],
  ];

  it.each(badValues)("%s=%s is refused, naming %s and the variable", (name, value, path) => {
    const error = problemsOf({ ...baseEnv(), [name]: value });
    expect(error.problems.map((p) => p.path)).toContain(path);
    const problem = error.problems.find((p) => p.path === path)!;
    expect(problem.origin).toBe(`env ${name}`);
    expect(error.message).toContain(`${path}`);
    expect(error.message).toContain(`env ${name}`);
    expect(problem.message).toMatch(/expected|must|cannot/);
  });

  it("asks for an instance id when exactly-once is on", () => {
    expect(() => load({ ...baseEnv(), KAFKA_EXACTLY_ONCE: "true" })).toThrow(
      /kafka\.groupInstanceId.*exactlyOnce/s,
    );
    const config = load({ ...baseEnv(), KAFKA_EXACTLY_ONCE: "true", KAFKA_GROUP_INSTANCE_ID: "scorer-1" });
    expect(config.kafka).toMatchObject({ exactlyOnce: true, groupInstanceId: "scorer-1" });
  });

  it("names the flag a bad value came from", () => {
    const error = problemsOf(baseEnv(), { budgetMs: "soon" });
    expect(error.message).toContain('scoring.budgetMs = "soon" (from flag --budget-ms): expected an integer');
  });

  it("names the file a bad value came from", () => {
    const file = yamlFile("scoring:\n  maxBatch: lots\n");
    const error = problemsOf(baseEnv(), {}, file);
    expect(error.problems).toContainEqual({
      path: "scoring.maxBatch",
      origin: `file ${file}`,
      received: '"lots"',
      message: "expected an integer from 1 to 4096",
    });
  });

  it("lists every problem at once, with how to set what is missing", () => {
    const error = problemsOf({ BUDGET_MS: "x", LOG_LEVEL: "loud" });
    expect(error.problems.map((p) => p.path)).toEqual([
      "kafka.brokers",
      "schemaRegistry.url",
      "redis.hmacKey",
      "model.dir",
      "scoring.budgetMs",
      "ops.logLevel",
    ]);
    expect(error.message.split("\n")).toHaveLength(7);
    expect(error.message).toContain("kafka.brokers: required");
    expect(error.message).toContain("set KAFKA_BROKERS, --kafka-brokers or kafka.brokers in the config file");
    expect(error.message).toContain("set STATE_HMAC_KEY or redis.hmacKey in the config file");
  });

  it("refuses a SASL mechanism without a password, and credentials without a mechanism", () => {
    const withoutPassword = problemsOf({
      ...baseEnv(),
      KAFKA_SASL_MECHANISM: "scram-sha-512",
      KAFKA_SASL_USERNAME: "scorer",
    });
    expect(withoutPassword.problems).toEqual([
      { path: "kafka.sasl.password", message: "required when kafka.sasl.mechanism is set (scram-sha-512)" },
    ]);

    const withoutMechanism = problemsOf({ ...baseEnv(), KAFKA_SASL_USERNAME: "u", KAFKA_SASL_PASSWORD: "p" });
    expect(withoutMechanism.problems.map((p) => p.path)).toEqual(["kafka.sasl.mechanism"]);

    const complete = load({
      ...baseEnv(),
      KAFKA_SASL_MECHANISM: "PLAIN",
      KAFKA_SASL_USERNAME: "scorer",
      KAFKA_SASL_PASSWORD: "pw",
    });
    expect(complete.kafka.sasl).toEqual({ mechanism: "plain", username: "scorer", password: "pw" });
  });

  it("still reports cross-key problems when an unrelated key is invalid", () => {
    const error = problemsOf({
      ...baseEnv(),
      BUDGET_MS: "x",
      KAFKA_SASL_MECHANISM: "plain",
      REVIEW_THRESHOLD: "0.9",
    });
    expect(error.problems.map((p) => p.path)).toEqual([
      "kafka.sasl.username",
      "kafka.sasl.password",
      "scoring.budgetMs",
      "scoring.thresholds.review",
    ]);
  });

  it("requires the review threshold below the decline threshold", () => {
    for (const [review, decline] of [
      ["0.9", "0.8"],
      ["0.7", "0.7"],
    ] as const) {
      const error = problemsOf({ ...baseEnv(), REVIEW_THRESHOLD: review, DECLINE_THRESHOLD: decline });
      expect(error.problems).toEqual([
        {
          path: "scoring.thresholds.review",
          origin: "env REVIEW_THRESHOLD",
          received: JSON.stringify(review),
          message: `must be below scoring.thresholds.decline (${decline})`,
        },
      ]);
    }
  });

  it("refuses TLS files while TLS is off, and a cert without its key", () => {
    const error = problemsOf({ ...baseEnv(), KAFKA_SSL_CERT_FILE: "/etc/tls/client.pem" });
    expect(error.problems.map((p) => p.path)).toEqual(["kafka.ssl.enabled", "kafka.ssl.keyFile"]);
  });

  it("refuses turning TLS off for a rediss:// URL", () => {
    const error = problemsOf({ ...baseEnv(), REDIS_URL: "rediss://cache:6380", REDIS_TLS: "false" });
    expect(error.problems.map((p) => p.path)).toEqual(["redis.tls.enabled"]);
  });

  it("refuses unknown and misspelt keys in the file, suggesting the right one", () => {
    const file = yamlFile("scoring:\n  budget_ms: 100\n  speed: 3\nmetrics: {}\n");
    const error = problemsOf(baseEnv(), {}, file);
    expect(error.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      "scoring.budget_ms: unknown key; did you mean scoring.budgetMs?",
      "scoring.speed: unknown key",
      "metrics: unknown key",
    ]);
  });

  it("does not let the file switch on development mode", () => {
    const error = problemsOf(baseEnv(), {}, yamlFile("dev: true\n"));
    expect(error.problems).toEqual([
      {
        path: "dev",
        origin: expect.stringMatching(/^file /),
        message: "cannot be set in the config file; use FRAUD_SCORER_DEV or --dev",
      },
    ]);
  });

  it("stops at a file that cannot be read or parsed", () => {
    const missing = problemsOf(baseEnv(), {}, join(dir, "absent.yaml"));
    expect(missing.problems).toHaveLength(1);
    expect(missing.message).toMatch(/configFile \(from .*absent\.yaml\): cannot be read/);

    const broken = problemsOf(baseEnv(), {}, yamlFile("scoring: [unclosed\n"));
    expect(broken.problems[0]?.message).toMatch(/^is not valid YAML/);
  });
});

describe("the state HMAC key", () => {
  it("accepts hex and base64 of at least 32 bytes", () => {
    const bytes = Buffer.alloc(48, 7);
    const fromBase64 = load({ ...baseEnv(), STATE_HMAC_KEY: bytes.toString("base64") });
    expect(fromBase64.redis.hmacKey.equals(bytes)).toBe(true);
    const shortKey = problemsOf({ ...baseEnv(), STATE_HMAC_KEY: "ab".repeat(31) });
    expect(shortKey.message).toContain("got 31 bytes");
  });

  it("is required outside development mode", () => {
    const { STATE_HMAC_KEY: _, ...env } = baseEnv();
    expect(problemsOf(env).problems.map((p) => p.path)).toEqual(["redis.hmacKey"]);
  });

  it("falls back to a fixed development key under --dev, with a warning", () => {
    const { STATE_HMAC_KEY: _, ...env } = baseEnv();
    const viaFlag = load(env, { dev: true });
    const viaEnv = load({ ...env, FRAUD_SCORER_DEV: "true" });
    expect(viaFlag.dev).toBe(true);
    expect(viaFlag.redis.hmacKey.length).toBeGreaterThanOrEqual(32);
    expect(viaFlag.redis.hmacKey.equals(viaEnv.redis.hmacKey)).toBe(true);
    expect(viaFlag.warnings.join("\n")).toMatch(/insecure development HMAC key/);
  });

  it("refuses the development key outside development mode", () => {
    const { STATE_HMAC_KEY: _, ...env } = baseEnv();
    const devKey = load(env, { dev: true }).redis.hmacKey.toString("hex");
    const error = problemsOf({ ...env, STATE_HMAC_KEY: devKey });
    expect(error.problems.map((p) => p.path)).toEqual(["redis.hmacKey"]);
    expect(error.message).toContain("insecure development key");
  });
});

describe("secrets", () => {
  const secrets = {
    KAFKA_SASL_PASSWORD: "kafka-sasl-s3cret",
    SCHEMA_REGISTRY_PASSWORD: "registry-s3cret",
    REDIS_PASSWORD: "redis-s3cret",
    KAFKA_SSL_KEY_FILE: "/run/secrets/kafka-client-key.pem",
  };
  const config: ScorerConfig = load({
    ...baseEnv(),
    ...secrets,
    KAFKA_SASL_MECHANISM: "scram-sha-256",
    KAFKA_SASL_USERNAME: "scorer",
    KAFKA_SSL: "true",
    KAFKA_SSL_CERT_FILE: "/run/secrets/kafka-client.pem",
    SCHEMA_REGISTRY_USERNAME: "scorer",
    REDIS_URL: "redis://scorer:url-s3cret@cache:6379",
  });
  const secretTexts = [
    ...Object.values(secrets),
    "url-s3cret",
    HMAC_HEX,
    Buffer.from(HMAC_HEX, "hex").toString("base64"),
  ];

  it("are absent from the redacted config", () => {
    const text = JSON.stringify(redactConfig(config));
    for (const secret of secretTexts) expect(text).not.toContain(secret);
    expect(redactConfig(config)).toMatchObject({
      kafka: { sasl: { username: "scorer", password: "[redacted]" }, ssl: { keyFile: "[redacted]" } },
      redis: { url: "redis://[redacted]@cache:6379", password: "[redacted]", hmacKey: "[redacted]" },
      schemaRegistry: { username: "scorer", password: "[redacted]" },
    });
  });

  it("are absent from a log line of the redacted config", () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: "info",
      name: "test",
      destination: { write: (l) => void lines.push(l) },
    });
    logger.info({ config: redactConfig(config) }, "configuration loaded");
    expect(lines).toHaveLength(1);
    for (const secret of secretTexts) expect(lines[0]).not.toContain(secret);
    expect(lines[0]).toContain("kafka-1:9092");
  });

  it("are never echoed in error messages", () => {
    const error = problemsOf({ ...baseEnv(), STATE_HMAC_KEY: "tiny-secret-key" });
    expect(error.message).not.toContain("tiny-secret-key");
    const urlError = problemsOf({ ...baseEnv(), REDIS_URL: "http://u:url-s3cret@cache" });
    expect(urlError.message).not.toContain("url-s3cret");
  });
});

describe("CLI flags", () => {
  it("declares one flag per flag-backed key, without defaults that would hide env vars", () => {
    const command = addConfigOptions(new Command().exitOverride());
    command.parse(["--budget-ms", "150", "--kafka-brokers", "k:9092", "--dev"], { from: "user" });
    const flags = command.opts();
    expect(flags).toEqual({ budgetMs: "150", kafkaBrokers: "k:9092", dev: true });

    const config = load({ ...baseEnv(), BUDGET_MS: "120", MAX_BATCH: "16" }, flags);
    expect(config.scoring.budgetMs).toBe(150);
    expect(config.scoring.maxBatch).toBe(16);
    expect(config.kafka.brokers).toEqual(["k:9092"]);
  });

  it("maps flag and env names to config paths", () => {
    expect(CONFIG_FLAG_PATHS).toMatchObject({
      "kafka-brokers": "kafka.brokers",
      "schema-registry-url": "schemaRegistry.url",
      "redis-url": "redis.url",
      "redis-cluster-nodes": "redis.clusterNodes",
      "model-dir": "model.dir",
      provider: "model.provider",
      "rules-file": "rules.file",
      "budget-ms": "scoring.budgetMs",
      "max-batch": "scoring.maxBatch",
      "http-port": "ops.httpPort",
      "log-level": "ops.logLevel",
      config: "configFile",
      dev: "dev",
    });
    expect(CONFIG_ENV_PATHS["STATE_HMAC_KEY"]).toBe("redis.hmacKey");
  });

  it("offers no flag for a secret", () => {
    expect(CONFIG_SETTINGS.filter((s) => s.secret && s.flag !== undefined)).toEqual([]);
  });
});

it("describes every schema key exactly once", () => {
  const described = CONFIG_SETTINGS.map((s) => s.path);
  expect(new Set(described).size).toBe(described.length);
  expect([...described].sort()).toEqual(configSchemaPaths().sort());
});
